"""A fork at every version of one whole match of each game: it plays on to its end, or
it is refused, naming the rule of the step it lies inside and the nearest versions that
can be forked (domain.kernel.fork).

A command records several events (a Tribes move, the round it wins and the next round's
draw; a Village timer firing and every automatic step up to the next decision). A state
between them owes a step only that command ran, and no command or timer would run it in
a fork: such states are refused, and only they. Every state a command met can be forked.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest
from domain_support import Stamps

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel.fork import fork, fork_refusal, fork_refusal_at
from domain.kernel.match import EndReason, MatchAggregate, MatchStatus
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.village import Options as VillageOptions
from domain.village import Village

Step = Callable[[Any, Stamps], None]


def fire(match: MatchAggregate, stamps: Stamps) -> None:
    """Let the match's timer elapse (a turn timer, a decision's deadline)."""
    deadline = match.timer_deadline_ms()
    assert deadline is not None, "nothing would ever move this match"
    match.fire_timer(stamps.at(max(stamps.wall_ms, deadline)))


def jungle_speed_step(match: JungleSpeed, stamps: Stamps) -> None:
    """Grab an open race, else reveal in turn, else let the turn timer act (JS-3.4)."""
    duels = match.open_duels()
    if duels:
        match.grab(duels[0][0], stamps())
    elif match.open_arrows():
        match.grab(match.seats_in_play()[0], stamps())
    elif match.turn is not None and match.reveal_refusal(match.turn) is None:
        match.reveal(match.turn, stamps())
    else:
        fire(match, stamps)


def tribes_step(match: Tribes, stamps: Stamps) -> None:
    """A place among the legal actions of the seat whose turn it is (a lift when there is
    none), chosen by the state's digest: the same state always makes the same move."""
    seat = match.turn
    assert seat is not None
    legal = match.legal_actions(seat)
    rng = random.Random(match.digest)
    if not legal["places"]:
        match.lift(seat, rng.choice(legal["lifts"]), stamps())
        return
    option = rng.choice(legal["places"])
    totem = None if option["from"] == "lifted" else option["totem"]
    match.place(seat, rng.choice(option["destinations"]), stamps(), totem)


def village_step(match: Village, stamps: Stamps) -> None:
    """Every decision left to its deadline: the documented defaults apply (VI-2)."""
    fire(match, stamps)


def jungle_speed() -> MatchAggregate:
    return JungleSpeed.create(JungleSpeedOptions(max_players=3, turn_timeout_ms=1_000), bytes(32))


def tribes() -> MatchAggregate:
    options = TribesOptions(max_players=2, turn_timeout_ms=1_000)
    return Tribes.create(options, bytes(32))


def village() -> MatchAggregate:
    # totem_b: a short match (VI-2.9), five rounds with this seed.
    options = VillageOptions(max_players=2, totem_b=True)
    return Village.create(options, bytes(32), secret=bytes(32))


GAMES: dict[str, tuple[Callable[[], MatchAggregate], Step]] = {
    "jungle_speed": (jungle_speed, jungle_speed_step),
    "tribes": (tribes, tribes_step),
    "village": (village, village_step),
}


def play(match: MatchAggregate, step: Step, stamps: Stamps, limit: int = 5_000) -> list[int]:
    """Play ``match`` to its end; return the version after each command."""
    boundaries = []
    for _ in range(limit):
        if match.status is MatchStatus.ENDED:
            return boundaries
        step(match, stamps)
        boundaries.append(match.version)
    raise AssertionError(f"no end after {limit} commands")


def whole_match(game: str) -> tuple[list[Any], set[int], Stamps]:
    """One match played to its end: its events and the versions each command left."""
    create, step = GAMES[game]
    stamps = Stamps()
    match = create()
    boundaries = {match.version}
    for seat in range(match.max_players):
        match.join(f"player {seat}", bytes([seat]), f"token-hash-{seat}", stamps())
        boundaries.add(match.version)
    boundaries.update(play(match, step, stamps))
    assert match.end_reason is EndReason.COMPLETED
    return list(match.pending_events), boundaries, stamps


def states(events: list[Any]) -> dict[int, MatchAggregate]:
    """The state at every version, each its own copy."""
    built: Any = None
    found = {}
    for evt in copy.deepcopy(events):
        built = evt.mutate(built)
        found[built.version] = copy.deepcopy(built)
    return found


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_fork_at_every_version_plays_on_to_its_end_or_is_refused(game: str) -> None:
    events, boundaries, stamps = whole_match(game)
    at = states(events)
    _, step = GAMES[game]
    forkable = [v for v, state in at.items() if fork_refusal(state) is None]
    steps: set[str] = set()
    named_rules: set[str] = set()
    for version, state in at.items():
        refusal = fork_refusal(state)
        if version in forkable:
            new = fork(
                type(state),
                copy.deepcopy(events[:version]),
                bytes([version % 256]) * 32,
                bytes(32),
                "referee-hash",
                [f"hash-{s}" for s in range(len(state.players))],
                stamps(after_ms=60_000),
            )
            assert new.status is MatchStatus.PLAYING
            play(new, step, stamps)
            assert new.end_reason is EndReason.COMPLETED, version
            continue
        assert refusal is not None
        # Only a state no command met is refused: one out of play, or inside a command.
        assert state.status is not MatchStatus.PLAYING or version not in boundaries, version
        if state.status is MatchStatus.PLAYING:
            steps.add(refusal.rule)
        if refusal.rule in named_rules:
            continue  # each kind of refusal is read whole once: each takes a whole replay
        named_rules.add(refusal.rule)
        named = fork_refusal_at(events, version)
        assert named is not None and named.rule == refusal.rule
        before = [v for v in forkable if v < version]
        after = [v for v in forkable if v > version]
        nearest = [str(v) for v in (before[-1:] + after[:1])]
        assert named.message.startswith(refusal.message)
        assert named.message.endswith(" and ".join(nearest)), named.message
    # Every state a command left in play is forkable.
    playing = {v for v, state in at.items() if state.status is MatchStatus.PLAYING}
    assert boundaries & playing <= set(forkable)
    assert steps, "the match never lay inside a command's automatic steps"
    if game != "village":
        # Where every command ends exactly where a seat may act, nothing else is forkable.
        assert set(forkable) <= boundaries


def test_tribes_extended_refuses_exactly_the_states_inside_a_command() -> None:
    """The extended game's own steps too: the die rolled for a turn (TR-5.1), a pass for
    a seat with no move (TR-2.5), and the timer's lift, placed in the same instant
    (TR-2.2). Every other move is the turn timer's, so that the last kind happens."""
    stamps = Stamps()
    options = TribesOptions(max_players=3, extended=True, turn_timeout_ms=1_000)
    match = Tribes.create(options, bytes(range(32)))
    boundaries = {match.version}
    for seat in range(3):
        match.join(f"player {seat}", b"", f"token-hash-{seat}", stamps())
        boundaries.add(match.version)
    while match.status is MatchStatus.PLAYING:
        if match.version % 2:
            tribes_step(match, stamps)
        else:
            fire(match, stamps)
        boundaries.add(match.version)
    at = states(list(match.pending_events))
    rules = set()
    for version, state in at.items():
        refusal = fork_refusal(state)
        if state.status is MatchStatus.PLAYING:
            assert (refusal is None) == (version in boundaries), version
        if refusal is not None and state.status is MatchStatus.PLAYING:
            rules.add(refusal.rule)
    assert {"TR-5.1", "TR-2.2", "TR-3.3"} <= rules
