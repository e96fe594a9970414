"""The Merkle tree of RFC 9162 (Certificate Transparency v2), section 2.1.

Pure functions over bytes, no I/O, so that the server (which keeps the log and signs its
checkpoints) and ``totem-replay`` (which checks them, with or without the store) share
one definition:

- a leaf's hash is ``SHA-256(0x00 || leaf)``, an inner node's ``SHA-256(0x01 || left ||
  right)``; the tree of no leaves hashes to ``SHA-256()`` (the empty string);
- a tree of ``n > 1`` leaves splits at ``k``, the largest power of two below ``n``: its
  hash is the node hash of the tree of the first ``k`` leaves and of the rest;
- an inclusion proof is the audit path of RFC 9162 2.1.3 (``PATH``), a consistency
  proof the one of 2.1.4 (``PROOF``), and both are verified by the algorithms given
  there (2.1.3.2 and 2.1.4.2), step for step.

Every function here takes *leaf hashes* (the result of :func:`leaf_hash`), not leaves:
the log stores its leaves, hashes them once, and hands the hashes over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
#: The hash of the tree of no leaves.
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(LEAF_PREFIX + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (``n > 1``)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(hashes: Sequence[bytes]) -> bytes:
    """The tree hash (``MTH``) of the leaves whose hashes these are."""
    if not hashes:
        return EMPTY_ROOT
    return _root(hashes, 0, len(hashes))


def _root(hashes: Sequence[bytes], start: int, end: int) -> bytes:
    n = end - start
    if n == 1:
        return hashes[start]
    k = _split(n)
    return node_hash(_root(hashes, start, start + k), _root(hashes, start + k, end))


def inclusion_proof(index: int, hashes: Sequence[bytes]) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of these leaves (``PATH``)."""
    if not 0 <= index < len(hashes):
        raise ValueError(f"leaf {index} is not in a tree of {len(hashes)} leaves")
    return _path(index, hashes, 0, len(hashes))


def _path(m: int, hashes: Sequence[bytes], start: int, end: int) -> list[bytes]:
    n = end - start
    if n == 1:
        return []
    k = _split(n)
    if m < k:
        return [*_path(m, hashes, start, start + k), _root(hashes, start + k, end)]
    return [*_path(m - k, hashes, start + k, end), _root(hashes, start, start + k)]


def consistency_proof(old_size: int, hashes: Sequence[bytes]) -> list[bytes]:
    """The proof that the tree of the first ``old_size`` leaves is a prefix of the tree
    of all of them (``PROOF``); empty when ``old_size`` is 0 or the whole tree."""
    if not 0 <= old_size <= len(hashes):
        raise ValueError(f"a tree of {len(hashes)} leaves has no prefix of {old_size}")
    if old_size in (0, len(hashes)):
        return []
    return _subproof(old_size, hashes, 0, len(hashes), True)


def _subproof(m: int, hashes: Sequence[bytes], start: int, end: int, whole: bool) -> list[bytes]:
    n = end - start
    if m == n:
        return [] if whole else [_root(hashes, start, end)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, hashes, start, start + k, whole), _root(hashes, start + k, end)]
    return [*_subproof(m - k, hashes, start + k, end, False), _root(hashes, start, start + k)]


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes | None:
    """The root that ``proof`` leads to from leaf hash ``leaf`` at ``index`` in a tree
    of ``size`` leaves (RFC 9162 2.1.3.2), or None if the proof cannot be one."""
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], expected_root: bytes
) -> bool:
    """Whether leaf hash ``leaf`` is leaf ``index`` of the tree of ``size`` leaves whose
    hash is ``expected_root``."""
    return root_from_inclusion(index, size, leaf, proof) == expected_root


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Whether the tree of ``old_size`` leaves hashing to ``old_root`` is a prefix of the
    tree of ``new_size`` leaves hashing to ``new_root`` (RFC 9162 2.1.4.2). The empty
    tree is a prefix of every tree; a tree is consistent with itself only."""
    if not 0 <= old_size <= new_size:
        return False
    if old_size == new_size:
        return not proof and old_root == new_root
    if old_size == 0:
        return not proof and old_root == EMPTY_ROOT
    if not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old tree is a subtree
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0


class Frontier:
    """The tree grown one leaf at a time, its root known at any size without keeping the
    leaves: the roots of its perfect subtrees, largest first (at most one per bit of
    the size). What the server keeps in memory to sign a checkpoint without reading the
    whole log each time."""

    def __init__(self) -> None:
        self.size = 0
        #: (height, hash) of each perfect subtree, left to right.
        self._peaks: list[tuple[int, bytes]] = []

    def append(self, leaf: bytes) -> None:
        """Add the leaf whose hash is ``leaf``."""
        height, node = 0, leaf
        while self._peaks and self._peaks[-1][0] == height:
            _, left = self._peaks.pop()
            node = node_hash(left, node)
            height += 1
        self._peaks.append((height, node))
        self.size += 1

    def root(self) -> bytes:
        """The tree hash of the leaves appended so far: the peaks folded from the right,
        which is the RFC's split (each peak is the left part of what follows it)."""
        if not self._peaks:
            return EMPTY_ROOT
        node = self._peaks[-1][1]
        for _, left in reversed(self._peaks[:-1]):
            node = node_hash(left, node)
        return node
