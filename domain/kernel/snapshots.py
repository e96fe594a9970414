"""Snapshots of a match: its whole state at one version, so that loading it again does
not replay every event before that version.

The library's own snapshot (``Aggregate.Snapshot``) stores ``vars(aggregate)`` through
the application's JSON transcoder, which would lose what a match's state is made of:
tuples and sets come back as lists, integer dictionary keys as strings, and enums, the
options dataclass or Jungle Speed's deck of ``Card`` objects cannot be encoded at all. A
match loaded from such a snapshot would differ from the same match replayed from its
events. So the state is first turned into plain JSON values that say what each value was
(:func:`freeze`), and turned back exactly (:func:`thaw`): a match loaded from a snapshot
equals the match replayed from its events, value for value and type for type.

Only classes of the domain (``domain.*``) are rebuilt from a snapshot: a row of the
store can name no other class to be instantiated.

A snapshot holds nothing the events do not: every attribute of a match is set by its
events' bodies, and the attributes that are not (:attr:`MatchAggregate.TRANSIENT`, the
server's signer, which holds its private key) are left out.

:class:`FrozenSnapshot` is that snapshot; each kind of aggregate names its own subclass
(``MatchAggregate.Snapshot``, ``Tournament.Snapshot``), whose topic the store records.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from eventsourcing.domain import Snapshot as LibrarySnapshot
from eventsourcing.utils import get_topic, resolve_topic

#: The key that marks a JSON object as an encoded value rather than a plain dictionary.
TAG = "__t"
#: Keys a plain dictionary may not hold without being tagged: ours, and the transcoder's.
RESERVED = frozenset({TAG, "_type_", "_data_"})
#: Where the classes rebuilt from a snapshot must come from.
ALLOWED_TOPIC_PREFIX = "domain."


class SnapshotError(ValueError):
    """A value that cannot be put in a snapshot, or a snapshot that cannot be read."""


def freeze(value: Any) -> Any:
    """``value`` as JSON values the transcoder keeps as they are (its datetimes and
    UUIDs included), with every tuple, set, enum, object and dictionary whose keys are
    not all strings tagged with what it was."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is float or kind is str:
        return value
    if kind is list:
        return [freeze(v) for v in value]
    if kind is dict:
        if all(type(k) is str for k in value) and not RESERVED & value.keys():
            return {k: freeze(v) for k, v in value.items()}
        return {TAG: "dict", "items": [[freeze(k), freeze(v)] for k, v in value.items()]}
    if kind is tuple:
        return {TAG: "tuple", "v": [freeze(v) for v in value]}
    if kind is set or kind is frozenset:
        return {TAG: kind.__name__, "v": [freeze(v) for v in value]}
    if isinstance(value, enum.Enum):
        return {TAG: "enum", "c": _topic(kind), "v": freeze(value.value)}
    if dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        if not hasattr(value, "__dict__"):
            raise SnapshotError(f"cannot snapshot {kind.__qualname__}: it has no __dict__")
        return {TAG: "obj", "c": _topic(kind), "d": freeze(dict(vars(value)))}
    # datetime, UUID: the application's transcoder has their transcodings.
    return value


def thaw(value: Any) -> Any:
    """The value :func:`freeze` was given."""
    if isinstance(value, list):
        return [thaw(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(TAG)
    if tag is None:
        return {k: thaw(v) for k, v in value.items()}
    if tag == "dict":
        return {thaw(k): thaw(v) for k, v in value["items"]}
    if tag == "tuple":
        return tuple(thaw(v) for v in value["v"])
    if tag == "set":
        return {thaw(v) for v in value["v"]}
    if tag == "frozenset":
        return frozenset(thaw(v) for v in value["v"])
    if tag == "enum":
        return domain_class(value["c"])(thaw(value["v"]))
    if tag == "obj":
        obj: Any = object.__new__(domain_class(value["c"]))
        # Frozen dataclasses refuse setattr: their __dict__ is filled as the library
        # fills an aggregate's from its snapshot.
        obj.__dict__.update(thaw(value["d"]))
        return obj
    raise SnapshotError(f"unknown snapshot value tag {tag!r}")


def _topic(cls: type) -> str:
    topic = get_topic(cls)
    if not topic.startswith(ALLOWED_TOPIC_PREFIX):
        raise SnapshotError(f"cannot snapshot a {topic}: not a class of the domain")
    return topic


def domain_class(topic: str) -> type:
    """The class a snapshot names, refused unless it is one of the domain's."""
    if not topic.startswith(ALLOWED_TOPIC_PREFIX):
        raise SnapshotError(f"a snapshot names {topic!r}, not a class of the domain")
    cls = resolve_topic(topic)
    if not isinstance(cls, type):
        raise SnapshotError(f"a snapshot names {topic!r}, which is not a class")
    return cls


class FrozenSnapshot(LibrarySnapshot):
    """An aggregate's whole state at one version, as its events built it, each value
    kept with its type (:func:`freeze`), without the attributes its class calls
    ``TRANSIENT``."""

    @classmethod
    def take(cls, aggregate: Any) -> Any:
        taken = super().take(aggregate)
        transient: frozenset[str] = getattr(aggregate, "TRANSIENT", frozenset())
        state = {k: v for k, v in taken.state.items() if k not in transient}
        object.__setattr__(taken, "state", freeze(state))
        return taken

    def mutate(self, _: None) -> Any:
        domain_class(self.topic)  # a stored row names no class outside the domain
        thawed = LibrarySnapshot(
            originator_id=self.originator_id,
            originator_version=self.originator_version,
            timestamp=self.timestamp,
            topic=self.topic,
            state=thaw(self.state),
        )
        return thawed.mutate(None)
