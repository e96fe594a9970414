"""``totem tournament``: an organiser's, an entrant's and a referee's commands for
tournaments on a running server (docs/tournaments.md, "Running a tournament").

The organiser's commands send the organiser token (``TOTEM_ORGANISER_TOKEN`` or
``--organiser-token``), as ``totem bots`` does; an entrant's and a referee's take their
own token with ``--token``. ``create`` and ``run`` have one subcommand per game, with the
game's match options as ``totem bots <game>`` takes them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from totem_client import options
from totem_client.bots import TABLES
from totem_client.bots.command import BotTable, CountingBot
from totem_client.client import Client, ClientTls, connect
from totem_client.command_line import ORGANISER_TOKEN_SETTING, failure_line
from totem_client.errors import TotemError
from totem_client.games import GAMES, GameInfo
from totem_client.session import Session
from totem_client.tournament.client import OrganiserRefused, TournamentClient
from totem_client.tournament.entrant import game_options
from totem_client.tournament.organiser import Progress, run_tournament
from totem_client.tournament.results import (
    FORMATS,
    TIE_BREAKS,
    EntrantTicket,
    Penalise,
    Replace,
    Replay,
    RoundInfo,
    Seat,
    StandingRow,
    Standings,
    Stands,
    TournamentEvent,
    TournamentInfo,
    Verdict,
)

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


def _console() -> Console:
    """Standard output as it is now (a test's runner swaps it), wide enough for a row of
    standings."""
    return Console(width=120, highlight=False, soft_wrap=True)


#: ``--organiser-token``, as the tournament commands send it.
organiser_token = click.option(
    "--organiser-token",
    envvar="TOTEM_ORGANISER_TOKEN",
    default=None,
    metavar="TOKEN",
    help="An organiser's token from the server's operator (env TOTEM_ORGANISER_TOKEN), "
    "sent with the organiser's calls: create, add, referee, start, withdraw, end, and "
    "disputes without --token.",
)


def connection(command: F) -> F:
    """The options of every command: the server, the organiser token, TLS, the wait."""
    for decorator in reversed(
        [options.server, organiser_token, options.tls, options.connect_timeout]
    ):
        command = decorator(command)
    return command


def organiser_line(error: OrganiserRefused, address: str) -> str:
    if error.had_token:
        return (
            f"the server at {address} does not know the organiser token in "
            f"{ORGANISER_TOKEN_SETTING}: set it to a token of that server's organiser file "
            "(`totem organiser-token` on the server's machine issues a new one)"
        )
    return (
        f"only an organiser of the server at {address} does this: set "
        f"{ORGANISER_TOKEN_SETTING} to the organiser token `totem serve` printed on its "
        "first start"
    )


def call(
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
    work: Callable[[Client, TournamentClient], Awaitable[R]],
) -> R:
    """Connect, run ``work`` with a match client and a tournament client on one channel,
    and turn a failure into one clear line (exit code 1)."""

    async def go() -> R:
        async with connect(address, organiser_token=organiser_token, tls=tls) as client:
            await client.wait_ready(connect_timeout)
            return await work(client, TournamentClient.of(client))

    try:
        return asyncio.run(go())
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    except OrganiserRefused as error:
        raise click.ClickException(organiser_line(error, address)) from None
    except TotemError as error:
        raise click.ClickException(failure_line(error, address)) from None


# ---- printing ------------------------------------------------------------------------


def standings_table(standings: Sequence[StandingRow], title: str = "") -> Table:
    table = Table(title=title or None, title_justify="left")
    for column in ("rank", "entrant", "points", "buchholz", "SB", "played", "byes", "by"):
        table.add_column(column, justify="right" if column != "entrant" else "left")

    def text(value: object) -> str:
        return "" if value is None else str(value)

    for row in standings:
        name = row.entrant + (" (withdrawn)" if row.withdrawn else "")
        table.add_row(
            str(row.rank),
            name,
            text(row.points),
            text(row.buchholz),
            text(row.sonneborn_berger),
            str(row.played),
            str(row.byes),
            row.separated_by,
        )
    return table


def round_lines(round_: RoundInfo, total: int) -> list[str]:
    lines = [f"Round {round_.number}/{total or '?'}: {len(round_.tables)} table(s)"]
    for t in round_.tables:
        places = ""
        if t.has_result:
            places = "  places " + ", ".join(
                f"{e} {p}" for e, p in zip(t.seats, t.places, strict=True)
            )
        forfeits = f"  forfeited: {', '.join(t.forfeited)}" if t.forfeited else ""
        lines.append(
            f"  table {t.number}: {' – '.join(t.seats)}  match {t.match_id}"
            f"  ({t.reason}){places}{forfeits}"
        )
    for bye in round_.byes:
        lines.append(f"  bye: {bye.entrant} ({bye.reason})")
    return lines


class Printed(Progress):
    """Progress of ``totem tournament run`` on standard output."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def round_started(self, round_: RoundInfo, total: int) -> None:
        for line in round_lines(round_, total):
            self.console.print(line)

    def tables_finished(self, round_: RoundInfo, total: int) -> None:
        self.console.print(
            f"Round {round_.number}/{total}: {round_.tables_finished}/{len(round_.tables)} "
            "tables finished"
        )

    def round_ended(self, round_: RoundInfo, total: int, standings: Standings) -> None:
        self.console.print(
            standings_table(standings.rows, f"Standings after round {round_.number}/{total}")
        )

    def ended(self, tournament: TournamentInfo) -> None:
        self.console.print(f"Tournament {tournament.tournament_id} ended")


def show(console: Console, info: TournamentInfo) -> None:
    s = info.summary
    state = "ended" if s.ended else f"{s.rounds_started}/{s.rounds or '?'} rounds started"
    console.print(
        f"{s.title or 'Tournament'} {s.tournament_id}: {s.game}, {s.format}, "
        f"{info.table_size} a table, {s.entrants} entrants, {state}"
    )
    console.print(
        f"  tie-breaks: {', '.join(info.tie_breaks) or 'none'}; dispute window "
        f"{info.dispute_window_ms} ms; no-show {info.no_show_ms} ms"
        + ("; duplicate tables" if info.duplicate else "")
    )
    console.print(f"  seed commitment: {info.seed_commitment.hex()}")
    entrants = ", ".join(
        f"{e.seed}. {e.name}"
        + (f" (withdrawn from round {e.withdrawn_from_round})" if e.withdrawn_from_round else "")
        for e in info.entrants
    )
    console.print(f"  entrants: {entrants or 'none'}")
    if info.referees:
        console.print(f"  referees: {', '.join(info.referees)}")
    for round_ in info.rounds:
        for line in round_lines(round_, s.rounds):
            console.print(line)
    for r in info.rulings:
        console.print(
            f"  ruling {r.number} on dispute {r.dispute} (round {r.round}, table {r.table}) "
            f"by {r.judge}: {r.kind}: {r.reason}"
        )
    if info.open_disputes:
        console.print(f"  {info.open_disputes} dispute(s) wait for a ruling")
    if info.standings:
        console.print(standings_table(info.standings, "Standings"))


# ---- the group -----------------------------------------------------------------------


class GameGroup(click.Group):
    """A group of one command per game, found by ``jungle-speed`` or ``jungle_speed``."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name.replace("_", "-"))


@click.group()
def tournament() -> None:
    """Run tournaments on a running server (docs/tournaments.md).

    The organiser's commands (create, add, referee, start, withdraw, end, disputes, run)
    send TOTEM_ORGANISER_TOKEN (or --organiser-token); an entrant's (dispute, withdraw)
    and a referee's (disputes, rule) take their own --token. `totem tournament run`
    does it all with bots: create, enter, play every round, write the result sheet.
    """


TOURNAMENT = click.argument("tournament_id", metavar="TOURNAMENT")


def tournament_settings(command: F) -> F:
    """The settings of a new tournament (TO-8.1), beside the game's match options."""
    decorators = [
        click.option("--title", default="", help="A title, up to 80 printable characters."),
        click.option(
            "--format",
            "format_",
            type=click.Choice(list(FORMATS)),
            default="swiss",
            show_default=True,
            help="How entrants are paired (TO-2 to TO-4).",
        ),
        click.option(
            "--table-size",
            type=click.IntRange(2, 4),
            default=2,
            show_default=True,
            help="Seats at each table (TO-1.1); two for single elimination.",
        ),
        click.option(
            "--rounds",
            type=click.IntRange(0, 64),
            default=0,
            help="Swiss only: the number of rounds (0: as many as a bracket of the field, TO-3.7).",
        ),
        click.option(
            "--tie-break",
            "tie_breaks",
            multiple=True,
            type=click.Choice(list(TIE_BREAKS)),
            help="A tie-break after points, in order; repeat (default: buchholz, "
            "sonneborn-berger, head-to-head; TO-7.1).",
        ),
        click.option(
            "--dispute-window-ms",
            type=click.IntRange(0, 604_800_000),
            default=None,
            help="How long after a round's last result disputes may be filed (TO-9.5); "
            "the server's 600000 if not given; 0: none, the next round may start at once.",
        ),
        click.option(
            "--no-show-ms",
            type=click.IntRange(0, 604_800_000),
            default=None,
            help="How long after a round starts an entrant who has not taken their seat "
            "forfeits (TO-9.3); the server's 600000 if not given.",
        ),
        click.option(
            "--duplicate",
            is_flag=True,
            help="Duplicate tables: every table of a round plays the same luck (TO-12.1).",
        ),
        click.option(
            "--auto-rounds",
            is_flag=True,
            help="The server starts every round after the first by itself, once the rules "
            "allow (TO-9.1).",
        ),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def _settings(values: dict[str, Any]) -> dict[str, Any]:
    """The keywords of TournamentClient.create from the settings' options (removed from
    ``values``, which keeps the game's own)."""
    return {
        "title": values.pop("title"),
        "format": values.pop("format_"),
        "table_size": values.pop("table_size"),
        "rounds": values.pop("rounds"),
        "tie_breaks": values.pop("tie_breaks"),
        "dispute_window_ms": values.pop("dispute_window_ms"),
        "no_show_ms": values.pop("no_show_ms"),
        "duplicate": values.pop("duplicate"),
        "auto_rounds": values.pop("auto_rounds"),
    }


def _match_options(info: GameInfo[Any], table: BotTable[Any], values: dict[str, Any]) -> Any:
    """The game's options message from its match options (removed from ``values``)."""
    given = {option.name or "": values.pop(option.name or "") for option in table.match_options}
    return game_options(info.name, **given)


@tournament.group(cls=GameGroup)
def create() -> None:
    """Create a tournament of a game (organisers only): prints its id.

    Then `totem tournament add TOURNAMENT NAME...` enters people, and `start` starts
    each round.
    """


def create_command(info: GameInfo[Any], table: BotTable[Any]) -> click.Command:
    @connection
    @tournament_settings
    def run(
        address: str,
        organiser_token: str | None,
        tls: ClientTls | None,
        connect_timeout: float,
        **values: Any,
    ) -> None:
        settings = _settings(values)
        match_options = _match_options(info, table, values)

        async def work(client: Client, tournaments: TournamentClient) -> Any:
            return await tournaments.create(info.name, match_options, **settings)

        created = call(address, organiser_token, tls, connect_timeout, work)
        click.echo(f"tournament id: {created.tournament_id}")
        click.echo(f"seed commitment: {created.seed_commitment.hex()}")

    return click.command(
        info.command_name,
        help=f"Create a tournament of {info.title}, every table's match with the options "
        "below; prints its id and its seed commitment.",
        params=list(table.match_options),
    )(run)


@tournament.command()
@TOURNAMENT
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@connection
def add(
    tournament_id: str,
    names: tuple[str, ...],
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Enter people under these names (organisers only, before round 1; TO-8.2): prints
    each one's seed and token, shown this once. The token takes their seat at each
    round's table (`totem bots GAME --tournament ID --entrant-token TOKEN`)."""

    async def work(client: Client, tournaments: TournamentClient) -> list[EntrantTicket]:
        return [await tournaments.add_entrant(tournament_id, name) for name in names]

    for ticket in call(address, organiser_token, tls, connect_timeout, work):
        click.echo(f"{ticket.seed}. {ticket.name}: token {ticket.token}")


@tournament.command()
@TOURNAMENT
@click.argument("name")
@connection
def referee(
    tournament_id: str,
    name: str,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Appoint NAME a referee of the tournament (organisers only; TO-8.3): prints their
    token, shown this once, for `disputes` and `rule`."""

    async def work(client: Client, tournaments: TournamentClient) -> str:
        return (await tournaments.appoint_referee(tournament_id, name)).token

    click.echo(
        f"referee {name}: token {call(address, organiser_token, tls, connect_timeout, work)}"
    )


@tournament.command()
@TOURNAMENT
@connection
def start(
    tournament_id: str,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Start the next round (organisers only; TO-9.1, TO-9.2): prints its tables, each
    with its match and why they sit together, and its byes. Refused (TO-9.1) while the
    round before has a table without a result, its dispute window is open or a dispute
    waits."""

    async def work(client: Client, tournaments: TournamentClient) -> tuple[RoundInfo, int]:
        round_ = await tournaments.start_round(tournament_id)
        return round_, (await tournaments.get(tournament_id)).summary.rounds

    round_, total = call(address, organiser_token, tls, connect_timeout, work)
    for line in round_lines(round_, total):
        click.echo(line)


@tournament.command(name="show")
@TOURNAMENT
@connection
def show_command(
    tournament_id: str,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """The tournament as it stands: settings, entrants, rounds with their tables and
    results, rulings, standings."""

    async def work(client: Client, tournaments: TournamentClient) -> TournamentInfo:
        return await tournaments.get(tournament_id)

    show(_console(), call(address, organiser_token, tls, connect_timeout, work))


@tournament.command(name="list")
@connection
def list_command(
    address: str, organiser_token: str | None, tls: ClientTls | None, connect_timeout: float
) -> None:
    """Every tournament of the server, in creation order: one line each."""

    async def work(client: Client, tournaments: TournamentClient) -> list[Any]:
        return [s async for s in tournaments.list_all()]

    for s in call(address, organiser_token, tls, connect_timeout, work):
        state = "ended" if s.ended else f"{s.rounds_started}/{s.rounds or '?'} rounds"
        click.echo(
            f"{s.tournament_id}  {s.game}  {s.format}  {s.entrants} entrants  {state}"
            + (f"  {s.title}" if s.title else "")
        )


@tournament.command()
@TOURNAMENT
@click.option(
    "--round",
    "round_",
    type=click.IntRange(0),
    default=0,
    help="After this round (0: everything so far).",
)
@connection
def standings(
    tournament_id: str,
    round_: int,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """The standings (TO-7): rank, points, Buchholz, Sonneborn–Berger, tables played, byes
    and the criterion that put each row ahead of the next."""

    async def work(client: Client, tournaments: TournamentClient) -> Standings:
        return await tournaments.standings(tournament_id, round_)

    result = call(address, organiser_token, tls, connect_timeout, work)
    title = f"Standings after round {round_}" if round_ else "Standings"
    console = _console()
    console.print(standings_table(result.rows, title))
    console.print(f"tie-breaks after points: {', '.join(result.tie_breaks) or 'none'}")


TOKEN_HELP = {
    "entrant": "The entrant's token, as `totem tournament add` printed it.",
    "referee": "A referee's token, as `totem tournament referee` printed it.",
}


@tournament.command()
@TOURNAMENT
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="A referee's token; without it, the organiser token is sent.",
)
@connection
def disputes(
    tournament_id: str,
    token: str | None,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """The disputes that wait for a ruling, oldest first (TO-10.2): referees and
    organisers."""

    async def work(client: Client, tournaments: TournamentClient) -> list[Any]:
        return await tournaments.list_disputes(tournament_id, token=token)

    queue = call(address, organiser_token, tls, connect_timeout, work)
    if not queue:
        click.echo("no dispute waits for a ruling")
    for d in queue:
        click.echo(
            f"dispute {d.number} by {d.entrant}: round {d.round}, table {d.table}, match "
            f"{d.match_id} at version {d.version or 'result'}: {d.text}"
        )


@tournament.command()
@TOURNAMENT
@click.argument("match_id", metavar="MATCH")
@click.argument("text")
@click.option(
    "--version",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="The disputed version of the match (0: its result as a whole).",
)
@click.option("--token", required=True, metavar="TOKEN", help=TOKEN_HELP["entrant"])
@connection
def dispute(
    tournament_id: str,
    match_id: str,
    text: str,
    version: int,
    token: str,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Dispute MATCH, a match of a table you sat at, saying why in TEXT (TO-10.1): once
    its result is recorded, until the round's dispute window closes. Prints the
    dispute's number."""

    async def work(client: Client, tournaments: TournamentClient) -> int:
        return await tournaments.file_dispute(
            tournament_id, match_id, text, token=token, version=version
        )

    click.echo(f"dispute {call(address, organiser_token, tls, connect_timeout, work)} filed")


@tournament.command()
@TOURNAMENT
@click.option("--token", required=True, metavar="TOKEN", help=TOKEN_HELP["entrant"])
@connection
def seat(
    tournament_id: str,
    token: str,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Come to your table of the round under way (TO-9.3) and print your seat once the
    table's match has seated you (when the table's other entrants have come, or at the
    round's start deadline), with the command that plays it by hand:
    ``totem play GAME --join MATCH --token TOKEN``."""

    async def work(client: Client, tournaments: TournamentClient) -> tuple[Seat, str]:
        seated = await tournaments.take_seat(tournament_id, token=token)
        info = await tournaments.get(tournament_id)
        return seated, info.summary.game

    seated, game = call(address, organiser_token, tls, connect_timeout, work)
    click.echo(
        f"round {seated.round}, table {seated.table}: seat {seated.seat} of match {seated.match_id}"
    )
    click.echo(
        f"play it: totem play {game.replace('_', '-')} --join {seated.match_id} --token TOKEN"
    )


def _places(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> dict[str, int]:
    places = {}
    for item in value:
        name, sep, place = item.rpartition("=")
        if not sep or not name or not place.isdigit() or int(place) < 1:
            raise click.BadParameter(f"give ENTRANT=PLACE with a place from 1, not {item!r}")
        places[name] = int(place)
    return places


@tournament.command()
@TOURNAMENT
@click.argument("dispute_number", metavar="DISPUTE", type=click.IntRange(1))
@click.argument("verdict", type=click.Choice(["stands", "replace", "replay", "penalise"]))
@click.option("--reason", required=True, help="Why, in the referee's words (recorded).")
@click.option("--token", required=True, metavar="TOKEN", help=TOKEN_HELP["referee"])
@click.option(
    "--place",
    "places",
    multiple=True,
    callback=_places,
    metavar="ENTRANT=PLACE",
    help="replace: every seat's place (1 first; equal places tie); repeat.",
)
@click.option(
    "--forfeit",
    "forfeited",
    multiple=True,
    metavar="ENTRANT",
    help="replace: an entrant who forfeits the table; repeat.",
)
@click.option(
    "--version",
    type=click.IntRange(1),
    default=None,
    help="replay: the version of the match the fork starts from.",
)
@click.option("--entrant", default=None, help="penalise: the entrant who loses points.")
@click.option("--points", default=None, help="penalise: the points taken off (1, 0.5, 1/2).")
@connection
def rule(
    tournament_id: str,
    dispute_number: int,
    verdict: str,
    reason: str,
    token: str,
    places: dict[str, int],
    forfeited: tuple[str, ...],
    version: int | None,
    entrant: str | None,
    points: str | None,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Rule on DISPUTE as a referee (TO-10.3): the result stands; is replaced (--place
    for every seat, --forfeit); the match is replayed from a fork at --version (the
    table's entrants take their seats in it again); or --entrant loses --points.
    Prints the ruling's number, and the fork's match for a replay."""
    chosen: Verdict
    if verdict == "stands":
        chosen = Stands()
    elif verdict == "replace":
        if not places:
            raise click.UsageError("replace needs --place ENTRANT=PLACE for every seat")
        chosen = Replace(places, forfeited)
    elif verdict == "replay":
        if version is None:
            raise click.UsageError("replay needs --version V, the version the fork starts from")
        chosen = Replay(version)
    else:
        if not entrant or not points:
            raise click.UsageError("penalise needs --entrant NAME and --points P")
        chosen = Penalise(entrant, points)

    async def work(client: Client, tournaments: TournamentClient) -> Any:
        return await tournaments.rule(tournament_id, dispute_number, chosen, reason, token=token)

    ruled = call(address, organiser_token, tls, connect_timeout, work)
    click.echo(f"ruling {ruled.ruling} recorded")
    if ruled.replay_match_id:
        click.echo(f"replay match: {ruled.replay_match_id}")


@tournament.command()
@TOURNAMENT
@click.argument("entrant", required=False, default="")
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="The entrant's own token (then ENTRANT may be left out); without it, "
    "the organiser withdraws ENTRANT.",
)
@connection
def withdraw(
    tournament_id: str,
    entrant: str,
    token: str | None,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Withdraw an entrant (TO-8.4): not paired from the next round on; a table of the
    round under way without a result is forfeited. Prints the first round missed."""
    if not entrant and token is None:
        raise click.UsageError("name the ENTRANT (organiser), or give the entrant's --token")

    async def work(client: Client, tournaments: TournamentClient) -> int:
        return await tournaments.withdraw(tournament_id, entrant, token=token)

    first = call(address, organiser_token, tls, connect_timeout, work)
    click.echo(f"withdrawn: does not play from round {first} on")


@tournament.command()
@TOURNAMENT
@connection
def end(
    tournament_id: str,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """End the tournament with its result sheet, signed by the server (organisers only;
    TO-11). Refused before every round has been played, its dispute window closed and
    every dispute ruled on. Prints the final digest."""

    async def work(client: Client, tournaments: TournamentClient) -> str:
        return await tournaments.end(tournament_id)

    click.echo(f"ended; final digest {call(address, organiser_token, tls, connect_timeout, work)}")


@tournament.command()
@TOURNAMENT
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The file to write the sheet to.",
)
@connection
def sheet(
    tournament_id: str,
    output: Path,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Write the signed result sheet of an ended tournament to a file (TO-11.2): every
    event of the tournament, for `totem-replay tournament verify`. Prints its digest,
    signature and the server's public key."""

    async def work(client: Client, tournaments: TournamentClient) -> Any:
        return await tournaments.result_sheet(tournament_id)

    result = call(address, organiser_token, tls, connect_timeout, work)
    output.write_bytes(result.sheet)
    click.echo(f"result sheet written to {output} ({len(result.sheet)} bytes)")
    click.echo(f"digest:     {result.digest}")
    click.echo(f"signature:  {result.signature.hex()}")
    click.echo(f"public key: {result.public_key.hex()}")


def event_line(event: TournamentEvent) -> str:
    fields = ", ".join(f"{k}={v}" for k, v in event.fields.items())
    return f"{event.version:>4} {event.name}: {fields}"


@tournament.command()
@TOURNAMENT
@click.option(
    "--after",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Start after this version.",
)
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="Watch as the holder of this token (default: as anyone).",
)
@connection
def watch(
    tournament_id: str,
    after: int,
    token: str | None,
    address: str,
    organiser_token: str | None,
    tls: ClientTls | None,
    connect_timeout: float,
) -> None:
    """Print the tournament's events, one a line, as they are recorded; returns after
    the final one (TournamentEnded)."""

    async def work(client: Client, tournaments: TournamentClient) -> None:
        async for event in tournaments.watch(tournament_id, after, token=token):
            click.echo(event_line(event))

    call(address, organiser_token, tls, connect_timeout, work)


# ---- run -------------------------------------------------------------------------------


@tournament.group(cls=GameGroup)
def run() -> None:
    """Run a whole tournament of a game: create it, enter the entrants, start each round
    as soon as the rules allow, end it and write its signed result sheet.

    With --bots, a bot plays every entrant's tables; without, the entrants' tokens are
    printed for people or `totem bots GAME --tournament ID --entrant-token TOKEN`.
    """


def run_command(info: GameInfo[Any], table: BotTable[CountingBot]) -> click.Command:
    bot_option_names = [option.name or "" for option in table.bot_options]

    @connection
    @tournament_settings
    @click.option(
        "--entrants",
        type=click.IntRange(2, 256),
        required=True,
        help="How many entrants (named bot-1, bot-2...).",
    )
    @click.option(
        "--bots",
        "with_bots",
        is_flag=True,
        help="A bot plays every entrant's tables (else print the entrants' tokens "
        "and wait for their players).",
    )
    @click.option(
        "--sheet",
        "sheet_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Write the signed result sheet to this file at the end.",
    )
    def go(
        address: str,
        organiser_token: str | None,
        tls: ClientTls | None,
        connect_timeout: float,
        entrants: int,
        with_bots: bool,
        sheet_path: Path | None,
        **values: Any,
    ) -> None:
        settings = _settings(values)
        match_options = _match_options(info, table, values)
        bot_values = {name: values.pop(name) for name in bot_option_names}
        console = _console()

        def bot(session: Session) -> CountingBot:
            return table.bot(session, **bot_values)

        def created(tournament_id: str, tickets: list[EntrantTicket]) -> None:
            console.print(f"tournament id: {tournament_id}")
            console.print(f"{len(tickets)} entrants: {', '.join(t.name for t in tickets)}")
            if not with_bots:
                for ticket in tickets:
                    console.print(f"  {ticket.seed}. {ticket.name}: token {ticket.token}")

        async def work(client: Client, tournaments: TournamentClient) -> Any:
            return await run_tournament(
                client,
                info.name,
                match_options,
                entrants=entrants,
                bot=bot if with_bots else None,
                tournaments=tournaments,
                progress=Printed(console),
                on_created=created,
                **settings,
            )

        result = call(address, organiser_token, tls, connect_timeout, work)
        console.print(standings_table(result.final.standings, "Final standings"))
        console.print(f"final digest: {result.sheet.digest}")
        if sheet_path is not None:
            sheet_path.write_bytes(result.sheet.sheet)
            console.print(
                f"result sheet written to {sheet_path} ({len(result.sheet.sheet)} bytes), "
                f"signed by {result.sheet.public_key.hex()}"
            )

    return click.command(
        info.command_name,
        help=f"Run a tournament of {info.title} to its end: create it with the options "
        "below, enter --entrants entrants, start every round as soon as the round before "
        "has ended and its dispute window closed (TO-9.1), end it, and with --sheet write "
        "its signed result sheet. Prints each round's tables, the tables finished and the "
        "standings after each round.",
        params=[*table.match_options, *table.bot_options],
    )(go)


for _info in GAMES.values():
    create.add_command(create_command(_info, TABLES[_info.name]))
    run.add_command(run_command(_info, TABLES[_info.name]))
