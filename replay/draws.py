"""Where a match's random draws start: at its creation, or, for a fork, after the
origin's history it carries.

A fork (:mod:`domain.kernel.fork`) begins with ``Forked``, which carries the origin's
events up to the forked version, its secret seed blanked. Those events hold the draws
the origin made from its own seed: they are checked by verifying the origin, not here.
They still set the state the fork's draws continue from (how many recyclings, rounds or
rolls there were, which round it is, how many prearranged draws were used), exactly as
they set the fork's live match. Every draw recorded after ``Forked`` comes from the
fork's own seed, revealed in its ``MatchEnded``, and the fork's entropies.

Each game's ``check_draws(events, carried)`` (:mod:`replay.games`) reads the same
:func:`timeline` whether the match is a fork or not; this module names no game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: ``(version, event name, fields)`` of events of a match, in order.
EventFields = Sequence[tuple[int, str, dict[str, Any]]]

#: The name of a fork's first event.
FORKED = "Forked"


@dataclass(frozen=True)
class Carried:
    """What a fork carries before its own events."""

    #: The origin's events, 1 to the forked version, as ``Forked`` carries them (for a
    #: fork of a fork, its origin's carried events first): their draws are the origin's.
    history: EventFields
    #: The entropies of the fork's effective seed, in order.
    entropies: tuple[bytes, ...]


def carried_of(forked: dict[str, Any]) -> Carried:
    """What the fields of a ``Forked`` event carry. A fork's seed has no player's
    contribution: its one entropy is empty, as ``Forked`` sets it."""
    return Carried(history=tuple(history_of(forked)), entropies=(b"",))


def history_of(forked: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    """The carried events as ``(version, name, fields)``, at their origin's versions; a
    carried ``Forked`` (a fork of a fork) is replaced by the events it carries."""
    events: list[tuple[int, str, dict[str, Any]]] = []
    for version, entry in enumerate(forked["history"], start=1):
        name = str(entry["topic"]).rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        fields = dict(entry["fields"])
        if version == 1 and name == FORKED:
            events += history_of(fields)
        else:
            events.append((version, name, fields))
    return events


def timeline(
    events: EventFields, carried: Carried | None
) -> tuple[list[tuple[int, str, dict[str, Any]]], int]:
    """The events the draws follow, and how many of them come first from the origin.

    For a match created as such: its own events, none carried. For a fork (``events``
    starting with ``Forked``, ``carried`` what it carries): the carried events, then
    the fork's own after ``Forked``. The first event is then always the one that
    created the game (its options), and a draw at position ``carried`` or later is one
    of the fork's, at the fork's version.
    """
    if carried is None:
        return list(events), 0
    return [*carried.history, *events[1:]], len(carried.history)
