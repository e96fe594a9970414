"""The server's signature over an ended match.

When a match ends, its ``MatchEnded`` event records ``signature`` and ``public_key``:
an Ed25519 signature, by the server's key, over :func:`signed_message` of the match id,
the version of ``MatchEnded`` and its digest, which is the match digest (nothing is
recorded after it). Both fields are left out of the digest (``NOT_HASHED``): the
signature covers the digest, so it cannot also be part of it.

The domain does no cryptography: the server hands the match a :class:`Signer`, and the
verifier (``totem-replay verify``) checks the signature on :func:`signed_message` with
any Ed25519 implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

#: Fields of ``MatchEnded`` that hold the signature, outside the digest.
SIGNATURE_FIELDS = frozenset({"signature", "public_key"})

#: Signatures of another purpose can never be mistaken for a match's.
PREFIX = b"totem-arena match signature v1\n"


def signed_message(match_id: UUID | str, version: int, digest: str) -> bytes:
    """The exact bytes the server signs: a fixed prefix, then the match id (canonical
    text), the version of ``MatchEnded`` and its digest (hex), one per line."""
    return PREFIX + f"{UUID(str(match_id))}\n{version}\n{digest.lower()}".encode()


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

    def signature_fields(self, match_id: UUID, version: int, digest: str) -> dict[str, str]:
        """The fields ``MatchEnded`` records: signature and public key, in hex."""
        return {
            "signature": self.sign(signed_message(match_id, version, digest)).hex(),
            "public_key": self.public_key.hex(),
        }
