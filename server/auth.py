"""Bearer tokens: a player's is issued at join, the referee's at creation.

Only their SHA-256 is stored (in the match's events), so any server instance can check a
token after a restart, and the store never holds a usable token.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable

METADATA_KEY = "authorization"
SCHEME = "bearer "


def new_token() -> tuple[str, str]:
    """A fresh unguessable token and its hash."""
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """The token of an ``authorization: Bearer <token>`` metadata entry, if any."""
    for key, value in metadata or ():
        if key.lower() == METADATA_KEY and isinstance(value, str):
            if value.lower().startswith(SCHEME):
                return value[len(SCHEME) :].strip() or None
            return ""
    return None
