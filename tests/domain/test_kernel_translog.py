"""The transparency log's leaves and checkpoints, byte for byte as docs/audit.md gives
them, so that a verifier written from the docs computes the same hashes."""

from __future__ import annotations

import hashlib
import json
from uuid import UUID

import pytest

from domain.kernel.translog import Checkpoint, CheckpointError, Leaf, checkpoint_message

MATCH = UUID("0b6f4a46-6c2d-4f53-9a3e-2d1f0c9e8a11")


def test_a_creation_leaf_is_the_prefix_line_then_one_field_per_line() -> None:
    leaf = Leaf("created", MATCH, 1, "AB" * 32, game="tribes", seed_commitment="cd" * 32)
    assert leaf.encode() == (
        b"totem-arena log leaf v1\ncreated\n0b6f4a46-6c2d-4f53-9a3e-2d1f0c9e8a11\ntribes\n"
        + b"ab" * 32
        + b"\n"
        + b"cd" * 32
    )
    assert leaf.hash() == hashlib.sha256(b"\x00" + leaf.encode()).digest()


def test_an_end_leaf_names_the_version_digest_and_signature() -> None:
    leaf = Leaf("ended", MATCH, 77, "ef" * 32, signature="01" * 64)
    assert leaf.encode() == (
        b"totem-arena log leaf v1\nended\n0b6f4a46-6c2d-4f53-9a3e-2d1f0c9e8a11\n77\n"
        + b"ef" * 32
        + b"\n"
        + b"01" * 64
    )


def test_the_checkpoint_message_has_its_own_prefix() -> None:
    assert checkpoint_message(5, bytes(range(32)), 1700000000123) == (
        b"totem-arena checkpoint v1\n5\n" + bytes(range(32)).hex().encode() + b"\n1700000000123"
    )


def test_a_checkpoint_file_reads_back_and_a_damaged_one_is_refused() -> None:
    made = Checkpoint(3, b"\x01" * 32, 42, b"\x02" * 32, b"\x03" * 64)
    assert Checkpoint.from_json(made.to_json()) == made
    data = json.loads(made.to_json())
    for name, value, reason in [
        ("format", "other", "not a checkpoint"),
        ("tree_size", -1, "tree_size"),
        ("tree_size", True, "tree_size"),
        ("root_hash", "00", "root_hash must be 64 hex digits"),
        ("signature", "zz" * 64, "signature must be 128 hex digits"),
    ]:
        with pytest.raises(CheckpointError, match=reason):
            Checkpoint.from_json(json.dumps({**data, name: value}))
    with pytest.raises(CheckpointError, match="not JSON"):
        Checkpoint.from_json("{")
