"""The MatchService for browsers: the Connect protocol (and gRPC-Web) on a second port.

``totem serve --web HOST:PORT`` serves it from the same process, the same event loop and
the same application layer as the gRPC port: the handlers only translate, as the gRPC
ones do (:mod:`server.service`). They read requests with the same helpers, call the same
use cases (:class:`server.application.Matches`), build answers with the same codec
(:mod:`server.codec`), and a Watch stream writes what :class:`server.watch_feed.WatchFeed`
yields. A refusal is the same status, sentence and ``google.rpc.ErrorInfo`` (rule id) as
on gRPC, as a Connect error with details.

The protocol is connectrpc's (generated ``totem.v1.match_service_connect``), an ASGI
application run by Hypercorn (HTTP/1.1, and HTTP/2 with prior knowledge). Calls that
decide races (Act, JoinMatch) are stamped on arrival, before their body is read
(:class:`ArrivalStampsASGI`), from the same sequence as the gRPC port's. Play, a
bidirectional stream, is served on the gRPC port only (docs/web.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.request import RequestContext
from hypercorn.asyncio import serve
from hypercorn.config import Config
from protobuf.wkt import Any as ConnectAny

from server import auth, codec
from server.errors import ServiceError, rich_status, status_text, to_service_error
from server.service import (
    MatchService,
    incident,
    join_place,
    joined_response,
    list_query,
    parse_match_id,
)
from server.stamps import Stamper, stamp_arrival
from totem.v1 import match_service_connect, match_service_pb2

#: What a handler of the web port is: an ASGI application.
ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]

log = logging.getLogger(__name__)

SERVICE_PATH = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name

GetMatchContext = RequestContext[
    match_service_pb2.GetMatchRequest, match_service_pb2.GetMatchResponse
]
ListMatchesContext = RequestContext[
    match_service_pb2.ListMatchesRequest, match_service_pb2.ListMatchesResponse
]
WatchContext = RequestContext[match_service_pb2.WatchRequest, match_service_pb2.MatchEvent]
Context = RequestContext[Any, Any]

#: Play's answer on this port: browsers cannot send a request stream, and a bidirectional
#: stream must keep its requests' order, which HTTP/2 servers in Python do not yet
#: promise (docs/web.md).
PLAY_ON_GRPC_ONLY = (
    "Play is served on the gRPC port only: over the web, send each command with Act and "
    "follow the match with Watch"
)


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
    """The client's connection (``host:port``) and address, written as the gRPC port
    writes it (:func:`server.service.client_address`: an IPv6 host in brackets), so
    that a client spends one quota (streams, creations) whichever port it calls."""
    peer = ctx.client_address or ""
    host = peer.rsplit(":", 1)[0]
    return peer, f"[{host}]" if ":" in host else host


class WebMatchService(match_service_connect.MatchService):
    """The MatchService over Connect, through the gRPC service's own use cases, limits
    and stream slots: one quota per client, whatever protocol it speaks."""

    def __init__(self, service: MatchService) -> None:
        self.service = service

    async def create_match(
        self, request: match_service_pb2.CreateMatchRequest, ctx: Context
    ) -> match_service_pb2.CreateMatchResponse:
        with refusals():
            _, address = connection_of(ctx)
            return await self.service.create_match(request, caller_token(ctx), address)

    async def join_match(
        self, request: match_service_pb2.JoinMatchRequest, ctx: Context
    ) -> match_service_pb2.JoinMatchResponse:
        """Stamped on arrival, as on gRPC (:class:`ArrivalStampsASGI`); the stamp is picked
        up first, and the work handed to the match's actor before anything is awaited."""
        stamp = self.service.stamper.on_arrival(0)
        with refusals():
            match_id, seat = join_place(request)
            joined = await self.service.matches.join(
                match_id, caller_token(ctx), request.name, request.entropy, seat, stamp
            )
            return joined_response(joined)

    async def act(
        self, request: match_service_pb2.ActRequest, ctx: Context
    ) -> match_service_pb2.ActResponse:
        """Stamped on arrival, as on gRPC; submitted to the match's actor by the gRPC
        service's own function, before anything is awaited."""
        stamp = self.service.stamper.on_arrival(request.seen_version)
        with refusals():
            match_id, answer = self.service._submit_act(request, caller_token(ctx), stamp)
            applied = await self.service.actors.settled(match_id, answer)
            return match_service_pb2.ActResponse.FromString(applied.value)

    async def play(
        self, request: AsyncIterator[match_service_pb2.PlayRequest], ctx: Context
    ) -> AsyncGenerator[match_service_pb2.PlayResponse]:
        raise ConnectError(Code.UNIMPLEMENTED, PLAY_ON_GRPC_ONLY)
        yield  # an async generator, as a bidirectional stream's handler is

    async def reissue_token(
        self, request: match_service_pb2.ReissueTokenRequest, ctx: Context
    ) -> match_service_pb2.ReissueTokenResponse:
        with refusals():
            return await self.service.reissue_token(request, caller_token(ctx))

    async def fork_match(
        self, request: match_service_pb2.ForkMatchRequest, ctx: Context
    ) -> match_service_pb2.ForkMatchResponse:
        with refusals():
            return await self.service.fork_match(request, caller_token(ctx))

    async def get_server_key(
        self, request: match_service_pb2.GetServerKeyRequest, ctx: Context
    ) -> match_service_pb2.GetServerKeyResponse:
        with refusals():
            return self.service.server_key()

    async def get_checkpoint(
        self, request: match_service_pb2.GetCheckpointRequest, ctx: Context
    ) -> match_service_pb2.GetCheckpointResponse:
        with refusals():
            return await self.service.checkpoint(request)

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


class ArrivalStampsASGI:
    """Stamps the web port's race-deciding calls on arrival (JS-5.1), as
    :class:`server.stamps.ArrivalStamps` does on gRPC: Hypercorn runs the application
    once a request's headers have arrived, in the request's own task; this stamps it
    there, before anything reads its body, and the handler, in the same task, picks the
    stamp up (:meth:`server.stamps.Stamper.on_arrival`)."""

    def __init__(self, app: ASGIApp, stamper: Stamper, paths: frozenset[str]) -> None:
        self.app = app
        self.stamper = stamper
        self.paths = paths

    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in self.paths:
            stamp_arrival(self.stamper)
        await self.app(scope, receive, send)


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
    raced = frozenset(f"/{SERVICE_PATH}/{name}" for name in MatchService.RACED)
    app = ArrivalStampsASGI(
        match_service_connect.MatchServiceASGIApplication(WebMatchService(service)),
        service.stamper,
        raced,
    )
    stopping = asyncio.Event()
    task = asyncio.create_task(serve(cast(Any, app), config, shutdown_trigger=stopping.wait))
    return WebServer(sock.getsockname()[1], task, stopping, sock)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
