"""A new Village match for ``totem play``: the user in seat 0, bots in the others; and the
game's ``PLAYER``, whose command opens it.

The bots are the project's :class:`~totem_client.bots.village.VillageBot`, slowed down to a
person's pace by default and run beside the screen. Free of Textual, like every opening.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

import click

from totem_client import options
from totem_client.bots.village import VillageBot
from totem_client.client import Client
from totem_client.games.village import (
    GAME,
    VILLAGE_DEADLINES,
    VILLAGE_VARIATIONS,
    village_options,
)
from totem_client.games.village import GAME as VILLAGE_GAME
from totem_client.play.openings import Table
from totem_client.play.player import GameEntry, Player, bot_think_option

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
        created = await client.create(GAME.name, options)
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


def new_match(
    *,
    name: str,
    players: int,
    variations: Sequence[str],
    deadline_ms: int | None,
    bot_think_ms: tuple[float, float],
) -> NewVillageMatch:
    """The new match of ``totem play village``: ``--deadline-ms`` sets the deadline of
    every kind of decision, else they are slowed for a person."""
    timeouts = {kind: deadline_ms for kind in VILLAGE_DEADLINES} if deadline_ms is not None else {}
    return NewVillageMatch(
        name=name,
        players=players,
        variations=variations,
        timeouts_ms=timeouts,
        bot_think_ms=bot_think_ms,
    )


#: ``totem play village``.
PLAYER = Player(
    screen="totem_client.play.village",
    help="""Play Village full screen.

    By default, create a match, take seat 0 and fill the other seats with bots. With
    --join MATCH, take a free seat in an existing match, or with --join MATCH --token
    TOKEN the seat that token holds (a fork's); with --spectate MATCH, watch one.

    Keys: each decision your families owe is a draft, set to its default: tab selects
    the next decision, the arrows (or h j k l) move over its rows and cells (cottages,
    spells, targets, people), + or space and - change the cell, enter sends the draft,
    d sends the default as is, p passes (spells_a), s starts a waiting match with the
    seats taken, q quits. When you quit, the match id is printed.
    """,
    options=[
        options.players(
            VILLAGE_GAME, "New match: seats in all (VI-1.1); you take seat 0 and bots the others."
        ),
        click.Option(
            ["--variation", "variations"],
            multiple=True,
            type=click.Choice(list(VILLAGE_VARIATIONS)),
            help="New match: a variation (VI-2.1 … VI-3.2); repeat for several.",
        ),
        click.Option(
            ["--deadline-ms"],
            type=click.IntRange(0, 3_600_000),
            default=None,
            help="New match: every decision's deadline; by default slowed for a person "
            "(arrange 180 s, choose 120 s, place 90 s, reveal 60 s, victims 90 s, youth 60 s).",
        ),
        bot_think_option(BOT_THINK_MS),
    ],
    new_match=new_match,
)
