"""The audit hash chain.

Every event carries ``prev_digest`` (the digest of the event before it, or
``GENESIS_DIGEST`` for the first) and ``digest``: the SHA-256 of its canonical
encoding. The canonical encoding is UTF-8 JSON with sorted keys and no whitespace of
an object holding the event's name, match id, version, timestamp and every field but
``digest`` itself (and, in ``MatchEnded``, the signature over that digest and the public
key that checks it: :data:`NOT_HASHED`; in an event stored before its class's fields
changed, the fields an upcaster filled in: :data:`UPCAST`). Anyone can
recompute it from an exported event; changing, removing or reordering an event breaks
the chain at that position.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

GENESIS_DIGEST = "0" * 64

#: Fields of a stored event that are not part of its canonical encoding: the digest
#: itself, and the server's signature over it with the public key that checks it
#: (:mod:`domain.kernel.signing`).
NOT_HASHED = frozenset({"digest", "signature", "public_key"})

#: The field an upcaster adds to an event stored before its class's fields changed
#: (:mod:`domain.kernel.versions`): the names of the fields it filled in with None. The
#: event's digest was recorded without them, and is recomputed without them: neither
#: the mark nor a field it names and that is still None is hashed.
UPCAST = "upcast"


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not canonically encodable: {type(value).__name__}")


def canonical_bytes(value: object) -> bytes:
    """Canonical JSON: sorted keys, no spaces, tuples as lists, UUIDs and times as text."""
    return json.dumps(
        value, default=_default, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()


def hashed_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an event its digest covers: all but :data:`NOT_HASHED`, the
    :data:`UPCAST` mark and the fields the mark names that are still None."""
    marked = fields.get(UPCAST)
    filled = marked if isinstance(marked, list) else []
    return {
        k: v
        for k, v in fields.items()
        if k not in NOT_HASHED and k != UPCAST and not (k in filled and v is None)
    }


def canonical_event(name: str, fields: Mapping[str, Any]) -> bytes:
    """The canonical encoding of an event called ``name`` with these fields (metadata
    included): the exact bytes its digest is the SHA-256 of."""
    body = hashed_fields(fields)
    body["event"] = name
    return canonical_bytes(body)


def event_digest(name: str, fields: Mapping[str, Any]) -> str:
    """The digest of an event called ``name`` with these fields (metadata included)."""
    return hashlib.sha256(canonical_event(name, fields)).hexdigest()


def next_link(
    event_class: Any, originator_id: UUID, prev_digest: str, version: int, kwargs: dict[str, Any]
) -> tuple[datetime, str]:
    """The timestamp and digest of the event ``event_class`` with ``kwargs`` about to be
    triggered at ``version`` after ``prev_digest``: what every chained aggregate (a match,
    a refusal log) adds to each event it triggers. Pops ``timestamp`` from ``kwargs``."""
    timestamp = kwargs.pop("timestamp", None) or event_class.create_timestamp()
    fields = dict(
        kwargs,
        originator_id=originator_id,
        originator_version=version,
        timestamp=timestamp,
        prev_digest=prev_digest,
    )
    return timestamp, event_digest(event_class.__name__, fields)


def stored_event_digest(event: object) -> str:
    """Recompute the digest of an event object as loaded from the store."""
    fields = dict(vars(event))
    return event_digest(type(event).__name__, fields)


def first_broken_link(events: Sequence[object]) -> int | None:
    """The position (1, 2, 3 …) of the first of ``events`` (all of one aggregate's, from
    its first, as loaded) where the chain breaks, or None when it holds: an event whose
    version is not its position, whose digest is not the SHA-256 of its content
    (:func:`stored_event_digest`), or whose ``prev_digest`` is not the digest of the
    event before it (:data:`GENESIS_DIGEST` for the first). A changed, removed or
    reordered event breaks it there; a match, a tournament and a refusal log are checked
    alike. (``totem-replay verify`` reports more: every problem, each in words.)"""
    previous = GENESIS_DIGEST
    for position, evt in enumerate(events, start=1):
        data = vars(evt)
        digest = data.get("digest")
        try:
            recomputed = stored_event_digest(evt)
        except (TypeError, ValueError):  # a field no canonical encoding holds
            return position
        if (
            data.get("originator_version") != position
            or data.get("prev_digest") != previous
            or not isinstance(digest, str)
            or recomputed != digest
        ):
            return position
        previous = digest
    return None
