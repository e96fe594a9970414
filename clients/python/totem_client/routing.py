"""Which server instance a match's players should use, when several serve one store.

Any instance serves any match, but receive order is exact only within one instance:
between two instances, the order in which they committed decides (docs/operations.md).
For a match where a grab race must go by arrival, all its players should send through
the same instance. Every client that knows the same list of instances picks the same one
for a match, with no coordination: rendezvous (highest random weight) hashing of the
match id and each address. Adding or removing an instance moves only the matches that
hash to it. The Node.js client's ``instanceFor`` gives the same answers (the same
weights: the first 8 bytes of SHA-256 of ``match id, newline, address``), so players on
either client meet on one instance.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def _weight(match_id: str, address: str) -> int:
    digest = hashlib.sha256(f"{match_id}\n{address}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def instance_for(match_id: str, addresses: Sequence[str]) -> str:
    """The address, among ``addresses``, that every player of ``match_id`` should use.

    The order of ``addresses`` does not matter; an address listed twice counts once.
    If that instance is down, :func:`instances_for` gives the next choices, the same for
    every client.
    """
    return instances_for(match_id, addresses)[0]


def instances_for(match_id: str, addresses: Sequence[str]) -> list[str]:
    """``addresses`` in the order the players of ``match_id`` should try them."""
    if not addresses:
        raise ValueError("no server instance to choose from")
    # Ties (never seen in practice) go to the smaller address, in every client alike.
    unique = sorted(set(addresses))
    return sorted(unique, key=lambda address: _weight(match_id, address), reverse=True)
