"""Generic gRPC tools work: standard health checking and server reflection."""

from __future__ import annotations

from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from server.serve import RunningServer
from tests.service.helpers import stub


async def test_health_check_reports_serving(server: RunningServer) -> None:
    channel, _ = stub(server.port)
    async with channel:
        health = health_pb2_grpc.HealthStub(channel)
        overall = await health.Check(health_pb2.HealthCheckRequest(service=""))
        match = await health.Check(health_pb2.HealthCheckRequest(service="totem.v1.MatchService"))
    assert overall.status == health_pb2.HealthCheckResponse.SERVING
    assert match.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_match_service(server: RunningServer) -> None:
    channel, _ = stub(server.port)
    async with channel:
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        names: list[str] = []
        async for response in reflection.ServerReflectionInfo(iter([request])):
            names += [s.name for s in response.list_services_response.service]
    assert "totem.v1.MatchService" in names
    assert "grpc.health.v1.Health" in names
