"""One chained event as one JSON object: the line every portable record of the store is
made of.

A match's audit bundle (``totem-replay export``) and a tournament's result sheet
(:mod:`storage.sheets`) write each event the same way: its place in the chain
(``match_id``: the id of the aggregate the event belongs to, a match's or a
tournament's; ``version``, ``name``, ``timestamp``, ``digest``, ``prev_digest``), the
``view`` a viewer who sees everything has of it, ``hashed``: the event's own fields
exactly as they were hashed, ``upcast`` for an event stored before fields were added to
its class, then ``topic``, which names its class, and ``unhashed``: the server's
signature and its key, where the event carries them. With the topic, the hashed fields
and the metadata, a reader rebuilds the very event the store holds, and recomputes its
digest (:mod:`domain.kernel.chain`).

Here so that the server (which answers for a tournament's result sheet) and the replay
tool (which exports matches and sheets, and reads them back) write one format one way.
The view is the caller's to give: each kind of aggregate has its own views, and this
module knows none of them.
"""

from __future__ import annotations

import json
from typing import Any

from eventsourcing.utils import get_topic

from domain.kernel.chain import NOT_HASHED, UPCAST, hashed_fields

#: Fields of a stored event that are metadata, not what the event says.
METADATA = frozenset({"originator_id", "originator_version", "timestamp", "prev_digest"})
#: Fields an event carries outside its digest, besides the digest itself: the server's
#: signature over the digest and the key that made it (in a final event).
UNHASHED = NOT_HASHED - {"digest"}


class LineError(ValueError):
    """An event that cannot be written as a line (a field JSON cannot hold)."""


def event_record(event: Any, name: str, view: dict[str, Any]) -> dict[str, Any]:
    """The ``events --json`` object of one event: its place in the chain, ``view`` (what
    the caller's viewer sees of it, named ``name``) and its hashed fields."""
    data = vars(event)
    record = {
        "match_id": str(event.originator_id),
        "version": event.originator_version,
        "name": name,
        "timestamp": event.timestamp.isoformat(),
        "digest": event.digest,
        "prev_digest": event.prev_digest,
        "view": view,
        "hashed": {k: v for k, v in hashed_fields(data).items() if k not in METADATA},
    }
    if data.get(UPCAST):
        record["upcast"] = list(data[UPCAST])
    return record


def event_line(event: Any, name: str, view: dict[str, Any]) -> dict[str, Any]:
    """The line of one event in a bundle or a sheet: :func:`event_record`, its class's
    ``topic`` and ``unhashed``, which carries the signature and its key, so that the
    file alone proves who vouched for it."""
    unhashed = {k: v for k, v in vars(event).items() if k in UNHASHED}
    return event_record(event, name, view) | {
        "topic": get_topic(type(event)),
        "unhashed": unhashed,
    }


def dumps(obj: dict[str, Any], version: int) -> str:
    """One line of JSON, compact and in UTF-8 text (no newline); ``version`` names the
    event in the error when a field cannot be written."""
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise LineError(f"the event at version {version} cannot be written as JSON: {exc}") from (
            exc
        )
