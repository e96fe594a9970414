"""The games the client speaks, registered here once; nothing else in the client lists them.

Each game has a module in this package (:mod:`.jungle_speed`, ...): how the contract
names it (its ``GAME``: its enum, and its field in the requests', events' and states'
oneofs), its options and commands built from plain names, its typed commands, which every
:class:`~totem_client.session.Session` has, and its creation from keywords, which every
:class:`~totem_client.client.Client` has. The lines below list those modules, and
``tests/contract`` holds the table to the contract's list of games.

The client, its Play streams and its sessions find a game's field here rather than each
knowing it. The other layers find a game's modules of their own by its name: its bots
and the ``totem bots`` command's ``TABLE`` in ``totem_client.bots.<name>``, and the
``totem play`` command's ``PLAYER`` in ``totem_client.play.<name>_bots``. A new game is
its modules and its name in the lines below: the import, the union of commands, the two
classes and the table (``tests/client/test_game_table.py`` holds them together, since
typing needs each written out).
"""

from __future__ import annotations

from google.protobuf.message import Message

from totem.v1 import match_service_pb2
from totem_client.games import jungle_speed, tribes, village
from totem_client.games.base import GameInfo

#: A command of one of the games.
GameCommand = jungle_speed.JungleSpeedCommand | tribes.TribesCommand | village.VillageCommand


class GameCommands(jungle_speed.JungleSpeedSession, tribes.TribesSession, village.VillageSession):
    """Every game's commands by name (``reveal``, ``lift``, ``arrange``...), which a
    :class:`~totem_client.session.Session` has."""


class GameCreation(jungle_speed.JungleSpeedClient, tribes.TribesClient, village.VillageClient):
    """Every game's creation of a match from keywords (``create_match``,
    ``create_tribes``...), which a :class:`~totem_client.client.Client` has."""


#: The games the client speaks, by name.
GAMES: dict[str, GameInfo[GameCommand]] = {
    info.name: info for info in (jungle_speed.GAME, tribes.GAME, village.GAME)
}
GAMES_BY_ENUM: dict[int, GameInfo[GameCommand]] = {info.enum: info for info in GAMES.values()}

#: The referee's stop of a match of any game (JS-8.3).
StopMatch = match_service_pb2.StopMatch
#: What :meth:`Client.act` sends: a game's command, or the referee's stop of any game.
Command = GameCommand | StopMatch


def game_of_message(message: Message) -> GameInfo[GameCommand]:
    """The game whose options or command ``message`` is."""
    for info in GAMES.values():
        if isinstance(message, (info.options, info.command)):
            return info
    raise TypeError(f"{type(message).__name__} is not a game's options or command")


def act_request(
    match_id: str, command: Command, *, seen_version: int = 0, seat: int | None = None
) -> match_service_pb2.ActRequest:
    """The ActRequest of one command: what an Act call sends, and what a Play stream's
    request carries (so it is built here, beside the table that names the command's
    field, for both)."""
    request = match_service_pb2.ActRequest(match_id=match_id, seen_version=seen_version)
    if isinstance(command, StopMatch):
        request.stop.CopyFrom(command)
    else:
        getattr(request, game_of_message(command).field).CopyFrom(command)
    if seat is not None:
        request.seat = seat
    return request


__all__ = [
    "GAMES",
    "GAMES_BY_ENUM",
    "Command",
    "GameCommand",
    "GameCommands",
    "GameCreation",
    "GameInfo",
    "StopMatch",
    "act_request",
    "game_of_message",
]
