"""The client's game table registers every game whole: each game's module gives its row,
its commands for a session, its creation for a client and its command message, and the
table's lines list all of them, so that no game can be half-registered (the other
layers, the bots and the terminal player, find a game's modules from the same table)."""

from __future__ import annotations

import importlib
from typing import get_args

from totem_client import Client, Session
from totem_client.games import GAMES, GameCommand, GameCommands, GameCreation


def test_each_game_is_one_module_listed_once_in_every_line_of_the_table() -> None:
    modules = {name: f"totem_client.games.{name}" for name in GAMES}
    for name, info in GAMES.items():
        assert importlib.import_module(modules[name]).GAME is info
    assert [base.__module__ for base in GameCommands.__bases__] == list(modules.values())
    assert [base.__module__ for base in GameCreation.__bases__] == list(modules.values())
    assert list(get_args(GameCommand)) == [info.command for info in GAMES.values()]


def test_sessions_and_clients_have_every_games_helpers() -> None:
    assert issubclass(Session, GameCommands)
    assert issubclass(Client, GameCreation)
    for helper in ("reveal", "grab", "lift", "place", "penalise", "arrange", "spare_from_age"):
        assert callable(getattr(Session, helper))
    for helper in ("create_match", "create_tribes", "create_village"):
        assert callable(getattr(Client, helper))
