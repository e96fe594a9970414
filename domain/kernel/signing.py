"""The server's signature over an ended match.

When a match ends, its ``MatchEnded`` event records ``signature`` and ``public_key``:
an Ed25519 signature, by the server's key, over :func:`signed_message` of the match id,
the version of ``MatchEnded`` and its digest, which is the match digest (nothing is
recorded after it). Both fields are left out of the digest (``NOT_HASHED``): the
signature covers the digest, so it cannot also be part of it.

The domain does no cryptography: the server hands the match a :class:`Signer`, and the
verifier (``totem-replay verify``) checks the signature on :func:`signed_message` with
any Ed25519 implementation.

Beside it, the server signs a *receipt* with every answer to a command: the match id, the
version, a commitment to the chain head and the time, under its own prefix
(:func:`receipt_message`), so that neither signature can be passed off as the other.
The commitment (:func:`head_commitment`) is keyed by the match's secret seed: a player
holding receipts learns nothing from it, and a judge holding the store recomputes it.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

#: Fields of ``MatchEnded`` that hold the signature, outside the digest.
SIGNATURE_FIELDS = frozenset({"signature", "public_key"})

#: Signatures of another purpose can never be mistaken for a match's.
PREFIX = b"totem-arena match signature v1\n"
#: A tournament's result sheet (its final event) is signed under its own prefix: a
#: match's signature is never a tournament's, nor the reverse.
TOURNAMENT_PREFIX = b"totem-arena tournament signature v1\n"
#: The receipt's prefix: a receipt is never a match signature, nor the reverse.
RECEIPT_PREFIX = b"totem-arena receipt v1\n"
#: The prefix of the commitment's HMAC message: the seed's other uses (the draws, its
#: SHA-256 commitment) never hash these bytes.
HEAD_PREFIX = b"totem-arena receipt head v1\n"


def signed_message(
    match_id: UUID | str, version: int, digest: str, prefix: bytes = PREFIX
) -> bytes:
    """The exact bytes the server signs: a fixed prefix, then the match id (canonical
    text), the version of ``MatchEnded`` and its digest (hex), one per line. A tournament
    is signed the same way under :data:`TOURNAMENT_PREFIX`, its id in place of the
    match's and its final event's version and digest."""
    return prefix + f"{UUID(str(match_id))}\n{version}\n{digest.lower()}".encode()


def head_commitment(seed: bytes, match_id: UUID | str, version: int, digest: str) -> bytes:
    """The commitment a receipt carries to the chain head: HMAC-SHA256 keyed by the
    match's secret seed (the 32 bytes committed at creation, or a fork's own) of
    :data:`HEAD_PREFIX`, the match id, the version and the digest of the event at that
    version (hex, lower case), one per line.

    Not the digest itself: a digest is computed over hidden facts, and a player who knew
    the digests of two versions could test guesses of a few hidden bits (a face-down card,
    a spell) against the second. Keyed by 256 secret bits, the commitment tells the
    player nothing while the match is in play; once the seed is revealed at the end, it
    tells no more than the digest, which nobody can recompute from a guess: every digest
    depends on token hashes no view shows (and in Village on the match's other secret).
    docs/audit.md, "Receipts", has the whole argument."""
    message = HEAD_PREFIX + f"{UUID(str(match_id))}\n{version}\n{digest.lower()}".encode()
    return hmac.new(seed, message, hashlib.sha256).digest()


def receipt_message(
    match_id: UUID | str, version: int, commitment: bytes, issued_at_ms: int
) -> bytes:
    """The exact bytes a receipt's signature covers: :data:`RECEIPT_PREFIX`, then the
    match id (canonical text), the version, the head commitment (hex, lower case) and
    the time of signing (milliseconds since the Unix epoch), one per line, UTF-8."""
    lines = f"{UUID(str(match_id))}\n{version}\n{commitment.hex()}\n{issued_at_ms}"
    return RECEIPT_PREFIX + lines.encode()


@dataclass(frozen=True)
class Signer:
    """The server's key as the domain sees it: its raw public key (32 bytes for
    Ed25519) and a function that signs bytes. Shared, never copied: a match copied for
    publishing keeps the same signer."""

    public_key: bytes
    sign: Callable[[bytes], bytes]

    def __deepcopy__(self, memo: dict[int, Any]) -> Signer:
        return self

    def __copy__(self) -> Signer:
        return self

    def signature_fields(
        self, match_id: UUID, version: int, digest: str, prefix: bytes = PREFIX
    ) -> dict[str, str]:
        """The fields ``MatchEnded`` records (or another aggregate's final event, under
        its own ``prefix``): signature and public key, in hex."""
        return {
            "signature": self.sign(signed_message(match_id, version, digest, prefix)).hex(),
            "public_key": self.public_key.hex(),
        }
