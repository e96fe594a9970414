"""``totem play``: the full-screen players, one command per game.

Every game's command takes the same options to reach a match (:func:`match_options`)
and its own options for a new one. Textual and the screens are imported only when a
command runs, so that the rest of ``totem`` starts without them.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from totem_client import options
from totem_client.client import ClientTls
from totem_client.games.village import VILLAGE_DEADLINES, VILLAGE_VARIATIONS
from totem_client.play import GAMES, GameEntry
from totem_client.play.jungle_speed_bots import BOT_REACTION_MS, BOT_REVEAL_DELAY_MS, NewMatch
from totem_client.play.openings import JoinMatch, Opening, SpectateMatch, TakeSeat
from totem_client.play.tribes_bots import BOT_THINK_MS as TRIBES_BOT_THINK_MS
from totem_client.play.tribes_bots import NewTribesMatch
from totem_client.play.village_bots import BOT_THINK_MS as VILLAGE_BOT_THINK_MS
from totem_client.play.village_bots import NewVillageMatch

F = TypeVar("F", bound=Callable[..., Any])


@click.group()
def play() -> None:
    """Play a match full screen in the terminal, against a running server
    (start one with `totem serve`)."""


def _default_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "player"


def match_options(function: F) -> F:
    """The options every game's command has: the server, the user's name, and which
    match to join or spectate instead of creating one."""
    for option in reversed(
        [
            options.address,
            options.organiser_token,
            options.tls,
            click.option(
                "--name",
                default=_default_name,
                show_default="your login name",
                help="Your name at the table (not with --spectate).",
            ),
            click.option(
                "--join",
                "join",
                metavar="MATCH",
                help="Take a seat in this existing match instead of creating one.",
            ),
            click.option(
                "--seat",
                type=click.IntRange(min=0),
                help="With --join: the seat to take (default: the next free one).",
            ),
            click.option(
                "--token",
                metavar="TOKEN",
                help="With --join: take the seat this token holds instead of a free one "
                "(a fork's seat: `totem-replay fork` prints a token per seat). The seat "
                "keeps its name.",
            ),
            click.option(
                "--spectate",
                metavar="MATCH",
                help="Watch this match as a spectator instead of playing.",
            ),
            options.connect_timeout,
            options.receipts,
        ]
    ):
        function = option(function)
    return function


def existing_match(
    ctx: click.Context,
    join: str | None,
    seat: int | None,
    spectate: str | None,
    name: str,
    token: str | None = None,
) -> Opening | None:
    """The opening that --join (with --seat or --token) or --spectate asks for, or None
    for a new match.

    Options that describe a new match (those of the game's command not listed by
    :func:`match_options`) are refused with --join and --spectate: they would be ignored.
    """
    if join and spectate:
        raise click.UsageError("give --join or --spectate, not both")
    if seat is not None and not join:
        raise click.UsageError("--seat goes with --join")
    if token is not None and not join:
        raise click.UsageError("--token goes with --join MATCH")
    if token is not None and seat is not None:
        raise click.UsageError("give --seat or --token, not both: the token says its seat")
    if token is not None and ctx.get_parameter_source("name") != click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--name is for a free seat; the seat of --token keeps its name")
    if not (join or spectate):
        return None
    generic = {"name", "join", "seat", "token", "spectate"}
    options.refuse_new_match_options(ctx, generic, "--join or --spectate")
    if spectate:
        return SpectateMatch(spectate)
    assert join is not None
    if token is not None:
        return TakeSeat(join, token)
    return JoinMatch(join, name, seat)


def run_player(
    entry: GameEntry,
    opening: Opening,
    address: str,
    connect_timeout: float,
    organiser_token: str | None = None,
    tls: ClientTls | None = None,
    receipts: Path | None = None,
) -> None:
    """Run the full-screen player; afterwards print the match id, or why it could not
    be opened (exit status 1). The match's newest receipt is kept in ``receipts``."""
    from totem_client.play.app import PlayApp

    app = PlayApp(
        entry,
        opening,
        address,
        connect_timeout=connect_timeout,
        organiser_token=organiser_token,
        tls=tls,
        receipts=receipts,
    )
    app.run()
    if app.failure is not None:
        raise click.ClickException(app.failure)
    if app.match_id is not None:
        click.echo(f"match id: {app.match_id}")
        click.echo(f"replay:   totem-replay show {app.match_id}")


@play.command("jungle-speed")
@match_options
@click.option(
    "--players",
    type=click.IntRange(2, 10),
    default=4,
    show_default=True,
    help="New match: seats in all; you take seat 0 and bots the others.",
)
@click.option(
    "--variant",
    type=click.Choice(["ES", "RU"], case_sensitive=False),
    default="ES",
    show_default=True,
    help="New match: the rules variant (JS-2.1, JS-8.2).",
)
@click.option(
    "--turn-timeout-ms",
    type=click.IntRange(min=0),
    default=None,
    help="New match: the turn timer (JS-3.4); the server's default (10000) if not given, "
    "0 turns it off.",
)
@click.option(
    "--bot-reaction-ms",
    nargs=2,
    type=float,
    default=BOT_REACTION_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="New match: random delay before a bot grabs the totem after a race opens.",
)
@click.option(
    "--bot-reveal-delay-ms",
    nargs=2,
    type=float,
    default=BOT_REVEAL_DELAY_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="New match: random delay before a bot reveals on its turn.",
)
@click.pass_context
def jungle_speed(
    ctx: click.Context,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    name: str,
    join: str | None,
    seat: int | None,
    token: str | None,
    spectate: str | None,
    connect_timeout: float,
    receipts: Path | None,
    players: int,
    variant: str,
    turn_timeout_ms: int | None,
    bot_reaction_ms: tuple[float, float],
    bot_reveal_delay_ms: tuple[float, float],
) -> None:
    """Play Jungle Speed full screen.

    By default, create a match, take seat 0 and fill the other seats with bots. With
    --join MATCH, take a free seat in an existing match, or with --join MATCH --token
    TOKEN the seat that token holds (a fork's); with --spectate MATCH, watch one.

    Keys: space reveal, g grab (the duel you are in, else the inward-arrows race),
    a grab for the arrows when a duel and a race are both open (ES), s start a waiting
    match with the seats taken, q quit. When you quit, the match id is printed.
    """
    opening = existing_match(ctx, join, seat, spectate, name, token) or NewMatch(
        name=name,
        players=players,
        variant=variant.upper(),
        turn_timeout_ms=turn_timeout_ms,
        bot_reaction_ms=bot_reaction_ms,
        bot_reveal_delay_ms=bot_reveal_delay_ms,
    )
    run_player(
        GAMES["jungle-speed"], opening, address, connect_timeout, organiser_token, tls, receipts
    )


@play.command("tribes")
@match_options
@click.option(
    "--players",
    type=click.IntRange(2, 4),
    default=2,
    show_default=True,
    help="New match: seats in all; you take seat 0 and bots the others.",
)
@click.option(
    "--extended",
    is_flag=True,
    help="New match: the extended game (TR-5): the Dice of Fate, the Great Totem of Doom, "
    "the Mini-Totem of Chaos, the Salvation Spaces.",
)
@click.option(
    "--board-size",
    type=click.IntRange(3, 5),
    default=None,
    help="New match: the side of the board (TR-1.2); by default 3 for two players, 4 for "
    "three or four.",
)
@click.option(
    "--turn-timeout-ms",
    type=click.IntRange(min=0),
    default=None,
    help="New match: the turn timer; the server's default (60000) if not given, 0 turns it off.",
)
@click.option(
    "--bot-think-ms",
    nargs=2,
    type=float,
    default=TRIBES_BOT_THINK_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="New match: random delay before each of a bot's commands.",
)
@click.pass_context
def tribes(
    ctx: click.Context,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    name: str,
    join: str | None,
    seat: int | None,
    token: str | None,
    spectate: str | None,
    connect_timeout: float,
    receipts: Path | None,
    players: int,
    extended: bool,
    board_size: int | None,
    turn_timeout_ms: int | None,
    bot_think_ms: tuple[float, float],
) -> None:
    """Play Tribes full screen.

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
    """
    opening = existing_match(ctx, join, seat, spectate, name, token) or NewTribesMatch(
        name=name,
        players=players,
        extended=extended,
        board_size=board_size,
        turn_timeout_ms=turn_timeout_ms,
        bot_think_ms=bot_think_ms,
    )
    run_player(GAMES["tribes"], opening, address, connect_timeout, organiser_token, tls, receipts)


@play.command("village")
@match_options
@click.option(
    "--players",
    type=click.IntRange(2, 4),
    default=2,
    show_default=True,
    help="New match: seats in all (VI-1.1); you take seat 0 and bots the others.",
)
@click.option(
    "--variation",
    "variations",
    multiple=True,
    type=click.Choice(list(VILLAGE_VARIATIONS)),
    help="New match: a variation (VI-2.1 … VI-3.2); repeat for several.",
)
@click.option(
    "--deadline-ms",
    type=click.IntRange(0, 3_600_000),
    default=None,
    help="New match: every decision's deadline; by default slowed for a person "
    "(arrange 180 s, choose 120 s, place 90 s, reveal 60 s, victims 90 s, youth 60 s).",
)
@click.option(
    "--bot-think-ms",
    nargs=2,
    type=float,
    default=VILLAGE_BOT_THINK_MS,
    show_default=True,
    callback=options.delays,
    metavar="LOW HIGH",
    help="New match: random delay before each of a bot's commands.",
)
@click.pass_context
def village(
    ctx: click.Context,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    name: str,
    join: str | None,
    seat: int | None,
    token: str | None,
    spectate: str | None,
    connect_timeout: float,
    receipts: Path | None,
    players: int,
    variations: tuple[str, ...],
    deadline_ms: int | None,
    bot_think_ms: tuple[float, float],
) -> None:
    """Play Village full screen.

    By default, create a match, take seat 0 and fill the other seats with bots. With
    --join MATCH, take a free seat in an existing match, or with --join MATCH --token
    TOKEN the seat that token holds (a fork's); with --spectate MATCH, watch one.

    Keys: each decision your families owe is a draft, set to its default: tab selects
    the next decision, the arrows (or h j k l) move over its rows and cells (cottages,
    spells, targets, people), + or space and - change the cell, enter sends the draft,
    d sends the default as is, p passes (spells_a), s starts a waiting match with the
    seats taken, q quits. When you quit, the match id is printed.
    """
    timeouts = {kind: deadline_ms for kind in VILLAGE_DEADLINES} if deadline_ms is not None else {}
    opening = existing_match(ctx, join, seat, spectate, name, token) or NewVillageMatch(
        name=name,
        players=players,
        variations=variations,
        timeouts_ms=timeouts,
        bot_think_ms=bot_think_ms,
    )
    run_player(GAMES["village"], opening, address, connect_timeout, organiser_token, tls, receipts)
