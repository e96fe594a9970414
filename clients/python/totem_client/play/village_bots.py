"""A new Village match for ``totem play``: the user in seat 0, bots in the others.

The bots are the project's :class:`~totem_client.bots.village.VillageBot`, slowed down to a
person's pace by default and run beside the screen. Free of Textual, like every opening.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

from totem_client.bots.village import VillageBot
from totem_client.client import Client
from totem_client.games.village import village_options
from totem_client.play import GameEntry
from totem_client.play.openings import Table

#: A bot's delay before each of its commands, milliseconds (low, high).
BOT_THINK_MS = (800.0, 1600.0)
#: Deadlines for a person (the server's own are shorter for some decisions), ms.
HUMAN_TIMEOUTS_MS: dict[str, int] = {
    "arrange": 180_000,
    "choose": 120_000,
    "place": 90_000,
    "reveal": 60_000,
    "victims": 90_000,
    "youth": 60_000,
}


@dataclass(frozen=True)
class NewVillageMatch:
    """Create a Village match of ``players`` seats, take seat 0 and give the others to
    bots. ``variations`` names the variations (VI-2.1 … VI-3.2); ``timeouts_ms`` the
    deadlines by decision (``arrange``, ``choose``, ``place``, ``reveal``, ``victims``,
    ``youth``), those not given slowed for a person (:data:`HUMAN_TIMEOUTS_MS`)."""

    name: str
    players: int = 2
    variations: Sequence[str] = ()
    timeouts_ms: dict[str, int] = field(default_factory=dict)
    bot_think_ms: tuple[float, float] = BOT_THINK_MS
    seed: int | None = None

    @property
    def description(self) -> str:
        return f"creating a Village match for {self.players} players"

    async def open(self, client: Client, entry: GameEntry) -> Table:
        timeouts = {**HUMAN_TIMEOUTS_MS, **self.timeouts_ms}
        options = village_options(max_players=self.players, variations=self.variations)
        for kind, ms in timeouts.items():
            setattr(options, f"{kind}_timeout_ms", ms)
        created = await client.create("village", options)
        me = await client.join(created.match_id, self.name, entropy=secrets.token_bytes(16))
        table = Table(me)
        for number in range(1, self.players):
            session = await client.join(
                created.match_id, f"bot-{number}", entropy=secrets.token_bytes(16)
            )
            bot = VillageBot(
                session,
                think_ms=self.bot_think_ms,
                rng=random.Random(self.seed + number) if self.seed is not None else None,
            )
            table.companions.append((bot.name, bot.run))
        return table
