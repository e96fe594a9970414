"""Duplicate tables: every table of a round plays the same luck (TO-12.1).

The luck of a round comes from the tournament's secret seed, committed when the
tournament was created and revealed in its final event: the round's seed is
``SHA-256(LABEL || tournament seed || round number as 8 bytes big-endian)``. The label
keeps it apart from every other use of a seed (a match's draws, ``SeededRandom``,
begin with the seed itself; a receipt's commitment is an HMAC under its own prefix), and
a round's seed tells nothing of another round's, nor of the tournament's seed.

The tournament records each round's seed when the round starts; anyone holding the
revealed tournament seed re-derives it with :func:`duplicate_seed`. How a round's seed
becomes the same luck at every table is the application's to do, game by game (see
docs/tournaments.md, "Duplicate tables").
"""

from __future__ import annotations

import hashlib

from domain.kernel.errors import InvalidArgument

#: The first line of what a round's seed is the hash of.
LABEL = b"totem-arena duplicate round v1\n"
#: Bytes of a tournament's seed (as a match's).
SEED_BYTES = 32


def duplicate_seed(tournament_seed: bytes, round_number: int) -> bytes:
    """The seed every table of round ``round_number`` (from 1) shares (TO-12.1)."""
    if len(tournament_seed) != SEED_BYTES:
        raise InvalidArgument("TO-8.1", f"a tournament's seed is {SEED_BYTES} bytes")
    if round_number < 1:
        raise InvalidArgument("TO-1.1", "rounds are numbered from 1")
    return hashlib.sha256(LABEL + tournament_seed + round_number.to_bytes(8, "big")).digest()
