"""A new Tribes match for ``totem play``: the user in seat 0, bots in the others.

The bots are the project's :class:`~totem_client.bots.tribes.TribesBot`, which plays from its
watch stream alone, slowed down to a person's pace by default and run beside the screen.
Free of Textual, like every opening.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from totem_client.bots.tribes import TribesBot
from totem_client.client import Client
from totem_client.games.tribes import tribes_options
from totem_client.play import GameEntry
from totem_client.play.openings import Table

#: A bot's delay before each of its commands, for a person to follow: the bots of
#: ``totem bots`` take a few milliseconds. Milliseconds (low, high).
BOT_THINK_MS = (800.0, 1600.0)


@dataclass(frozen=True)
class NewTribesMatch:
    """Create a Tribes match of ``players`` seats, take seat 0 and give the others to bots.

    The match starts when the last bot sits down; the Cards of Truth decide who moves
    first (TR-2.1). ``board_size``, ``round_move_limit``, ``prearranged_cards`` and
    ``prearranged_dice`` are the match options of the same names (TR-1.2, TR-2.5, TR-2.1,
    TR-5.1); ``seed`` makes the bots' delays and choices reproducible.
    """

    name: str
    players: int = 2
    extended: bool = False
    board_size: int | None = None
    turn_timeout_ms: int | None = None
    round_move_limit: int | None = None
    bot_think_ms: tuple[float, float] = BOT_THINK_MS
    prearranged_cards: Sequence[Sequence[int]] = ()
    prearranged_dice: Sequence[str] = ()
    seed: int | None = None

    @property
    def description(self) -> str:
        game = "an extended" if self.extended else "a"
        return f"creating {game} Tribes match for {self.players} players"

    async def open(self, client: Client, entry: GameEntry) -> Table:
        options = tribes_options(
            max_players=self.players,
            extended=self.extended,
            board_size=self.board_size,
            turn_timeout_ms=self.turn_timeout_ms,
            round_move_limit=self.round_move_limit,
            prearranged_cards=self.prearranged_cards,
            prearranged_dice=self.prearranged_dice,
        )
        created = await client.create("tribes", options)
        me = await client.join(created.match_id, self.name, entropy=secrets.token_bytes(16))
        table = Table(me)
        for number in range(1, self.players):
            session = await client.join(
                created.match_id, f"bot-{number}", entropy=secrets.token_bytes(16)
            )
            bot = TribesBot(
                session,
                think_ms=self.bot_think_ms,
                rng=random.Random(self.seed + number) if self.seed is not None else None,
            )
            table.companions.append((bot.name, bot.run))
        return table
