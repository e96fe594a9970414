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
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from hypercorn.asyncio import serve
from hypercorn.config import Config

from server import codec
from server.limits import CallLimit
from server.service import (
    MatchService,
    join_place,
    joined_response,
    list_query,
    parse_match_id,
)
from server.stamps import Stamper, stamp_arrival
from server.tournament_service import TournamentCalls
from server.watch_feed import fell_behind
from server.web_calls import Context, caller_token, connect_error, connection_of, refusals
from server.web_http import (
    SOURCE_WEB_ROOT,
    CountedCalls,
    Routes,
    WebClient,
    WriteDeadlinesASGI,
    asgi,
    cors,
    stream_fell_behind,
)
from server.web_tournaments import WebTournamentService
from totem.v1 import (
    match_service_connect,
    match_service_pb2,
    tournament_service_connect,
    tournament_service_pb2,
)

#: What a handler of the web port is: an ASGI application.
ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]

log = logging.getLogger(__name__)

SERVICE_PATH = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
TOURNAMENT_SERVICE_PATH = tournament_service_pb2.DESCRIPTOR.services_by_name[
    "TournamentService"
].full_name

GetMatchContext = RequestContext[
    match_service_pb2.GetMatchRequest, match_service_pb2.GetMatchResponse
]
ListMatchesContext = RequestContext[
    match_service_pb2.ListMatchesRequest, match_service_pb2.ListMatchesResponse
]
WatchContext = RequestContext[match_service_pb2.WatchRequest, match_service_pb2.MatchEvent]

#: Play's answer on this port: browsers cannot send a request stream, and a bidirectional
#: stream must keep its requests' order, which HTTP/2 servers in Python do not yet
#: promise (docs/web.md).
PLAY_ON_GRPC_ONLY = (
    "Play is served on the gRPC port only: over the web, send each command with Act and "
    "follow the match with Watch"
)


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
                    async for data, last in events:
                        yield match_service_pb2.MatchEvent.FromString(data)
                        if stream_fell_behind():  # its write was not taken in time
                            raise fell_behind(last)


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
    tls: bool

    async def stop(self) -> None:
        """Close the port; calls under way get Hypercorn's graceful timeout. Watch streams
        have already ended by then (the hub closes first, :meth:`RunningServer.stop`)."""
        self.stopping.set()
        try:
            await self.task
        finally:
            self.sock.close()


@dataclass(frozen=True)
class WebSettings:
    """What ``totem serve --web`` serves besides the API, and to whom."""

    #: ``HOST:PORT`` (port 0 picks a free port).
    address: str
    #: Browser origins (``https://app.example``) whose pages may call the API; none:
    #: same-origin calls only.
    cors_origins: tuple[str, ...] = ()
    #: The built web client served at ``/``; None: the source tree's, if built.
    root: Path | None = None


class _TlsConfig(Config):
    """Hypercorn's settings with a TLS context made in memory (:mod:`server.serve`'s
    certificate and key), not read from files by Hypercorn."""

    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__()
        self._context = context

    @property
    def ssl_enabled(self) -> bool:
        return True

    def create_ssl_context(self) -> ssl.SSLContext:
        return self._context


async def start_web(
    service: MatchService,
    tournaments: TournamentCalls,
    settings: WebSettings,
    calls: CallLimit,
    grace: float,
    tls: ssl.SSLContext | None = None,
) -> WebServer:
    """Serve the MatchService and the TournamentService over Connect, and the web client at
    ``/``, on ``settings.address``, in this event loop (over TLS with ``tls``); return
    once the port is bound."""
    host, _, port = settings.address.rpartition(":")
    host = host.strip("[]")
    # Bound here rather than by Hypercorn, so that the port chosen is known at once;
    # Hypercorn owns (and closes) a duplicate of it, this server the original.
    sock = socket.create_server((host, int(port)), family=_family(host))
    config = Config() if tls is None else _TlsConfig(tls)
    config.bind = [f"fd://{os.dup(sock.fileno())}"]
    config.graceful_timeout = grace
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    limits = service.limits
    counted = [CountedCalls(calls, connect_error)]
    size = limits.max_message_bytes
    matches = WriteDeadlinesASGI(
        asgi(
            match_service_connect.MatchServiceASGIApplication(
                WebMatchService(service), interceptors=counted, read_max_bytes=size
            )
        ),
        service.deadlines,
        frozenset({f"/{SERVICE_PATH}/Watch"}),
    )
    tournament_app = tournament_service_connect.TournamentServiceASGIApplication(
        WebTournamentService(tournaments), interceptors=counted, read_max_bytes=size
    )
    routes = Routes(
        {SERVICE_PATH: matches, TOURNAMENT_SERVICE_PATH: asgi(tournament_app)},
        WebClient(settings.root if settings.root is not None else SOURCE_WEB_ROOT),
    )
    raced = frozenset(f"/{SERVICE_PATH}/{name}" for name in MatchService.RACED)
    # Stamps first: a call's arrival is its receive order, whatever happens to it next.
    app = ArrivalStampsASGI(cors(routes, settings.cors_origins), service.stamper, raced)
    stopping = asyncio.Event()
    task = asyncio.create_task(serve(cast(Any, app), config, shutdown_trigger=stopping.wait))
    return WebServer(sock.getsockname()[1], task, stopping, sock, tls is not None)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
