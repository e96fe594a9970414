"""The classes a topic from outside the code may name: the games' aggregates and events,
and those of the other chained aggregates (tournaments).

A topic (``module:Class``) read from a bundle, or carried in a fork's history, is data
from outside: resolving it with the library's ``resolve_topic`` would import whatever
module it names. Here a topic is only looked up among the classes each game registered
when its aggregate was defined (:func:`register_game`) and the kernel's own (``Forked``,
:func:`register_event`): anything else is refused with :class:`UnknownTopic`, and
nothing is imported.

An aggregate that is not a game (a tournament, :func:`register_aggregate`) is kept
apart: a match's history, a game's bundle or a fork can never name it or its events
(:func:`event_class`, :func:`aggregate_class` know only the games'); whoever reads a
tournament's records looks its topics up with :func:`chained_event_class` and
:func:`chained_aggregate_class`, which know both.
"""

from __future__ import annotations

from eventsourcing.utils import get_topic

from domain.kernel.chained import ChainedAggregate
from domain.kernel.match import MatchAggregate

_AGGREGATES: dict[str, type[MatchAggregate]] = {}
_EVENTS: dict[str, type] = {}
#: Chained aggregates that are not games, and their events.
_OTHER_AGGREGATES: dict[str, type[ChainedAggregate]] = {}
_OTHER_EVENTS: dict[str, type] = {}


class UnknownTopic(ValueError):
    """A topic that names no class of a registered game: refused, nothing imported."""


def register_event(cls: type) -> None:
    """Allow one event class (the kernel's ``Forked``, shared by every game)."""
    _EVENTS[get_topic(cls)] = cls


def register_game(aggregate: type[MatchAggregate]) -> None:
    """Allow a game's aggregate and every event class it declares or inherits from the
    kernel (``MatchAggregate``'s own)."""
    _AGGREGATES[get_topic(aggregate)] = aggregate
    for cls in _events_of(aggregate, MatchAggregate.Event):
        register_event(cls)


def register_aggregate(aggregate: type[ChainedAggregate]) -> None:
    """Allow a chained aggregate that is not a game (a tournament) and every event class
    it declares or inherits, apart from the games' (see the module's docstring)."""
    if issubclass(aggregate, MatchAggregate):
        raise TypeError(f"{aggregate.__qualname__} is a game: register it with register_game")
    _OTHER_AGGREGATES[get_topic(aggregate)] = aggregate
    for cls in _events_of(aggregate, aggregate.Event):
        _OTHER_EVENTS[get_topic(cls)] = cls


def _events_of(aggregate: type[ChainedAggregate], base: type) -> list[type]:
    """Every event class deriving from ``base`` that ``aggregate`` declares or inherits."""
    return [
        value
        for klass in aggregate.__mro__
        for value in vars(klass).values()
        if isinstance(value, type) and issubclass(value, base)
    ]


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


def chained_event_class(topic: object) -> type:
    """The registered event class ``topic`` names: a game's or another chained
    aggregate's (a tournament's)."""
    cls = _OTHER_EVENTS.get(topic) if isinstance(topic, str) else None
    return cls if cls is not None else event_class(topic)


def chained_aggregate_class(topic: object) -> type[ChainedAggregate]:
    """The registered aggregate ``topic`` names: a game's or another chained aggregate
    (a tournament)."""
    cls = _OTHER_AGGREGATES.get(topic) if isinstance(topic, str) else None
    return cls if cls is not None else aggregate_class(topic)


def check_fields(fields: dict[str, object]) -> None:
    """An event's fields name no class but a registered game's: a creation names its
    aggregate in ``originator_topic``, which rebuilding the match would resolve."""
    if "originator_topic" in fields:
        aggregate_class(fields["originator_topic"])
