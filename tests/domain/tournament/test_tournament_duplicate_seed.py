"""The seed every table of a round shares, with duplicate tables (TO-12.1)."""

from __future__ import annotations

import hashlib

import pytest

from domain.kernel.errors import InvalidArgument
from domain.tournament.duplicate import LABEL, duplicate_seed

SEED = bytes(range(32))


def test_to_12_1_the_round_seed_is_the_labelled_hash_of_the_seed_and_round() -> None:
    expected = hashlib.sha256(LABEL + SEED + (2).to_bytes(8, "big")).digest()
    assert duplicate_seed(SEED, 2) == expected
    assert LABEL == b"totem-arena duplicate round v1\n"
    assert duplicate_seed(SEED, 1) != duplicate_seed(SEED, 2)
    assert duplicate_seed(bytes(32), 1) != duplicate_seed(SEED, 1)


def test_to_12_1_a_round_seed_needs_the_whole_seed_and_a_round() -> None:
    with pytest.raises(InvalidArgument):
        duplicate_seed(SEED[:31], 1)
    with pytest.raises(InvalidArgument):
        duplicate_seed(SEED, 0)
