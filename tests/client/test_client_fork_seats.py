"""A fork's seats taken with the tokens it printed: by the client library and its bots.

A fork's seats are all taken (in the names of the origin's players), so nobody can join
them; whoever holds a seat's token takes that seat (:meth:`Client.take_seat`). The forks
here are of matches in the middle of a turn (a seat's move, an open duel, a decision
owed), on a fresh server.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import grpc
import pytest

from server.serve import RunningServer
from tests.client.support import BOUND
from tests.service import tribes_helpers as tribes
from tests.service import village_helpers as village
from tests.service.helpers import stub
from tests.service.test_fork import duel_match, fork
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms
from totem_client import Client, Session, TotemError
from totem_client.bots.jungle_speed import JungleSpeedBot
from totem_client.bots.table import Bot, play_seats
from totem_client.bots.tribes import TribesBot
from totem_client.bots.village import VillageBot

#: Bound on a whole match of bots (not a timing check).
MATCH_BOUND = 300.0


async def tribes_fork(arena: RunningServer) -> tuple[list[str], ms.ForkMatchResponse]:
    """A Tribes match of two seats forked after its second move (a seat's turn, nothing
    pending): the origin's seat tokens and the fork's answer, with its tokens."""
    channel, client = stub(arena.port)
    async with channel:
        origin, referee, tokens = await tribes.create_tribes(client, 2, turn_timeout_ms=60_000)
        for _ in range(2):
            moved = await tribes.play_first_legal(client, origin, tokens)
        forked = await fork(client, origin, moved.version, referee)
    return tokens, forked


async def test_a_token_takes_the_seat_it_holds_and_plays(
    arena: RunningServer, client: Client
) -> None:
    _, forked = await tribes_fork(arena)
    # Given in the other order: the server, not the order, says whose seat each is.
    sessions = [
        await client.take_seat(forked.match_id, token) for token in reversed(forked.player_tokens)
    ]
    assert [(s.seat, s.name) for s in sessions] == [(1, "player 1"), (0, "player 0")]
    assert all(s.role == common_pb2.VIEWER_ROLE_PLAYER and s.game == "tribes" for s in sessions)
    assert all(s.seen_version == 1 for s in sessions)  # the fork's MatchForked

    # TR-2.2: the seat whose turn it is moves on, through the session the token gave.
    turn = (await client.get(forked.match_id)).tribes.turn
    mover = next(s for s in sessions if s.seat == turn)
    view = await mover.get()
    option = view.tribes.legal.places[0]
    answer = await mover.place_option(option, option.destinations[0])
    assert answer.version == 2 and mover.seen_version == 2


async def test_a_token_that_holds_no_seat_is_refused_clearly(
    arena: RunningServer, client: Client
) -> None:
    origin_tokens, forked = await tribes_fork(arena)
    # The origin's tokens are not the fork's (docs/api.md, Forks).
    with pytest.raises(TotemError) as old:
        await client.take_seat(forked.match_id, origin_tokens[0])
    assert old.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert f"this token holds no seat in match {forked.match_id}" in str(old.value)
    assert "the token is not valid for this match" in str(old.value)
    with pytest.raises(TotemError) as made_up:
        await client.take_seat(forked.match_id, "not-a-token")
    assert made_up.value.code == grpc.StatusCode.UNAUTHENTICATED
    # The referee sees everything but holds no seat.
    with pytest.raises(TotemError) as referee:
        await client.take_seat(forked.match_id, forked.referee_token)
    assert referee.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "the referee's of match" in str(referee.value) and "give a seat's token" in str(
        referee.value
    )


def tribes_bot(session: Session, index: int) -> TribesBot:
    return TribesBot(session, think_ms=(0, 2), rng=random.Random(index))


async def test_bots_play_a_forks_seats_to_the_end(arena: RunningServer, client: Client) -> None:
    _, forked = await tribes_fork(arena)
    seated: list[str] = []
    result = await asyncio.wait_for(
        play_seats(
            client,
            forked.match_id,
            forked.player_tokens,
            "tribes",
            tribes_bot,
            on_seated=seated.append,
        ),
        MATCH_BOUND,
    )
    assert seated == [forked.match_id] and result.match_id == forked.match_id
    assert result.end_reason == "completed"
    assert sorted((s.place, s.name) for s in result.standings)[0][0] == 1
    assert sorted(s.name for s in result.standings) == ["player 0", "player 1"]
    view = await asyncio.wait_for(client.get(forked.match_id), BOUND)
    assert view.summary.status == common_pb2.MATCH_STATUS_ENDED
    # Every move the bots sent was legal when they decided it: none was refused.
    assert all(b.stats.refusals == [] for b in result.bots)


async def test_bots_refuse_seats_they_cannot_play(arena: RunningServer, client: Client) -> None:
    _, forked = await tribes_fork(arena)
    tokens = list(forked.player_tokens)
    with pytest.raises(ValueError, match="is a game of tribes, not of jungle_speed"):
        await play_seats(
            client, forked.match_id, tokens, "jungle_speed", lambda s, _: JungleSpeedBot(s)
        )
    with pytest.raises(ValueError, match="two of the tokens hold seat 0"):
        await play_seats(client, forked.match_id, [tokens[0], tokens[0]], "tribes", tribes_bot)
    with pytest.raises(ValueError, match="at least one seat's token"):
        await play_seats(client, forked.match_id, [], "tribes", tribes_bot)


async def other_fork(arena: RunningServer, game: str) -> ms.ForkMatchResponse:
    """A Jungle Speed match forked at its open duel (JS-4.1, no turn timer), or a Village
    match forked once it has started (a decision owed by every family)."""
    channel, client = stub(arena.port)
    async with channel:
        if game == "jungle_speed":
            origin, referee, _ = await duel_match(client, turn_timeout_ms=0)
            return await fork(client, origin, 6, referee)
        origin, referee, _ = await village.create_village(client, 2, **village.long_deadlines())
        current = await client.GetMatch(ms.GetMatchRequest(match_id=origin))
        return await fork(client, origin, current.summary.version, referee)


def other_bot(game: str) -> Callable[[Session, int], Bot]:
    if game == "jungle_speed":
        return lambda session, i: JungleSpeedBot(session, rng=random.Random(i))
    return lambda session, i: VillageBot(session, think_ms=(0, 1), rng=random.Random(i))


@pytest.mark.parametrize("game", ["jungle_speed", "village"])
async def test_bots_play_forks_of_the_other_games_to_the_end(
    arena: RunningServer, client: Client, game: str
) -> None:
    forked = await other_fork(arena, game)
    result = await asyncio.wait_for(
        play_seats(client, forked.match_id, forked.player_tokens, game, other_bot(game)),
        MATCH_BOUND,
    )
    assert result.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert result.end_reason == "completed"
    assert sorted(s.seat for s in result.standings) == [0, 1]
    assert result.summary.version > 1  # the fork played on from its MatchForked
