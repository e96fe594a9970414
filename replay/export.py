"""Events as JSON objects: the ``events --json`` export, one object per line.

Each object holds the event's place in the chain (``match_id``, ``version``, ``name``,
``timestamp``, ``digest``, ``prev_digest``), ``view``: what the referee sees of it (cards
as objects), and ``hashed``: the event's own fields exactly as they were hashed. With
``hashed`` and the metadata anyone can recompute the digest: ``event_digest(name,
hashed | {"originator_id": match_id, "originator_version": version, "timestamp":
timestamp, "prev_digest": prev_digest})`` (see :mod:`domain.kernel.chain`). An event
stored before its class's fields changed also has ``upcast``: the fields it was recorded
without, which a rebuild gives as None (:mod:`domain.kernel.versions`). The object is
written by :mod:`storage.event_lines`, which a tournament's result sheet shares; this
module gives it the game's view.
"""

from __future__ import annotations

from typing import Any

from domain.kernel.match import MatchAggregate, event_name
from domain.kernel.views import Viewer
from replay import games
from storage import event_lines
from storage.event_lines import METADATA

__all__ = ["METADATA", "event_record", "referee_view"]


def referee_view(match: MatchAggregate, event: Any) -> tuple[str, dict[str, Any]]:
    """The event's name and what the referee sees of it; ``match`` is the state the
    event has been applied to."""
    name, view = games.event_view(match, event, Viewer.referee())
    return name or event_name(event), view


def event_record(match: MatchAggregate, event: Any) -> dict[str, Any]:
    """The export of one event; ``match`` is the state the event has been applied to.
    The object is written by :func:`storage.event_lines.event_record`, with the game's
    referee view."""
    return event_lines.event_record(event, *referee_view(match, event))
