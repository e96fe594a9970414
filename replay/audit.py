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
   re-derive from it (see :mod:`replay.games`). A fork's seed is the one committed in
   ``Forked``; the draws recorded after ``Forked`` re-derive from it, continuing from
   the state of the history it carries, whose own draws are the origin's (checked by
   verifying the origin; see :mod:`replay.draws`). Given the origin's records, the
   history a fork carries must be theirs, up to the digest ``Forked`` names.

6. once the match has ended: the server's Ed25519 signature, recorded in ``MatchEnded``,
   over the match digest (:func:`domain.kernel.signing.signed_message`), by the key the
   event names or, with ``expected_key``, by that key only.

Each problem belongs to one check (:data:`CHECKS`), reported on its own by
:func:`checks_of`.

Optionally, the commitment and the match digest are compared with values published
outside the store (given to the players, signed by the server): only such an anchor
shows a consistent rewrite of the whole chain or the removal of the last events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from domain.games import GAMES
from domain.kernel.chain import (
    GENESIS_DIGEST,
    NOT_HASHED,
    canonical_bytes,
    event_digest,
    stored_event_digest,
)
from domain.kernel.fork import history_entry
from domain.kernel.match import MatchAggregate
from domain.kernel.randomness import commitment
from domain.kernel.signing import signed_message
from domain.kernel.topics import UnknownTopic, aggregate_class
from replay import games
from replay.draws import FORKED, Carried, carried_of
from replay.store import Record
from storage.keys import fingerprint
from storage.keys import verify as verify_signature

#: Metadata of a decoded event that is not one of its own fields.
METADATA = (
    frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"}) | NOT_HASHED
)


#: The checks ``verify`` reports, in order.
CHAIN, SIGNATURE, SEED, DRAWS, SPELLS = (
    "chain",
    "signature",
    "seed commitment",
    "random draws",
    "spell reveals",
)
CHECKS = (CHAIN, SIGNATURE, SEED, DRAWS, SPELLS)
OK, FAILED, NOT_APPLICABLE = "ok", "failed", "not applicable"


@dataclass(frozen=True)
class Problem:
    version: int
    reason: str
    #: The check that found it (one of :data:`CHECKS`).
    check: str = CHAIN


@dataclass(frozen=True)
class Check:
    """The outcome of one check: ``status`` is :data:`OK`, :data:`FAILED` or
    :data:`NOT_APPLICABLE`; ``detail`` says what was found, or why it does not apply."""

    name: str
    status: str
    detail: str


@dataclass
class Report:
    events: int
    #: The digest of the last stored event, if it could be read: the match digest.
    digest: str | None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    game: str | None = None
    #: Why a check did not apply, by check: absent when it ran.
    skipped: dict[str, str] = field(default_factory=dict)
    #: What a check that ran found, by check.
    found: dict[str, str] = field(default_factory=dict)
    #: Checks beyond :data:`CHECKS` that ran because they were asked for (a receipt).
    added: list[str] = field(default_factory=list)

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
    expected_key: bytes | None = None,
    origin: list[Record] | None = None,
) -> Report:
    """Check a match's stored records; see the module docstring for what is checked.
    For a fork, ``origin`` are its origin's records up to the forked version, when the
    same store holds them (:func:`fork_origin`): the history the fork carries must be
    theirs."""
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
        moved = _recorded_at(event, version) if recomputed != digest else None
        if moved is not None:
            problems.append(
                Problem(
                    version,
                    f"{name} was recorded as version {moved}, not {version}: events were reordered",
                )
            )
        elif recomputed != digest:
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
            if aggregate_class is None or name not in ("Created", FORKED):
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
    if not problems:
        report.found[CHAIN] = f"versions 1 to {previous_version}, every digest recomputed"
    report.game = aggregate_class.GAME if aggregate_class is not None else None
    replay = games.REPLAYS.get(report.game or "")
    if replay is None or not replay.commitment_events:
        report.skipped[SPELLS] = f"{report.game or 'this game'} has no spell commitments"

    if readable and aggregate_class is not None:
        # On the recorded fields alone: a draw is checked even if a later event is damaged.
        if not _check_seed(fields_seen, expected_commitment, report):
            report.notes.append("random draws not re-derived: the revealed seed is not valid")
            report.skipped[DRAWS] = "not re-derived: the revealed seed is not valid"
            report.skipped.setdefault(SPELLS, "not checked: the revealed seed is not valid")
        else:
            _check_draws(aggregate_class.GAME, fields_seen, report)
        if fields_seen[0][1] == FORKED and origin is not None:
            _check_origin(fields_seen[0][2], origin, report)
        elif fields_seen[0][1] == FORKED:
            report.notes.append("the origin is not at hand: the carried history is not compared")
    else:
        if expected_commitment is not None:
            report.notes.append("commitment not compared: the events are not all readable")
        for check in (SEED, DRAWS, SPELLS):
            report.skipped.setdefault(check, "not checked: the events are not all readable")
    _check_signature(records, expected_key, report)

    if expected_digest is not None:
        _check_digest(expected_digest.lower(), digests, report)
    return report


def fork_origin(records: list[Record]) -> tuple[str, int] | None:
    """The origin's match id and the forked version, if the records are a fork's."""
    first = records[0].event if records else None
    if first is None or type(first).__name__ != FORKED:
        return None
    where: Any = getattr(first, "origin", None)
    try:
        return str(where["match_id"]), int(where["version"])
    except (KeyError, TypeError, ValueError):
        return None


def _check_origin(forked: dict[str, Any], origin: list[Record], report: Report) -> None:
    """The history ``Forked`` carries is the origin's events 1 to the forked version as
    this store holds them (secrets blanked, as a fork carries them), and the origin's
    digest at that version is the one ``Forked`` names. The origin's own draws are then
    checked by verifying the origin."""
    where = forked["origin"]
    version, history = int(where["version"]), list(forked["history"])
    stored = {r.version: r.event for r in origin}
    if len(history) != version:
        reason = f"Forked carries {len(history)} events of its origin, not {version}"
        report.problems.append(Problem(1, reason))
        return
    for at, entry in enumerate(history, start=1):
        event = stored.get(at)
        if event is None:
            report.notes.append(
                f"carried history not compared: the origin's event at version {at} is not "
                "readable in this store"
            )
            return
        if canonical_bytes(history_entry(event)) != canonical_bytes(entry):
            report.problems.append(
                Problem(
                    1,
                    f"the event Forked carries as its origin's version {at} is not the "
                    f"origin's event {at} in this store",
                )
            )
            return
    digest = getattr(stored[version], "digest", None)
    if digest != where["digest"]:
        report.problems.append(
            Problem(
                1,
                f"Forked names the origin's digest {where['digest']} at version {version}, "
                f"but the origin's event there has {digest}",
            )
        )
        return
    report.notes.append(
        f"the carried history is the origin's events 1 to {version} in this store, of "
        f"digest {digest}: `verify {where['match_id']}` checks their draws"
    )


def _check_draws(
    game: str, fields_seen: list[tuple[int, str, dict[str, Any]]], report: Report
) -> None:
    """The game's draws and spell reveals; a fork's from what its ``Forked`` carries on."""
    carried: Carried | None = None
    if fields_seen[0][1] == FORKED:
        forked = fields_seen[0][2]
        try:
            carried = carried_of(forked)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            reason = f"the history Forked carries is not readable: {exc}"
            report.problems.append(Problem(1, reason, DRAWS))
            report.skipped.setdefault(SPELLS, "not checked: the fork's history is not readable")
            return
        origin = forked.get("origin") or {}
        report.notes.append(
            f"a fork of {origin.get('match_id')} at version {origin.get('version')}: the "
            "draws it carries are the origin's, checked by verifying the origin; those "
            "after the fork are re-derived from the fork's own seed"
        )
    found, notes = games.check_draws(game, fields_seen, carried)
    names = {v: n for v, n, _ in fields_seen}
    replay = games.REPLAYS.get(game)
    revealing = replay.commitment_events if replay is not None else frozenset()
    report.problems.extend(
        Problem(v, reason, SPELLS if names.get(v) in revealing else DRAWS) for v, reason in found
    )
    report.notes.extend(notes)
    if carried is None:
        report.found[DRAWS] = "every recorded draw re-derived from the seed"
        report.found[SPELLS] = "every spell reveal matches its commitment (VI-2.2)"
    else:
        report.found[DRAWS] = (
            "every draw recorded after the fork re-derived from the fork's seed, "
            "on from the origin's state at the fork"
        )
        report.found[SPELLS] = "every spell reveal after the fork matches its commitment (VI-2.2)"


#: How far from its place a moved event is looked for.
MOVED_WINDOW = 8


def _recorded_at(event: object, version: int) -> int | None:
    """The version near ``version`` at which this event's digest holds, if any: it was
    recorded there and has been moved (its content is as recorded)."""
    fields = dict(vars(event))
    name = type(event).__name__
    for candidate in range(max(1, version - MOVED_WINDOW), version + MOVED_WINDOW + 1):
        if candidate == version:
            continue
        try:
            if event_digest(name, dict(fields, originator_version=candidate)) == fields["digest"]:
                return candidate
        except TypeError:
            return None
    return None


def _is_event_of(aggregate_class: type[MatchAggregate], event_class: type) -> bool:
    """Whether the class is one the aggregate (or a class it extends) declares."""
    name = event_class.__name__
    return any(vars(klass).get(name) is event_class for klass in aggregate_class.__mro__)


def _game_class(data: dict[str, Any]) -> type[MatchAggregate] | None:
    """The game the creation names, looked up among the registered games only."""
    try:
        cls = aggregate_class(data.get("originator_topic"))
    except UnknownTopic:
        return None
    return cls if cls in {game.aggregate for game in GAMES.values()} else None


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
        report.problems.append(Problem(1, f"the created event holds no readable seed: {exc}", SEED))
        return False
    if expected_commitment is not None:
        if expected_commitment.lower() != committed:
            report.problems.append(
                Problem(
                    1,
                    f"the seed commitment of this match is {committed}, "
                    f"not the expected {expected_commitment}",
                    SEED,
                )
            )
        else:
            report.notes.append("seed commitment equals the expected one")
    ended = next(((v, d) for v, n, d in fields_seen if n == "MatchEnded"), None)
    if ended is None:
        report.notes.append("match not ended: the seed is not revealed yet")
        report.skipped[SEED] = "the seed is not revealed: the match has not ended"
        report.skipped[DRAWS] = "the seed is not revealed: the match has not ended"
        report.skipped.setdefault(SPELLS, "checked once the match has ended")
        return True
    version, data = ended
    try:
        revealed = commitment(bytes.fromhex(data["seed"]))
    except (KeyError, TypeError, ValueError) as exc:
        report.problems.append(Problem(version, f"the revealed seed is not readable: {exc}", SEED))
        return False
    if revealed != committed:
        report.problems.append(
            Problem(
                version,
                f"the revealed seed hashes to {revealed}, not to the commitment {committed}",
                SEED,
            )
        )
        return False
    report.notes.append(f"revealed seed matches the commitment {committed}")
    report.found[SEED] = f"the revealed seed matches the commitment {committed}"
    return True


def _check_signature(records: list[Record], expected_key: bytes | None, report: Report) -> None:
    """The server's signature in ``MatchEnded``, over the digest that event carries (the
    chain check says whether that digest is honest)."""
    ended = next(
        (r for r in records if r.event is not None and type(r.event).__name__ == "MatchEnded"),
        None,
    )
    if ended is None:
        report.skipped[SIGNATURE] = "not signed: the match has not ended"
        if expected_key is not None:
            report.notes.append("--key not used: the match has not ended, nothing is signed")
        return
    data = vars(ended.event)
    version = ended.version

    def fail(reason: str) -> None:
        report.problems.append(Problem(version, reason, SIGNATURE))

    signature, public_key = data.get("signature") or "", data.get("public_key") or ""
    if not signature:
        if expected_key is not None:
            fail("MatchEnded carries no server signature, but --key asks for one")
        else:
            report.skipped[SIGNATURE] = "not signed: MatchEnded carries no server signature"
        return
    try:
        signature_bytes, key = bytes.fromhex(str(signature)), bytes.fromhex(str(public_key))
    except ValueError as exc:
        fail(f"the server signature or public key in MatchEnded is not hex: {exc}")
        return
    if expected_key is not None and key != expected_key:
        fail(
            f"MatchEnded is signed by key {fingerprint(key)}, not by the expected key "
            f"{fingerprint(expected_key)}"
        )
        return
    message = signed_message(data["originator_id"], version, str(data.get("digest", "")))
    if not verify_signature(key, signature_bytes, message):
        fail(
            f"the server signature in MatchEnded is not valid for the match digest by key "
            f"{fingerprint(key)}: the signature or the match was forged"
        )
        return
    against = "the expected key" if expected_key is not None else "the key recorded in the event"
    report.found[SIGNATURE] = (
        f"valid Ed25519 signature of the match digest by {fingerprint(key)} ({against})"
    )


def checks_of(report: Report) -> list[Check]:
    """Every check of :data:`CHECKS` with its outcome."""
    result = []
    for name in (*CHECKS, *report.added):
        failed = [p for p in report.problems if p.check == name]
        if failed:
            first = min(failed, key=lambda p: p.version)
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            detail = f"version {first.version}: {first.reason}{more}"
            result.append(Check(name, FAILED, detail))
        elif name in report.skipped:
            result.append(Check(name, NOT_APPLICABLE, report.skipped[name]))
        else:
            result.append(Check(name, OK, report.found.get(name, "holds")))
    return result


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
