"""The web port's HTTP around the Connect services: routing, CORS, the call limit, the
stream write deadline, and the built web client at ``/``.

Every piece here is plain ASGI, run by Hypercorn in the server's own event loop; none of
it knows a use case. :func:`server.web.start_web` assembles them.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Awaitable, Callable, Collection
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from connectrpc.request import RequestContext
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.limits import CallLimit, WriteDeadlines

log = logging.getLogger(__name__)

#: Where the web client is built in a source tree (``cd clients/web && npm run build``).
SOURCE_WEB_ROOT = Path(__file__).resolve().parents[1] / "clients" / "web" / "dist"

#: What a browser's Connect and gRPC-Web calls send, beyond the CORS-safelisted headers.
CORS_ALLOW_HEADERS = (
    "content-type",
    "authorization",
    "connect-protocol-version",
    "connect-timeout-ms",
    "x-grpc-web",
    "x-user-agent",
)
#: What a gRPC-Web client must read from an answer: its status is in these headers.
CORS_EXPOSE_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin")

#: Content types by suffix, whatever the host's MIME table says (Python 3.11's own
#: table, and some hosts', call JavaScript ``application/javascript``).
CONTENT_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".map": "application/json",
    ".webmanifest": "application/manifest+json",
    ".wasm": "application/wasm",
    ".ico": "image/x-icon",
    ".png": "image/png",
    ".webp": "image/webp",
    ".woff2": "font/woff2",
    ".txt": "text/plain",
}
#: Files under ``assets/`` are the build's, their names carrying a hash of their content:
#: a changed file has a new name, so a browser may keep one for good.
IMMUTABLE = "public, max-age=31536000, immutable"
#: Everything else (index.html above all) is checked again on every use (ETag).
REVALIDATE = "no-cache"

NOT_BUILT = """\
The Totem Arena web client is not built, so this server has no page to show here.

Build it from a source tree:

    cd clients/web && npm ci && npm run build

then restart `totem serve --web`, or point it at a built client with --web-root DIR
(env TOTEM_WEB_ROOT). The API is served here all the same, over the Connect protocol
and gRPC-Web, at /totem.v1.MatchService/ and /totem.v1.TournamentService/.
"""


class Routes:
    """Each Connect service by its path prefix (``/totem.v1.MatchService/``), anything
    else to the web client. Lifespan events are answered here: nothing needs them."""

    def __init__(self, services: dict[str, ASGIApp], other: ASGIApp) -> None:
        self.services = services
        self.other = other

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                kind = (await receive())["type"]
                await send({"type": f"{kind}.complete"})  # lifespan.startup, .shutdown
                if kind == "lifespan.shutdown":
                    return
        service = scope["path"].split("/", 2)[1] if scope["type"] == "http" else ""
        await self.services.get(service, self.other)(scope, receive, send)


def cors(app: ASGIApp, origins: Collection[str]) -> ASGIApp:
    """``app``, answering preflights and marking answers for the browser ``origins`` only
    (``https://app.example``); with none, ``app`` as it is: same-origin calls only, as
    the web client served at ``/`` makes."""
    if not origins:
        return app
    return CORSMiddleware(
        app,
        allow_origins=tuple(origins),
        allow_methods=("GET", "POST"),
        allow_headers=CORS_ALLOW_HEADERS,
        expose_headers=CORS_EXPOSE_HEADERS,
        max_age=600,
    )


class CountedCalls:
    """A Connect interceptor run before a call's body is read: the call counts in flight
    against the process's call limit (:class:`server.limits.CallLimit`), the same budget
    as the gRPC port's calls, or is refused with RESOURCE_EXHAUSTED and a retry hint."""

    def __init__(self, calls: CallLimit, refusal: Callable[[Exception], Exception]) -> None:
        self.calls = calls
        self.refusal = refusal

    async def on_start(self, ctx: RequestContext[Any, Any]) -> None:
        try:
            self.calls.enter()
        except Exception as error:
            raise self.refusal(error) from None

    async def on_end(
        self, token: None, ctx: RequestContext[Any, Any], error: Exception | None
    ) -> None:
        self.calls.leave()


class StreamWrites:
    """Whether a write of this request's stream was cut by its deadline."""

    __slots__ = ("cut",)

    def __init__(self) -> None:
        self.cut = False


_WRITES: ContextVar[StreamWrites | None] = ContextVar("stream_writes", default=None)


def stream_fell_behind() -> bool:
    """Whether the stream this handler writes had a write cut by its deadline: its client
    does not read. The handler then ends the stream, as the gRPC Watch does."""
    writes = _WRITES.get()
    return writes is not None and writes.cut


class _Abandoned(Exception):
    """A stream's last write was not taken in time either: the request is given up."""


class _Sender:
    """An ASGI ``send`` as :meth:`server.limits.WriteDeadlines.write` writes."""

    __slots__ = ("send",)

    def __init__(self, send: Send) -> None:
        self.send = send

    async def write(self, message: Message) -> None:
        await self.send(message)


class WriteDeadlinesASGI:
    """Each write of the streams at ``paths`` within the stream write deadline, under the
    same timer as the gRPC port's (:class:`server.limits.WriteDeadlines`).

    A write cut by its deadline has handed its bytes to the server's transport already
    (Hypercorn buffers what it writes, then waits for room): the handler learns of the
    cut when it is asked for the next message (:func:`stream_fell_behind`) and ends the
    stream with RESOURCE_EXHAUSTED and the version to watch again after. That status is
    written within the deadline too; a client that takes nothing gets it, if ever, only
    once it reads again, and the request is given up meanwhile, as on gRPC."""

    def __init__(self, app: ASGIApp, deadlines: WriteDeadlines, paths: frozenset[str]) -> None:
        self.app = app
        self.deadlines = deadlines
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        writes = StreamWrites()
        _WRITES.set(writes)
        sender = _Sender(send)

        async def timed(message: Message) -> None:
            if message["type"] not in ("http.response.body", "http.response.trailers"):
                await send(message)
            elif not await self.deadlines.write(sender, message):
                if writes.cut:
                    raise _Abandoned
                writes.cut = True

        try:
            await self.app(scope, receive, timed)
        except _Abandoned:
            log.info("a web stream ended without its client reading its status")


class WebClient(StaticFiles):
    """The built web client (``index.html``, ``assets/``) at ``/``; any other GET path
    that names no file is one of the client's own routes (``/match/<id>``) and gets
    ``index.html``. Without a built client, a short page says how to build one."""

    def __init__(self, root: Path | None) -> None:
        self.root = root if root is not None and (root / "index.html").is_file() else None
        super().__init__(directory=self.root, check_dir=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        try:
            response = await self.answer(scope)
        except HTTPException as error:
            response = PlainTextResponse(
                error.detail, error.status_code, headers=dict(error.headers or {})
            )
        await response(scope, receive, send)

    async def answer(self, scope: Scope) -> Response:
        if scope["method"] not in ("GET", "HEAD"):
            raise HTTPException(405, headers={"Allow": "GET, HEAD"})
        parts = scope["path"].replace("\\", "/").split("/")
        if ".." in parts or "\x00" in scope["path"]:
            raise HTTPException(404)  # never looked up, whatever it would resolve to
        if self.root is None:
            return PlainTextResponse(NOT_BUILT, 404, headers={"cache-control": REVALIDATE})
        try:
            return await self.get_response(self.get_path(scope), scope)
        except HTTPException as error:
            if error.status_code != 404 or parts[1] == "assets" or "." in parts[-1]:
                raise  # a missing file, not a route of the client
            return await self.get_response("index.html", scope)

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        path = Path(full_path)
        assert self.root is not None and stat.S_ISREG(stat_result.st_mode)
        response = FileResponse(
            path,
            status_code=status_code,
            stat_result=stat_result,
            media_type=CONTENT_TYPES.get(path.suffix.lower()),
        )
        under = path.relative_to(self.root.resolve()).parts
        response.headers["cache-control"] = IMMUTABLE if under[0] == "assets" else REVALIDATE
        response.headers["x-content-type-options"] = "nosniff"
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response


def asgi(app: Callable[[Any, Any, Any], Awaitable[None]]) -> ASGIApp:
    """A generated Connect application, as the ASGI type the middlewares take."""
    return app
