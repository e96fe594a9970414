"""``totem play``: full-screen terminal players, one screen per game.

The generic part (:mod:`totem_client.play.app`) connects, opens a match, follows its
Watch stream and sends commands; it names no game. Each game brings a screen module,
listed here by the name its command has (``totem play jungle-speed``, ``totem play
tribes``). A new game is one entry below and one module that defines ``SCREEN`` (a
``GameScreen`` subclass).

This module imports neither Textual nor any screen, so that ``totem serve`` and
``totem --help`` do not pay for them: a screen module is imported when it is played.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from totem.v1 import common_pb2

if TYPE_CHECKING:
    from totem_client.play.app import GameScreen


@dataclass(frozen=True)
class GameEntry:
    """One playable game: its title, its ``totem.v1.Game`` value and its screen module."""

    key: str
    title: str
    game: common_pb2.Game.ValueType
    module: str

    def screen_class(self) -> type[GameScreen]:
        """The game's screen class (``SCREEN`` of its module), imported now."""
        screen: type[GameScreen] = importlib.import_module(self.module).SCREEN
        return screen


#: The games that have a screen, by command name.
GAMES: dict[str, GameEntry] = {
    entry.key: entry
    for entry in (
        GameEntry(
            key="jungle-speed",
            title="Jungle Speed",
            game=common_pb2.GAME_JUNGLE_SPEED,
            module="totem_client.play.jungle_speed",
        ),
        GameEntry(
            key="tribes",
            title="Tribes",
            game=common_pb2.GAME_TRIBES,
            module="totem_client.play.tribes",
        ),
        GameEntry(
            key="village",
            title="Village",
            game=common_pb2.GAME_VILLAGE,
            module="totem_client.play.village",
        ),
    )
}

__all__ = ["GAMES", "GameEntry"]
