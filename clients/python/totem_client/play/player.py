"""What a game brings to ``totem play``, declared once as data in the game's
``<name>_bots`` module (its ``PLAYER``): its screen, its new match with bots and the
options and help of its command. Free of Textual, so that the command line is made
without loading a screen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from totem.v1 import common_pb2
from totem_client import options
from totem_client.games import GameInfo

if TYPE_CHECKING:
    from totem_client.play.app import GameScreen
    from totem_client.play.openings import Opening


@dataclass(frozen=True)
class Player:
    """A game's full-screen player, as ``totem play <game>`` opens it.

    Every game's command takes the same options to reach a match (``--join``,
    ``--spectate``...); ``options`` are the game's own for a new match, listed after
    those, and named as the keywords of ``new_match``, which the command hands their
    values as they are, with the user's ``name``.
    """

    #: The module of its screen, whose ``SCREEN`` is a ``GameScreen`` subclass; imported
    #: only when the game is played.
    screen: str
    #: The command's help: what it does and the screen's keys.
    help: str
    #: Options of a new match; refused with ``--join`` and ``--spectate``.
    options: Sequence[click.Option]
    #: The opening of a new match: ``new_match(name=..., **options)``.
    new_match: Callable[..., Opening]


def bot_think_option(default: tuple[float, float]) -> click.Option:
    """``--bot-think-ms``: the delay before each of a bot's commands in a new match, for
    a game whose bots think before every command alike (``LOW HIGH``, milliseconds)."""
    return options.delay_range(
        "--bot-think-ms", default, "New match: random delay before each of a bot's commands."
    )


@dataclass(frozen=True)
class GameEntry:
    """One playable game: its row of the client's game table and its player."""

    info: GameInfo[Any]
    player: Player

    @property
    def key(self) -> str:
        """The name of its command (``totem play jungle-speed``)."""
        return self.info.command_name

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def game(self) -> common_pb2.Game.ValueType:
        """Its ``totem.v1.Game`` value."""
        return self.info.enum

    def screen_class(self) -> type[GameScreen]:
        """The game's screen class (``SCREEN`` of its module), imported now."""
        screen: type[GameScreen] = importlib.import_module(self.player.screen).SCREEN
        return screen
