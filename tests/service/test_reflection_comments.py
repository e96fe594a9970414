"""Reflection serves the contract with its comments, where most of its documentation
lives, so that a client generated from reflection carries them."""

from __future__ import annotations

from pathlib import Path

from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from server.documented_reflection import matching_files
from server.serve import RunningServer
from tests.service.helpers import stub

DESCRIPTOR_SET = Path(__file__).resolve().parents[2] / "protos/totem/v1/contract.binpb"


def _comments(file: descriptor_pb2.FileDescriptorProto) -> str:
    return "\n".join(
        location.leading_comments + location.trailing_comments
        for location in file.source_code_info.location
    )


async def test_reflection_describes_the_match_service_with_its_comments(
    server: RunningServer,
) -> None:
    channel, _ = stub(server.port)
    async with channel:
        info = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        requests = [
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="totem.v1.MatchService"),
            reflection_pb2.ServerReflectionRequest(file_by_filename="totem/v1/village.proto"),
        ]
        responses = [response async for response in info(iter(requests))]
    served = {
        file.name: file
        for response in responses
        for file in map(
            descriptor_pb2.FileDescriptorProto.FromString,
            response.file_descriptor_response.file_descriptor_proto,
        )
    }
    # The service's own comment, and its first call's.
    service = _comments(served["totem/v1/match_service.proto"])
    assert "google.rpc.ErrorInfo" in service
    assert "A new match, waiting for players" in service
    for name in ("common", "jungle_speed", "tribes", "village"):
        assert served[f"totem/v1/{name}.proto"].source_code_info.location, name
    # Files that are not the contract's are served as grpcio-reflection makes them.
    assert "google/protobuf/timestamp.proto" in served


def test_a_stale_descriptor_set_lends_no_comments() -> None:
    """A set that describes another contract than the compiled one (a field renamed) is
    not served: its comments would describe what the server does not run."""
    described = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTOR_SET.read_bytes())
    assert set(matching_files(described.SerializeToString())) == {
        file.name for file in described.file
    }
    common = next(file for file in described.file if file.name == "totem/v1/common.proto")
    common.message_type[0].field[0].name += "_renamed"
    assert "totem/v1/common.proto" not in matching_files(described.SerializeToString())
