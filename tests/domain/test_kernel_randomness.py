"""The shared random source and the commit-reveal seed (kernel; used by JS-9.1)."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter

import pytest

from domain.kernel import SeededRandom, commitment, effective_seed


class ScriptedRandom(SeededRandom):
    """A SeededRandom whose byte stream is given, to check how bytes become numbers."""

    def __init__(self, stream: bytes) -> None:
        super().__init__(b"", "")
        self._stream = stream
        self.used = 0

    def _take(self, n: int) -> bytes:
        out = self._stream[self.used : self.used + n]
        assert len(out) == n, "the stream ran out"
        self.used += n
        return out


def test_commitment_is_sha256_of_the_seed() -> None:
    seed = b"secret seed"
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()
    assert commitment(seed) != commitment(seed + b"!")


def test_effective_seed_combines_the_seed_with_each_entropy_in_order() -> None:
    seed, e1, e2 = b"s" * 32, b"alice", b"bob"
    expected = hashlib.sha256(
        seed + hashlib.sha256(e1).digest() + hashlib.sha256(e2).digest()
    ).digest()
    assert effective_seed(seed, [e1, e2]) == expected
    # Order, every contribution and the seed itself all matter.
    assert effective_seed(seed, [e2, e1]) != expected
    assert effective_seed(seed, [e1]) != expected
    assert effective_seed(b"t" * 32, [e1, e2]) != expected
    # An empty contribution still counts (its hash is mixed in).
    assert effective_seed(seed, [b""]) != effective_seed(seed, [])
    assert effective_seed(seed, []) == hashlib.sha256(seed).digest()


def test_stream_is_sha256_counter_mode_over_seed_and_purpose() -> None:
    seed = bytes(range(32))
    rng = SeededRandom(seed, "deal")
    first = rng._take(40)
    block0 = hashlib.sha256(seed + b"deal" + (0).to_bytes(8, "big")).digest()
    block1 = hashlib.sha256(seed + b"deal" + (1).to_bytes(8, "big")).digest()
    assert first == (block0 + block1)[:40]
    assert rng._take(8) == block1[8:16]


def test_same_seed_and_purpose_give_the_same_draws() -> None:
    a, b = SeededRandom(b"x" * 32, "deal"), SeededRandom(b"x" * 32, "deal")
    assert [a.randbelow(1000) for _ in range(50)] == [b.randbelow(1000) for _ in range(50)]
    c, d = list(range(80)), list(range(80))
    SeededRandom(b"y" * 32, "deal").shuffle(c)
    SeededRandom(b"y" * 32, "deal").shuffle(d)
    assert c == d
    assert sorted(c) == list(range(80))


def test_purpose_and_seed_separate_streams() -> None:
    def draws(seed: bytes, purpose: str) -> list[int]:
        rng = SeededRandom(seed, purpose)
        return [rng.randbelow(2**32) for _ in range(8)]

    assert draws(b"x" * 32, "deal") != draws(b"x" * 32, "births")
    assert draws(b"x" * 32, "deal") != draws(b"z" * 32, "deal")


def test_randbelow_rejects_values_past_the_largest_multiple() -> None:
    # n = 3 in one byte: 255 = 3 * 85 is the first value past the largest multiple
    # below 256, so it is rejected and the next byte is used.
    rng = ScriptedRandom(bytes([255, 5]))
    assert rng.randbelow(3) == 5 % 3
    assert rng.used == 2
    # 254 is accepted.
    assert ScriptedRandom(bytes([254])).randbelow(3) == 254 % 3
    # n = 256 fits one byte exactly: nothing is ever rejected.
    assert ScriptedRandom(bytes([255])).randbelow(256) == 255
    # n = 257 needs two bytes, big-endian.
    rng = ScriptedRandom(bytes([0, 200]))
    assert rng.randbelow(257) == 200
    assert rng.used == 2


def test_randbelow_edge_values() -> None:
    rng = SeededRandom(b"e" * 32, "t")
    assert rng.randbelow(1) == 0
    with pytest.raises(ValueError):
        rng.randbelow(0)
    assert all(0 <= rng.randbelow(7) < 7 for _ in range(200))


def test_shuffle_is_fisher_yates_from_the_last_position_down() -> None:
    # For 4 items it draws randbelow(4), randbelow(3), randbelow(2), swapping each
    # position i (3, 2, 1) with the drawn j.
    rng = ScriptedRandom(bytes([1, 0, 1]))  # j = 1, 0, 1
    items = ["a", "b", "c", "d"]
    rng.shuffle(items)
    # i=3, j=1: a d c b; i=2, j=0: c d a b; i=1, j=1: unchanged.
    assert items == ["c", "d", "a", "b"]


def test_every_permutation_of_three_appears_about_equally_often() -> None:
    counts: Counter[tuple[int, ...]] = Counter()
    seeds = 1200
    for i in range(seeds):
        items = [0, 1, 2]
        SeededRandom(i.to_bytes(4, "big"), "perm").shuffle(items)
        counts[tuple(items)] += 1
    assert set(counts) == set(itertools.permutations(range(3)))
    # Each of the 6 permutations expects 200; a biased shuffle (e.g. swapping with any
    # position, or modulo bias) would put some far from it. Deterministic: seeds are fixed.
    assert all(140 <= c <= 260 for c in counts.values()), counts


def test_randbelow_spreads_evenly_over_a_non_power_of_two() -> None:
    rng = SeededRandom(b"spread" * 6, "t")
    counts = Counter(rng.randbelow(6) for _ in range(6000))
    assert set(counts) == set(range(6))
    assert all(850 <= c <= 1150 for c in counts.values()), counts
