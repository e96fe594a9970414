"""Assemble and run the server: the application, actors, hub and gRPC services."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from server.actors import Actors
from server.application import Arena, store_env
from server.hub import EventHub
from server.service import MatchService
from server.stamps import Stamper
from totem.v1 import match_service_pb2, match_service_pb2_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
GRACE_SECONDS = 5.0


@dataclass
class RunningServer:
    server: grpc.aio.Server
    port: int
    app: Arena
    actors: Actors
    health: health.aio.HealthServicer

    async def stop(self, grace: float | None = GRACE_SECONDS) -> None:
        """Refuse new calls, let running ones finish (their actors still work meanwhile;
        open Watch streams are cancelled after ``grace``), then stop the actors and their
        timers and close the store."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        await self.actors.close()
        self.app.close()


async def start(
    address: str = "127.0.0.1:50051",
    env: Mapping[str, str] | None = None,
    seed_source: Callable[[], bytes] | None = None,
) -> RunningServer:
    """Start serving on ``address`` (port 0 picks a free port) and return at once."""
    app = Arena(store_env() if env is None else env, seed_source=seed_source)
    hub = EventHub()
    stamper = Stamper()
    actors = Actors(app, hub, stamper)
    await actors.recover()
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    match_service_pb2_grpc.add_MatchServiceServicer_to_server(
        MatchService(app, actors, hub, stamper), server
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server, port, app, actors, health_servicer)


async def serve_forever(address: str, env: Mapping[str, str], ready: Callable[[int], None]) -> None:
    """Run until SIGINT or SIGTERM, then shut down cleanly."""
    running = await start(address, env)
    ready(running.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        log.info("shutting down")
        await running.stop()
