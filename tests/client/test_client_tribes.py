"""The Python client speaks Tribes: creating any game's match, the session's Tribes
commands, and the Tribes bot (its choices, and whole matches from the stream alone)."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from tests.client.support import BOUND
from totem.v1 import common_pb2
from totem.v1 import tribes_pb2 as pb
from totem_client import Client, TotemError
from totem_client.bots.tribes import TribesBot, choose
from totem_client.bots.tribes import play_table as play_tribes_table
from totem_client.games.tribes import tribes_options

MATCH_BOUND = 240.0


async def test_create_any_game_and_keep_the_jungle_speed_signature(client: Client) -> None:
    tribes = await client.create("tribes", tribes_options(max_players=3, board_size=5))
    view = await client.get(tribes.match_id)
    assert view.summary.game == common_pb2.GAME_TRIBES
    assert view.tribes.options.board_size == 5 and view.summary.max_players == 3
    default = await client.create("tribes")
    assert (await client.get(default.match_id)).tribes.options.max_players == 4
    jungle = await client.create_match(variant="RU", max_players=3)
    assert (await client.get(jungle.match_id)).summary.variant == "RU"
    with pytest.raises(ValueError):
        await client.create("go")
    with pytest.raises(TypeError):
        await client.create("jungle_speed", tribes_options())
    with pytest.raises(TotemError) as refused:
        await client.create_tribes(max_players=9)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.rule == "TR-1.1"


async def test_a_session_that_has_not_seen_its_game_asks_before_starting(client: Client) -> None:
    created = await client.create_tribes(max_players=3, turn_timeout_ms=0)
    ann = await client.join(created.match_id, "ann")
    await client.join(created.match_id, "bob")
    assert ann.game is None  # a join does not say the game
    answer = await ann.start()  # Tribes' own start, not another game's
    assert ann.game == "tribes"
    assert answer.state.summary.status == common_pb2.MATCH_STATUS_PLAYING


async def test_a_session_lifts_places_starts_and_the_referee_penalises(client: Client) -> None:
    created = await client.create_tribes(max_players=3, turn_timeout_ms=0)
    ann = await client.join(created.match_id, "ann")
    bob = await client.join(created.match_id, "bob")
    await ann.get()
    assert ann.game == "tribes"
    answer = await ann.start()  # two of three seats: Tribes' start, the session knows
    first, second = (ann, bob) if answer.state.tribes.turn == 0 else (bob, ann)
    await first.place(4, size=2)
    answer = await second.place(0, size=3)
    answer = await first.lift(4)
    legal = answer.state.tribes.legal
    assert legal.places[0].source == pb.TRIBES_PLACE_SOURCE_LIFTED
    await first.place_option(legal.places[0], legal.places[0].destinations[-1])
    with pytest.raises(TotemError) as refused:
        await first.place(5, size=1, badge="wisdom")  # not its turn
    assert refused.value.rule == "TR-2.2"
    referee = client.referee(created)
    answer = await referee.penalise(1)
    assert answer.state.tribes.seats[1].penalised
    with pytest.raises(TotemError) as denied:
        await bob.penalise(0)
    assert denied.value.code == grpc.StatusCode.PERMISSION_DENIED


# ---- the bot's choices -------------------------------------------------------------


def _state(board: dict[int, tuple[int, int]], mat: list[int], seat: int = 0) -> pb.TribesState:
    """A 3×3 state: ``board`` maps spaces to (seat, size) tops; ``seat`` may place each
    size of ``mat`` on every space it could cover."""
    state = pb.TribesState(board_size=3, turn=seat)
    for space in range(9):
        entry = pb.TribesSpace(space=space, row=space // 3, column=space % 3)
        if space in board:
            owner, size = board[space]
            entry.top.CopyFrom(
                pb.TribesTotem(kind=pb.TRIBES_TOTEM_KIND_TRIBE, seat=owner, size=size)
            )
        state.spaces.append(entry)
    for size in mat:
        reachable = [s for s in range(9) if s not in board or board[s][1] < size]
        state.legal.places.append(
            pb.TribesPlaceOption(
                totem=pb.TribesTotem(kind=pb.TRIBES_TOTEM_KIND_TRIBE, seat=seat, size=size),
                source=pb.TRIBES_PLACE_SOURCE_MAT,
                destinations=reachable,
            )
        )
    return state


@pytest.mark.parametrize("seed", range(5))
def test_the_bot_prefers_a_winning_move(seed: int) -> None:
    # Seat 0 holds 0 and 1: space 2 completes its row (even though seat 1 threatens too).
    state = _state({0: (0, 1), 1: (0, 2), 6: (1, 1), 7: (1, 2)}, [3, 4])
    move = choose(state, 0, random.Random(seed))
    assert move is not None and move.kind == "place" and move.destination == 2


@pytest.mark.parametrize("seed", range(5))
def test_the_bot_blocks_an_opponents_line_in_the_making(seed: int) -> None:
    # Seat 1 holds 3 and 4: seat 0 puts a totem on 5, or covers one of seat 1's.
    state = _state({3: (1, 1), 4: (1, 2), 0: (0, 1)}, [3])
    move = choose(state, 0, random.Random(seed))
    assert move is not None and move.destination in (3, 4, 5)


def test_the_bot_has_no_move_when_none_is_offered() -> None:
    assert choose(_state({}, []), 0, random.Random(1)) is None


# ---- bots against a real server --------------------------------------------------------


@pytest.mark.parametrize(("players", "extended"), [(2, False), (2, True)])
async def test_bots_play_from_the_stream_alone_to_the_feathers(
    client: Client, players: int, extended: bool
) -> None:
    created = await client.create_tribes(
        max_players=players, extended=extended, turn_timeout_ms=10_000
    )
    sessions = [await client.join(created.match_id, f"bot-{i}") for i in range(players)]

    def no_get_match(*args: object, **kwargs: object) -> None:
        raise AssertionError("a bot called GetMatch")

    get_match, client._stub.GetMatch = client._stub.GetMatch, no_get_match
    try:
        bots = [TribesBot(s, think_ms=(0, 2), rng=random.Random(i)) for i, s in enumerate(sessions)]
        summaries = await asyncio.wait_for(
            asyncio.gather(*(bot.run() for bot in bots)), MATCH_BOUND
        )
    finally:
        client._stub.GetMatch = get_match
    referee = await client.referee(created).get()
    assert referee.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert all(s == referee.summary for s in summaries)
    winners = [b for b in bots if b.stats.feathers]
    assert len(winners) == 1 and winners[0].stats.rounds_won >= 5
    assert sum(b.stats.moves for b in bots) > 0
    events = [e async for e in client.watch(created.match_id, with_state=False)]
    assert events[-1].WhichOneof("event") == "match_ended"
    # Every move the bots sent was legal when they decided it: none was refused.
    assert all(b.stats.refusals == [] for b in bots), [b.stats.refusals for b in bots]


async def test_a_table_of_tribes_bots(client: Client) -> None:
    seated: list[str] = []
    result = await asyncio.wait_for(
        play_tribes_table(client, 2, turn_timeout_ms=10_000, seed=3, on_seated=seated.append),
        MATCH_BOUND,
    )
    assert seated == [result.match_id]
    assert result.end_reason == "completed"
    assert [s.place for s in result.standings] == [1, 2]
    late = TribesBot(client.session(result.match_id, seat=0))
    summary = await asyncio.wait_for(late.run(), BOUND)
    assert summary.status == common_pb2.MATCH_STATUS_ENDED and late.stats.moves == 0
