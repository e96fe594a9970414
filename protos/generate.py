"""Regenerate the Python code for the wire contract, beside each .proto file.

Run ``python protos/generate.py`` after changing a .proto file. The test suite
regenerates into a temporary directory and fails if the committed files differ, so the
generators (grpcio-tools, mypy-protobuf, protoc-gen-connectrpc) are pinned in
pyproject.toml. The Connect code (``*_connect.py``, served to browsers by
:mod:`server.web`) targets Google's protobuf runtime (``protobuf=google``), the same
``*_pb2`` messages the gRPC service uses.
"""

from __future__ import annotations

import shutil
import sys
from importlib.resources import files
from pathlib import Path

from grpc_tools import protoc

PROTO_ROOT = Path(__file__).resolve().parent
#: The contract's files as a FileDescriptorSet with their comments (source info).
DESCRIPTOR_SET = "totem/v1/contract.binpb"


def proto_files(root: Path = PROTO_ROOT) -> list[Path]:
    return sorted(root.glob("totem/**/*.proto"))


def _plugin(name: str) -> str:
    """A protoc plugin installed beside this Python (mypy-protobuf's), or on PATH."""
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        raise SystemExit(f"{name} not found: pip install -e '.[test]'")
    return path


def generate(out_dir: Path, root: Path = PROTO_ROOT) -> None:
    """Write ``*_pb2.py``, ``*_pb2.pyi``, ``*_pb2_grpc.py`` and ``*_connect.py`` for every
    proto into out_dir, and :data:`DESCRIPTOR_SET`."""
    include = str(files("grpc_tools").joinpath("_proto"))
    plugins = {
        name: _plugin(name)
        for name in ("protoc-gen-mypy", "protoc-gen-mypy_grpc", "protoc-gen-connectrpc")
    }
    args = [
        "protoc",
        f"-I{root}",
        f"-I{include}",
        *(f"--plugin={name}={path}" for name, path in plugins.items()),
        f"--python_out={out_dir}",
        f"--mypy_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--mypy_grpc_out={out_dir}",
        f"--connectrpc_out={out_dir}",
        "--connectrpc_opt=protobuf=google",
        *(str(p.relative_to(root)) for p in proto_files(root)),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    # The same files with their comments, for server reflection to serve: the
    # descriptors embedded in *_pb2.py carry no source info.
    described = [
        "protoc",
        f"-I{root}",
        f"-I{include}",
        "--include_source_info",
        f"--descriptor_set_out={out_dir / DESCRIPTOR_SET}",
        *(str(p.relative_to(root)) for p in proto_files(root)),
    ]
    if protoc.main(described) != 0:
        raise SystemExit("protoc failed")


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else PROTO_ROOT)
