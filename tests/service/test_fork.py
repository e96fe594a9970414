"""ForkMatch: a new live match from the exact state of another at one of its versions."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from server.serve import RunningServer
from tests.service import tribes_helpers as tribes
from tests.service import village_helpers as village
from tests.service.helpers import (
    NO_SPECIALS,
    act,
    bearer,
    create_and_join,
    deal_for,
    grab,
    js_event,
    reveal,
    stub,
    symbol,
    watch_until,
)
from tests.service.test_match_end import scripted_deck
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

#: Seat 0's first card and seat 1's show the same shape: a duel once both are up (JS-4.1).
DUEL_DEAL = deal_for(2, {0: [symbol(0, 0), symbol(1, 1)], 1: [symbol(0, 1), symbol(2, 2)]})


async def duel_match(
    client: match_service_pb2_grpc.MatchServiceStub, **options: object
) -> tuple[str, str, list[str]]:
    """A match of two with an open duel at version 6 (created, 2 joins, dealt, 2 reveals)."""
    match_id, referee, tokens = await create_and_join(
        client, 2, prearranged_deal=DUEL_DEAL, **options
    )
    await act(client, match_id, tokens[0], reveal())
    await act(client, match_id, tokens[1], reveal())
    return match_id, referee, tokens


async def fork(
    client: match_service_pb2_grpc.MatchServiceStub, match_id: str, version: int, token: str
) -> ms.ForkMatchResponse:
    response: ms.ForkMatchResponse = await client.ForkMatch(
        ms.ForkMatchRequest(match_id=match_id, version=version), metadata=bearer(token)
    )
    return response


def comparable(state: ms.GetMatchResponse) -> js.JungleSpeedState:
    """The game state without what a fork changes on purpose: its seed commitment (a new
    seed) and its turn deadline (the clock restarts when the fork is made)."""
    game = js.JungleSpeedState()
    game.CopyFrom(state.jungle_speed)
    game.ClearField("seed_commitment")
    game.ClearField("turn_deadline_ms")
    game.ClearField("seed")
    return game


async def views(
    client: match_service_pb2_grpc.MatchServiceStub, match_id: str, tokens: list[str | None]
) -> list[ms.GetMatchResponse]:
    return [
        await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=bearer(t) if t else None
        )
        for t in tokens
    ]


async def test_a_fork_starts_from_the_origin_state_in_every_view(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, tokens = await duel_match(client, turn_timeout_ms=0)
        before = await views(client, origin, [referee, None, *tokens])
        # The origin plays on; the fork is taken from version 6 all the same.
        await act(client, origin, tokens[1], grab())
        forked = await fork(client, origin, 6, referee)
        after = await views(
            client, forked.match_id, [forked.referee_token, None, *forked.player_tokens]
        )
    assert len(forked.player_tokens) == 2 and forked.version == 1
    for origin_view, fork_view in zip(before, after, strict=True):
        assert comparable(fork_view) == comparable(origin_view)
        assert fork_view.role == origin_view.role and fork_view.seat == origin_view.seat
    # The open duel of JS-4.1 is there to be won in the fork.
    assert [list(d.seats) for d in after[1].jungle_speed.open_duels] == [[0, 1]]
    assert after[0].summary.status == common_pb2.MATCH_STATUS_PLAYING
    assert after[0].summary.version == 1
    assert forked.seed_commitment == after[0].jungle_speed.seed_commitment
    assert forked.seed_commitment != before[0].jungle_speed.seed_commitment


async def test_a_fork_plays_on_with_its_own_tokens_only(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, tokens = await duel_match(client, turn_timeout_ms=0)
        forked = await fork(client, origin, 6, referee)
        with pytest.raises(grpc.aio.AioRpcError) as old:
            await act(client, forked.match_id, tokens[0], grab())
        # JS-4.2: the first grab of the duel wins it, in the fork as in any match.
        won = await act(client, forked.match_id, forked.player_tokens[0], grab())
        events = await watch_until(client, forked.match_id, won.version)
        listed = await client.ListMatches(ms.ListMatchesRequest())
        origin_now = await client.GetMatch(ms.GetMatchRequest(match_id=origin))
    assert old.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert won.version == 2
    assert [js_event(e) for e in events] == ["match_forked", "duel_won"]
    first = events[0].match_forked
    assert first.origin_match_id == origin and first.origin_version == 6
    assert len(first.origin_digest) == 32 and not first.seed  # the seed is the referee's
    assert events[1].jungle_speed.duel_won.winner == 0
    assert list(events[1].jungle_speed.duel_won.losers) == [1]
    assert [m.match_id for m in listed.matches] == [origin, forked.match_id]
    assert origin_now.summary.version == 6  # the origin is untouched by its fork


async def test_the_referee_sees_the_origin_digest_at_the_forked_version(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, _ = await duel_match(client, turn_timeout_ms=0)
        forked = await fork(client, origin, 5, referee)
        origin_events = await watch_until(client, origin, 6, referee)
        fork_events = await watch_until(client, forked.match_id, 1, forked.referee_token)
    first = fork_events[0].match_forked
    assert first.origin_digest == origin_events[4].digest
    assert first.seed_commitment == forked.seed_commitment
    assert len(first.seed) == 32
    # Version 5: seat 0 revealed, so it is seat 1's turn (JS-3.1).
    assert fork_events[0].state.jungle_speed.turn == 1


async def test_a_fork_turn_timer_runs_as_a_recovered_match_timer(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, _ = await create_and_join(
            client, 2, prearranged_deal=DUEL_DEAL, turn_timeout_ms=300
        )
        forked = await fork(client, origin, 4, referee)
        # JS-3.4: nobody reveals, so the timer reveals for seat 0.
        events = await watch_until(client, forked.match_id, 2)
    assert js_event(events[1]) == "revealed"
    assert events[1].jungle_speed.revealed.seat == 0
    assert events[1].jungle_speed.revealed.cause == js.REVEAL_CAUSE_TIMEOUT


@pytest.mark.parametrize(
    ("version", "code"),
    [(0, grpc.StatusCode.OUT_OF_RANGE), (7, grpc.StatusCode.OUT_OF_RANGE)],
)
async def test_a_version_the_origin_does_not_have_is_out_of_range(
    server: RunningServer, version: int, code: grpc.StatusCode
) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, _ = await duel_match(client, turn_timeout_ms=0)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await fork(client, origin, version, referee)
        listed = await client.ListMatches(ms.ListMatchesRequest())
    assert refused.value.code() == code
    assert [m.match_id for m in listed.matches] == [origin]


async def test_only_the_origin_referee_may_fork(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, _, tokens = await duel_match(client, turn_timeout_ms=0)
        other, other_referee, _ = await create_and_join(client, 2)
        codes = []
        for token in (tokens[0], other_referee, None):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.ForkMatch(
                    ms.ForkMatchRequest(match_id=origin, version=6),
                    metadata=bearer(token) if token else None,
                )
            codes.append(refused.value.code())
        listed = await client.ListMatches(ms.ListMatchesRequest())
    assert codes == [grpc.StatusCode.PERMISSION_DENIED] * 3
    assert [m.match_id for m in listed.matches] == [origin, other]


async def test_a_state_out_of_play_cannot_be_forked(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, tokens = await create_and_join(
            client, 2, prearranged_deal=scripted_deck(), specials=NO_SPECIALS, turn_timeout_ms=0
        )
        for _ in range(36):
            for seat in (0, 1):
                await act(client, origin, tokens[seat], reveal())
        ended = await act(client, origin, tokens[0], grab())  # the last duel ends it (JS-8.2)
        refusals = []
        for version in (ended.version, 3, ended.version + 1):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await fork(client, origin, version, referee)
            refusals.append((refused.value.code(), refused.value.details()))
        listed = await client.ListMatches(ms.ListMatchesRequest())
    codes = [code for code, _ in refusals]
    assert codes == [grpc.StatusCode.FAILED_PRECONDITION] * 2 + [grpc.StatusCode.OUT_OF_RANGE]
    assert refusals[0][1].startswith("JS-8.2: ")
    assert refusals[1][1].startswith("JS-2.1: ")  # seats still free: not started
    assert [m.match_id for m in listed.matches] == [origin]


#: What a fork changes on purpose in any game's state: the seed, Village's secret and the
#: deadlines, which run from the fork's creation.
CHANGED = {"seed", "seed_commitment", "secret", "turn_deadline_ms", "deadline_ms"}


def plain(state: ms.GetMatchResponse) -> Any:
    """The response's game state as plain data, without what a fork changes."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in CHANGED}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    data = json_format.MessageToDict(state, preserving_proto_field_name=True)
    data.pop("summary")
    return strip(data)


async def test_a_tribes_fork_starts_from_the_origin_state_and_plays_on(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, tokens = await tribes.create_tribes(client, 3, turn_timeout_ms=60_000)
        for _ in range(2):
            moved = await tribes.play_first_legal(client, origin, tokens)
        forked = await fork(client, origin, moved.version, referee)
        before = await views(client, origin, [referee, None, *tokens])
        after = await views(
            client, forked.match_id, [forked.referee_token, None, *forked.player_tokens]
        )
        played = await tribes.play_first_legal(client, forked.match_id, forked.player_tokens)
    assert [plain(v) for v in after] == [plain(v) for v in before]
    assert played.version == 2  # TR-2.2: the seat whose turn it is moves on in the fork


async def test_a_village_fork_starts_from_the_origin_state(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        origin, referee, tokens = await village.create_village(
            client, 2, **village.long_deadlines()
        )
        current = await client.GetMatch(ms.GetMatchRequest(match_id=origin))
        forked = await fork(client, origin, current.summary.version, referee)
        before = await views(client, origin, [referee, None, *tokens])
        after = await views(
            client, forked.match_id, [forked.referee_token, None, *forked.player_tokens]
        )
    assert [plain(v) for v in after] == [plain(v) for v in before]
    assert after[2].village.legal.decisions  # a decision is awaited, from the fork's seats
