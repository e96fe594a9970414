"""Commands: what a player or a referee asks a match to do, as typed data.

Every game declares its commands as frozen dataclasses deriving from :class:`Command`
(``domain/<game>/commands.py``) and runs them through one method,
:meth:`domain.kernel.match.MatchAggregate.execute`, which each game extends with one
``match`` statement: a reader, or a tool following a command from the wire to its
events, finds every command's handler in that one place. The commands every game has
(:class:`Start`, :class:`Stop`) live here.

A command holds only what its sender chose: the acting seat and the receive stamp are
given beside it, by whoever authenticated the sender and received the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class Command:
    """A command of any game."""

    #: Whether the match's referee sends it, with the referee token and for no seat (a
    #: stop, a penalty); any other command needs a seat's token and acts for that seat.
    REFEREE: ClassVar[bool] = False


@dataclass(frozen=True)
class Start(Command):
    """A seated player starts the match with the seats taken so far (each game's start
    rule: ``START_RULE`` and ``PLAYERS_RULE``)."""


@dataclass(frozen=True)
class Stop(Command):
    """The referee stops the match, saying why (each game's end rule for a stopped
    match), with the result they state or, without one, the standings so far."""

    REFEREE: ClassVar[bool] = True

    statement: str
    #: ``{"seat", "place"}`` for every seat taken, or empty for the standings so far.
    result: Sequence[dict[str, int]] = field(default_factory=tuple)
