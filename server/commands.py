"""A command as the application runs it: what it does to a match, and who may send it.

Each game's codec decodes its protobuf commands into these (:mod:`server.codec`); the
use case that runs them (:meth:`server.application.Matches.act`) knows no game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domain.kernel.stamps import ReceiveStamp


@dataclass(frozen=True)
class Command:
    """A decoded command: what it does to a match, given the acting seat (None for a
    referee command) and its receive stamp; and who may send it.

    A referee command (a penalty, say) needs the referee token and acts for no seat; any
    other command needs a seat's token and acts for that seat. The service checks the
    token against this, so that it never needs to know a game's commands.
    """

    run: Callable[[Any, int | None, ReceiveStamp], Any]
    referee: bool = False
