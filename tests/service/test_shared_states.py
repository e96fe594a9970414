"""A seat's state built from the spectators' one (server/codec, ``SpectatorStates``).

The codec builds and encodes the spectators' state of a match version once and gives
every seat those bytes with its own part (its legal actions) encoded inside the game
state, where the game's ``personal_view`` allows it; answers and stream events carry the
state as bytes after their own. These tests hold that shortcut to the state built whole
from the game's ``state_view``, for every viewer, along matches of every game played in
process, with every singular field written once; and check that two copies of one
version decided differently are never taken for each other. Nothing here measures time.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Iterator
from typing import Any, TypeVar

import pytest

from domain.games import GAMES
from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel.match import MatchAggregate, MatchStatus
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.views import Viewer
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.tribes.match import FROM_LIFTED
from domain.village import Options as VillageOptions
from domain.village import Village
from server import codec
from totem.v1 import match_service_pb2

SEED = bytes(range(32))
#: Commands played in each match; a state is compared after each.
STEPS = 60

M = TypeVar("M", bound=MatchAggregate)


class Clock:
    """Receive stamps one second apart: no pacing rule ever refuses a command."""

    def __init__(self) -> None:
        self.count = itertools.count(1)
        self.wall_ns = 1_800_000_000 * 10**9

    def __call__(self, at_ms: int | None = None) -> ReceiveStamp:
        n = next(self.count)
        self.wall_ns = max(self.wall_ns + 10**9, (at_ms or 0) * 10**6)
        return ReceiveStamp(sequence=n, monotonic_ns=n * 10**9, wall_ns=self.wall_ns)


def seated(match: M, players: int, clock: Clock) -> M:
    """``match`` with every seat taken (it starts)."""
    for seat in range(players):
        match.join(f"p{seat}", b"", f"h{seat}", clock())
    return match


def whole_state(match: MatchAggregate, viewer: Viewer) -> match_service_pb2.MatchState:
    """The state as built before the shortcut: the game's whole view, encoded."""
    game = GAMES[type(match).GAME]
    game_codec = codec.codec_for(game.name)
    state = match_service_pb2.MatchState(summary=codec.summary(match))
    getattr(state, game_codec.FIELD).CopyFrom(
        game_codec.state_message(game.state_view(match, viewer))
    )
    return state


def viewers(match: MatchAggregate) -> list[Viewer]:
    seats = [Viewer.player(s) for s in range(len(match.players))]
    return [Viewer.spectator(), *seats, Viewer.referee()]


def assert_as_built_whole(match: MatchAggregate) -> None:
    for viewer in viewers(match):
        expected = whole_state(match, viewer)
        assert codec.match_state(match, viewer) == expected, viewer
        last = match.pending_events[-1] if match.pending_events else None
        assert_each_field_once(match_service_pb2.MatchState, codec.state_bytes(match, viewer))
        if last is not None and last.originator_version == match.version:
            # A stream event's bytes: the event's, then the state's (``codec.embedded``).
            data = codec.encoded_event(match, last, (viewer, True))
            assert_each_field_once(match_service_pb2.MatchEvent, data)
            event = match_service_pb2.MatchEvent.FromString(data)
            assert event.state == expected, viewer
            event.ClearField("state")
            assert event == codec.match_event(match, last, viewer), viewer
        # A command's answer, made the same way: version, events, then the state.
        data = codec.act_answer(match, viewer)
        assert_each_field_once(match_service_pb2.ActResponse, data)
        answer = match_service_pb2.ActResponse.FromString(data)
        assert answer.version == match.version
        assert list(answer.events) == [
            codec.match_event(match, e, viewer) for e in match.pending_events
        ]
        assert answer.state == expected, viewer


def assert_each_field_once(message: Any, data: bytes) -> None:
    """No field that is not repeated occurs twice in ``data``, at any depth: a parser
    that keeps the last occurrence of a singular message, as some do, instead of merging
    them reads the same message as one that merges."""
    descriptor = message.DESCRIPTOR
    seen: set[int] = set()
    at = 0
    while at < len(data):
        key, at = read_varint(data, at)
        number, kind = key >> 3, key & 7
        field = descriptor.fields_by_number[number]
        if not field.is_repeated:
            assert number not in seen, f"{descriptor.name}.{field.name} is written twice"
            seen.add(number)
        if kind == 0:
            _, at = read_varint(data, at)
        elif kind == 2:
            size, at = read_varint(data, at)
            if field.message_type is not None:
                assert_each_field_once(field.message_type._concrete_class, data[at : at + size])
            at += size
        else:
            at += {1: 8, 5: 4}[kind]


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def test_a_field_written_twice_is_found() -> None:
    """The check above can fail: a state with its game state written in two parts."""
    state = match_service_pb2.MatchState()
    state.jungle_speed.turn = 1
    twice = state.SerializeToString() + state.SerializeToString()
    with pytest.raises(AssertionError, match="jungle_speed is written twice"):
        assert_each_field_once(match_service_pb2.MatchState, twice)


def jungle_speed(clock: Clock, rng: random.Random) -> Iterator[MatchAggregate]:
    match = seated(
        JungleSpeed.create(JungleSpeedOptions(max_players=4, turn_timeout_ms=0), SEED), 4, clock
    )
    yield match
    for _ in range(STEPS):
        if match.status is not MatchStatus.PLAYING:
            return
        grabs = [
            (seat, option["target"])
            for seat in match.seats
            for option in match.legal_actions(seat)["grabs"]
        ]
        if grabs and rng.random() < 0.7:
            seat, target = rng.choice(grabs)
            match.grab(seat, clock(), target)
        elif match.turn is not None:
            match.reveal(match.turn, clock())
        else:
            return
        yield match


def tribes(clock: Clock, rng: random.Random) -> Iterator[MatchAggregate]:
    match = seated(Tribes.create(TribesOptions(max_players=3, turn_timeout_ms=0), SEED), 3, clock)
    yield match
    for _ in range(STEPS):
        if match.status is not MatchStatus.PLAYING or match.turn is None:
            return
        seat = match.turn
        legal = match.legal_actions(seat)
        options = [("lift", s, None) for s in legal["lifts"]]
        options += [("place", d, p) for p in legal["places"] for d in p["destinations"]]
        if not options:
            return
        kind, where, option = rng.choice(options)
        if kind == "lift":
            match.lift(seat, where, clock())
        else:
            assert option is not None
            totem = None if option["from"] == FROM_LIFTED else option["totem"]
            match.place(seat, where, clock(), totem)
        yield match


def village(clock: Clock, rng: random.Random) -> Iterator[MatchAggregate]:
    match = seated(Village.create(VillageOptions(max_players=3), SEED, secret=bytes(32)), 3, clock)
    yield match
    for _ in range(STEPS):
        deadline = match.timer_deadline_ms()
        if match.status is not MatchStatus.PLAYING or deadline is None:
            return
        # Every decision left to its default: the deadline passes.
        match.fire_timer(clock(at_ms=deadline))
        yield match


PLAYS: dict[str, Any] = {"jungle_speed": jungle_speed, "tribes": tribes, "village": village}


@pytest.mark.parametrize("game", sorted(PLAYS))
def test_every_viewer_gets_the_state_built_whole(game: str) -> None:
    compared = 0
    for match in PLAYS[game](Clock(), random.Random(7)):
        assert_as_built_whole(match)
        compared += 1
    assert compared > 10, "the match was played on for a while"


def test_two_copies_of_one_version_decided_apart_keep_their_own_states() -> None:
    """Two server instances may decide the same version differently, and one of them then
    fails to save: its state must not be served for the other's event."""
    clock = Clock()
    match = seated(
        JungleSpeed.create(JungleSpeedOptions(max_players=3, turn_timeout_ms=0), SEED), 3, clock
    )
    assert match.turn is not None
    ours, theirs = match, copy.deepcopy(match)
    ours.reveal(ours.turn, clock())  # type: ignore[arg-type]
    theirs.grab((theirs.turn + 1) % 3, clock())  # type: ignore[operator]  # a wrong grab
    assert ours.version == theirs.version and ours.digest != theirs.digest

    for one in (ours, theirs):
        for viewer in viewers(one):
            assert codec.match_state(one, viewer) == whole_state(one, viewer)


def test_the_kept_states_are_bounded() -> None:
    states = codec.SpectatorStates(kept=3)
    clock = Clock()
    match = seated(
        JungleSpeed.create(JungleSpeedOptions(max_players=2, turn_timeout_ms=0), SEED), 2, clock
    )
    for _ in range(6):
        assert match.turn is not None
        match.reveal(match.turn, clock())
        spectators = whole_state(match, Viewer.spectator())
        assert match_service_pb2.MatchState.FromString(states.get(match).wire()) == spectators
    assert len(states) == 3
    # The same version again is the same bytes, not encoded a second time.
    assert states.get(match) is states.get(match)
