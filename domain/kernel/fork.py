"""Forks: a new match that starts from the exact state of another at one version.

A disputed position can be played again: the fork's first event, ``Forked``, names its
origin (match id, version, and the origin's digest at that version) and carries the
origin's events up to that version, which rebuild the state exactly as they built the
origin's. Only facts of the recorded history are carried: every random draw made so far
is a field of one of those events, so nothing is drawn again.

What must not carry over is replaced: each seat's token and the referee's (a fork is a
new match with new bearers), the seed, and a game's own secret beside it (Village's).
The origin's seed is revealed when the origin ends, so a fork drawing from it would be
predictable; the fork draws every later card, die or birth from its own seed, committed
in ``Forked`` and revealed in its MatchEnded like any match's. The clock restarts at the
fork's creation, so that a turn timer runs from the fork's start instead of expiring at
once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from eventsourcing.utils import get_topic

from domain.kernel.errors import RuleViolation
from domain.kernel.match import MatchAggregate, MatchStatus, event_name
from domain.kernel.randomness import commitment
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.topics import check_fields, event_class, register_event
from domain.kernel.views import Viewer

M = TypeVar("M", bound=MatchAggregate)

#: Secrets of a creation the fork replaces, never carries: the seed, and a game's own
#: secret beside it (Village's, VI-2.2).
SECRETS = frozenset({"seed", "secret"})

#: Fields of a recorded event the fork sets itself when it replays that event.
REPLACED = frozenset({"originator_id", "originator_version", "timestamp", "digest", "prev_digest"})


class Forked(MatchAggregate.Created):
    """The first event of a fork: its origin, the origin's history, and what is new."""

    #: ``{"match_id", "version", "digest"}``: where the fork comes from.
    origin: dict[str, Any]
    #: The origin's events 1 to ``origin["version"]``: ``{"topic", "fields"}`` each.
    history: list[dict[str, Any]]
    seed: str
    #: The fork's other secret (hex), for games that hold one beside the seed.
    secret: str
    referee_token_hash: str
    token_hashes: list[str]
    stamp: dict[str, Any]

    def mutate(self, aggregate: Any) -> Any:
        assert aggregate is None
        match: Any = None
        for version, entry in enumerate(self.history, start=1):
            # The history is data: its topics are looked up among the games' classes,
            # never imported (a Forked event may come from a bundle).
            check_fields(entry["fields"])
            replayed = event_class(entry["topic"])(
                originator_id=self.originator_id,
                originator_version=version,
                timestamp=self.timestamp,
                prev_digest="",
                digest="",
                **entry["fields"],
            )
            match = replayed.mutate(match)
        assert isinstance(match, MatchAggregate)
        match.version = self.originator_version
        match._created_on = self.timestamp
        match.modified_on = self.timestamp
        match.digest = self.digest
        match.origin = dict(self.origin)
        match.seed = self.seed
        match.seed_commitment = commitment(bytes.fromhex(self.seed))
        # No player contributes to a fork's seed: its creator's entropy is empty.
        match.entropies = [""]
        match.token_hashes = list(self.token_hashes)
        match.referee_token_hash = self.referee_token_hash
        match.renew_secret(bytes.fromhex(self.secret))
        match.restart_clock(ReceiveStamp.from_dict(self.stamp).wall_ms)
        return match


register_event(Forked)


def fork_refusal(origin: MatchAggregate) -> RuleViolation | None:
    """Why the state ``origin`` is in cannot be forked, or None if it can: only a match
    in play has a position to play again, and only a state that waits for a command or a
    timer. A state inside a command's events (:meth:`MatchAggregate.pending_step`) owes
    a step that only that command took: no command or timer would take it in a fork.
    Cites the rule that ended or starts the match, or the rule of the step."""
    if origin.status is MatchStatus.ENDED:
        assert origin.end_reason is not None
        return RuleViolation(
            origin.END_RULES[origin.end_reason],
            f"the match had ended at version {origin.version}: there is nothing to play on",
        )
    if origin.status is MatchStatus.WAITING:
        return RuleViolation(
            origin.START_RULE,
            f"the match had not started at version {origin.version}: create a new match",
        )
    step = origin.pending_step()
    if step is not None:
        return RuleViolation(
            step.rule,
            f"version {origin.version} is inside a command's automatic steps "
            f"({step.message}), which nothing would take in a fork",
        )
    return None


def fork_refusal_at(events: Sequence[Any], version: int) -> RuleViolation | None:
    """Why the match with these stored events (all of them, from its first) cannot be
    forked at ``version``, naming the nearest versions that can; or None if it can.
    Only a refusal looks at the other versions' states. ``events`` are left as given."""
    at: Any = None
    for evt in copy.deepcopy(events[:version]):
        at = evt.mutate(at)
    refusal = fork_refusal(at)
    if refusal is None:
        return None
    match: Any = None
    forkable: list[int] = []
    for evt in copy.deepcopy(events):
        match = evt.mutate(match)
        if fork_refusal(match) is None:
            forkable.append(match.version)
            if match.version > version:
                break
    return RuleViolation(refusal.rule, f"{refusal.message}; {nearest(forkable, version)}")


def nearest(forkable: list[int], version: int) -> str:
    """The versions that can be forked next to ``version``, in a sentence."""
    before = [v for v in forkable if v < version]
    after = [v for v in forkable if v > version]
    if before and after:
        return f"the nearest versions that can be forked are {before[-1]} and {after[0]}"
    if before:
        return f"the nearest version that can be forked is {before[-1]}"
    if after:
        return f"the nearest version that can be forked is {after[0]}"
    return "no version of this match can be forked"


def history_entry(evt: object) -> dict[str, Any]:
    """One recorded event as the fork carries it. The origin's secret seed is left out
    (and, for a fork of a fork, its origin's): the fork replays recorded draws and never
    draws from it."""
    fields = {k: v for k, v in vars(evt).items() if k not in REPLACED}
    if event_name(evt) in ("Created", "Forked"):
        for key in SECRETS & set(fields):
            fields[key] = ""
    return {"topic": get_topic(type(evt)), "fields": fields}


def fork(
    match_class: type[M],
    origin_events: Iterable[object],
    seed: bytes,
    secret: bytes,
    referee_token_hash: str,
    token_hashes: list[str],
    stamp: ReceiveStamp,
) -> M:
    """A new match of ``match_class`` from the origin's events (1 to the forked version,
    as stored), with a new seed and secret, a new referee token and one new token per
    seat."""
    events = list(origin_events)
    last: Any = events[-1]
    origin = {
        "match_id": str(last.originator_id),
        "version": last.originator_version,
        "digest": last.digest,
    }
    forked: M = match_class._create(
        Forked,
        origin=origin,
        history=[history_entry(e) for e in events],
        seed=seed.hex(),
        secret=secret.hex(),
        referee_token_hash=referee_token_hash,
        token_hashes=token_hashes,
        stamp=stamp.to_dict(),
    )
    return forked


def forked_view(match: MatchAggregate, evt: Any, viewer: Viewer) -> tuple[str, dict[str, Any]]:
    """What a viewer sees of a ``Forked`` event: the origin and the new commitment. The
    carried history is never shown: the state after the event (each viewer's own view)
    says what the fork starts from, and the origin's events are the origin's to show."""
    view: dict[str, Any] = {
        "origin": dict(evt.origin),
        "seed_commitment": commitment(bytes.fromhex(evt.seed)),
    }
    if viewer.sees_everything:
        view["seed"] = evt.seed
    return "Forked", view
