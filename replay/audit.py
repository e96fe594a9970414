"""``verify``: the audit chain, the seed commitment and the random draws of one match.

Checked on the stored records, each decoded on its own so that damage is reported at
its version:

1. versions run 1, 2, 3 … with no gap;
2. every record decodes, and is an event of the match's game;
3. every event's digest is the SHA-256 of its canonical encoding
   (:func:`domain.kernel.chain.stored_event_digest`), and its ``prev_digest`` is the
   digest of the event before it (``GENESIS_DIGEST`` for the first);
4. the events apply one by one to rebuild the match;
5. when every record is present and readable, and once the match has ended: the
   revealed seed matches the commitment made at creation, and the game's random draws
   re-derive from it (see :mod:`replay.games`).

Optionally, the commitment and the match digest are compared with values published
outside the store (given to the players, signed by the server): only such an anchor
shows a consistent rewrite of the whole chain or the removal of the last events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventsourcing.utils import resolve_topic

from domain.games import GAMES
from domain.kernel.chain import GENESIS_DIGEST, NOT_HASHED, stored_event_digest
from domain.kernel.match import MatchAggregate
from domain.kernel.randomness import commitment
from replay import games
from replay.store import Record

#: Metadata of a decoded event that is not one of its own fields.
METADATA = (
    frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"}) | NOT_HASHED
)


@dataclass(frozen=True)
class Problem:
    version: int
    reason: str


@dataclass
class Report:
    events: int
    #: The digest of the last stored event, if it could be read: the match digest.
    digest: str | None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first_bad_version(self) -> int:
        return min(p.version for p in self.problems)

    def reasons_at(self, version: int) -> list[str]:
        return [p.reason for p in self.problems if p.version == version]


def verify_records(
    records: list[Record],
    *,
    expected_commitment: str | None = None,
    expected_digest: str | None = None,
) -> Report:
    """Check a match's stored records; see the module docstring for what is checked."""
    report = Report(events=len(records), digest=None)
    problems = report.problems
    previous: str | None = GENESIS_DIGEST  # None: unknown, the record before was unreadable
    previous_version = 0
    previous_at = 0  # the version whose digest is ``previous``
    aggregate_class: type[MatchAggregate] | None = None
    match: MatchAggregate | None = None
    readable = True  # every record so far present, decoded and of the game
    applied = True  # ... and applied to the match
    fields_seen: list[tuple[int, str, dict[str, Any]]] = []
    digests: dict[str, int] = {}

    for record in records:
        version = record.version
        expected = previous_version + 1
        if version != expected:
            gap = (
                f"version {expected}"
                if version == expected + 1
                else (f"versions {expected} to {version - 1}")
            )
            problems.append(Problem(expected, f"missing: the store has no event at {gap}"))
            readable = False
        previous_version = version
        if record.event is None:
            problems.append(Problem(version, f"the stored event cannot be decoded: {record.error}"))
            previous, readable = None, False
            continue
        event = record.event
        name = type(event).__name__
        data = vars(event)
        digest, prev_digest = data.get("digest"), data.get("prev_digest")
        if not isinstance(digest, str) or not isinstance(prev_digest, str):
            problems.append(Problem(version, f"{name} carries no digest: not an audited event"))
            previous, readable = None, False
            continue
        try:
            recomputed = stored_event_digest(event)
        except Exception as exc:
            recomputed = f"(not encodable: {exc})"
        if recomputed != digest:
            problems.append(
                Problem(
                    version,
                    f"{name} does not match its digest: its content hashes to {recomputed}, "
                    f"its digest says {digest} (the event was changed)",
                )
            )
        if previous is not None and prev_digest != previous:
            before = (
                "the genesis digest" if previous_at == 0 else f"the digest of version {previous_at}"
            )
            problems.append(
                Problem(
                    version,
                    f"{name}'s prev_digest {prev_digest} is not {before} ({previous}): "
                    "an event before it was changed, removed or reordered",
                )
            )
        previous, previous_at = digest, version
        digests.setdefault(digest, version)

        if version == 1:
            aggregate_class = _game_class(data)
            # A fork (``totem-replay fork``) begins with Forked instead of Created.
            if aggregate_class is None or name not in ("Created", "Forked"):
                problems.append(Problem(version, f"{name} does not create a match of a known game"))
                readable = False
        elif aggregate_class is not None and not _is_event_of(aggregate_class, type(event)):
            problems.append(Problem(version, f"{name} is not an event of {aggregate_class.GAME}"))
            readable = False
        applied = applied and readable
        if applied:
            try:
                result = event.mutate(match)
                assert isinstance(result, MatchAggregate)
                match = result
            except Exception as exc:
                problems.append(Problem(version, f"{name} cannot be applied to the match: {exc!r}"))
                applied = False
        fields_seen.append((version, name, {k: v for k, v in data.items() if k not in METADATA}))

    report.digest = previous if previous_at == previous_version else None

    if readable and aggregate_class is not None:
        # On the recorded fields alone: a draw is checked even if a later event is damaged.
        if not _check_seed(fields_seen, expected_commitment, report):
            report.notes.append("random draws not re-derived: the revealed seed is not valid")
        elif fields_seen[0][1] == "Forked":
            report.notes.append("a fork: its random draws are not re-derived by this tool")
        else:
            found, notes = games.check_draws(aggregate_class.GAME, fields_seen)
            problems.extend(Problem(v, reason) for v, reason in found)
            report.notes.extend(notes)
    elif expected_commitment is not None:
        report.notes.append("commitment not compared: the events are not all readable")

    if expected_digest is not None:
        _check_digest(expected_digest.lower(), digests, report)
    return report


def _is_event_of(aggregate_class: type[MatchAggregate], event_class: type) -> bool:
    """Whether the class is one the aggregate (or a class it extends) declares."""
    name = event_class.__name__
    return any(vars(klass).get(name) is event_class for klass in aggregate_class.__mro__)


def _game_class(data: dict[str, Any]) -> type[MatchAggregate] | None:
    try:
        cls = resolve_topic(str(data.get("originator_topic")))
    except Exception:
        return None
    known = {game.aggregate for game in GAMES.values()}
    return cls if cls in known else None


def _check_seed(
    fields_seen: list[tuple[int, str, dict[str, Any]]],
    expected_commitment: str | None,
    report: Report,
) -> bool:
    """Check the seed; return whether the revealed seed (if any) can be trusted."""
    created = fields_seen[0][2]
    try:
        committed = commitment(bytes.fromhex(created["seed"]))
    except (KeyError, TypeError, ValueError) as exc:
        report.problems.append(Problem(1, f"the created event holds no readable seed: {exc}"))
        return False
    if expected_commitment is not None:
        if expected_commitment.lower() != committed:
            report.problems.append(
                Problem(
                    1,
                    f"the seed commitment of this match is {committed}, "
                    f"not the expected {expected_commitment}",
                )
            )
        else:
            report.notes.append("seed commitment equals the expected one")
    ended = next(((v, d) for v, n, d in fields_seen if n == "MatchEnded"), None)
    if ended is None:
        report.notes.append("match not ended: the seed is not revealed yet")
        return True
    version, data = ended
    try:
        revealed = commitment(bytes.fromhex(data["seed"]))
    except (KeyError, TypeError, ValueError) as exc:
        report.problems.append(Problem(version, f"the revealed seed is not readable: {exc}"))
        return False
    if revealed != committed:
        report.problems.append(
            Problem(
                version,
                f"the revealed seed hashes to {revealed}, not to the commitment {committed}",
            )
        )
        return False
    report.notes.append(f"revealed seed matches the commitment {committed}")
    return True


def _check_digest(expected: str, digests: dict[str, int], report: Report) -> None:
    if report.digest == expected:
        report.notes.append("match digest equals the expected one")
        return
    at = digests.get(expected)
    if at is not None:
        report.problems.append(
            Problem(
                at + 1,
                f"the expected match digest is that of version {at}, "
                f"but the store has {report.events} events",
            )
        )
    else:
        report.problems.append(
            Problem(
                max(report.events, 1),
                f"the match digest differs from the expected {expected}, which is the digest "
                "of no stored event: events were changed, or removed from the end",
            )
        )
