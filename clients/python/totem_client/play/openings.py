"""How the user comes to a match in ``totem play``: join one, take the seat a token holds
in one, spectate one, or (per game) create one. Kept free of Textual so that the command
line can build them cheaply.

An opening returns a :class:`Table`: the user's session, and the coroutines to run beside
the screen for as long as it is open (the bots of a new match).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from totem.v1 import common_pb2
from totem_client.client import Client
from totem_client.play.player import GameEntry
from totem_client.session import Session


class CannotOpen(Exception):
    """The match asked for cannot be played here (a match of another game)."""


@dataclass
class Table:
    """An opened match: the user's session and what else runs beside it (bots)."""

    session: Session
    #: Named coroutine functions run for as long as the app (e.g. a bot's ``run``).
    companions: list[tuple[str, Callable[[], Awaitable[object]]]] = field(default_factory=list)


class Opening(Protocol):
    """How the user comes to a match: :class:`JoinMatch`, :class:`TakeSeat`,
    :class:`SpectateMatch`, or a game's own new match."""

    @property
    def description(self) -> str:
        """What is being done, for messages ("joining match ...")."""
        ...

    async def open(self, client: Client, entry: GameEntry) -> Table:
        """Open the match on ``client``; raise ``TotemError`` or :class:`CannotOpen`."""
        ...


async def _check_game(client: Client, match_id: str, entry: GameEntry) -> None:
    """Refuse a match of another game before taking a seat in it."""
    view = await client.get(match_id)
    if view.summary.game != entry.game:
        other = common_pb2.Game.Name(view.summary.game).removeprefix("GAME_").lower()
        raise CannotOpen(f"match {match_id} is a game of {other}, not of {entry.title}")


@dataclass(frozen=True)
class JoinMatch:
    """Take a seat (the next free one, or ``seat``) in an existing match."""

    match_id: str
    name: str
    seat: int | None = None

    @property
    def description(self) -> str:
        return f"joining match {self.match_id}"

    async def open(self, client: Client, entry: GameEntry) -> Table:
        await _check_game(client, self.match_id, entry)
        return Table(await client.join(self.match_id, self.name, seat=self.seat))


@dataclass(frozen=True)
class TakeSeat:
    """Take the seat that ``token`` holds in an existing match: a seat already taken in
    the user's name, such as a fork's (``totem-replay fork`` prints a token per seat).
    The server says which seat it is; the seat keeps its name."""

    match_id: str
    token: str = field(repr=False)

    @property
    def description(self) -> str:
        return f"taking your seat in match {self.match_id}"

    async def open(self, client: Client, entry: GameEntry) -> Table:
        await _check_game(client, self.match_id, entry)
        return Table(await client.take_seat(self.match_id, self.token))


@dataclass(frozen=True)
class SpectateMatch:
    """Watch a match as a spectator: no token, no seat, no moves."""

    match_id: str

    @property
    def description(self) -> str:
        return f"spectating match {self.match_id}"

    async def open(self, client: Client, entry: GameEntry) -> Table:
        await _check_game(client, self.match_id, entry)
        return Table(client.spectate(self.match_id))
