"""GetCheckpoint's work: a signed tree head of the transparency log of matches.

The leaves are appended by :meth:`storage.arena.Arena.save`, in the transaction of
the events they describe; here the server signs what the store holds now, with its own
key, so that whoever keeps a checkpoint outside the store can later hold the store to it
(``totem-replay verify --all --checkpoint``). Synchronous: runs in a query thread.
"""

from __future__ import annotations

import time

import grpc

from domain.kernel import merkle
from domain.kernel.signing import Signer
from domain.kernel.translog import checkpoint_message
from server.errors import ServiceError
from storage.arena import Arena
from totem.v1 import match_service_pb2


def signed_checkpoint(
    app: Arena, signer: Signer, consistent_with: int = 0
) -> match_service_pb2.GetCheckpointResponse:
    """The log's size and root now, signed; with ``consistent_with``, the consistency
    proof from that size, computed from the same leaves as the root (read whole: only
    asked for by an auditor)."""
    proof: list[bytes] = []
    if consistent_with:
        hashes = [logged.leaf().hash() for logged in app.logged_leaves()]
        if consistent_with > len(hashes):
            raise ServiceError(
                grpc.StatusCode.OUT_OF_RANGE,
                f"consistent_with {consistent_with} is beyond the log's {len(hashes)} leaves",
            )
        size, root = len(hashes), merkle.root(hashes)
        proof = merkle.consistency_proof(consistent_with, hashes)
    else:
        size, root = app.tree_head()
    now_ms = time.time_ns() // 1_000_000
    return match_service_pb2.GetCheckpointResponse(
        tree_size=size,
        root_hash=root,
        timestamp_ms=now_ms,
        public_key=signer.public_key,
        signature=signer.sign(checkpoint_message(size, root, now_ms)),
        consistency_proof=proof,
    )
