"""An entrant's bot in a tournament: it takes the entrant's seat at each round's table and
plays the table's match with the game's own bot, until the tournament ends.

It follows the tournament's events (WatchTournament) and, at each ``RoundStarted`` and
each ``Ruled`` of a replay (TO-10.3: the fork becomes the table's match), calls TakeSeat
with the entrant's token. The server makes that token the seat's token in the table's
match (TO-9.2), so the bot plays the match as that seat with it
(:meth:`~totem_client.client.Client.take_seat`). A round in which the entrant has no
table (a bye, TO-5.3) is refused by TakeSeat and skipped; a match already played is not
played again. It stops with the tournament's final event, or once the entrant has
withdrawn.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message

from totem_client.bots.command import CountingBot
from totem_client.client import Client
from totem_client.errors import TotemError
from totem_client.messages import MatchSummary
from totem_client.reconnect import PATIENCE
from totem_client.session import Session
from totem_client.tournament.client import TournamentClient
from totem_client.tournament.results import Seat, TournamentEvent

#: Codes with which TakeSeat says the entrant has no seat to take now (a bye, no round
#: under way, withdrawn): the bot waits for the next round.
NO_SEAT_CODES = frozenset(
    {
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.PERMISSION_DENIED,
    }
)
#: The events after which the entrant may have a (new) seat to take.
SEATING_EVENTS = frozenset({"RoundStarted", "Ruled"})


def game_options(game: str, **values: Any) -> Message:
    """The options message of ``game`` from the keywords its ``totem bots`` command's
    match options give (``variant``, ``board_size``, ``variations``...): the game's
    ``<game>_options`` builder in :mod:`totem_client.games`."""
    module = importlib.import_module(f"totem_client.games.{game}")
    builder: Callable[..., Message] = getattr(module, f"{game}_options")
    return builder(**values)


@dataclass(frozen=True)
class TablePlayed:
    """One table the entrant's bot played: where it sat and how the match ended."""

    seat: Seat
    summary: MatchSummary

    @property
    def place(self) -> int | None:
        return next((p.place for p in self.summary.result if p.seat == self.seat.seat), None)


@dataclass
class EntrantRun:
    """What an entrant's bot did in a tournament: the tables it played, in order, and the
    refusals of TakeSeat it waited through (a bye: the round's number unknown, as the
    server gives none)."""

    name: str
    tables: list[TablePlayed] = field(default_factory=list)
    skipped: list[TotemError] = field(default_factory=list)


#: Called with the seat taken, before the bot plays it; and with each table played.
OnSeat = Callable[[Seat], None]
OnPlayed = Callable[[TablePlayed], None]


async def play_entrant(
    client: Client,
    tournament_id: str,
    token: str,
    bot: Callable[[Session], CountingBot],
    *,
    tournaments: TournamentClient | None = None,
    events: AsyncIterator[TournamentEvent] | None = None,
    name: str = "",
    game: str | None = None,
    on_seat: OnSeat | None = None,
    on_played: OnPlayed | None = None,
) -> EntrantRun:
    """Play the entrant whose token is ``token`` in tournament ``tournament_id`` until it
    ends: at each round (and each replay of the entrant's table) take the seat, make the
    game's bot of the seat's session (``bot``) and play the match to its end.

    ``tournaments``: the tournament client (default: one on ``client``'s channel).
    ``events``: the tournament's events from its first, as a watch stream gives them
    (default: a watch stream of its own); the organiser of many bots shares one.
    ``game``, if given, is checked against each table's match. ``name`` only labels the
    result (and tells a withdrawal of this entrant, which stops the bot). Raises the
    server's :class:`TotemError` for anything but "no seat now" (:data:`NO_SEAT_CODES`).
    """
    tournaments = tournaments or TournamentClient.of(client)
    entrant = _Entrant(client, tournaments, tournament_id, token, bot, game, on_seat, on_played)
    entrant.run.name = name
    if events is not None:
        await entrant.follow(events)
        return entrant.run
    async with tournaments.watch(tournament_id, max_failures=PATIENCE) as stream:
        await entrant.follow(stream)
    return entrant.run


@dataclass
class _Entrant:
    client: Client
    tournaments: TournamentClient
    tournament_id: str
    token: str
    bot: Callable[[Session], CountingBot]
    game: str | None
    on_seat: OnSeat | None
    on_played: OnPlayed | None
    run: EntrantRun = field(default_factory=lambda: EntrantRun(""))
    played: set[str] = field(default_factory=set)

    async def follow(self, events: AsyncIterator[TournamentEvent]) -> None:
        """Play each seat the events give, until the final event or a withdrawal."""
        async for event in events:
            if event.name == "TournamentEnded":
                return
            if event.name == "Withdrew" and event.fields.get("entrant") == (self.run.name or None):
                return
            if event.name not in SEATING_EVENTS:
                continue
            if event.name == "Ruled" and event.fields.get("kind") != "replay":
                continue
            await self.take_and_play()

    async def take_and_play(self) -> None:
        """Take the entrant's seat of the round under way; play it unless played."""
        try:
            seat = await self.tournaments.take_seat(self.tournament_id, token=self.token)
        except TotemError as error:
            if error.code not in NO_SEAT_CODES:
                raise
            self.run.skipped.append(error)
            return
        if seat.match_id in self.played:
            return
        self.played.add(seat.match_id)
        session = await self.client.take_seat(seat.match_id, self.token)
        if self.game is not None and session.game != self.game:
            raise ValueError(
                f"match {seat.match_id} is a game of {session.game}, not of {self.game}"
            )
        if self.on_seat is not None:
            self.on_seat(seat)
        summary = await self.bot(session).run()
        table = TablePlayed(seat, summary)
        self.run.tables.append(table)
        if self.on_played is not None:
            self.on_played(table)
