"""A new Jungle Speed match for ``totem play``: the user in seat 0, bots in the others.

The bots are the project's :class:`~totem_client.bots.jungle_speed.JungleSpeedBot`, seated as
``play_table`` seats them, but slowed down to a person's pace by default and run beside
the screen rather than to the end of the match. Free of Textual, like every opening.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

from totem_client.bots.jungle_speed import JungleSpeedBot
from totem_client.client import Client
from totem_client.play import GameEntry
from totem_client.play.openings import Table

#: Bots for a person to play against: slower than the bots of ``totem bots``, which react
#: in tens of milliseconds and would win every race. Milliseconds (low, high).
BOT_REACTION_MS = (500.0, 1200.0)
BOT_REVEAL_DELAY_MS = (700.0, 1500.0)


@dataclass(frozen=True)
class NewMatch:
    """Create a match of ``players`` seats, take seat 0 and give the others to bots.

    Seat 0 reveals first (JS-2.3). The match starts when the last bot sits down.
    ``prearranged_deal`` and ``specials`` are the match options of the same names
    (JS-2.4, JS-1.3); ``seed`` makes the bots' delays reproducible.
    """

    name: str
    players: int = 4
    variant: str = "ES"
    turn_timeout_ms: int | None = None
    bot_reaction_ms: tuple[float, float] = BOT_REACTION_MS
    bot_reveal_delay_ms: tuple[float, float] = BOT_REVEAL_DELAY_MS
    prearranged_deal: tuple[int, ...] | None = None
    specials: tuple[int, int, int] | None = None
    seed: int | None = None

    @property
    def description(self) -> str:
        return f"creating a match for {self.players} players"

    async def open(self, client: Client, entry: GameEntry) -> Table:
        created = await client.create_match(
            variant=self.variant,
            max_players=self.players,
            turn_timeout_ms=self.turn_timeout_ms,
            specials=self.specials,
            prearranged_deal=self.prearranged_deal,
        )
        me = await client.join(created.match_id, self.name, entropy=secrets.token_bytes(16))
        table = Table(me)
        for number in range(1, self.players):
            session = await client.join(
                created.match_id, f"bot-{number}", entropy=secrets.token_bytes(16)
            )
            bot = JungleSpeedBot(
                session,
                reaction_ms=self.bot_reaction_ms,
                reveal_delay_ms=self.bot_reveal_delay_ms,
                rng=random.Random(self.seed + number) if self.seed is not None else None,
            )
            table.companions.append((bot.name, bot.run))
        return table
