"""Assemble and run the server: the application, actors, hub and gRPC services."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import ssl
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import _async as reflection_aio
from grpc_reflection.v1alpha import reflection, reflection_pb2

from domain.kernel.signing import Signer
from server import codec
from server.access import Access, Organisers
from server.access import from_env as organisers_from_env
from server.actors import WAITING_EXPIRY_MS, Actors
from server.cluster import Cluster, default_instance
from server.documented_reflection import DocumentedReflection, documented_files
from server.hub import EventHub
from server.limits import CallLimit, Limits
from server.service import MatchService, tolerant
from server.stamps import ArrivalStamps, Stamper
from server.tournament_service import TournamentService
from server.tournaments import Tournaments
from server.web import WebServer, WebSettings, start_web
from storage import keys
from storage.arena import Arena, store_env
from storage.tournaments import TournamentStore
from totem.v1 import (
    match_service_pb2,
    match_service_pb2_grpc,
    tournament_service_pb2,
    tournament_service_pb2_grpc,
)

log = logging.getLogger(__name__)

SERVICE_NAME = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
TOURNAMENT_SERVICE_NAME = tournament_service_pb2.DESCRIPTOR.services_by_name[
    "TournamentService"
].full_name
#: How long calls still running when the port closes may take to finish.
GRACE_SECONDS = 5.0
#: How long a stopping server stays up, NOT_SERVING, refusing new commands while those
#: already waiting run (``totem serve --drain-seconds``).
DRAIN_SECONDS = 1.0
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
#: How long a thread may keep the interpreter while another waits for it (Python's
#: default is 5 ms). Saves and encoding run in worker threads; the event loop, which
#: stamps arriving requests, must get the interpreter back within a fraction of that.
SWITCH_INTERVAL_S = 0.0002
REFLECTION_V1_FILE = "grpc/reflection/v1/reflection.proto"


@dataclass(frozen=True)
class ServerTls:
    """The server's certificate chain and key (PEM); with ``client_ca``, every client
    must present a certificate that CA signed (mutual TLS)."""

    cert: bytes
    key: bytes
    client_ca: bytes | None = None

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials(
            [(self.key, self.cert)],
            root_certificates=self.client_ca,
            require_client_auth=self.client_ca is not None,
        )

    def ssl_context(self) -> ssl.SSLContext:
        """The same settings for the web port (Hypercorn): TLS 1.2 or later, ALPN ``h2``
        and ``http/1.1``, and with ``client_ca`` a client certificate required."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2  # HTTP/2 needs TLS 1.2 or later
        context.options |= ssl.OP_NO_COMPRESSION
        context.set_alpn_protocols(["h2", "http/1.1"])
        # Python's ssl reads a certificate chain and its key from files only: written
        # to a private directory for the time it takes to read them.
        with tempfile.TemporaryDirectory(prefix="totem-tls-") as private:
            cert, key = Path(private, "cert.pem"), Path(private, "key.pem")
            cert.write_bytes(self.cert)
            key.touch(mode=0o600)
            key.write_bytes(self.key)
            context.load_cert_chain(cert, key)
        if self.client_ca is not None:
            context.load_verify_locations(cadata=self.client_ca.decode("ascii"))
            context.verify_mode = ssl.CERT_REQUIRED
        return context


@dataclass
class RunningServer:
    server: grpc.aio.Server
    port: int
    app: Arena
    actors: Actors
    hub: EventHub
    health: health.aio.HealthServicer
    service: MatchService | None = None
    tournaments: Tournaments | None = None
    calls: CallLimit | None = None
    cluster: Cluster | None = None
    #: The MatchService over Connect for browsers (``totem serve --web``), if served.
    web: WebServer | None = None
    stopped: bool = False

    async def stop(self, grace: float | None = GRACE_SECONDS, drain: float = 0.0) -> None:
        """Shut down without leaving a client in doubt.

        Health turns NOT_SERVING and every Watch stream ends at once with UNAVAILABLE
        and the version to resume after. For ``drain`` seconds the server stays up:
        new commands are refused with UNAVAILABLE and a retry hint, commands already
        waiting run, reads are answered. Then the commands still waiting are refused
        (never applied), every Play stream ends with UNAVAILABLE once the requests it
        has read are answered, the work under way and its save finish, the port closes
        (calls still running get ``grace`` seconds), and the store is closed.
        """
        if self.stopped:
            return
        self.stopped = True
        await self.health.enter_graceful_shutdown()
        self.hub.close()
        refused = await self.actors.drain(drain)
        if refused:
            log.warning("%d waiting commands refused: the server is shutting down", refused)
        if self.service is not None:
            self.service.end_plays()
        if self.tournaments is not None:
            await self.tournaments.close()
        if self.web is not None:
            await self.web.stop()
        await self.server.stop(grace)
        await self.actors.close()
        if self.cluster is not None:
            await self.cluster.close(self.actors.presence)
        await self.actors.threads.close()  # store calls under way finish first
        self.app.close()


class _Registrations:
    """Stands in for a server to collect the method handlers generated code registers."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: object) -> None:
        pass

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        self.handlers.update(handlers)


def _raw(data: bytes) -> bytes:
    return data


def add_match_service(servicer: MatchService, server: grpc.aio.Server) -> None:
    """Register the MatchService as generated, except that Act, Play and Watch answer
    bytes already encoded, sent as they are (a state encoded once a version, see
    :func:`server.codec.state_bytes`; a stream event once per kind of viewer, see
    :mod:`server.hub`), and that request bytes that do not decode reach the handler as
    :class:`Undecodable`."""
    add_service(
        match_service_pb2_grpc.add_MatchServiceServicer_to_server,
        servicer,
        server,
        SERVICE_NAME,
        raw=("Act", "Play", "Watch"),
    )


def add_service(
    add: Callable[[Any, Any], None],
    servicer: object,
    server: grpc.aio.Server,
    name: str,
    raw: tuple[str, ...] = (),
) -> None:
    """Register a servicer with the generated ``add`` function, its request bytes that do
    not decode reaching the handler as :class:`Undecodable` (an INVALID_ARGUMENT in
    words, not gRPC's UNKNOWN), and the methods named in ``raw`` answering wire bytes."""
    collected = _Registrations()
    add(servicer, collected)
    handlers = {
        method: handler._replace(
            request_deserializer=tolerant(handler.request_deserializer, method)
        )
        for method, handler in collected.handlers.items()
    }
    for method in raw:
        handlers[method] = handlers[method]._replace(response_serializer=_raw)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)


def _register_reflection_v1() -> None:
    """Put ``grpc/reflection/v1/reflection.proto`` in the descriptor pool, so that
    reflection can describe its own v1 service: v1alpha's file under v1's package."""
    pool = descriptor_pool.Default()
    with contextlib.suppress(KeyError):
        pool.FindFileByName(REFLECTION_V1_FILE)
        return
    file = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(file)
    old, new = f".{file.package}.", ".grpc.reflection.v1."
    file.name, file.package = REFLECTION_V1_FILE, "grpc.reflection.v1"
    file.options.Clear()
    for message in file.message_type:
        for field in message.field:
            if field.HasField("type_name"):
                field.type_name = field.type_name.replace(old, new)
    for method in file.service[0].method:
        method.input_type = method.input_type.replace(old, new)
        method.output_type = method.output_type.replace(old, new)
    pool.Add(file)


def add_reflection(service_names: tuple[str, ...], server: grpc.aio.Server) -> None:
    """Server reflection, as ``grpc.reflection.v1`` and ``grpc.reflection.v1alpha``.

    grpcio-reflection serves only v1alpha; v1 has the same messages under another
    package name (identical on the wire), so the same servicer answers both."""
    _register_reflection_v1()
    servicer = reflection_aio.ReflectionServicer(
        (*service_names, REFLECTION_V1, reflection.SERVICE_NAME)
    )
    method = DocumentedReflection(servicer, documented_files()).ServerReflectionInfo
    handler = grpc.stream_stream_rpc_method_handler(
        method,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for name in (REFLECTION_V1, reflection.SERVICE_NAME):
        handlers = {"ServerReflectionInfo": handler}
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
        server.add_registered_method_handlers(name, handlers)


async def start(
    address: str = "127.0.0.1:50051",
    env: Mapping[str, str] | None = None,
    seed_source: Callable[[], bytes] | None = None,
    tls: ServerTls | None = None,
    key_file: str | None = None,
    access: Access | None = None,
    waiting_expiry_ms: int = WAITING_EXPIRY_MS,
    limits: Limits | None = None,
    instance: str | None = None,
    web: str | WebSettings | None = None,
) -> RunningServer:
    """Start serving on ``address`` (port 0 picks a free port) and return at once.

    With ``web`` (``HOST:PORT``, or :class:`server.web.WebSettings`), the MatchService and
    the TournamentService are also served there over the Connect protocol and gRPC-Web,
    for browsers, with the built web client at ``/`` (:mod:`server.web`), by the same use
    cases, within the same limits, over TLS when ``tls`` is given.

    On PostgreSQL the server is one instance among any others on the same store
    (:mod:`server.cluster`), named ``instance`` in its receive stamps (by default its
    host and process id); on SQLite it is alone, and ``instance`` is only a name.

    ``limits`` bounds what clients may make the server hold; without it, the ``TOTEM_*``
    variables of the process environment that ``totem serve`` reads, else the defaults
    (:meth:`Limits.from_env`).

    Matches are signed with the key in ``key_file`` (created if missing); without one,
    with the default key file, away from the store (:func:`storage.keys.default_key_file`).
    Without ``access``, the only organiser is the one whose token ``env`` holds in
    ``TOTEM_ORGANISER_TOKEN`` (if any), and nobody else may create matches.
    """
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    env = store_env() if env is None else env
    signer = _signer(env, key_file)
    app = Arena(env, seed_source=seed_source)
    if app.persistence == "eventsourcing.postgres":
        import psycopg  # already imported by the store; a SQLite server never imports it

        log.info(
            "store: PostgreSQL, psycopg %s, libpq binding: %s",
            psycopg.__version__,
            psycopg.pq.__impl__,
        )
    hub = EventHub(codec.encoded_event)
    cluster: Cluster | None = None
    if Cluster.possible(app):
        cluster = Cluster(app, instance or default_instance())
    stamper = Stamper(cluster.instance if cluster is not None else instance or "")
    limits = limits or Limits.from_env(os.environ)
    actors = Actors(
        app,
        hub,
        stamper,
        signer=signer,
        waiting_expiry_ms=waiting_expiry_ms,
        idle_seconds=limits.idle_actor_s,
        refusal_quota=limits.refusals_kept_per_seat,
    )
    if cluster is not None:
        await cluster.start(actors)  # before recovery: no write of another is missed
    await actors.recover()
    raced = frozenset(f"/{SERVICE_NAME}/{name}" for name in MatchService.RACED)
    calls = CallLimit(limits.max_concurrent_calls)
    # Stamps first: a call's arrival is its receive order, whatever happens to it next.
    server = grpc.aio.server(
        interceptors=[ArrivalStamps(stamper, raced), calls],
        options=[("grpc.so_reuseport", 0), *limits.grpc_options()],
    )
    if access is None:
        access = Access(organisers_from_env(Organisers(), env))
    service = MatchService(app, actors, hub, stamper, access, limits)
    add_match_service(service, server)
    tournaments = Tournaments(
        TournamentStore(app), service.matches, signer, shared=cluster is not None
    )
    await tournaments.recover()
    tournament_service = TournamentService(tournaments)
    add_service(
        tournament_service_pb2_grpc.add_TournamentServiceServicer_to_server,
        tournament_service,
        server,
        TOURNAMENT_SERVICE_NAME,
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    add_reflection((SERVICE_NAME, TOURNAMENT_SERVICE_NAME, health.SERVICE_NAME), server)
    if tls is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, tls.credentials())
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    web_server = None
    if web is not None:
        web_server = await start_web(
            service,
            tournament_service,
            WebSettings(web) if isinstance(web, str) else web,
            calls,
            GRACE_SECONDS,
            tls.ssl_context() if tls is not None else None,
        )
    for name in ("", SERVICE_NAME, TOURNAMENT_SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(
        server,
        port,
        app,
        actors,
        hub,
        health_servicer,
        service,
        tournaments,
        calls,
        cluster,
        web_server,
    )


def _signer(env: Mapping[str, str], key_file: str | None) -> Signer:
    """The server's key, its fingerprint logged so that operators can compare it."""
    if key_file is None:
        default = keys.default_key_file(env)
        if default.warning is not None:
            log.warning("%s", default.warning)
        key = keys.load_or_create(default.path)
    else:
        key = keys.load_or_create(key_file)
    log.info(
        "server key %s: %s (%s)",
        "created" if key.created else "loaded",
        key.fingerprint,
        key.path or "memory",
    )
    return key.signer()


async def serve_forever(
    address: str,
    env: Mapping[str, str],
    ready: Callable[[int], None],
    tls: ServerTls | None = None,
    key_file: str | None = None,
    drain: float = DRAIN_SECONDS,
    access: Access | None = None,
    waiting_expiry_ms: int = WAITING_EXPIRY_MS,
    limits: Limits | None = None,
    instance: str | None = None,
    web: str | WebSettings | None = None,
    web_ready: Callable[[int], None] | None = None,
) -> None:
    """Run until SIGINT or SIGTERM, then shut down cleanly (:meth:`RunningServer.stop`)."""
    running = await start(
        address,
        env,
        tls=tls,
        key_file=key_file,
        access=access,
        waiting_expiry_ms=waiting_expiry_ms,
        limits=limits,
        instance=instance,
        web=web,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        if stop.is_set():
            running.actors.hurry()  # a second signal: no more waiting
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    if running.web is not None and web_ready is not None:
        web_ready(running.web.port)
    ready(running.port)  # a signal sent as soon as it says so finds the handlers in place
    try:
        await stop.wait()
    finally:
        log.info("shutting down: draining for %.1f s", drain)
        await running.stop(drain=drain)
        log.info("stopped")
