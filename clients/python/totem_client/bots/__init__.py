"""Bots that play matches through the client library: one module per game, found by the
game's name in the client's game table (:data:`totem_client.games.GAMES`).

A game's module (``totem_client.bots.<name>``) holds its bot, its runner of a table of
bots (``play_table``) and its ``TABLE``, the :class:`BotTable` that ``totem bots``
makes the game's command from. This package names no game: :data:`TABLES` reads every
registered game's ``TABLE``.
"""

from __future__ import annotations

import importlib
from typing import Any

from totem_client.bots.command import BotTable
from totem_client.bots.table import Standing, TableResult, play_seats
from totem_client.games import GAMES

#: Every game's table of bots, by the game's name.
TABLES: dict[str, BotTable[Any]] = {
    name: importlib.import_module(f"{__name__}.{name}").TABLE for name in GAMES
}

__all__ = ["TABLES", "BotTable", "Standing", "TableResult", "play_seats"]
