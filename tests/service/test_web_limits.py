"""The web port within the gRPC port's limits, from the same budgets: calls in flight,
stream slots and creations per client address spent by either port; the same largest
message; and a Watch whose client stops reading ended by the stream write deadline
(RESOURCE_EXHAUSTED with the version to watch again after), never held."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
from pathlib import Path
from typing import Any
from uuid import UUID

import grpc
import h11
import httpx
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError

from server.access import ORGANISER_TOKEN_ENV, Access
from tests.service.helpers import ORGANISER_TOKEN, bearer, grab, stub
from tests.service.limits_helpers import LOOSE, decided_race, until
from tests.service.web_helpers import JSON, MATCHES, serving_web, web_url
from totem.v1 import common_pb2, match_service_connect
from totem.v1 import match_service_pb2 as ms

#: Grabs sent at most to fill what the server buffers for a client that reads nothing.
MAX_GRABS = 20_000


@pytest.fixture
def anyone_creates() -> Access:
    return Access(open_creation=True, open_per_minute=1)


async def open_web_watch(
    web: match_service_connect.MatchServiceClient, match_id: str
) -> tuple[asyncio.Task[None], asyncio.Event]:
    """A web Watch stream, open once its first event has come."""
    first = asyncio.Event()

    async def watching() -> None:
        async for _ in web.watch(ms.WatchRequest(match_id=match_id)):
            first.set()

    task = asyncio.create_task(watching())
    await asyncio.wait_for(first.wait(), 60)
    return task, first


async def test_calls_in_flight_are_counted_across_both_ports(store_env: dict[str, str]) -> None:
    limits = dataclasses.replace(LOOSE, max_concurrent_calls=1)
    async with serving_web(store_env, limits) as running:
        channel, client = stub(running.port)
        async with (
            channel,
            httpx.AsyncClient(base_url=web_url(running)) as http,
            match_service_connect.MatchServiceClient(web_url(running)) as web,
        ):
            match_id, _, _ = await decided_race(client)
            watch, _ = await open_web_watch(web, match_id)  # the one call in flight
            assert running.calls is not None and running.calls.in_flight == 1
            with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
                await client.ListMatches(ms.ListMatchesRequest())
            over_web = await http.post(f"{MATCHES}/ListMatches", json={}, headers=JSON)
            watch.cancel()
            await until(lambda: running.calls.in_flight == 0, "the web stream ended")  # type: ignore[union-attr]
            again = await http.post(f"{MATCHES}/ListMatches", json={}, headers=JSON)
    assert over_grpc.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert over_web.json()["code"] == "resource_exhausted"
    assert "the server has 1 calls under way, its limit" in over_web.json()["message"]
    assert again.status_code == 200


async def test_stream_slots_are_counted_across_both_ports(store_env: dict[str, str]) -> None:
    limits = dataclasses.replace(LOOSE, streams_per_address=1)
    async with serving_web(store_env, limits) as running:
        channel, client = stub(running.port)
        async with channel, match_service_connect.MatchServiceClient(web_url(running)) as web:
            match_id, _, _ = await decided_race(client)
            watch, _ = await open_web_watch(web, match_id)
            assert running.service is not None
            assert running.service.streams.open("127.0.0.1") == 1
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.Watch(ms.WatchRequest(match_id=match_id)).read()
            watch.cancel()
            await until(lambda: running.service.streams.open() == 0, "the slot given back")  # type: ignore[union-attr]
    assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "this client address has 1 stream open already" in str(refused.value.details())


async def test_creations_per_address_are_counted_across_both_ports(
    store_env: dict[str, str], anyone_creates: Access
) -> None:
    request = ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED)
    async with serving_web(store_env, LOOSE, access=anyone_creates) as running:
        channel, client = stub(running.port)
        async with channel, match_service_connect.MatchServiceClient(web_url(running)) as web:
            await client.CreateMatch(request)  # this address's one creation a minute
            with pytest.raises(ConnectError) as refused:
                await web.create_match(request)
    assert refused.value.code is Code.RESOURCE_EXHAUSTED


async def test_a_message_beyond_the_largest_is_refused_on_both_ports(
    store_env: dict[str, str],
) -> None:
    limits = dataclasses.replace(LOOSE, max_message_bytes=64)
    big = ms.JoinMatchRequest(match_id="x" * 100, any_seat=True)
    async with serving_web(store_env, limits) as running:
        channel, client = stub(running.port)
        async with channel, match_service_connect.MatchServiceClient(web_url(running)) as web:
            with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
                await client.JoinMatch(big)
            with pytest.raises(ConnectError) as over_web:
                await web.join_match(big)
            small = await web.list_matches(ms.ListMatchesRequest())
    assert over_grpc.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert over_web.value.code is Code.RESOURCE_EXHAUSTED
    assert list(small.matches) == []


def envelope(message: bytes, flags: int = 0) -> bytes:
    return bytes([flags]) + len(message).to_bytes(4, "big") + message


class UnreadWatch:
    """A Connect Watch over HTTP/1.1 on a connection that reads nothing until
    :meth:`read_all`: once the socket's buffers are full, the server's writes wait."""

    def __init__(self, port: int, match_id: str) -> None:
        self.port = port
        self.match_id = match_id

    async def open(self) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.port))
        self.reader, self.writer = await asyncio.open_connection(sock=sock, limit=2**24)
        self.writer.transport.pause_reading()  # type: ignore[attr-defined]
        body = envelope(ms.WatchRequest(match_id=self.match_id).SerializeToString())
        self.http = h11.Connection(h11.CLIENT)
        head = h11.Request(
            method="POST",
            target=f"{MATCHES}/Watch",
            headers=[
                ("host", f"127.0.0.1:{self.port}"),
                ("content-type", "application/connect+proto"),
                ("connect-protocol-version", "1"),
                ("content-length", str(len(body))),
            ],
        )
        self.writer.write(
            (self.http.send(head) or b"") + (self.http.send(h11.Data(data=body)) or b"")
        )
        await self.writer.drain()

    async def read_all(self) -> tuple[list[bytes], dict[str, Any] | None]:
        """Read again, to the end of what the server sent."""
        self.writer.transport.resume_reading()  # type: ignore[attr-defined]
        data = b""
        try:
            while True:
                event = self.http.next_event()
                if event is h11.NEED_DATA:
                    self.http.receive_data(await self.reader.read(65536))
                elif isinstance(event, h11.Data):
                    data += event.data
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    break
        except h11.RemoteProtocolError:
            pass  # given up before its last chunk: what came before is whole
        finally:
            self.writer.close()
        return split_stream(data)


def split_stream(data: bytes) -> tuple[list[bytes], dict[str, Any] | None]:
    """The messages of a Connect stream's answer so far, and its end message if come."""
    messages = []
    while len(data) >= 5:
        flags, length = data[0], int.from_bytes(data[1:5], "big")
        if len(data) < 5 + length:
            break
        message, data = data[5 : 5 + length], data[5 + length :]
        if flags & 0x02:
            end: dict[str, Any] = json.loads(message)
            return messages, end
        messages.append(message)
    return messages, None


async def test_a_web_watch_that_is_never_read_is_ended_and_let_go(tmp_path: Path) -> None:
    """On SQLite only: the store is not what this tests, and filling a connection's
    buffers takes thousands of events."""
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(tmp_path / "t.db"),
        ORGANISER_TOKEN_ENV: ORGANISER_TOKEN,
    }
    limits = dataclasses.replace(LOOSE, stream_write_timeout_s=0.5)
    async with serving_web(env, limits) as running:
        # Only the write deadline can end this stream: its queue never overflows.
        running.hub.queue_size = 10**9
        assert running.web is not None and running.service is not None
        channel, client = stub(running.port)
        async with channel:
            match_id, tokens, _ = await decided_race(client)
            watched = UUID(match_id)
            unread = UnreadWatch(running.web.port, match_id)
            await unread.open()
            await until(lambda: running.hub.watchers(watched) == 1, "the stream subscribed")
            late_grab = ms.ActRequest(match_id=match_id, jungle_speed=grab())
            sent = 0
            while running.hub.watchers(watched) and sent < MAX_GRABS:
                await client.Act(late_grab, metadata=bearer(tokens[1]))
                sent += 1
            # The server let the stream go while its client had read nothing.
            await until(lambda: running.hub.watchers(watched) == 0, "the subscription freed")
            service, calls = running.service, running.calls
            await until(lambda: service.streams.open() == 0, "the stream slot freed")
            await until(lambda: calls is not None and calls.in_flight == 0, "the call ended")
            messages, end = await asyncio.wait_for(unread.read_all(), 60)
    versions = [ms.MatchEvent.FromString(m).version for m in messages]
    assert versions == list(range(1, len(versions) + 1))
    assert end is not None, "the stream ended without its end message"
    error = end["error"]
    assert error["code"] == "resource_exhausted"
    message = str(error["message"])
    assert "this stream fell behind; watch again with after_version=" in message
    resume = int(message.rsplit("=", 1)[1])
    assert 0 < resume <= versions[-1]
