"""Server reflection that serves the contract's files with their comments.

Most of the contract's documentation lives in the comments of its .proto files, and a
client generated from reflection (``buf curl``, ``grpcurl describe``, code generators)
sees only what reflection serves. The descriptors compiled into the ``*_pb2`` modules,
which grpcio-reflection serves, carry no source info; ``protos/generate.py`` writes the
same files with it, as a descriptor set beside them. Reflection's answers are taken as
grpcio-reflection makes them, and each file of that set is put in place of its bare
copy: only a file that describes exactly what the server runs, so a stale set never
puts another contract's comments on this one.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Mapping
from importlib.resources import files
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2

log = logging.getLogger(__name__)

#: Written by ``protos/generate.py`` into the package of the generated code.
DESCRIPTOR_SET = ("totem.v1", "contract.binpb")


@functools.cache
def documented_files() -> Mapping[str, bytes]:
    """:func:`matching_files` of the packaged descriptor set, read once per process."""
    package, name = DESCRIPTOR_SET
    return matching_files(files(package).joinpath(name).read_bytes())


def matching_files(data: bytes) -> dict[str, bytes]:
    """Each file of the descriptor set ``data``, serialized with its source info, by
    name: those that describe exactly the compiled contract only."""
    pool = descriptor_pool.Default()
    documented: dict[str, bytes] = {}
    for file in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        bare = descriptor_pb2.FileDescriptorProto()
        try:
            pool.FindFileByName(file.name).CopyToProto(bare)
        except KeyError:
            continue  # not a file this server serves
        if _without_extras(file) != _without_extras(bare):
            log.warning(
                "%s in %s differs from the compiled contract: served without its comments "
                "(run python protos/generate.py)",
                file.name,
                "/".join(DESCRIPTOR_SET),
            )
            continue
        documented[file.name] = file.SerializeToString()
    return documented


def _without_extras(file: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """``file`` without what protoc adds to a descriptor set and not to generated code:
    source info, and each field's JSON name (derived from its name by default)."""
    bare = descriptor_pb2.FileDescriptorProto()
    bare.CopyFrom(file)
    bare.ClearField("source_code_info")
    messages = list(bare.message_type)
    while messages:
        message = messages.pop()
        for field in (*message.field, *message.extension):
            field.ClearField("json_name")
        messages.extend(message.nested_type)
    for field in bare.extension:
        field.ClearField("json_name")
    return bare


class DocumentedReflection:
    """A reflection servicer whose file descriptors carry their comments where known."""

    def __init__(self, servicer: Any, documented: Mapping[str, bytes]) -> None:
        self._servicer = servicer
        self._documented = documented

    async def ServerReflectionInfo(
        self, requests: AsyncIterator[reflection_pb2.ServerReflectionRequest], context: Any
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        async for response in self._servicer.ServerReflectionInfo(requests, context):
            if response.HasField("file_descriptor_response"):
                protos = response.file_descriptor_response.file_descriptor_proto
                protos[:] = [self._with_comments(proto) for proto in protos]
            yield response

    def _with_comments(self, serialized: bytes) -> bytes:
        name = descriptor_pb2.FileDescriptorProto.FromString(serialized).name
        return self._documented.get(name, serialized)
