"""The shutdown sequence: no client is left in doubt about what was applied.

NOT_SERVING first; every Watch stream ends at once with UNAVAILABLE and the version to
resume after; during the drain window new commands get UNAVAILABLE with a retry hint
while reads are answered; commands still waiting at its end are refused, never applied;
the save under way completes.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from uuid import UUID

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.errors import SHUTDOWN_RETRY_MS
from server.serve import RunningServer, start
from tests.service.helpers import (
    act,
    bearer,
    create_and_join,
    organiser,
    retry_delay_ms,
    reveal,
    stub,
)
from tests.service.limits_helpers import until
from totem.v1 import match_service_pb2 as ms

#: Long enough that a test ends the drain window itself, never by the clock.
FOREVER_S = 3600.0


@pytest.fixture
async def running(store_env: dict[str, str]) -> Any:
    server = await start("127.0.0.1:0", store_env)
    try:
        yield server
    finally:
        server.actors.hurry()
        await server.stop(grace=None)


async def test_streams_end_at_once_and_commands_are_refused_while_draining(
    running: RunningServer,
) -> None:
    channel, client = stub(running.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        call = client.Watch(ms.WatchRequest(match_id=match_id), metadata=bearer(tokens[0]))
        versions = [(await call.read()).version for _ in range(3)]  # created, 2 joins, ...
        stopping = asyncio.ensure_future(running.stop(drain=FOREVER_S))
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            while True:
                event = await call.read()
                assert event is not grpc.aio.EOF
                versions.append(event.version)
        assert ended.value.code() is grpc.StatusCode.UNAVAILABLE
        last = versions[-1]
        assert f"after_version={last}" in str(ended.value.details())
        assert retry_delay_ms(ended.value) == SHUTDOWN_RETRY_MS
        assert not stopping.done()  # the stream did not wait for the drain window

        health = health_pb2_grpc.HealthStub(channel)
        status = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert status.status == health_pb2.HealthCheckResponse.NOT_SERVING

        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await act(client, match_id, tokens[0], reveal())
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        assert "not applied" in str(refused.value.details())
        assert retry_delay_ms(refused.value) == SHUTDOWN_RETRY_MS
        for request in (
            client.CreateMatch(ms.CreateMatchRequest(game=1), metadata=organiser()),
            client.JoinMatch(ms.JoinMatchRequest(match_id=match_id, any_seat=True)),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as also:
                await request
            assert also.value.code() is grpc.StatusCode.UNAVAILABLE

        # Reads are still answered, and show that nothing was applied.
        state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        assert state.summary.version == last
        with pytest.raises(grpc.aio.AioRpcError) as watch_again:
            await client.Watch(ms.WatchRequest(match_id=match_id, after_version=last)).read()
        assert watch_again.value.code() is grpc.StatusCode.UNAVAILABLE

        stored = running.app.events_after(UUID(match_id))
        assert [e.originator_version for e in stored] == list(range(1, last + 1))
        running.actors.hurry()
        await asyncio.wait_for(stopping, 30)


async def test_waiting_commands_are_refused_and_the_save_under_way_completes(
    store_env: dict[str, str],
) -> None:
    """The store closes only after the save under way is done (closing it under a running
    save would lose the event, or crash the process, as SQLite can); the command queued
    behind it is refused, never applied."""
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    saving, release = threading.Event(), threading.Event()
    save = first.app.save

    def slow_save(*args: Any, **kwargs: Any) -> Any:
        saving.set()
        release.wait(30)
        return save(*args, **kwargs)

    try:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        turn = state.jungle_speed.turn
        first.app.save = slow_save  # type: ignore[method-assign]
        running = asyncio.ensure_future(act(client, match_id, tokens[turn], reveal()))
        assert await asyncio.to_thread(saving.wait, 30)
        actor = first.actors.actor(UUID(match_id))
        queued = asyncio.Event()
        submit = actor.submit

        def noted(*args: Any, **kwargs: Any) -> Any:
            future = submit(*args, **kwargs)
            queued.set()
            return future

        actor.submit = noted  # type: ignore[method-assign]
        waiting = asyncio.ensure_future(act(client, match_id, tokens[1 - turn], reveal()))
        await asyncio.wait_for(queued.wait(), 30)  # queued behind the save
        stopping = asyncio.ensure_future(first.stop(grace=None, drain=0))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await waiting
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        assert "not applied" in str(refused.value.details())
        assert not running.done() and not stopping.done()  # the save is let finish
        release.set()
        answer = await running
        await asyncio.wait_for(stopping, 30)
    finally:
        release.set()
        await channel.close()
    second = await start("127.0.0.1:0", store_env)
    try:
        stored = second.app.events_after(UUID(match_id))
        # The acknowledged reveal is stored, and the refused command left nothing after it.
        assert answer.version > state.summary.version
        assert stored[-1].originator_version == answer.version
    finally:
        await second.stop(grace=None)


async def test_timers_stop_when_the_drain_begins(running: RunningServer) -> None:
    """The server that takes the match over fires its timer; this one no longer does."""
    channel, client = stub(running.port)
    async with channel:
        match_id, _, _ = await create_and_join(client, 2, turn_timeout_ms=60_000)
        actor = running.actors.actor(UUID(match_id))
        assert actor.timer is not None
        stopping = asyncio.ensure_future(running.stop(drain=FOREVER_S))
        await asyncio.sleep(0)
        assert actor.timer is None
        running.actors.hurry()
        await asyncio.wait_for(stopping, 30)


async def test_play_streams_refuse_while_draining_then_end_with_every_request_answered(
    running: RunningServer,
) -> None:
    """During the drain window a Play stream stays open and refuses each new command
    (UNAVAILABLE, retry hint, not applied); when the window ends the stream ends with
    UNAVAILABLE, without holding the server's stop for its grace period."""
    channel, client = stub(running.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        call = client.Play(metadata=bearer(tokens[0]))
        request = ms.PlayRequest(act=ms.ActRequest(match_id=match_id, jungle_speed=reveal()))
        await call.write(request)
        applied = await asyncio.wait_for(call.read(), 30)
        assert applied.WhichOneof("outcome") == "applied"

        stopping = asyncio.ensure_future(running.stop(drain=FOREVER_S))
        await until(lambda: running.actors.draining, "the drain window begun")
        await call.write(request)  # out of turn too, but the drain refuses it first
        refused = await asyncio.wait_for(call.read(), 30)
        assert refused.refused.code == grpc.StatusCode.UNAVAILABLE.value[0]
        assert "not applied" in refused.refused.message
        state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        assert state.summary.version == applied.applied.version
        # A new Play stream is refused as it opens, as a new Watch stream is.
        late = client.Play(metadata=bearer(tokens[1]))
        with pytest.raises(grpc.aio.AioRpcError) as not_opened:
            await asyncio.wait_for(late.read(), 30)
        assert not_opened.value.code() is grpc.StatusCode.UNAVAILABLE
        assert retry_delay_ms(not_opened.value) == SHUTDOWN_RETRY_MS

        running.actors.hurry()
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            await asyncio.wait_for(call.read(), 30)
        assert ended.value.code() is grpc.StatusCode.UNAVAILABLE
        assert retry_delay_ms(ended.value) == SHUTDOWN_RETRY_MS
        # The stream did not wait for the port to close (5 s of grace).
        await asyncio.wait_for(stopping, 30)
