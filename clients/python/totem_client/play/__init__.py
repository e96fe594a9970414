"""``totem play``: full-screen terminal players, one screen per game.

The generic part (:mod:`totem_client.play.app`) connects, opens a match, follows its
Watch stream and sends commands; it names no game, and neither does this package. Each
game of the client's game table (:data:`totem_client.games.GAMES`) brings a module
``<name>_bots``, found by the game's name: its new match with bots, and its ``PLAYER``
(:class:`~totem_client.play.player.Player`), which names its screen module (one that
defines ``SCREEN``, a ``GameScreen`` subclass) and gives the options and help of its
command (``totem play jungle-speed``, ``totem play tribes``).

Neither this package nor a ``<name>_bots`` module imports Textual or a screen, so that
``totem serve`` and ``totem --help`` do not pay for them: a screen module is imported
when it is played.
"""

from __future__ import annotations

import importlib

from totem_client.games import GAMES as CLIENT_GAMES
from totem_client.play.player import GameEntry, Player

#: The games that have a screen, by command name.
GAMES: dict[str, GameEntry] = {
    info.command_name: GameEntry(
        info, importlib.import_module(f"{__name__}.{info.name}_bots").PLAYER
    )
    for info in CLIENT_GAMES.values()
}

__all__ = ["GAMES", "GameEntry", "Player"]
