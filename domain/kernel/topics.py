"""The classes a topic from outside the code may name: the games' aggregates and events.

A topic (``module:Class``) read from a bundle, or carried in a fork's history, is data
from outside: resolving it with the library's ``resolve_topic`` would import whatever
module it names. Here a topic is only looked up among the classes each game registered
when its aggregate was defined (:func:`register_game`) and the kernel's own (``Forked``,
:func:`register_event`): anything else is refused with :class:`UnknownTopic`, and
nothing is imported.
"""

from __future__ import annotations

from eventsourcing.utils import get_topic

from domain.kernel.match import MatchAggregate

_AGGREGATES: dict[str, type[MatchAggregate]] = {}
_EVENTS: dict[str, type] = {}


class UnknownTopic(ValueError):
    """A topic that names no class of a registered game: refused, nothing imported."""


def register_event(cls: type) -> None:
    """Allow one event class (the kernel's ``Forked``, shared by every game)."""
    _EVENTS[get_topic(cls)] = cls


def register_game(aggregate: type[MatchAggregate]) -> None:
    """Allow a game's aggregate and every event class it declares or inherits from the
    kernel (``MatchAggregate``'s own)."""
    _AGGREGATES[get_topic(aggregate)] = aggregate
    for klass in aggregate.__mro__:
        for value in vars(klass).values():
            if isinstance(value, type) and issubclass(value, MatchAggregate.Event):
                register_event(value)


def event_class(topic: object) -> type:
    """The registered event class ``topic`` names."""
    cls = _EVENTS.get(topic) if isinstance(topic, str) else None
    if cls is None:
        raise UnknownTopic(
            f"the topic {str(topic)[:120]!r} is not an event of any game: refused, "
            "nothing was imported"
        )
    return cls


def aggregate_class(topic: object) -> type[MatchAggregate]:
    """The registered game aggregate ``topic`` names."""
    cls = _AGGREGATES.get(topic) if isinstance(topic, str) else None
    if cls is None:
        raise UnknownTopic(
            f"the match class {str(topic)[:120]!r} is not a game's: refused, nothing was imported"
        )
    return cls


def check_fields(fields: dict[str, object]) -> None:
    """An event's fields name no class but a registered game's: a creation names its
    aggregate in ``originator_topic``, which rebuilding the match would resolve."""
    if "originator_topic" in fields:
        aggregate_class(fields["originator_topic"])
