"""Events as JSON objects: the ``events --json`` export, one object per line.

Each object holds the event's place in the chain (``match_id``, ``version``, ``name``,
``timestamp``, ``digest``, ``prev_digest``), ``view``: what the referee sees of it (cards
as objects), and ``hashed``: the event's own fields exactly as they were hashed. With
``hashed`` and the metadata anyone can recompute the digest: ``event_digest(name,
hashed | {"originator_id": match_id, "originator_version": version, "timestamp":
timestamp, "prev_digest": prev_digest})`` (see :mod:`domain.kernel.chain`). An event
stored before its class's fields changed also has ``upcast``: the fields it was recorded
without, which a rebuild gives as None (:mod:`domain.kernel.versions`).
"""

from __future__ import annotations

from typing import Any

from domain.kernel.chain import UPCAST, hashed_fields
from domain.kernel.match import MatchAggregate, event_name
from domain.kernel.views import Viewer
from replay import games

#: Fields of a stored event that are metadata, not what the event says.
METADATA = frozenset({"originator_id", "originator_version", "timestamp", "prev_digest"})


def event_record(match: MatchAggregate, event: Any) -> dict[str, Any]:
    """The export of one event; ``match`` is the state the event has been applied to."""
    name, view = games.event_view(match, event, Viewer.referee())
    data = vars(event)
    record = {
        "match_id": str(event.originator_id),
        "version": event.originator_version,
        "name": name or event_name(event),
        "timestamp": event.timestamp.isoformat(),
        "digest": event.digest,
        "prev_digest": event.prev_digest,
        "view": view,
        "hashed": {k: v for k, v in hashed_fields(data).items() if k not in METADATA},
    }
    if data.get(UPCAST):
        record["upcast"] = list(data[UPCAST])
    return record
