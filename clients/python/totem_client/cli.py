"""``totem bots``: play matches of bots against a running server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from totem_client import options
from totem_client.bots.jungle_speed import (
    DEFAULT_REACTION_MS,
    DEFAULT_REVEAL_DELAY_MS,
    JungleSpeedBot,
    TableResult,
    play_table,
)
from totem_client.bots.table import OnSeated, play_seats
from totem_client.bots.tribes import DEFAULT_THINK_MS, TribesBot
from totem_client.bots.tribes import play_table as play_tribes_table
from totem_client.bots.village import DEFAULT_THINK_MS as VILLAGE_THINK_MS
from totem_client.bots.village import VillageBot
from totem_client.bots.village import play_table as play_village_table
from totem_client.client import Client, ClientTls, connect
from totem_client.command_line import failure_line
from totem_client.errors import TotemError
from totem_client.games.village import VILLAGE_VARIATIONS
from totem_client.session import Session

MAX_ENTROPY_BYTES = 64

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


@click.group()
def bots() -> None:
    """Run bots against a running server (start one with `totem serve`).

    Each game's command creates a match and seats a bot in every seat, or with
    --join MATCH --token TOKEN ... seats bots in the seats those tokens hold in an
    existing match (a fork's, from `totem-replay fork`).
    """


#: Options of a table of bots that still apply with --join (beside the connection's).
SEAT_OPTIONS = frozenset({"stats", "join", "tokens", "reaction_ms", "reveal_delay_ms", "think_ms"})


def seats_to_take(ctx: click.Context, join: str | None, tokens: tuple[str, ...]) -> bool:
    """True when --join and --token ask for the seats of an existing match; refuse them
    apart, and with an option that describes a new match (it would be ignored)."""
    if not join and not tokens:
        return False
    if not join:
        raise click.UsageError("--token goes with --join MATCH")
    if not tokens:
        raise click.UsageError(
            "--join MATCH takes the seats of the tokens given: add --token TOKEN for each"
        )
    options.refuse_new_match_options(ctx, SEAT_OPTIONS, "--join")
    return True


def _entropy(ctx: click.Context, param: click.Parameter, value: str) -> bytes:
    data = value.encode()
    if len(data) > MAX_ENTROPY_BYTES:
        raise click.BadParameter(f"at most {MAX_ENTROPY_BYTES} bytes of UTF-8")
    return data


#: ``--join MATCH --token TOKEN ...``: bots in the seats of an existing match.
seat_options = [
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
]


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
        *seat_options,
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


@bots.command("jungle-speed")
@click.option(
    "--players",
    type=click.IntRange(2, 10),
    default=4,
    show_default=True,
    help="Number of bots; the match has exactly this many seats.",
)
@click.option(
    "--variant",
    type=click.Choice(["ES", "RU"], case_sensitive=False),
    default="ES",
    show_default=True,
    help="Rules variant (JS-2.1, JS-8.2).",
)
@click.option(
    "--turn-timeout-ms",
    type=click.IntRange(min=0),
    default=None,
    help="Turn timer (JS-3.4); the server's default (10000) if not given, 0 turns it off.",
)
@click.option(
    "--reaction-ms",
    nargs=2,
    type=float,
    default=DEFAULT_REACTION_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="Random delay before a bot grabs the totem after a race opens.",
)
@click.option(
    "--reveal-delay-ms",
    nargs=2,
    type=float,
    default=DEFAULT_REVEAL_DELAY_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="Random delay before a bot reveals on its turn.",
)
@table_options
@click.pass_context
def jungle_speed(
    ctx: click.Context,
    players: int,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    variant: str,
    turn_timeout_ms: int | None,
    seed_entropy: bytes,
    reaction_ms: tuple[float, float],
    reveal_delay_ms: tuple[float, float],
    connect_timeout: float,
    receipts: Path | None,
    stats: bool,
    join: str | None,
    tokens: tuple[str, ...],
) -> None:
    """Create a Jungle Speed match, seat a bot in every seat, play it to the end; or with
    --join MATCH --token TOKEN ..., play the seats those tokens hold in MATCH.

    Prints the result (placements with names) and the match id, for
    `totem-replay show MATCH`.
    """

    def seat_bot(session: Session, _: int) -> JungleSpeedBot:
        return JungleSpeedBot(session, reaction_ms=reaction_ms, reveal_delay_ms=reveal_delay_ms)

    def table(client: Client, seated: OnSeated) -> Awaitable[TableResult[JungleSpeedBot]]:
        if join:
            return play_seats(client, join, tokens, "jungle_speed", seat_bot, on_seated=seated)
        return play_table(
            client,
            players,
            variant=variant.upper(),
            turn_timeout_ms=turn_timeout_ms,
            entropy=seed_entropy,
            reaction_ms=reaction_ms,
            reveal_delay_ms=reveal_delay_ms,
            on_seated=seated,
        )

    if seats_to_take(ctx, join, tokens):
        players = len(tokens)
    result = _play_table(address, organiser_token, tls, connect_timeout, players, table, receipts)
    _print_result(result, stats)


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


def _print_result(result: TableResult[JungleSpeedBot], stats: bool) -> None:
    summary = result.summary
    click.echo(
        f"Jungle Speed {summary.variant}, {len(result.bots)} bots: match ended "
        f"({result.end_reason}) after {summary.version} events"
    )
    for standing in result.standings:
        click.echo(f"  {standing.place:>2}. {standing.name} (seat {standing.seat})")
    if stats:
        for bot in result.bots:
            s = bot.stats
            click.echo(
                f"  {bot.name}: {s.reveals} reveals ({s.timed_out} by the timer), "
                f"{s.grabs} grabs, duels {s.duels_won} won / {s.duels_lost} lost, "
                f"arrows {s.arrows_won} won, {s.wrong_grabs} wrong and {s.late_grabs} late "
                f"grabs, {len(s.refusals)} refused commands"
            )
    click.echo(f"match id: {result.match_id}")
    click.echo(f"replay:   totem-replay show {result.match_id}")


@bots.command("tribes")
@click.option(
    "--players",
    type=click.IntRange(2, 4),
    default=2,
    show_default=True,
    help="Number of bots; the match has exactly this many seats (TR-1.1).",
)
@click.option(
    "--extended",
    is_flag=True,
    help="The extended game: Dice of Fate, special totems, Salvation Spaces (TR-5).",
)
@click.option(
    "--board-size",
    type=click.IntRange(3, 5),
    default=None,
    help="Side of the board (TR-1.2); by default 3 for two players, 4 for three or four.",
)
@click.option(
    "--turn-timeout-ms",
    type=click.IntRange(min=0),
    default=None,
    help="Turn timer; the server's default (60000) if not given, 0 turns it off.",
)
@click.option(
    "--think-ms",
    nargs=2,
    type=float,
    default=DEFAULT_THINK_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="Random delay before each of a bot's commands.",
)
@table_options
@click.pass_context
def tribes(
    ctx: click.Context,
    players: int,
    extended: bool,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    board_size: int | None,
    turn_timeout_ms: int | None,
    seed_entropy: bytes,
    think_ms: tuple[float, float],
    connect_timeout: float,
    receipts: Path | None,
    stats: bool,
    join: str | None,
    tokens: tuple[str, ...],
) -> None:
    """Create a Tribes match, seat a bot in every seat, play it to the Feathers; or with
    --join MATCH --token TOKEN ..., play the seats those tokens hold in MATCH.

    Prints the result (placements with names) and the match id, for
    `totem-replay show MATCH`.
    """

    def seat_bot(session: Session, _: int) -> TribesBot:
        return TribesBot(session, think_ms=think_ms)

    def table(client: Client, seated: OnSeated) -> Awaitable[TableResult[TribesBot]]:
        if join:
            return play_seats(client, join, tokens, "tribes", seat_bot, on_seated=seated)
        return play_tribes_table(
            client,
            players,
            extended=extended,
            board_size=board_size,
            turn_timeout_ms=turn_timeout_ms,
            entropy=seed_entropy,
            think_ms=think_ms,
            on_seated=seated,
        )

    if seats_to_take(ctx, join, tokens):
        players = len(tokens)
    result = _play_table(address, organiser_token, tls, connect_timeout, players, table, receipts)
    summary = result.summary
    click.echo(
        f"Tribes {summary.variant}, {len(result.bots)} bots: match ended ({result.end_reason}) "
        f"after {summary.version} events"
    )
    for standing in result.standings:
        click.echo(f"  {standing.place:>2}. {standing.name} (seat {standing.seat})")
    if stats:
        for bot in result.bots:
            s = bot.stats
            click.echo(
                f"  {bot.name}: {s.moves} moves ({s.lifts} lifts), {s.timed_out} by the timer, "
                f"{s.passes} passes, {s.rounds_won} rounds won"
                + (", the Feathers" if s.feathers else "")
                + f", {len(s.refusals)} refused commands"
            )
    click.echo(f"match id: {result.match_id}")
    click.echo(f"replay:   totem-replay show {result.match_id}")


@bots.command("village")
@click.option(
    "--players",
    type=click.IntRange(2, 4),
    default=2,
    show_default=True,
    help="Number of bots (VI-1.1); with two, each plays two families.",
)
@click.option(
    "--variation",
    "variations",
    multiple=True,
    type=click.Choice(list(VILLAGE_VARIATIONS)),
    help="A variation of the rules; repeat to combine them.",
)
@options.address
@options.organiser_token
@options.tls
@click.option(
    "--deadline-ms",
    type=click.IntRange(0, 3_600_000),
    default=None,
    help="Deadline of every kind of decision; the server's defaults if not given.",
)
@click.option(
    "--seed-entropy",
    default="",
    callback=_entropy,
    help="Text mixed into the match seed as the creator's entropy (UTF-8, at most 64 bytes).",
)
@click.option(
    "--think-ms",
    nargs=2,
    type=float,
    default=VILLAGE_THINK_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="Random delay before each of a bot's decisions (at most half the time left).",
)
@options.connect_timeout
@options.receipts
@click.option("--stats", is_flag=True, help="Also print what each bot did.")
@seat_options[0]
@seat_options[1]
@click.pass_context
def village(
    ctx: click.Context,
    players: int,
    variations: tuple[str, ...],
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    deadline_ms: int | None,
    seed_entropy: bytes,
    think_ms: tuple[float, float],
    connect_timeout: float,
    receipts: Path | None,
    stats: bool,
    join: str | None,
    tokens: tuple[str, ...],
) -> None:
    """Create a Village match, seat a bot in every seat, play it until a totem pole is
    complete; or with --join MATCH --token TOKEN ..., play the seats those tokens hold
    in MATCH.

    Prints the result (placements with names) and the match id, for
    `totem-replay show MATCH`.
    """

    def seat_bot(session: Session, _: int) -> VillageBot:
        return VillageBot(session, think_ms=think_ms)

    def table(client: Client, seated: OnSeated) -> Awaitable[TableResult[VillageBot]]:
        if join:
            return play_seats(client, join, tokens, "village", seat_bot, on_seated=seated)
        return play_village_table(
            client,
            players,
            variations=variations,
            deadline_ms=deadline_ms,
            entropy=seed_entropy,
            think_ms=think_ms,
            on_seated=seated,
        )

    if seats_to_take(ctx, join, tokens):
        players = len(tokens)
    result = _play_table(address, organiser_token, tls, connect_timeout, players, table, receipts)
    summary = result.summary
    click.echo(
        f"Village {summary.variant or 'base'}, {len(result.bots)} bots: match ended "
        f"({result.end_reason}) after {summary.version} events"
    )
    for standing in result.standings:
        click.echo(f"  {standing.place:>2}. {standing.name} (seat {standing.seat})")
    if stats:
        for bot in result.bots:
            s = bot.stats
            click.echo(
                f"  {bot.name}: {s.decisions} decisions, {s.by_default} by a deadline, "
                f"{len(s.refusals)} refused commands"
            )
    click.echo(f"match id: {result.match_id}")
    click.echo(f"replay:   totem-replay show {result.match_id}")
