"""Versioned events: an event class whose fields changed reads its stored older events.

The library upcasts a stored event whose ``class_version`` is older than its class's
(``upcast_v1_v2`` and so on, run as the event is read). An event recorded before a
field existed has no value for it: :func:`fill_in` gives it None, and names it in the
event's :data:`~domain.kernel.chain.UPCAST` field, so that

- the audit chain hashes the event as it was recorded: a field filled in by an upcaster
  (named there, and None) is left out of its canonical encoding, like the mark itself
  (:func:`domain.kernel.chain.canonical_event`); any other value in it is hashed, so
  neither the mark nor a value slipped under it changes a digest that still holds;
- the event body tells a consequence recorded as None from one never recorded
  (:func:`unrecorded`), and works the latter out as the release that stored it did.
"""

from __future__ import annotations

from typing import Any

from domain.kernel.chain import UPCAST


def fill_in(state: dict[str, Any], *names: str) -> None:
    """An upcaster's step: the fields ``names`` the stored event lacks become None and are
    named in its :data:`UPCAST` field."""
    filled = [name for name in names if name not in state]
    for name in filled:
        state[name] = None
    if filled:
        state[UPCAST] = sorted({*state.get(UPCAST, ()), *filled})


def unrecorded(upcast: list[str] | None, **fields: Any) -> bool:
    """Whether an event body's ``fields`` were filled in by an upcaster (each named in its
    ``upcast`` field and None): the event was recorded before it had them."""
    filled = upcast or []
    return bool(filled) and all(name in filled and value is None for name, value in fields.items())
