"""A new Jungle Speed match for ``totem play``: the user in seat 0, bots in the others;
and the game's ``PLAYER``, whose command opens it.

The bots are the project's :class:`~totem_client.bots.jungle_speed.JungleSpeedBot`,
seated as ``play_table`` seats them, but slowed down to a person's pace by default and run
beside the screen rather than to the end of the match. Free of Textual, like every
opening.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

import click

from totem_client import options
from totem_client.bots.jungle_speed import JungleSpeedBot
from totem_client.client import Client
from totem_client.games.jungle_speed import GAME as JUNGLE_SPEED_GAME
from totem_client.play.openings import Table
from totem_client.play.player import GameEntry, Player

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


#: ``totem play jungle-speed``.
PLAYER = Player(
    screen="totem_client.play.jungle_speed",
    help="""Play Jungle Speed full screen.

    By default, create a match, take seat 0 and fill the other seats with bots. With
    --join MATCH, take a free seat in an existing match, or with --join MATCH --token
    TOKEN the seat that token holds (a fork's); with --spectate MATCH, watch one.

    Keys: space reveal, g grab (the duel you are in, else the inward-arrows race),
    a grab for the arrows when a duel and a race are both open (ES), s start a waiting
    match with the seats taken, q quit. When you quit, the match id is printed.
    """,
    options=[
        options.players(
            JUNGLE_SPEED_GAME, "New match: seats in all; you take seat 0 and bots the others."
        ),
        click.Option(
            ["--variant"],
            type=click.Choice(["ES", "RU"], case_sensitive=False),
            default="ES",
            show_default=True,
            help="New match: the rules variant (JS-2.1, JS-8.2).",
        ),
        click.Option(
            ["--turn-timeout-ms"],
            type=click.IntRange(min=0),
            default=None,
            help="New match: the turn timer (JS-3.4); the server's default (10000) if not "
            "given, 0 turns it off.",
        ),
        options.delay_range(
            "--bot-reaction-ms",
            BOT_REACTION_MS,
            "New match: random delay before a bot grabs the totem after a race opens.",
        ),
        options.delay_range(
            "--bot-reveal-delay-ms",
            BOT_REVEAL_DELAY_MS,
            "New match: random delay before a bot reveals on its turn.",
        ),
    ],
    new_match=NewMatch,
)
