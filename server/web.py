"""The MatchService for browsers: the Connect protocol (and gRPC-Web) on a second port.

``totem serve --web HOST:PORT`` serves it from the same process, the same event loop and
the same application layer as the gRPC port: the handlers only translate, as the gRPC
ones do (:mod:`server.service`). They read requests with the same helpers, call the same
use cases (:class:`server.application.Matches`), build answers with the same codec
(:mod:`server.codec`), and a Watch stream writes what :class:`server.watch_feed.WatchFeed`
yields. A refusal is the same status, sentence and ``google.rpc.ErrorInfo`` (rule id) as
on gRPC, as a Connect error with details.

The protocol is connectrpc's (generated ``totem.v1.match_service_connect``), an ASGI
application run by Hypercorn (HTTP/1.1, and HTTP/2 with prior knowledge). Methods not
served here yet answer UNIMPLEMENTED (docs/web.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.request import RequestContext
from hypercorn.asyncio import serve
from hypercorn.config import Config
from protobuf.wkt import Any as ConnectAny

from server import auth, codec
from server.errors import ServiceError, rich_status, status_text, to_service_error
from server.service import MatchService, incident, list_query, parse_match_id
from totem.v1 import match_service_connect, match_service_pb2

log = logging.getLogger(__name__)

GetMatchContext = RequestContext[
    match_service_pb2.GetMatchRequest, match_service_pb2.GetMatchResponse
]
ListMatchesContext = RequestContext[
    match_service_pb2.ListMatchesRequest, match_service_pb2.ListMatchesResponse
]
WatchContext = RequestContext[match_service_pb2.WatchRequest, match_service_pb2.MatchEvent]


def connect_error(error: Exception) -> ConnectError:
    """A refusal as a Connect error: the gRPC status's code (Connect's codes are gRPC's,
    by name), its ``"<rule id>: <sentence>"`` and the same details (``ErrorInfo``, and
    ``RetryInfo`` when trying again may succeed). Anything unforeseen is an incident."""
    refusal: ServiceError = to_service_error(error) or incident(error)
    details = [
        ErrorDetail(ConnectAny(type_url=detail.type_url, value=detail.value))
        for detail in rich_status(refusal).details
    ]
    return ConnectError(Code[refusal.code.name], status_text(refusal), details)


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """Answer what a handler raises as :func:`connect_error` does."""
    try:
        yield
    except ConnectError:
        raise
    except Exception as error:
        raise connect_error(error) from None


def caller_token(ctx: RequestContext[Any, Any]) -> str | None:
    """The bearer token of the ``authorization`` header, as gRPC metadata carries it."""
    return auth.bearer_token(ctx.request_headers.items())


def connection_of(ctx: RequestContext[Any, Any]) -> tuple[str, str]:
    """The client's connection (``host:port``) and host: whose stream quota a call spends."""
    peer = ctx.client_address or ""
    return peer, peer.rsplit(":", 1)[0]


class WebMatchService(match_service_connect.MatchService):
    """The MatchService's reads over Connect, through the gRPC service's own use cases,
    limits and stream slots: one quota per client, whatever protocol it speaks."""

    def __init__(self, service: MatchService) -> None:
        self.service = service

    async def list_matches(
        self, request: match_service_pb2.ListMatchesRequest, ctx: ListMatchesContext
    ) -> match_service_pb2.ListMatchesResponse:
        with refusals():
            page = await self.service.matches.list(*list_query(request))
            return codec.listed_page(page)

    async def get_match(
        self, request: match_service_pb2.GetMatchRequest, ctx: GetMatchContext
    ) -> match_service_pb2.GetMatchResponse:
        with refusals():
            viewed = await self.service.matches.view(
                parse_match_id(request.match_id), caller_token(ctx)
            )
            return codec.viewed_match(viewed)

    async def watch(
        self, request: match_service_pb2.WatchRequest, ctx: WatchContext
    ) -> AsyncGenerator[match_service_pb2.MatchEvent]:
        """The stored events after ``after_version``, then the live ones, to the match's end.
        Each event is decoded from the bytes encoded once per kind of viewer, for the
        library to encode again in the codec the client asked for (binary or JSON)."""
        with refusals():
            match_id = parse_match_id(request.match_id)
            connection, address = connection_of(ctx)
            with self.service.streams.held(connection, address):
                feed = self.service.feed.events(
                    match_id, caller_token(ctx), request.after_version, not request.omit_state
                )
                async with contextlib.aclosing(feed) as events:
                    async for data, _last in events:
                        yield match_service_pb2.MatchEvent.FromString(data)


@dataclass
class WebServer:
    """The web endpoint, serving until :meth:`stop`."""

    port: int
    task: asyncio.Task[None]
    stopping: asyncio.Event
    sock: socket.socket

    async def stop(self) -> None:
        """Close the port; calls under way get Hypercorn's graceful timeout. Watch streams
        have already ended by then (the hub closes first, :meth:`RunningServer.stop`)."""
        self.stopping.set()
        try:
            await self.task
        finally:
            self.sock.close()


async def start_web(service: MatchService, address: str, grace: float) -> WebServer:
    """Serve the MatchService over Connect on ``address`` (port 0 picks a free port) in
    this event loop, and return once the port is bound."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    # Bound here rather than by Hypercorn, so that the port chosen is known at once;
    # Hypercorn owns (and closes) a duplicate of it, this server the original.
    sock = socket.create_server((host, int(port)), family=_family(host))
    config = Config()
    config.bind = [f"fd://{os.dup(sock.fileno())}"]
    config.graceful_timeout = grace
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    app = match_service_connect.MatchServiceASGIApplication(WebMatchService(service))
    stopping = asyncio.Event()
    task = asyncio.create_task(serve(app, config, shutdown_trigger=stopping.wait))
    return WebServer(sock.getsockname()[1], task, stopping, sock)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
