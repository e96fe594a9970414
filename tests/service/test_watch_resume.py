"""Watch: catch-up from the store, then live, with no gap and no duplicate."""

from __future__ import annotations

import asyncio
from uuid import UUID

import grpc

from server.serve import RunningServer
from tests.service.helpers import (
    NO_SPECIALS,
    bearer,
    create_and_join,
    play_reveals,
    stub,
    watch_until,
)
from totem.v1 import match_service_pb2 as ms


async def test_resume_after_version_gets_every_later_event_once_in_order(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        # Symbol cards only: every reveal passes (see NO_SPECIALS).
        match_id, _, tokens = await create_and_join(
            client, 3, turn_timeout_ms=0, specials=NO_SPECIALS
        )
        last = await play_reveals(client, match_id, tokens, 6)
        first_part = await watch_until(client, match_id, 4)
        # The connection drops after version 4; the client resumes from there.
        rest = await asyncio.wait_for(watch_until(client, match_id, last, after_version=4), 30)
    assert [e.version for e in first_part] == [1, 2, 3, 4]
    assert [e.version for e in rest] == list(range(5, last + 1))


async def test_live_events_follow_catch_up_without_gap_or_duplicate(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        received: list[int] = []
        call = client.Watch(ms.WatchRequest(match_id=match_id), metadata=bearer(tokens[1]))

        async def read(until: int) -> None:
            async for event in call:
                received.append(event.version)
                if event.version >= until:
                    return

        # Commands run while the stream catches up and after: versions 4.. are written
        # concurrently with the read.
        reveals = asyncio.create_task(play_reveals(client, match_id, tokens, 10))
        last = await asyncio.wait_for(reveals, 30)
        await asyncio.wait_for(read(last), 30)
        call.cancel()
    assert received == list(range(1, last + 1))


async def test_a_stream_that_falls_behind_is_closed_and_resumes(server: RunningServer) -> None:
    server.actors.hub.queue_size = 1
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        last = await play_reveals(client, match_id, tokens, 3)
        call = client.Watch(ms.WatchRequest(match_id=match_id))
        seen = []
        while len(seen) < last:
            event = await asyncio.wait_for(call.read(), 30)
            assert event is not grpc.aio.EOF
            seen.append(event.version)
        # A burst larger than the stream's queue: the hub cannot hold it for this stream.
        match = server.app.load(UUID(match_id))
        (stored,) = server.app.events_after(UUID(match_id), last - 1)
        server.actors.hub.publish(match, stored)
        server.actors.hub.publish(match, stored)
        try:
            await asyncio.wait_for(call.read(), 30)
        except grpc.aio.AioRpcError as error:
            assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"after_version={last}" in (error.details() or "")
        else:
            raise AssertionError("the stream was not closed")
        newer = await play_reveals(client, match_id, tokens, 2)
        resumed = await asyncio.wait_for(
            watch_until(client, match_id, newer, after_version=seen[-1]), 30
        )
    assert seen + [e.version for e in resumed] == list(range(1, newer + 1))
