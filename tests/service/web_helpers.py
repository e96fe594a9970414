"""Helpers for calling the web port (``totem serve --web``) as a browser would: plain
HTTP with Connect's JSON, and a raw HTTP/1.1 client that sends a request in parts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import h11

from server.limits import Limits
from server.serve import RunningServer, start
from server.web import WebSettings

#: The headers of a Connect unary call in JSON.
JSON = {"content-type": "application/json", "connect-protocol-version": "1"}
MATCHES = "/totem.v1.MatchService"
TOURNAMENTS = "/totem.v1.TournamentService"


@asynccontextmanager
async def serving_web(
    env: dict[str, str],
    limits: Limits | None = None,
    web: str | WebSettings = "127.0.0.1:0",
    **options: Any,
) -> AsyncIterator[RunningServer]:
    """A real server with its gRPC port and its web port, both on loopback."""
    running = await start("127.0.0.1:0", env, limits=limits, web=web, **options)
    try:
        yield running
    finally:
        await running.stop(grace=None)


def web_url(server: RunningServer, scheme: str = "http") -> str:
    assert server.web is not None
    return f"{scheme}://127.0.0.1:{server.web.port}"


def authorised(token: str | None, headers: dict[str, str] = JSON) -> dict[str, str]:
    """``headers`` with ``token`` as the bearer token, if any."""
    return {**headers, "authorization": f"Bearer {token}"} if token else dict(headers)


async def read_response(
    connection: h11.Connection, reader: asyncio.StreamReader
) -> tuple[int, bytes]:
    """The status and body of the response ``connection`` reads from ``reader``."""
    status, body = 0, b""
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            return status, body


class SplitRequest:
    """One HTTP/1.1 POST sent in two parts: its headers at once, its body only when the
    test sets ``release``; then its response is read to the end."""

    def __init__(self, port: int, path: str, body: bytes, headers: dict[str, str]) -> None:
        self.port = port
        self.path = path
        self.body = body
        self.headers = headers
        self.release = asyncio.Event()
        self.headers_sent = asyncio.Event()

    async def __call__(self) -> tuple[int, bytes]:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        connection = h11.Connection(h11.CLIENT)
        try:
            request = h11.Request(
                method="POST",
                target=self.path,
                headers=[
                    ("host", f"127.0.0.1:{self.port}"),
                    ("content-length", str(len(self.body))),
                    *self.headers.items(),
                ],
            )
            writer.write(connection.send(request) or b"")
            await writer.drain()
            self.headers_sent.set()
            await self.release.wait()
            writer.write(connection.send(h11.Data(data=self.body)) or b"")
            writer.write(connection.send(h11.EndOfMessage()) or b"")
            await writer.drain()
            return await read_response(connection, reader)
        finally:
            writer.close()


def json_body(data: bytes) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(data)
    return parsed
