"""A Watch stream whose client stops reading is ended, never held (RESOURCE_EXHAUSTED with
its resume version); open streams are capped per connection and per client address."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from uuid import UUID

import grpc
import pytest

from server.errors import RETRY_METADATA_KEY
from tests.service.helpers import bearer, grab, retry_delay_ms, stub
from tests.service.limits_helpers import LOOSE, WAIT_S, decided_race, serving, until
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc

#: A client connection that takes at most this many bytes it has not read: a stream
#: that is not read fills it, and then the server's writes wait.
SMALL_WINDOW = [("grpc.http2.lookahead_bytes", 65535), ("grpc.http2.bdp_probe", 0)]
#: Grabs sent at most to fill the window: far more than it takes.
MAX_GRABS = 20_000


def slow_channel(port: int) -> grpc.aio.Channel:
    """A connection of its own (not shared with the test's other channel) that takes at
    most :data:`SMALL_WINDOW` bytes it has not read."""
    return grpc.aio.insecure_channel(
        f"127.0.0.1:{port}", options=[*SMALL_WINDOW, ("grpc.use_local_subchannel_pool", 1)]
    )


async def test_a_stream_that_is_never_read_is_ended_and_let_go(
    store_env: dict[str, str],
) -> None:
    limits = dataclasses.replace(LOOSE, stream_write_timeout_s=0.5)
    async with serving(store_env, limits) as running:
        # Only the write deadline can end this stream: its queue never overflows.
        running.hub.queue_size = 10**9
        channel, client = stub(running.port)
        slow = slow_channel(running.port)
        async with channel, slow:
            match_id, tokens, _ = await decided_race(client)
            watched = UUID(match_id)
            call = match_service_pb2_grpc.MatchServiceStub(slow).Watch(
                ms.WatchRequest(match_id=match_id)
            )
            await until(lambda: running.hub.watchers(watched) == 1, "the stream subscribed")
            sent = 0
            while running.hub.watchers(watched) and sent < MAX_GRABS:
                await client.Act(
                    ms.ActRequest(match_id=match_id, jungle_speed=grab()),
                    metadata=bearer(tokens[1]),
                )
                sent += 1
            # The server let the stream go while its client had read nothing.
            await until(lambda: running.hub.watchers(watched) == 0, "the subscription freed")
            await until(lambda: running.service.streams.open() == 0, "the stream slot freed")
            await until(lambda: running.calls.in_flight == 0, "the call ended on the server")

            versions = []
            try:
                async for event in call:
                    versions.append(event.version)
                raise AssertionError("the stream ended without a status")
            except grpc.aio.AioRpcError as error:
                ended = error
            assert ended.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            details = str(ended.details())
            assert "this stream fell behind; watch again with after_version=" in details
            resume = int(details.rsplit("=", 1)[1])
            assert versions == list(range(1, len(versions) + 1))
            assert 0 < resume <= versions[-1]
            again = client.Watch(ms.WatchRequest(match_id=match_id, after_version=resume))
            assert (await again.read()).version == resume + 1
            again.cancel()


async def test_open_streams_are_capped_per_connection_and_per_address(
    store_env: dict[str, str],
) -> None:
    limits = dataclasses.replace(LOOSE, streams_per_connection=2, streams_per_address=3)
    async with serving(store_env, limits) as running:
        first = grpc.aio.insecure_channel(
            f"127.0.0.1:{running.port}", options=[("grpc.use_local_subchannel_pool", 1)]
        )
        second = grpc.aio.insecure_channel(
            f"127.0.0.1:{running.port}", options=[("grpc.use_local_subchannel_pool", 1)]
        )
        async with first, second:
            one = match_service_pb2_grpc.MatchServiceStub(first)
            two = match_service_pb2_grpc.MatchServiceStub(second)
            match_id, _, _ = await decided_race(one)
            request = ms.WatchRequest(match_id=match_id)

            async def opened(client: match_service_pb2_grpc.MatchServiceStub) -> object:
                call = client.Watch(request)
                assert (await call.read()).version == 1
                return call

            held = [await opened(one), await opened(one)]
            refusals = []
            for client in (one, two):
                if client is two:
                    held.append(await opened(two))  # another connection: the address has room
                call = client.Watch(request)
                try:
                    await call.read()
                    raise AssertionError("a stream beyond the cap was opened")
                except grpc.aio.AioRpcError as error:
                    refusals.append(error)
            assert [e.code() for e in refusals] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 2
            assert "this connection has 2 streams open" in str(refusals[0].details())
            assert "this client address has 3 streams open" in str(refusals[1].details())
            assert all(retry_delay_ms(e) > 0 for e in refusals)
            assert all(RETRY_METADATA_KEY in dict(e.trailing_metadata()) for e in refusals)
            assert running.service.streams.open("127.0.0.1") == 3

            held[0].cancel()  # type: ignore[attr-defined]
            await until(lambda: running.service.streams.open() == 2, "a slot given back")
            held.append(await opened(two))
            for call in held:
                call.cancel()  # type: ignore[attr-defined]
            await until(lambda: running.service.streams.open() == 0, "every slot given back")


async def test_a_play_stream_holds_a_stream_slot_like_a_watch(store_env: dict[str, str]) -> None:
    """Play streams count with Watch streams against the caps: one connection allowed
    one stream refuses a Watch while a Play stream is open, and takes it once closed."""
    limits = dataclasses.replace(LOOSE, streams_per_connection=1)
    async with serving(store_env, limits) as running:
        channel, client = stub(running.port)
        async with channel:
            match_id, tokens, _ = await decided_race(client)
            play = client.Play(metadata=bearer(tokens[1]))
            await play.write(
                ms.PlayRequest(act=ms.ActRequest(match_id=match_id, jungle_speed=grab()))
            )
            assert (await play.read()).WhichOneof("outcome") == "applied"  # a late grab
            assert running.service.streams.open() == 1
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.Watch(ms.WatchRequest(match_id=match_id)).read()
            assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "this connection has 1 stream open" in str(refused.value.details())
            await play.done_writing()
            assert await play.read() is grpc.aio.EOF
            await until(lambda: running.service.streams.open() == 0, "the Play slot given back")
            watch = client.Watch(ms.WatchRequest(match_id=match_id))
            assert (await watch.read()).version == 1
            watch.cancel()


async def test_a_play_stream_whose_answers_are_not_read_is_ended_and_let_go(
    store_env: dict[str, str],
) -> None:
    """A client that writes grabs on a Play stream and never reads the answers: once its
    connection's window is full, the answer waiting to be written misses the stream write
    deadline and the stream ends RESOURCE_EXHAUSTED, its slot freed. Every grab the
    server read was applied: each is a late grab in the store (JS-5.3)."""
    limits = dataclasses.replace(LOOSE, stream_write_timeout_s=0.5)
    async with serving(store_env, limits) as running:
        channel, client = stub(running.port)
        slow = slow_channel(running.port)
        async with channel, slow:
            match_id, tokens, version = await decided_race(client)
            call = match_service_pb2_grpc.MatchServiceStub(slow).Play(metadata=bearer(tokens[1]))
            request = ms.PlayRequest(act=ms.ActRequest(match_id=match_id, jungle_speed=grab()))

            async def write_until_refused() -> int:
                written = 0
                with contextlib.suppress(grpc.aio.AioRpcError, grpc.aio.UsageError):
                    while written < MAX_GRABS:
                        await call.write(request)
                        written += 1
                return written

            writer = asyncio.create_task(write_until_refused())
            await until(lambda: running.service.streams.open() == 1, "the stream held a slot")
            # Only the server can end the stream: the client reads nothing until it has.
            await until(lambda: running.service.streams.open() == 0, "the stream slot freed")
            written = await asyncio.wait_for(writer, WAIT_S)

            answers = []
            try:
                while (answer := await call.read()) is not grpc.aio.EOF:
                    answers.append(answer)
                raise AssertionError("the stream ended without a status")
            except grpc.aio.AioRpcError as error:
                ended = error
            assert ended.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "answers were not read in time" in str(ended.details())
            stored = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary
            late = stored.version - version
            # The answers that reached the client before the end were each one late grab;
            # the server applied at least those, and no more than the client wrote.
            assert answers and all(a.applied.events for a in answers)
            assert len(answers) <= late <= written
