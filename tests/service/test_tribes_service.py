"""Tribes over real gRPC: views per role, the referee's command, hidden information on the
stream, whole matches, and bad input refused with the rule and nothing written."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest

from server.serve import RunningServer, start
from tests.service.helpers import bearer, organiser, reveal, stub, watch_until
from tests.service.test_bad_input import refusal, rule_of, stored
from tests.service.tribes_helpers import (
    act,
    create_tribes,
    lift,
    penalise,
    place,
    state,
    tribes_event,
    tribes_options,
)
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms
from totem.v1 import tribes_pb2 as tr

SEED = bytes(range(32))


async def test_views_of_a_stack_per_role_and_legal_actions_for_players(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_tribes(client, 2, turn_timeout_ms=0)
        await act(client, match_id, tokens[0], place(4, 1))
        answer = await act(client, match_id, tokens[1], place(4, 3))
        assert answer.state.tribes.legal.places == []  # seat 1's turn is over
        top = tr.TribesTotem(kind=tr.TRIBES_TOTEM_KIND_TRIBE, seat=1, size=3)
        for token in (tokens[0], tokens[1], None):
            view = await state(client, match_id, token)
            assert view.spaces[4].top == top and not view.spaces[4].stack  # TR-6.1
            assert not view.seed
        whole = await state(client, match_id, referee)
        assert [(t.seat, t.size) for t in whole.spaces[4].stack] == [(0, 1), (1, 3)]
        assert whole.seed == b"" or len(whole.seed) == 32
        mine = await state(client, match_id, tokens[0])
        assert list(mine.legal.lifts) == []  # seat 0's 1 is covered
        assert [p.totem.size for p in mine.legal.places] == [2, 3, 4, 5]
        assert 4 not in mine.legal.places[0].destinations  # 2 cannot cover 3 (TR-2.3)
        assert list(mine.legal.badges) == [1, 2, 3, 4]
        assert not (await state(client, match_id)).HasField("legal")
        summary = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary
        assert summary.game == common_pb2.GAME_TRIBES and summary.variant == "base"


async def test_the_referee_penalises_through_act_and_players_cannot(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_tribes(client, 2, turn_timeout_ms=0)
        before = stored(server)
        error = await refusal(act(client, match_id, tokens[0], penalise(1)))
        assert error.code() is grpc.StatusCode.PERMISSION_DENIED
        error = await refusal(act(client, match_id, referee, place(4, 1)))
        assert error.code() is grpc.StatusCode.PERMISSION_DENIED  # the referee has no seat
        request = ms.ActRequest(match_id=match_id, seat=1, tribes=penalise(1))
        error = await refusal(client.Act(request, metadata=bearer(referee)))
        assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert stored(server) == before
        answer = await act(client, match_id, referee, penalise(1))
        assert [tribes_event(e) for e in answer.events] == ["penalised"]
        body = answer.events[0].tribes.penalised
        assert (body.seat, body.from_round) == (1, 2)
        assert answer.state.tribes.seats[1].penalised
        assert answer.state.tribes.spaces[0].stack == []  # the referee's own view
        error = await refusal(act(client, match_id, referee, penalise(1)))
        assert error.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert rule_of(error) == "TR-4.1"


async def test_tr_8_2_a_second_penalty_of_a_seat_is_refused_and_writes_nothing(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, _tokens = await create_tribes(client, 3, turn_timeout_ms=0)
        await act(client, match_id, referee, penalise(2))
        before = stored(server)
        error = await refusal(act(client, match_id, referee, penalise(2)))
        assert error.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert rule_of(error) == "TR-4.1"
        assert stored(server) == before
        answer = await act(client, match_id, referee, penalise(0))  # another seat may be
        assert [tribes_event(e) for e in answer.events] == ["penalised"]


#: TR-8.3's reproduction: on a full 3×3 board seat 1 rolls the small totem, which cannot
#: move (a normal turn), then lifts its 4 from space 5.
SETTLED_DICE = [
    tr.TRIBES_DIE_FACE_SMALL,
    tr.TRIBES_DIE_FACE_BLANK,
    tr.TRIBES_DIE_FACE_LARGE,
    *[tr.TRIBES_DIE_FACE_BLANK] * 6,
    tr.TRIBES_DIE_FACE_SMALL,
]
MINI = tr.TRIBES_TOTEM_KIND_MINI
SETTLED_MOVES = [
    place(4, special=MINI),
    place(1, 1),
    place(3, special=tr.TRIBES_TOTEM_KIND_DOOM),
    place(6, 2),
    place(0, 1),
    place(8, 3),
    place(2, 2),
    place(5, 4),
    place(7, 3),
]


async def test_tr_8_3_what_a_player_is_offered_follows_the_demand_at_the_turns_start(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _referee, tokens = await create_tribes(
            client,
            2,
            board_size=3,
            extended=True,
            turn_timeout_ms=0,
            prearranged_cards=[tr.TribesCards(cards=[1, 2])],
            prearranged_dice=SETTLED_DICE,
        )
        for k, command in enumerate(SETTLED_MOVES):
            await act(client, match_id, tokens[k % 2], command)
        answer = await act(client, match_id, tokens[1], lift(5))
        legal = answer.state.tribes.legal
        assert legal.die == tr.TRIBES_DIE_FACE_SMALL
        assert legal.must_move == tr.TRIBES_TOTEM_KIND_UNSPECIFIED  # no demand this turn
        assert list(legal.lifts) == []
        assert [(p.source, p.totem.size) for p in legal.places] == [
            (tr.TRIBES_PLACE_SOURCE_LIFTED, 4)
        ]
        assert list(legal.places[0].destinations) == [0, 1, 2, 6, 7, 8]
        before = stored(server)
        error = await refusal(act(client, match_id, tokens[1], place(5, special=MINI)))
        assert error.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert rule_of(error) == "TR-5.2"
        assert stored(server) == before
        answer = await act(client, match_id, tokens[1], place(0))  # what was offered
        assert [tribes_event(e) for e in answer.events][:2] == ["placed", "die_rolled"]
        # Seat 0's turn begins on the small totem, and now the Mini can move.
        assert (await state(client, match_id, tokens[0])).legal.must_move == MINI


async def _play_legal_moves(
    client: Any, match_id: str, tokens: list[str], rng: random.Random, limit: int = 5_000
) -> ms.GetMatchResponse:
    """Seats play moves their legal actions offer, chosen at random, to the end."""
    for _ in range(limit):
        view = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        if view.summary.status == common_pb2.MATCH_STATUS_ENDED:
            return view
        token = tokens[view.tribes.turn]
        legal = (await state(client, match_id, token)).legal
        options: list[tuple[str, Any, int]] = [("lift", None, s) for s in legal.lifts]
        options += [("place", p, d) for p in legal.places for d in p.destinations]
        kind, option, where = rng.choice(options)
        if kind == "lift":
            await act(client, match_id, token, lift(where))
        elif option.source == tr.TRIBES_PLACE_SOURCE_MAT:
            await act(client, match_id, token, place(where, option.totem.size))
        elif option.source == tr.TRIBES_PLACE_SOURCE_BESIDE:
            await act(client, match_id, token, place(where, special=option.totem.kind))
        else:
            await act(client, match_id, token, place(where))
    raise AssertionError("the match did not end")


@pytest.mark.parametrize("extended", [False, True])
async def test_a_whole_match_to_the_feathers_by_the_legal_actions(
    server: RunningServer, extended: bool
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _referee, tokens = await create_tribes(
            client, 2, turn_timeout_ms=0, extended=extended, prearranged_cards=[]
        )
        view = await asyncio.wait_for(
            _play_legal_moves(client, match_id, tokens, random.Random(3)), 240
        )
        events = await watch_until(client, match_id, view.summary.version)
    assert view.summary.end_reason == common_pb2.END_REASON_COMPLETED
    assert view.summary.variant == ("extended" if extended else "base")
    won = [e.tribes.round_won for e in events if tribes_event(e) == "round_won"]
    assert won[-1].feathers and won[-1].winner == next(
        r.seat for r in view.summary.result if r.place == 1
    )
    assert sum(1 for w in won if w.winner == won[-1].winner) >= 5
    assert tribes_event(events[-1]) == "match_ended"
    assert len(view.tribes.seed) == 32  # public now


# ---- hidden information on the stream ---------------------------------------------------


@pytest.fixture
async def fixed_seed_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    running = await start("127.0.0.1:0", store_env, seed_source=lambda: SEED)
    try:
        yield running
    finally:
        await running.stop(grace=None)


#: Seat 0's 1 and 2 go on spaces 0 and 1 in either order, covered by seat 1's 4 and 5:
#: the tops and mats agree, only what lies under spaces 0 and 1 differs. Then the same
#: moves, the last two a lift of space 0 (which uncovers the difference) and a place.
OPENINGS = ([(0, 1), (0, 4), (1, 2), (1, 5)], [(0, 2), (0, 4), (1, 1), (1, 5)])
LATER = [(8, 3), (6, 1), (3, 4), (7, 2), (5, 5)]


def _timeless(event: ms.MatchEvent) -> bytes:
    event = ms.MatchEvent.FromString(event.SerializeToString())
    event.ClearField("recorded_at")
    event.state.summary.ClearField("match_id")
    event.state.summary.ClearField("created_at")
    body = event.tribes
    for name in ("started", "round_started", "lifted", "placed", "penalised"):
        if body.HasField(name):  # type: ignore[arg-type]
            getattr(body, name).ClearField("stamp")
    return event.SerializeToString(deterministic=True)


async def _hidden_play(port: int, opening: list[tuple[int, int]]) -> tuple[int, dict[str, Any]]:
    channel, client = stub(port)
    async with channel:
        match_id, _, tokens = await create_tribes(client, 2, turn_timeout_ms=0)
        for space, size in opening:
            seat = (await state(client, match_id)).turn
            await act(client, match_id, tokens[seat], place(space, size))
        diverged = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        for space, size in LATER:
            seat = (await state(client, match_id)).turn
            await act(client, match_id, tokens[seat], place(space, size))
        await act(client, match_id, tokens[1], lift(0))
        last = (await act(client, match_id, tokens[1], place(2))).version
        streams = {
            "player": await watch_until(client, match_id, last, tokens[0], diverged),
            "other player": await watch_until(client, match_id, last, tokens[1], diverged),
            "spectator": await watch_until(client, match_id, last, None, diverged),
        }
        return diverged, streams


async def test_tr_6_1_streams_identical_until_a_lift_uncovers_the_difference(
    fixed_seed_server: RunningServer,
) -> None:
    (va, a), (vb, b) = await asyncio.wait_for(
        asyncio.gather(
            _hidden_play(fixed_seed_server.port, OPENINGS[0]),
            _hidden_play(fixed_seed_server.port, OPENINGS[1]),
        ),
        60,
    )
    assert va == vb
    for viewer in a:
        first, second = [_timeless(e) for e in a[viewer]], [_timeless(e) for e in b[viewer]]
        assert len(first) == len(second) == len(LATER) + 2
        differing = [i for i, (x, y) in enumerate(zip(first, second, strict=True)) if x != y]
        assert differing[0] == len(first) - 2, viewer
        assert tribes_event(a[viewer][differing[0]]) == "lifted"
        for event in a[viewer]:
            assert SEED not in event.SerializeToString()
            assert all(not s.stack for s in event.state.tribes.spaces)


# ---- bad input -------------------------------------------------------------------------

Setup = list[tuple[int, tr.TribesCommand]]
Call = Callable[[Any, str, str, list[str]], Awaitable[Any]]


def _by(seat: int, command: tr.TribesCommand) -> Call:
    return lambda c, m, r, t: act(c, m, t[seat], command)


EXTENDED_SMALL = {"extended": True, "prearranged_dice": [tr.TRIBES_DIE_FACE_SMALL]}
REFUSALS: dict[str, tuple[dict[str, Any], Setup, Call, grpc.StatusCode, str]] = {
    "unknown space": ({}, [], _by(0, place(9, 1)), grpc.StatusCode.INVALID_ARGUMENT, "TR-1.2"),
    "unknown space to lift": ({}, [], _by(0, lift(99)), grpc.StatusCode.INVALID_ARGUMENT, "TR-1.2"),
    "moving a covered totem": (
        {},
        [(0, place(4, 2)), (1, place(4, 3))],
        _by(0, place(0, 2)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TR-2.2",
    ),
    "moving a foreign totem": (
        {},
        [(0, place(4, 2))],
        _by(1, lift(4)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TR-2.2",
    ),
    "a smaller-or-equal cover": (
        {},
        [(0, place(4, 3))],
        _by(1, place(4, 3)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TR-2.3",
    ),
    "acting out of turn": (
        {},
        [],
        _by(1, place(4, 1)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TR-2.2",
    ),
    "a place with nothing lifted": (
        {},
        [],
        _by(0, place(4)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TR-2.2a",
    ),
    "a lifted totem put back": (
        {},
        [(0, place(4, 2)), (1, place(0, 3)), (0, lift(4))],
        _by(0, place(4)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TR-2.2a",
    ),
    "a move the die forbids": (
        EXTENDED_SMALL,
        [],
        _by(0, place(4, 1)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "TR-5.2",
    ),
    "a size that does not exist": (
        {},
        [],
        _by(0, place(4, 6)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "TR-1.1",
    ),
    "an unknown badge": (
        {},
        [],
        _by(0, place(4, 1, badge=9)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "TR-3.4",
    ),
    "a special totem in the base game": (
        {},
        [],
        _by(0, place(4, special=tr.TRIBES_TOTEM_KIND_DOOM)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "TR-5.1",
    ),
    "a tribe totem named as special": (
        EXTENDED_SMALL,
        [],
        _by(0, place(4, special=tr.TRIBES_TOTEM_KIND_TRIBE)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "TR-5.1",
    ),
    "an empty Tribes command": (
        {},
        [],
        _by(0, tr.TribesCommand()),
        grpc.StatusCode.INVALID_ARGUMENT,
        "TR-2.2",
    ),
    "a Jungle Speed command": (
        {},
        [],
        lambda c, m, r, t: c.Act(
            ms.ActRequest(match_id=m, jungle_speed=reveal()), metadata=bearer(t[0])
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "TR-1.1",
    ),
    "a spectator acting": (
        {},
        [],
        lambda c, m, r, t: c.Act(ms.ActRequest(match_id=m, tribes=place(4, 1))),
        grpc.StatusCode.UNAUTHENTICATED,
        "",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
async def test_bad_input_is_refused_naming_the_rule_and_writes_nothing(
    server: RunningServer, case: str
) -> None:
    options, setup, call, code, rule = REFUSALS[case]
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_tribes(client, 2, turn_timeout_ms=0, **options)
        for seat, command in setup:
            await act(client, match_id, tokens[seat], command)
        before = stored(server)
        error = await refusal(call(client, match_id, referee, tokens))
    assert error.code() is code, error.details()
    if rule:
        assert rule_of(error) == rule
        assert (error.details() or "").startswith(f"{rule}: ")
    assert stored(server) == before


def _create(**options: Any) -> ms.CreateMatchRequest:
    return ms.CreateMatchRequest(game=common_pb2.GAME_TRIBES, tribes=tribes_options(**options))


BAD_CREATIONS: dict[str, tuple[ms.CreateMatchRequest, str]] = {
    "five players": (_create(max_players=5), "TR-1.1"),
    "a board of 6": (_create(board_size=6), "TR-1.2"),
    "a long turn timer": (_create(turn_timeout_ms=3_600_001), "TR-2.2"),
    "no move limit": (_create(round_move_limit=0), "TR-2.5"),
    "an unspecified face": (_create(dice_faces=[0]), "TR-5.1"),
    "salvation spaces without a board size": (
        _create(salvation_spaces=tr.TribesSpaces(spaces=[0])),
        "TR-5.6",
    ),
    "cards for the wrong seats": (
        _create(max_players=2, prearranged_cards=[tr.TribesCards(cards=[1, 3])]),
        "TR-2.1",
    ),
    "rolls in the base game": (_create(prearranged_dice=[tr.TRIBES_DIE_FACE_BLANK]), "TR-5.1"),
    "Jungle Speed options": (
        ms.CreateMatchRequest(game=common_pb2.GAME_TRIBES, jungle_speed={}),  # type: ignore[arg-type]
        "TR-1.1",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CREATIONS))
async def test_bad_tribes_options_are_invalid_arguments(server: RunningServer, case: str) -> None:
    request, rule = BAD_CREATIONS[case]
    channel, client = stub(server.port)
    async with channel:
        error = await refusal(client.CreateMatch(request, metadata=organiser()))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert rule_of(error) == rule
    assert list(server.app.logged_matches()) == []


async def test_a_refusal_never_says_what_lies_under_a_stack(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_tribes(client, 2, turn_timeout_ms=0)
        await act(client, match_id, tokens[0], place(4, 2))
        await act(client, match_id, tokens[1], place(4, 3))
        error = await refusal(act(client, match_id, tokens[0], place(0, 2)))
    assert "4" not in (error.details() or "").replace("TR-2.2", "")


async def test_tribes_matches_are_listed_by_game(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, _ = await create_tribes(client, 2)
        page = await client.ListMatches(ms.ListMatchesRequest(game=common_pb2.GAME_TRIBES))
        other = await client.ListMatches(ms.ListMatchesRequest(game=common_pb2.GAME_JUNGLE_SPEED))
    assert [m.match_id for m in page.matches] == [match_id]
    assert list(other.matches) == []
