"""Invariants of Tribes over random command sequences, legal and illegal (TR-7).

- TR-7.1 every tribe totem is on its mat, on the board exactly once (or lifted, in the
  middle of its move), or removed by TR-4.1; the special totems are each beside the
  board, on it, or lifted (extended game only).
- TR-7.2 every stack is strictly decreasing in size from bottom to top.
- TR-7.3 replaying the recorded events reproduces every state: through the JSON
  transcoder of an ``eventsourcing`` application, at every version, and the live state
  after every command.

Besides: a refused command (``DomainError``) leaves the version, the pending events and
the state unchanged; and the legal actions agree with the commands: what they offer is
accepted, what they do not offer is refused.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import random
from dataclasses import dataclass
from typing import Any

from domain_support import Stamps, check_pending_steps, check_personal_views, state_of
from eventsourcing.application import Application
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.kernel import GENESIS_DIGEST, DomainError, MatchStatus
from domain.kernel.chain import stored_event_digest
from domain.tribes import Options, Tribes, views
from domain.tribes.match import FROM_LIFTED
from domain.tribes.pieces import BADGES, CHIEF, DOOM, MINI, SIZES, SPECIALS, size_of, tribe_totem


@dataclass(frozen=True)
class Command:
    kind: str  # legal, lift, place, timer, penalise, start
    a: int
    b: int
    c: int


KINDS = ["legal", "lift", "place", "timer", "penalise", "start"]
WEIGHTS = [70, 8, 12, 6, 2, 2]


def random_script(seed: int, length: int) -> list[Command]:
    """Mostly legal play, some nonsense. Hypothesis draws the seed; long scripts reach
    late rounds that short drawn lists never do."""
    rng = random.Random(seed)
    return [
        Command(
            rng.choices(KINDS, WEIGHTS)[0],
            rng.randrange(-1, 30),
            rng.randrange(-3, 30),
            rng.randrange(0, 1000),
        )
        for _ in range(length)
    ]


@st.composite
def matches(draw: st.DrawFn) -> tuple[Tribes, Stamps]:
    n = draw(st.integers(2, 4))
    extended = draw(st.booleans())
    board_size = draw(st.sampled_from([None, None, 3, 4, 5]))
    cards = draw(
        st.one_of(
            st.none(), st.lists(st.permutations(range(1, n + 1)).map(list), min_size=1, max_size=3)
        )
    )
    dice = None
    if extended:
        dice = draw(
            st.one_of(
                st.none(),
                st.lists(st.sampled_from(["blank", "large", "small"]), min_size=1, max_size=8),
            )
        )
    options = Options(
        max_players=n,
        board_size=board_size,
        extended=extended,
        turn_timeout_ms=draw(st.sampled_from([0, 60_000])),
        round_move_limit=draw(st.sampled_from([200, 6, 30])),
        prearranged_cards=cards,
        prearranged_dice=dice,
    )
    stamps = Stamps()
    match = Tribes.create(options, draw(st.binary(min_size=32, max_size=32)), b"")
    seated = draw(st.integers(1, n))
    for s in range(seated):
        match.join(f"p{s}", draw(st.binary(max_size=4)), f"h{s}", stamps())
    return match, stamps


def run(match: Tribes, stamps: Stamps, command: Command) -> None:
    """Run one command; ``legal`` picks among what the turn's legal actions offer."""
    rng = random.Random(command.c)
    seat = match.turn if match.turn is not None else command.a % 4
    if command.kind == "legal":
        legal = match.legal_actions(seat)
        options = [("lift", s, None) for s in legal["lifts"]]
        options += [("place", d, p) for p in legal["places"] for d in p["destinations"]]
        if not options:
            match.start(seat, stamps())
            return
        kind, where, option = rng.choice(options)
        if kind == "lift":
            match.lift(seat, where, stamps())
            return
        assert option is not None
        totem = None if option["from"] == FROM_LIFTED else option["totem"]
        badge = rng.choice([None, None, *legal["badges"]]) if legal["badges"] else None
        match.place(seat, where, stamps(), totem, badge)
    elif command.kind == "lift":
        match.lift(command.a % 5 if command.c % 3 == 0 else seat, command.b, stamps())
    elif command.kind == "place":
        totem = rng.choice([None, DOOM, MINI, *range(0, 21)])
        badge = rng.choice([None, None, "glory", *BADGES])
        who = command.a % 5 if command.c % 3 == 0 else seat
        match.place(who, command.b, stamps(), totem, badge)
    elif command.kind == "timer":
        after = rng.choice([0, 1_000, 60_000, 120_000])
        match.fire_timer(stamps(after_ms=after))
    elif command.kind == "penalise":
        match.penalise(command.a % 5, stamps())
    else:
        match.start(command.a % 5, stamps())


def check_invariants(match: Tribes) -> None:
    """TR-7.1 and TR-7.2."""
    if match.status is MatchStatus.WAITING:
        return
    found: dict[int, int] = {}
    for stack in match.board:
        for piece in stack:
            found[piece] = found.get(piece, 0) + 1
        sizes = [size_of(p) for p in stack]
        assert sizes == sorted(set(sizes)), f"TR-7.2: {stack}"  # strictly increasing upward
    if match.lifted is not None:
        found[match.lifted.piece] = found.get(match.lifted.piece, 0) + 1
    for seat in match.seats:
        for size in match.mats[seat]:
            piece = tribe_totem(seat, size)
            found[piece] = found.get(piece, 0) + 1
        for size in SIZES:
            piece = tribe_totem(seat, size)
            removed = size == CHIEF and seat in match.removed
            assert found.get(piece, 0) == (0 if removed else 1), f"TR-7.1: {piece}"
    for piece in match.beside:
        found[piece] = found.get(piece, 0) + 1
    for piece in SPECIALS:
        assert found.get(piece, 0) == (1 if match.options.extended else 0)
    tribe = {p for p in found if p >= 0}
    assert tribe <= {tribe_totem(s, z) for s in match.seats for z in SIZES}


class Checker:
    def __init__(self, match: Tribes) -> None:
        self.match = match
        self.states: dict[int, dict[str, Any]] = {match.version: state_of(match)}
        self.refusals = 0
        check_invariants(match)

    def step(self, stamps: Stamps, command: Command) -> None:
        match = self.match
        before = state_of(match)
        version, pending = match.version, len(match.pending_events)
        try:
            run(match, stamps, command)
        except DomainError:
            self.refusals += 1
            assert match.version == version
            assert len(match.pending_events) == pending
            assert state_of(match) == before
            return
        assert match.version > version, "an accepted command records at least one event"
        check_invariants(match)
        self.states[match.version] = state_of(match)


def replay_everything(match: Tribes, states: dict[int, dict[str, Any]]) -> None:
    """TR-7.3: store the events, reload them through the transcoder, and compare the
    state at every version with the one the original events give, and with the live
    state after each command."""
    local: dict[int, dict[str, Any]] = {}
    aggregate: Any = None
    for evt in match.pending_events:
        aggregate = evt.mutate(aggregate)
        local[evt.originator_version] = state_of(aggregate)
    assert local[match.version] == state_of(match)
    app: Application[Any] = Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    app.save(match)
    rebuilt: Any = None
    previous = GENESIS_DIGEST
    for stored in app.events.get(match.id):
        assert stored_event_digest(stored) == stored.digest
        assert stored.prev_digest == previous
        previous = stored.digest
        rebuilt = stored.mutate(rebuilt)
        version = stored.originator_version
        assert state_of(rebuilt) == local[version], f"version {version}"
        if version in states:
            assert state_of(rebuilt) == states[version], f"version {version}"
    assert rebuilt is not None and rebuilt.version == match.version


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 400))
def test_tr_7_invariants_over_random_commands(
    start: tuple[Tribes, Stamps], script_seed: int, length: int
) -> None:
    match, stamps = start
    checker = Checker(match)
    for command in random_script(script_seed, length):
        checker.step(stamps, command)
    replay_everything(match, checker.states)


# ---- the legal actions agree with the commands ---------------------------------------


def _copy(match: Tribes) -> Tribes:
    return copy.deepcopy(match)


def check_must_move(match: Tribes, legal: dict[str, Any], settled: dict[Any, Any]) -> None:
    """The die's demand is settled when the turn begins (TR-8.3): ``must_move`` stays
    what it was before the turn's lift, and every action offered moves that totem."""
    demanded = legal["must_move"]
    turn = (match.round, match.moves, match.rolls)
    if match.lifted is None:
        settled[turn] = demanded
    elif turn in settled:
        assert demanded == settled[turn], "TR-8.3: the demand changed during the turn"
    if demanded is None:
        return
    assert all(match.top(s) == demanded for s in legal["lifts"])
    assert all(p["totem"] == demanded for p in legal["places"])


def check_legal_actions(
    match: Tribes, stamps: Stamps, rng: random.Random, settled: dict[Any, Any] | None = None
) -> None:
    """Offered actions succeed on a copy; actions not offered are refused by the match
    itself, which a refusal leaves unchanged."""
    version = match.version
    seats = list(match.seats) or [0]
    if match.turn is not None:
        check_must_move(match, match.legal_actions(match.turn), {} if settled is None else settled)
    for seat in {rng.choice(seats), match.turn if match.turn is not None else 0}:
        legal = match.legal_actions(seat)
        for space in rng.sample(legal["lifts"], min(3, len(legal["lifts"]))):
            _copy(match).lift(seat, space, stamps())
        for space in range(-1, match.size * match.size + 1):
            if space not in legal["lifts"]:
                try:
                    match.lift(seat, space, stamps())
                except DomainError:
                    pass
                else:
                    raise AssertionError(f"lift of {space} accepted but not offered")
        offered = {
            (None if p["from"] == FROM_LIFTED else p["totem"], d)
            for p in legal["places"]
            for d in p["destinations"]
        }
        for totem, destination in rng.sample(sorted(offered, key=str), min(3, len(offered))):
            _copy(match).place(seat, destination, stamps(), totem)
        candidates = [None, DOOM, MINI, *(tribe_totem(seat, z) for z in SIZES)]
        for _ in range(6):
            totem = rng.choice(candidates)
            destination = rng.randrange(-1, match.size * match.size + 1)
            if (totem, destination) in offered or (
                match.lifted is not None and totem == match.lifted.piece
            ):
                continue
            try:
                match.place(seat, destination, stamps(), totem)
            except DomainError:
                pass
            else:
                raise AssertionError(f"place of {totem} on {destination} accepted, not offered")
        if legal["start"]:
            _copy(match).start(seat, stamps())
    assert match.version == version


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 150))
def test_legal_actions_agree_with_the_commands(
    start: tuple[Tribes, Stamps], script_seed: int, length: int
) -> None:
    match, stamps = start
    rng = random.Random(script_seed)
    settled: dict[Any, Any] = {}
    for command in random_script(script_seed, length):
        check_legal_actions(match, stamps, rng, settled)
        with contextlib.suppress(DomainError):
            run(match, stamps, command)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(2, 4),
    extended=st.booleans(),
    seed=st.binary(min_size=32, max_size=32),
    choices=st.integers(0, 2**32),
)
def test_matches_played_by_the_legal_actions_end_with_the_feathers(
    players: int, extended: bool, seed: bytes, choices: int
) -> None:
    """Whatever the seats choose among their legal actions, every turn has one, and a
    match always goes on until someone takes the Feathers (TR-3.5)."""
    stamps = Stamps()
    match = Tribes.create(Options(max_players=players, extended=extended), seed)
    for s in range(players):
        match.join(f"p{s}", b"", f"h{s}", stamps())
    rng = random.Random(choices)
    while match.status is MatchStatus.PLAYING and match.version < 20_000:
        run(match, stamps, Command("legal", 0, 0, rng.randrange(10**6)))
    assert match.status is MatchStatus.ENDED
    assert sum(1 for r in match.result if r["place"] == 1) == 1


def _moves(legal: dict[str, Any]) -> tuple[Any, ...]:
    return (legal["lifts"], legal["places"], legal["forced_cover"])


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 150))
def test_a_state_in_the_middle_of_a_command_offers_no_move_that_is_gone(
    start: tuple[Tribes, Stamps], script_seed: int, length: int
) -> None:
    """Streams carry the state after every event, also after those in the middle of a
    command (a move, then the next turn's roll, say), which no command ever meets. Such a
    state offers a seat either no move, or exactly the moves the command's last state
    offers: a client acting on any state it is shown is never refused because of it."""
    match, stamps = start
    boundaries = [match.version]
    for command in random_script(script_seed, length):
        with contextlib.suppress(DomainError):
            run(match, stamps, command)
        if match.version > boundaries[-1]:
            boundaries.append(match.version)
    rebuilt: Any = None
    by_version: dict[int, list[tuple[Any, ...]]] = {}
    for evt in match.pending_events:
        rebuilt = evt.mutate(rebuilt)
        by_version[evt.originator_version] = [
            _moves(rebuilt.legal_actions(s)) for s in rebuilt.seats
        ]
    for previous, boundary in itertools.pairwise(boundaries):
        final = by_version[boundary]
        for version in range(previous + 1, boundary):
            for seat, moves in enumerate(by_version[version]):
                nothing = not moves[0] and not moves[1]
                assert nothing or moves == final[seat], f"version {version}, seat {seat}"


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 300))
def test_a_state_owes_an_automatic_step_exactly_inside_a_command(
    start: tuple[Tribes, Stamps], script_seed: int, length: int
) -> None:
    """A round's draw (TR-2.1) or outcome (TR-3.3), a roll (TR-5.1), a pass (TR-2.5) or
    the timer's move (TR-2.2) still due is owed only between the events of one command:
    what refuses a fork there, and only there (domain.kernel.fork). Checked from the
    start on: ``matches()`` fills the seats itself."""
    match, stamps = start
    ended = {match.version}
    for command in random_script(script_seed, length):
        with contextlib.suppress(DomainError):
            run(match, stamps, command)
        ended.add(match.version)
    check_pending_steps(match, ended, first=min(ended))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 150))
def test_tr_6_1_a_seat_sees_what_a_spectator_sees_and_its_legal_actions(
    start: tuple[Tribes, Stamps], script_seed: int, length: int
) -> None:
    """TR-6.1: players and spectators see the top of every stack, only the referee
    more; a seat's state adds only what that seat may do now."""
    match, stamps = start
    check_personal_views(match, views)
    for command in random_script(script_seed, length):
        with contextlib.suppress(DomainError):
            run(match, stamps, command)
        check_personal_views(match, views)
