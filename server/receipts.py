"""The receipt every answer to a command carries (docs/audit.md, "Receipts").

Signed by the server's key over the match id, the version, a commitment to the chain
head and the time (:func:`domain.kernel.signing.receipt_message`). A player keeps the
newest; it proves later that a store (or a bundle) holds at least that version with that
history, whoever holds the store (``totem-replay verify --receipt``).
"""

from __future__ import annotations

import time

from domain.kernel.match import MatchAggregate
from domain.kernel.signing import Signer, head_commitment, receipt_message
from totem.v1 import match_service_pb2


def receipt(match: MatchAggregate, signer: Signer) -> match_service_pb2.Receipt:
    """The receipt for ``match`` as it is now: its version and the digest of its last
    event (saved or about to be: the answer is sent only once it is stored)."""
    issued_at_ms = time.time_ns() // 1_000_000
    commitment = head_commitment(bytes.fromhex(match.seed), match.id, match.version, match.digest)
    message = receipt_message(match.id, match.version, commitment, issued_at_ms)
    return match_service_pb2.Receipt(
        match_id=str(match.id),
        version=match.version,
        head_commitment=commitment,
        issued_at_ms=issued_at_ms,
        signature=signer.sign(message),
        public_key=signer.public_key,
    )
