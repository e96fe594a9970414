"""The committed generated code is exactly what the pinned generator makes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "protos"


def _generate_module() -> object:
    spec = importlib.util.spec_from_file_location("generate", PROTOS / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_changes_nothing(tmp_path: Path) -> None:
    generate = _generate_module()
    generate.generate(tmp_path)  # type: ignore[attr-defined]
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert fresh, "the generator wrote nothing"
    committed = sorted(
        p.relative_to(PROTOS)
        for p in (PROTOS / "totem").rglob("*")
        if p.suffix == ".binpb"
        or (p.suffix in {".py", ".pyi"} and ("_pb2" in p.name or p.stem.endswith("_connect")))
    )
    assert fresh == committed
    for path in fresh:
        assert (tmp_path / path).read_bytes() == (PROTOS / path).read_bytes(), (
            f"{path} is stale: run python protos/generate.py"
        )


def test_every_enum_has_an_unspecified_zero() -> None:
    from totem.v1 import common_pb2, jungle_speed_pb2, match_service_pb2, tribes_pb2

    for module in (common_pb2, jungle_speed_pb2, match_service_pb2, tribes_pb2):
        for enum in module.DESCRIPTOR.enum_types_by_name.values():
            assert enum.values[0].number == 0
            assert enum.values[0].name.endswith("_UNSPECIFIED"), enum.name
