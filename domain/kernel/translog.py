"""The transparency log of matches: what its leaves say, and what a checkpoint signs.

Whoever holds the store holds the key beside it, so a match's chain and signature alone
cannot show that a match was deleted, truncated or replaced by another that is signed
as well. The server therefore appends, in the same transaction as the events, one leaf
for each match's creation and one for each match's signed end to a log, a Merkle tree
in the manner of RFC 9162 (:mod:`domain.kernel.merkle`), and signs *checkpoints* of it
(size, root hash, time). A checkpoint kept outside the store pins every leaf before its
size: the store must still reproduce its root, and each match must still give the leaves
logged for it. docs/audit.md gives the same encodings, for a verifier written from it.

Pure: no clock, no cryptography (the server signs, the replay tool verifies), no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEvent

from domain.kernel import merkle
from domain.kernel.randomness import commitment

#: Every leaf begins with this line: leaves can never be mistaken for other data.
LEAF_PREFIX = b"totem-arena log leaf v1\n"
#: Every checkpoint's signed message begins with this line, so that no match signature
#: (:data:`domain.kernel.signing.PREFIX`) can be passed off as a checkpoint's, nor the
#: reverse.
CHECKPOINT_PREFIX = b"totem-arena checkpoint v1\n"
#: The ``format`` of a checkpoint file.
CHECKPOINT_FORMAT = "totem-arena checkpoint v1"

CREATED = "created"
ENDED = "ended"
#: A tournament's creation and signed end (TO-11.2), logged as a match's are: the store's
#: holder cannot then drop a tournament, or replace its result sheet with another signed
#: by the same key, without a checkpoint kept outside the store showing it.
TOURNAMENT_CREATED = "tournament-created"
TOURNAMENT_ENDED = "tournament-ended"
#: The kinds of leaf that log a beginning (the others log a signed end).
BEGINNINGS = frozenset({CREATED, TOURNAMENT_CREATED})
#: The kinds of leaf of a tournament (the others are a match's).
TOURNAMENT_KINDS = frozenset({TOURNAMENT_CREATED, TOURNAMENT_ENDED})


@dataclass(frozen=True)
class Leaf:
    """One entry of the log. A creation (``kind`` ``created``, at version 1) names the
    game and the seed commitment; an end (``ended``) names the version of ``MatchEnded``
    and its signature (hex; empty when the match ended unsigned). ``digest`` is the
    digest of that event: the creation event's, or the match digest. A tournament's
    leaves (``tournament-created``, ``tournament-ended``) are the same, ``match_id``
    holding the tournament's id and the end its ``TournamentEnded``."""

    kind: str
    match_id: UUID
    version: int
    digest: str
    game: str = ""
    seed_commitment: str = ""
    signature: str = ""

    def encode(self) -> bytes:
        """The exact bytes whose hash is the leaf's (RFC 9162: ``SHA-256(0x00 || leaf)``):
        the prefix line, then one field per line, no line end after the last."""
        if self.kind in BEGINNINGS:
            fields = [self.game, self.digest, self.seed_commitment]
        else:
            fields = [str(self.version), self.digest, self.signature]
        text = "\n".join([self.kind, str(self.match_id), *(f.lower() for f in fields)])
        return LEAF_PREFIX + text.encode()

    def hash(self) -> bytes:
        return merkle.leaf_hash(self.encode())

    @property
    def of_tournament(self) -> bool:
        return self.kind in TOURNAMENT_KINDS

    def describe(self) -> str:
        what = "tournament" if self.of_tournament else "match"
        if self.kind in BEGINNINGS:
            return f"the creation of {what} {self.match_id} ({self.game})"
        return f"the end of {what} {self.match_id} at version {self.version}"


@dataclass(frozen=True)
class LeafLogged(DomainEvent):
    """A leaf as the log stores it: an event of the log aggregate, whose version is the
    leaf's index plus one. Its fields are those of :class:`Leaf`."""

    kind: str
    match_id: UUID
    version: int
    digest: str
    game: str
    seed_commitment: str
    signature: str

    def leaf(self) -> Leaf:
        return Leaf(
            kind=self.kind,
            match_id=self.match_id,
            version=self.version,
            digest=self.digest,
            game=self.game,
            seed_commitment=self.seed_commitment,
            signature=self.signature,
        )


def leaf_fields(leaf: Leaf) -> dict[str, Any]:
    """The fields of the :class:`LeafLogged` event that stores ``leaf``."""
    return {
        "kind": leaf.kind,
        "match_id": leaf.match_id,
        "version": leaf.version,
        "digest": leaf.digest,
        "game": leaf.game,
        "seed_commitment": leaf.seed_commitment,
        "signature": leaf.signature,
    }


def created_leaf(event: Any, game: str, kind: str = CREATED) -> Leaf:
    """The leaf of a match's first event (its creation, or a fork's ``Forked``); with
    ``kind`` TOURNAMENT_CREATED, of a tournament's."""
    return Leaf(
        kind=kind,
        match_id=UUID(str(event.originator_id)),
        version=event.originator_version,
        digest=event.digest,
        game=game,
        seed_commitment=commitment(bytes.fromhex(event.seed)),
    )


def ended_leaf(event: Any, kind: str = ENDED) -> Leaf:
    """The leaf of a match's ``MatchEnded``; with ``kind`` TOURNAMENT_ENDED, of a
    tournament's ``TournamentEnded``."""
    return Leaf(
        kind=kind,
        match_id=UUID(str(event.originator_id)),
        version=event.originator_version,
        digest=event.digest,
        signature=getattr(event, "signature", "") or "",
    )


def checkpoint_message(tree_size: int, root_hash: bytes, timestamp_ms: int) -> bytes:
    """The exact bytes a checkpoint's signature covers: the prefix line, then the tree
    size, the root hash (hex) and the time (ms since the Unix epoch), one per line."""
    return CHECKPOINT_PREFIX + f"{tree_size}\n{root_hash.hex()}\n{timestamp_ms}".encode()


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read as one."""


@dataclass(frozen=True)
class Checkpoint:
    """A signed tree head: the log had ``tree_size`` leaves hashing to ``root_hash`` at
    ``timestamp_ms``, signed (Ed25519) by the key ``public_key``."""

    tree_size: int
    root_hash: bytes
    timestamp_ms: int
    public_key: bytes
    signature: bytes

    def message(self) -> bytes:
        return checkpoint_message(self.tree_size, self.root_hash, self.timestamp_ms)

    def to_json(self) -> str:
        """The checkpoint file: one JSON object (docs/audit.md)."""
        return json.dumps(
            {
                "format": CHECKPOINT_FORMAT,
                "tree_size": self.tree_size,
                "root_hash": self.root_hash.hex(),
                "timestamp_ms": self.timestamp_ms,
                "public_key": self.public_key.hex(),
                "signature": self.signature.hex(),
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> Checkpoint:
        """Read a checkpoint file; any deviation from its shape is a CheckpointError."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CheckpointError(f"not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointError(f"not a checkpoint: its format must be {CHECKPOINT_FORMAT!r}")
        size, time = data.get("tree_size"), data.get("timestamp_ms")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise CheckpointError("tree_size must be a whole number, 0 or more")
        if not isinstance(time, int) or isinstance(time, bool):
            raise CheckpointError("timestamp_ms must be a whole number")
        return cls(
            tree_size=size,
            root_hash=_hex(data, "root_hash", 32),
            timestamp_ms=time,
            public_key=_hex(data, "public_key", 32),
            signature=_hex(data, "signature", 64),
        )


def _hex(data: dict[str, Any], name: str, length: int) -> bytes:
    value = data.get(name)
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != length:
        raise CheckpointError(f"{name} must be {2 * length} hex digits")
    return raw
