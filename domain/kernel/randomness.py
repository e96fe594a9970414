"""Commit–reveal randomness.

At creation the server draws a secret seed and publishes only ``commitment(seed)``.
Joining players may add entropy. The effective seed is
``SHA-256(seed || SHA-256(e1) || SHA-256(e2) ...)`` over each contribution in the order
recorded, so neither the server (committed first) nor a player (blind to the seed) can
choose an outcome. All draws come from :class:`SeededRandom` over that effective seed;
every result is recorded in an event, and the seed is revealed in the final event so
that anyone can re-derive each draw. The procedure is documented in docs/randomness.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, MutableSequence
from typing import TypeVar

T = TypeVar("T")


def commitment(seed: bytes) -> str:
    """The public commitment to a secret seed: its SHA-256, hex."""
    return hashlib.sha256(seed).hexdigest()


def effective_seed(seed: bytes, entropies: Iterable[bytes]) -> bytes:
    """Combine the server's seed with each player's entropy, in recorded order."""
    h = hashlib.sha256(seed)
    for entropy in entropies:
        h.update(hashlib.sha256(entropy).digest())
    return h.digest()


class SeededRandom:
    """A deterministic random stream: SHA-256 in counter mode over a seed and a purpose.

    Block ``i`` is ``SHA-256(seed || purpose || i as 8 bytes big-endian)``; the stream is
    the blocks' concatenation. ``randbelow(n)`` takes the fewest whole bytes that hold
    ``n - 1`` and rejects values at or above the largest multiple of ``n``, so every
    outcome is equally likely. ``purpose`` separates streams (``"deal"``, ``"births"``).
    """

    def __init__(self, seed: bytes, purpose: str) -> None:
        self._prefix = seed + purpose.encode()
        self._counter = 0
        self._buffer = b""

    def _take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = self._prefix + self._counter.to_bytes(8, "big")
            self._buffer += hashlib.sha256(block).digest()
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("n must be positive")
        if n == 1:
            return 0
        width = ((n - 1).bit_length() + 7) // 8
        space = 256**width
        limit = space - space % n
        while True:
            value = int.from_bytes(self._take(width), "big")
            if value < limit:
                return value % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher–Yates, from the last position down, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]
