"""Generic gRPC tools work: standard health checking and server reflection."""

from __future__ import annotations

import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2

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


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
async def test_reflection_lists_the_match_service(server: RunningServer, version: str) -> None:
    # v1 and v1alpha have the same messages under two package names: identical bytes.
    channel, _ = stub(server.port)
    async with channel:
        info = channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="totem.v1.MatchService"),
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol=f"grpc.reflection.{version}.ServerReflection"
            ),
        ]
        responses = [response async for response in info(iter(requests))]
    names = [s.name for s in responses[0].list_services_response.service]
    assert "totem.v1.MatchService" in names
    assert "grpc.health.v1.Health" in names
    assert "grpc.reflection.v1.ServerReflection" in names
    files = responses[1].file_descriptor_response.file_descriptor_proto
    described = [descriptor_pb2.FileDescriptorProto.FromString(f).name for f in files]
    assert "totem/v1/match_service.proto" in described
    # Every service listed can be described, reflection itself too (buf curl needs it).
    (own,) = responses[2].file_descriptor_response.file_descriptor_proto
    assert (
        descriptor_pb2.FileDescriptorProto.FromString(own).package == f"grpc.reflection.{version}"
    )
