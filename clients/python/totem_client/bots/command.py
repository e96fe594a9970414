"""What a game's ``totem bots`` command is made of, declared once as data in the game's
bots module (its ``TABLE``), so that the command line (:mod:`totem_client.cli`) makes
every game's command alike and names none."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import click

from totem_client.bots.table import Bot, TableResult


class Counts(Protocol):
    """What a bot counted of its match."""

    def line(self) -> str:
        """What the bot did, in one line of words (``totem bots --stats``)."""
        ...


class CountingBot(Bot, Protocol):
    """A bot that counts what it did."""

    @property
    def stats(self) -> Counts: ...


B = TypeVar("B", bound=CountingBot)


@dataclass(frozen=True)
class BotTable(Generic[B]):
    """A game's table of bots as ``totem bots <game>`` plays it.

    The options are click options whose names are the keywords of ``bot`` and
    ``play_table``: the command hands each its values as they are. Every table's own
    options (the server, the seed's entropy, ``--stats``, ``--join`` and ``--token``)
    are the command line's, after these.
    """

    #: The command's help: what it does and what it prints.
    help: str
    #: ``--players``: how many bots, the seats of the match (the game says how many).
    players: click.Option
    #: Options that describe a new match; refused with ``--join``.
    match_options: Sequence[click.Option]
    #: Options of the bots themselves (their delays); they apply with ``--join`` too.
    bot_options: Sequence[click.Option]
    #: A bot for a seat's session: ``bot(session, **bot options)``.
    bot: Callable[..., B]
    #: Create a match and play it to its end with a bot in every seat:
    #: ``play_table(client, players, entropy=..., on_seated=..., **every option above)``.
    play_table: Callable[..., Awaitable[TableResult[B]]]
