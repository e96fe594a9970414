"""``totem play``: the full-screen players, one command per game.

Every game's command takes the same options to reach a match (:func:`match_options`)
and its own options for a new one, made from the game's
:class:`~totem_client.play.player.Player` (:data:`totem_client.play.GAMES`): this
module names no game. Textual and the screens are imported only when a command runs,
so that the rest of ``totem`` starts without them.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from totem_client import options
from totem_client.client import ClientTls
from totem_client.play import GAMES, GameEntry
from totem_client.play.openings import JoinMatch, Opening, SpectateMatch, TakeSeat

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


def player_command(entry: GameEntry) -> click.Command:
    """``totem play <game>``: the options of every game's command, then the game's own
    for a new match, whose values go as they are to its ``new_match``."""

    @click.pass_context
    def run(
        ctx: click.Context,
        /,
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
        **new_match: Any,
    ) -> None:
        opening = existing_match(ctx, join, seat, spectate, name, token)
        if opening is None:
            opening = entry.player.new_match(name=name, **new_match)
        run_player(entry, opening, address, connect_timeout, organiser_token, tls, receipts)

    command = click.command(entry.key, help=entry.player.help)(match_options(run))
    command.params.extend(entry.player.options)  # after those of every game's command
    return command


for _entry in GAMES.values():
    play.add_command(player_command(_entry))
