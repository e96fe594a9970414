"""``totem bots``: play matches of bots against a running server.

One command per game of the client's game table, made from the game's
:class:`~totem_client.bots.command.BotTable` (:data:`totem_client.bots.TABLES`): its
own options first, then those every table takes. This module names no game.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

import click

from totem_client import options
from totem_client.bots import TABLES
from totem_client.bots.command import BotTable, CountingBot
from totem_client.bots.table import OnSeated, TableResult, play_seats
from totem_client.client import Client, ClientTls, connect
from totem_client.command_line import failure_line
from totem_client.errors import TotemError
from totem_client.games import GAMES, GameInfo
from totem_client.session import Session
from totem_client.tournament.client import TournamentClient
from totem_client.tournament.entrant import EntrantRun, TablePlayed, play_entrant
from totem_client.tournament.results import Seat

MAX_ENTROPY_BYTES = 64

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


@click.group()
def bots() -> None:
    """Run bots against a running server (start one with `totem serve`).

    Each game's command creates a match and seats a bot in every seat, or with
    --join MATCH --token TOKEN ... seats bots in the seats those tokens hold in an
    existing match (a fork's, from `totem-replay fork`), or with --tournament ID
    --entrant-token TOKEN ... plays those entrants' tables of a tournament, round after
    round, until it ends.
    """


#: Options of every table of bots that still apply with --join (beside the connection's
#: and the bots' own).
SEAT_OPTIONS = frozenset({"stats", "join", "tokens"})
#: Those that still apply with --tournament.
TOURNAMENT_OPTIONS = frozenset({"stats", "tournament", "entrant_tokens", "receipts"})


def entrants_to_play(
    ctx: click.Context,
    tournament: str | None,
    entrant_tokens: tuple[str, ...],
    join: str | None,
    bot_options: Collection[str],
) -> bool:
    """True when --tournament and --entrant-token ask to play entrants of a tournament;
    refuse them apart, with --join, and with an option that describes a new match."""
    if not tournament and not entrant_tokens:
        return False
    if not tournament:
        raise click.UsageError("--entrant-token goes with --tournament ID")
    if not entrant_tokens:
        raise click.UsageError(
            "--tournament ID plays the entrants whose tokens are given: add "
            "--entrant-token TOKEN for each"
        )
    if join:
        raise click.UsageError("--join is for one match; not with --tournament")
    options.refuse_new_match_options(ctx, TOURNAMENT_OPTIONS | set(bot_options), "--tournament")
    return True


def seats_to_take(
    ctx: click.Context, join: str | None, tokens: tuple[str, ...], bot_options: Collection[str]
) -> bool:
    """True when --join and --token ask for the seats of an existing match; refuse them
    apart, and with an option that describes a new match (it would be ignored):
    ``bot_options`` name the game's options of the bots, which still apply."""
    if not join and not tokens:
        return False
    if not join:
        raise click.UsageError("--token goes with --join MATCH")
    if not tokens:
        raise click.UsageError(
            "--join MATCH takes the seats of the tokens given: add --token TOKEN for each"
        )
    options.refuse_new_match_options(ctx, SEAT_OPTIONS | set(bot_options), "--join")
    return True


def _entropy(ctx: click.Context, param: click.Parameter, value: str) -> bytes:
    data = value.encode()
    if len(data) > MAX_ENTROPY_BYTES:
        raise click.BadParameter(f"at most {MAX_ENTROPY_BYTES} bytes of UTF-8")
    return data


def table_options(command: F) -> F:
    """The options every game's table of bots takes, beside its own."""
    decorators = [
        options.address,
        options.organiser_token,
        options.tls,
        click.option(
            "--seed-entropy",
            default="",
            callback=_entropy,
            help="Text mixed into the match seed as the creator's entropy "
            "(UTF-8, at most 64 bytes).",
        ),
        options.connect_timeout,
        options.receipts,
        click.option("--stats", is_flag=True, help="Also print what each bot did."),
        click.option(
            "--join",
            metavar="MATCH",
            help="Seat the bots in this existing match (a fork, say) instead of creating one: "
            "one bot in each seat whose --token is given.",
        ),
        click.option(
            "--token",
            "tokens",
            multiple=True,
            metavar="TOKEN",
            help="With --join: the token of a seat for a bot to take (repeat for each; "
            "`totem-replay fork` prints one per seat). The server says which seat it holds.",
        ),
        click.option(
            "--tournament",
            metavar="ID",
            help="Play entrants of this tournament instead: at each round, take each "
            "entrant's seat (TakeSeat) and play the table's match, until the tournament ends.",
        ),
        click.option(
            "--entrant-token",
            "entrant_tokens",
            multiple=True,
            metavar="TOKEN",
            help="With --tournament: an entrant's token (repeat for each), as `totem "
            "tournament add` printed it; it is the entrant's seat token at every table.",
        ),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def _play_table(
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
    players: int,
    table: Callable[[Client, OnSeated], Awaitable[R]],
    receipts: Path | None = None,
) -> R:
    """Connect and run a table of bots to the end of its match; the match id goes to
    standard error once the bots are seated; a failure is one clear line. The bots'
    receipts are kept in ``receipts`` if given."""

    def seated(match_id: str) -> None:
        click.echo(f"match {match_id}: {players} bots seated, playing", err=True)

    async def play() -> R:
        async with connect(
            address, organiser_token=organiser_token, tls=tls, receipts_dir=receipts
        ) as client:
            await client.wait_ready(connect_timeout)
            return await table(client, seated)

    try:
        return asyncio.run(play())
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    except TotemError as error:
        raise click.ClickException(failure_line(error, address)) from None


def _print_result(info: GameInfo[Any], result: TableResult[CountingBot], stats: bool) -> None:
    """The result on standard output, worded alike for every game: the game and its
    variant (``base`` when the match has none), the placements, each bot's stats if
    asked, and the match id with the command that replays it."""
    summary = result.summary
    click.echo(
        f"{info.title} {summary.variant or 'base'}, {len(result.bots)} bots: match ended "
        f"({result.end_reason}) after {summary.version} events"
    )
    for standing in result.standings:
        click.echo(f"  {standing.place:>2}. {standing.name} (seat {standing.seat})")
    if stats:
        for bot in result.bots:
            click.echo(f"  {bot.name}: {bot.stats.line()}")
    click.echo(f"match id: {result.match_id}")
    click.echo(f"replay:   totem-replay show {result.match_id}")


def _play_entrants(
    info: GameInfo[Any],
    tournament: str,
    tokens: tuple[str, ...],
    bot: Callable[[Session], CountingBot],
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
    receipts: Path | None,
    stats: bool,
) -> None:
    """Play the entrants of ``tokens`` in ``tournament`` to its end, one task each, and
    print each table as it is taken and as it ends."""
    bots: list[CountingBot] = []

    def counted(session: Session) -> CountingBot:
        made = bot(session)
        bots.append(made)
        return made

    def seated(seat: Seat) -> None:
        click.echo(
            f"round {seat.round}, table {seat.table}: seat {seat.seat} of match {seat.match_id}",
            err=True,
        )

    def played(table: TablePlayed) -> None:
        seat = table.seat
        click.echo(
            f"round {seat.round}, table {seat.table}: match {seat.match_id} ended, "
            f"seat {seat.seat} placed {table.place or '-'}"
        )

    async def play() -> list[EntrantRun]:
        async with connect(
            address, organiser_token=organiser_token, tls=tls, receipts_dir=receipts
        ) as client:
            await client.wait_ready(connect_timeout)
            tournaments = TournamentClient.of(client)
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(
                        play_entrant(
                            client,
                            tournament,
                            token,
                            counted,
                            tournaments=tournaments,
                            game=info.name,
                            on_seat=seated,
                            on_played=played,
                        )
                    )
                    for token in tokens
                ]
            return [task.result() for task in tasks]

    try:
        runs = asyncio.run(play())
    except ExceptionGroup as failed:
        error = failed.exceptions[0]
        if isinstance(error, TotemError):
            raise click.ClickException(failure_line(error, address)) from None
        if isinstance(error, ValueError):
            raise click.ClickException(str(error)) from None
        raise
    except TotemError as error:
        raise click.ClickException(failure_line(error, address)) from None
    tables = sum(len(r.tables) for r in runs)
    click.echo(f"tournament {tournament} ended: {len(runs)} entrant(s), {tables} table(s) played")
    if stats:
        for made in bots:
            click.echo(f"  {made.name}: {made.stats.line()}")


def table_command(info: GameInfo[Any], table: BotTable[CountingBot]) -> click.Command:
    """``totem bots <game>``: the game's table of bots, with its options handed as they
    are to its ``play_table`` (a new match) or its ``bot`` (--join)."""
    bot_options = [option.name or "" for option in table.bot_options]

    @click.pass_context
    def run(
        ctx: click.Context,
        /,
        players: int,
        address: str,
        organiser_token: str | None,
        tls: ClientTls | None,
        seed_entropy: bytes,
        connect_timeout: float,
        receipts: Path | None,
        stats: bool,
        join: str | None,
        tokens: tuple[str, ...],
        tournament: str | None,
        entrant_tokens: tuple[str, ...],
        **game_options: Any,
    ) -> None:
        def seat_bot(session: Session, _: int) -> CountingBot:
            return table.bot(session, **{name: game_options[name] for name in bot_options})

        if entrants_to_play(ctx, tournament, entrant_tokens, join, bot_options):
            assert tournament is not None
            _play_entrants(
                info,
                tournament,
                entrant_tokens,
                lambda session: seat_bot(session, 0),
                address,
                organiser_token,
                tls,
                connect_timeout,
                receipts,
                stats,
            )
            return

        def play(client: Client, seated: OnSeated) -> Awaitable[TableResult[CountingBot]]:
            if join:
                return play_seats(client, join, tokens, info.name, seat_bot, on_seated=seated)
            return table.play_table(
                client, players, entropy=seed_entropy, on_seated=seated, **game_options
            )

        if seats_to_take(ctx, join, tokens, bot_options):
            players = len(tokens)
        result = _play_table(
            address, organiser_token, tls, connect_timeout, players, play, receipts
        )
        _print_result(info, result, stats)

    params = [table.players, *table.match_options, *table.bot_options]
    return click.command(info.command_name, help=table.help, params=params)(table_options(run))


for _info in GAMES.values():
    bots.add_command(table_command(_info, TABLES[_info.name]))
