"""A new Tribes match for ``totem play``: the user in seat 0, bots in the others; and the
game's ``PLAYER``, whose command opens it.

The bots are the project's :class:`~totem_client.bots.tribes.TribesBot`, which plays from its
watch stream alone, slowed down to a person's pace by default and run beside the screen.
Free of Textual, like every opening.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import click

from totem_client import options
from totem_client.bots.tribes import TribesBot
from totem_client.client import Client
from totem_client.games.tribes import GAME, tribes_options
from totem_client.games.tribes import GAME as TRIBES_GAME
from totem_client.play.openings import Table
from totem_client.play.player import GameEntry, Player, bot_think_option

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
        created = await client.create(GAME.name, options)
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


#: ``totem play tribes``.
PLAYER = Player(
    screen="totem_client.play.tribes",
    help="""Play Tribes full screen.

    By default, create a match, take seat 0 and fill the other seats with bots (the
    Cards of Truth decide who moves first). With --join MATCH, take a free seat in an
    existing match, or with --join MATCH --token TOKEN the seat that token holds (a
    fork's); with --spectate MATCH, watch one.

    Keys: arrows or h j k l move the cursor over the board, tab jumps to the next space
    offered; 1-5 pick the totem of that size from your mat, x the special totem (extended
    game); enter or space places the picked or lifted totem on the cursor's space, or
    with nothing picked lifts the cursor's top; esc lets go of the pick; b chooses the
    badge a winning move names; s starts a waiting match with the seats taken; q quits.
    When you quit, the match id is printed.
    """,
    options=[
        options.players(
            TRIBES_GAME, "New match: seats in all; you take seat 0 and bots the others."
        ),
        click.Option(
            ["--extended"],
            is_flag=True,
            help="New match: the extended game (TR-5): the Dice of Fate, the Great Totem of "
            "Doom, the Mini-Totem of Chaos, the Salvation Spaces.",
        ),
        click.Option(
            ["--board-size"],
            type=click.IntRange(3, 5),
            default=None,
            help="New match: the side of the board (TR-1.2); by default 3 for two players, 4 "
            "for three or four.",
        ),
        click.Option(
            ["--turn-timeout-ms"],
            type=click.IntRange(min=0),
            default=None,
            help="New match: the turn timer; the server's default (60000) if not given, 0 "
            "turns it off.",
        ),
        bot_think_option(BOT_THINK_MS),
    ],
    new_match=NewTribesMatch,
)
