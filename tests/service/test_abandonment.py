"""Matches nobody plays end (JS-8.3); a referee may stop a match with a stated result.

Waits are on events (a spectator's stream until the match ends), bounded so that a
broken server fails the test instead of hanging it; nothing is timed.
"""

from __future__ import annotations

import asyncio
from uuid import UUID

import grpc
import pytest

from server.serve import RunningServer, start
from tests.service.helpers import bearer, js_event, js_options, organiser, rule_of, stub
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms

BOUND_S = 60
ABANDON_AFTER_MS = 1000


async def new_match(
    client: match_service_pb2_grpc.MatchServiceStub, players: int, seated: int
) -> tuple[str, str, list[str]]:
    """A match of ``players`` seats, ``seated`` of them taken, abandoned after 1 s away."""
    created = await client.CreateMatch(
        ms.CreateMatchRequest(
            game=common_pb2.GAME_JUNGLE_SPEED,
            jungle_speed=js_options(max_players=players, turn_timeout_ms=0),
            abandon_after_ms=ABANDON_AFTER_MS,
        ),
        metadata=organiser(),
    )
    tokens = []
    for seat in range(seated):
        joined = await client.JoinMatch(
            ms.JoinMatchRequest(match_id=created.match_id, name=f"p{seat}", any_seat=True)
        )
        tokens.append(joined.player_token)
    return created.match_id, created.referee_token, tokens


async def the_end(client: match_service_pb2_grpc.MatchServiceStub, match_id: str) -> ms.MatchEvent:
    """The match's last event, read as a spectator (who keeps no seat at the table)."""

    async def last() -> ms.MatchEvent:
        call = client.Watch(ms.WatchRequest(match_id=match_id, omit_state=True))
        events = [event async for event in call]  # it ends after the final event
        return events[-1]

    event = await asyncio.wait_for(last(), BOUND_S)
    assert js_event(event) == "match_ended"
    return event


async def test_js_8_3_a_match_whose_players_are_all_away_ends_as_abandoned(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, _ = await new_match(client, 2, 2)  # started; nobody watches or acts
        end = await the_end(client, match_id)
    assert end.match_ended.reason == common_pb2.END_REASON_ABANDONED
    assert "seats 0, 1" in end.match_ended.statement
    assert f"{ABANDON_AFTER_MS} ms" in end.match_ended.statement
    assert end.match_ended.seed  # revealed, as at every end


async def test_js_8_3_a_player_with_an_open_stream_keeps_the_match_going(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await new_match(client, 2, 2)
        match = server.actors.actor(UUID(match_id)).match
        assert match is not None
        call = client.Watch(ms.WatchRequest(match_id=match_id), metadata=bearer(tokens[1]))
        await call.read()  # the stream is open: seat 1 is at the table
        assert server.actors.abandon_deadline_ms(match) is None
        call.cancel()  # once the stream is closed, the absence counts from then
        end = await the_end(client, match_id)
    assert end.match_ended.reason == common_pb2.END_REASON_ABANDONED


async def test_js_8_3_a_waiting_match_nobody_joins_expires(store_env: dict[str, str]) -> None:
    running = await start("127.0.0.1:0", store_env, waiting_expiry_ms=500)
    try:
        channel, client = stub(running.port)
        async with channel:
            match_id, _, _ = await new_match(client, 3, 1)
            end = await the_end(client, match_id)
    finally:
        await running.stop(grace=None)
    assert end.match_ended.reason == common_pb2.END_REASON_ABANDONED
    assert "nobody joined" in end.match_ended.statement
    assert "1 of 3 seats taken" in end.match_ended.statement


@pytest.mark.parametrize("waiting", [False, True])
async def test_js_8_3_zombies_come_back_after_a_restart_only_to_end(
    store_env: dict[str, str], waiting: bool
) -> None:
    """A match nobody plays, waiting or in play, is abandoned by the next server: its
    absence counts from that server's start."""
    first = await start("127.0.0.1:0", store_env, waiting_expiry_ms=3_600_000)
    channel, client = stub(first.port)
    async with channel:
        match_id, _, _ = await new_match(client, 2, 1 if waiting else 2)
    await first.stop(grace=None)
    second = await start("127.0.0.1:0", store_env, waiting_expiry_ms=500)
    try:
        channel, client = stub(second.port)
        async with channel:
            end = await the_end(client, match_id)
    finally:
        await second.stop(grace=None)
    assert end.match_ended.reason == common_pb2.END_REASON_ABANDONED


def stop_request(
    match_id: str, statement: str, result: dict[int, int] | None = None
) -> ms.ActRequest:
    placements = [common_pb2.Placement(seat=s, place=p) for s, p in (result or {}).items()]
    return ms.ActRequest(
        match_id=match_id, stop=ms.StopMatch(statement=statement, result=placements)
    )


async def test_js_8_3_the_referee_stops_a_match_with_a_stated_result(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await new_match(client, 2, 2)
        request = stop_request(match_id, "bob left the venue", {0: 1, 1: 2})
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.Act(request, metadata=bearer(tokens[0]))  # a player may not
        assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await client.Act(stop_request(match_id, "\x1b[2J"), metadata=bearer(referee))
        assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert rule_of(bad.value) == "JS-8.3"
        answer = await client.Act(request, metadata=bearer(referee))
        end = answer.events[-1].match_ended
        assert end.reason == common_pb2.END_REASON_STOPPED
        assert end.statement == "bob left the venue"
        assert [(p.seat, p.place) for p in end.result] == [(0, 1), (1, 2)]
        with pytest.raises(grpc.aio.AioRpcError) as again:
            await client.Act(request, metadata=organiser())
        assert again.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert rule_of(again.value) == "JS-8.3"


async def test_js_8_3_a_command_that_leaves_the_deadline_keeps_the_timer_one_that_moves_it_not(
    server: RunningServer,
) -> None:
    """The match's timer is set again only when its deadline moves: a waiting match's
    expiry stays where it was while the actor looks again; a join that starts the match
    moves it to the abandonment deadline (JS-8.3)."""
    channel, client = stub(server.port)
    async with channel:
        match_id, _, _ = await new_match(client, 2, 1)  # waiting: it expires if nobody comes
        actor = server.actors.actor(UUID(match_id))

        def look(match: object) -> None:
            return None

        await server.actors.run(UUID(match_id), look, writes=False)
        timer, due = actor.timer, actor.timer_due_ms
        assert timer is not None and due is not None
        await server.actors.run(UUID(match_id), look, writes=False)
        assert actor.timer is timer and actor.timer_due_ms == due
        await client.JoinMatch(ms.JoinMatchRequest(match_id=match_id, name="p1", any_seat=True))
        assert actor.timer is not None and actor.timer is not timer
        assert actor.timer_due_ms != due
        assert timer.cancelled()
