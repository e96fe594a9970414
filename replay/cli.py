"""``totem-replay``: list, show, step through and verify stored matches.

Reads the store of ``totem serve`` read-only, with or without the server running.
Errors are one line on stderr and exit status 2; ``verify`` exits 1 when a check fails,
and so does every command that shows a match failing it, after a warning on stderr
(:mod:`replay.integrity`).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import click
from rich.console import Console
from rich.text import Text

from domain.kernel.match import MatchAggregate, MatchStatus
from replay import format as fmt
from replay import games, json_output, refusals, step
from replay.checkpoint_command import checkpoint
from replay.claims import all_summaries, logged_leaves, summary_problem
from replay.disputes import disputes
from replay.explain import explain
from replay.export import event_record
from replay.export_command import export
from replay.integrity import warn_if_broken
from replay.ruling import ruling
from replay.source import load
from replay.store import (
    ReplayError,
    logged_matches,
    open_arena,
    read_records,
    walk,
)
from replay.tournament_command import tournament
from replay.verifying import verify
from storage.arena import DEFAULT_DB


class Failure(click.ClickException):
    """A clear one-line error: exit status 2."""

    exit_code = 2


class ReplayGroup(click.Group):
    """Turns every error of a command into a one-line message instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except ReplayError as exc:
            raise Failure(str(exc)) from exc
        except BrokenPipeError:
            _silence_stdout()  # the reader stopped reading (``| head``): stop quietly
            raise click.exceptions.Exit(0) from None
        except Exception as exc:
            raise Failure(f"{type(exc).__name__}: {exc}") from exc


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@dataclass(frozen=True)
class Settings:
    db: str


def console() -> Console:
    return fmt.console()


@click.group(cls=ReplayGroup)
@click.version_option(package_name="totem-arena")
@click.option(
    "--db",
    metavar="PATH",
    envvar="TOTEM_DB",
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite file of the event store, as given to `totem serve --db` (env TOTEM_DB). "
    "Ignored when PostgreSQL is selected with PERSISTENCE_MODULE=eventsourcing.postgres "
    "or POSTGRES_DBNAME. The store is only read, never created or changed.",
)
@click.pass_context
def main(ctx: click.Context, db: str) -> None:
    """Replay and verify Totem Arena matches from the event store, without a server.

    MATCH is a match id or any unique beginning of it (dashes optional), or an audit
    bundle file written by `export` (an existing file, or a name ending in .jsonl).

    `tournament verify|show|export` check, show and export a tournament's result sheet
    (a sheet file, or a tournament id in the store) and the matches it lists.

    Exit status: 0 done; 1 a check of `verify` (or `tournament verify`) failed, or a
    command that shows a match (show, events, at, step, explain, export) or a tournament
    printed one that fails verification, with a warning on stderr; 2 an error.
    """
    ctx.obj = Settings(db)


def _status(match: MatchAggregate) -> str:
    status = match.status.value
    if match.status is MatchStatus.ENDED and match.end_reason is not None:
        status += f" ({match.end_reason.value})"
    return status


def _players(match: MatchAggregate) -> str:
    return ", ".join(match.players) if match.players else "nobody yet"


@main.command("list", short_help="One line per match.")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per match.")
@click.pass_obj
def list_(settings: Settings, as_json: bool) -> None:
    """One line per match: id, game, variant, status, players, events, result.

    With --json, one JSON object per line and match (keys in docs/replay.md, "JSON
    output"); nothing at all for a store without matches.
    """
    out = console()
    with open_arena(settings.db) as arena:
        summaries = all_summaries(arena) or {}  # before the events: see replay.claims
        entries = logged_matches(arena)
        leaves = logged_leaves(arena)[0]
        if not entries and not as_json:
            out.print("no matches in this store")
        for entry in fmt.progress(entries, len(entries), "reading"):
            line = Text.assemble((str(entry.match_id), "bold"))
            line.append(f"  {entry.game}")
            try:
                records = read_records(arena, entry.match_id)
                match = list(walk(records))[-1][1]
            except ReplayError as exc:
                if as_json:
                    click.echo(json.dumps(json_output.unreadable(entry, str(exc))))
                    continue
                line.append(f"  unreadable: {exc}", style="red")
                out.print(line)
                continue
            if as_json:
                click.echo(json.dumps(json_output.list_record(match), ensure_ascii=False))
                continue
            line.append(f"  {match.variant or '-'}  ")
            line.append(_status(match), style=_status_style(match))
            line.append(f"  {len(match.players)}/{match.max_players} players: {_players(match)}")
            line.append(f"  {match.version} events")
            if match.result:
                line.append(f"  result: {fmt.result(match, match.result)}")
            logged = leaves.get(entry.match_id, ())
            problem = summary_problem(summaries.get(entry.match_id), records, logged)
            if problem is not None:
                line.append(f"  FAILS VERIFICATION at {problem}", style="bold red")
            out.print(line)


def _status_style(match: MatchAggregate) -> str:
    return {"waiting": "yellow", "playing": "cyan", "ended": "green"}[match.status.value]


@main.command(short_help="Facts of one match: players, result, digest, seed.")
@click.argument("match_text", metavar="MATCH")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def show(settings: Settings, match_text: str, as_json: bool) -> None:
    """Players, options, status, result, digest and seed of a match.

    With --json, one JSON object (keys in docs/replay.md, "JSON output").
    """
    loaded = load(settings.db, match_text)
    match_id, steps = loaded.match_id, list(walk(loaded.records))
    events = [event for event, _ in steps]
    match = steps[-1][1]
    if as_json:
        click.echo(json.dumps(json_output.show_record(match, events), ensure_ascii=False))
    else:
        _print_show(match_id, match, events)
    warn_if_broken(settings.db, loaded)


def _print_show(match_id: UUID, match: MatchAggregate, events: list[Any]) -> None:
    out = console()
    rows: list[tuple[str, str]] = [
        ("Match", str(match_id)),
        *_forked_from(match),
        ("Game", type(match).GAME + (f", variant {match.variant}" if match.variant else "")),
        ("Options", _options(match)),
        ("Status", _status(match)),
        (
            "Players",
            "; ".join(fmt.seat(match, s) for s in range(len(match.players))) or "nobody yet",
        ),
        ("Result", fmt.result(match, match.result) if match.result else "none yet"),
        (
            "Events",
            f"{len(events)} (from {fmt.when(events[0].timestamp)} "
            f"to {fmt.when(events[-1].timestamp)} UTC)",
        ),
        ("Match digest", f"{match.digest} (digest of version {match.version})"),
        ("Seed commitment", match.seed_commitment),
    ]
    ended = next((e for e in events if type(e).__name__ == "MatchEnded"), None)
    if ended is not None:
        rows.append(("Seed", f"{ended.seed} (revealed at version {ended.originator_version})"))
    else:
        rows.append(("Seed", "not revealed: the match has not ended"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        line = Text.assemble((f"{label + ':':<{width + 2}}", "bold"))
        line.append(value)
        out.print(line)


def _forked_from(match: MatchAggregate) -> list[tuple[str, str]]:
    """A fork's origin (``totem-replay fork``), whose history it continues."""
    if not match.origin:
        return []
    origin = match.origin
    where = f"{origin['match_id']} at version {origin['version']} (digest {origin['digest']})"
    return [("Forked from", where)]


def _options(match: MatchAggregate) -> str:
    """Every option; a prearranged sequence (a deal, cards, rolls) only as whether it was
    given and how long it is, since it says what is still to come."""
    parts = []
    for key, value in (getattr(match, "options_data", {}) or {}).items():
        if key.startswith("prearranged_"):
            parts.append(f"{key}=" + ("no" if value is None else f"yes ({len(value)} entries)"))
        else:
            parts.append(f"{key}={fmt.compact(value)}")
    return " ".join(parts) or "none"


@main.command(short_help="One line per event (or JSON Lines: an audit export).")
@click.argument("match_text", metavar="MATCH")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per event.")
@click.option("--from", "first", type=click.IntRange(min=1), help="First version to show.")
@click.option("--to", "last", type=click.IntRange(min=1), help="Last version to show.")
@click.option("--seat", type=click.IntRange(min=0), help="Each event as this seat's player saw it.")
@click.option("--spectator", is_flag=True, help="Each event as a spectator saw it.")
@click.option("--refused", "with_refused", is_flag=True, help="With --json, refused commands too.")
@step.referee_option
@click.pass_obj
def events(
    settings: Settings,
    match_text: str,
    as_json: bool,
    first: int | None,
    last: int | None,
    seat: int | None,
    spectator: bool,
    referee: bool,
    with_refused: bool,
) -> None:
    """One line per event: version, time (UTC), name and what it did (referee view).

    With --json, each line is a JSON object with the event's version, name, timestamp,
    digest, prev_digest, its referee view and the fields it was hashed with: an audit
    export from which every digest can be recomputed.

    --seat N or --spectator shows each event as that viewer saw it, through the server's
    own redaction; with --json each line then holds only version, name, timestamp and
    that viewer's view (no hashed fields, which would tell what the viewer could not see).
    A match still in play is shown as a spectator sees it unless --referee is given.

    Commands the server refused (kept beside the match, in the store or the bundle's
    refusal lines) are shown after the event they followed, marked REFUSED, with their
    receive number; with --json, only if --refused is given, as {"refused": ...} lines.
    Another seat's refused command shows its kind and rule, not its arguments or message.
    """
    loaded = load(settings.db, match_text)
    seen = step.viewer_of(seat, spectator, referee, loaded.live)
    shown = refusals.Interleaved(settings.db, loaded, seen.viewer, first, as_json, with_refused)
    out = console()
    records = loaded.records
    if seen.seat is not None:
        final = list(walk(records))[-1][1]
        step.check_seat(seen, final, final.version)
    for event, match in walk(records, last):
        version = event.originator_version
        if first is not None and version < first:
            continue
        shown.before(version)
        if as_json and seen.viewer.sees_everything:
            click.echo(json.dumps(event_record(match, event), ensure_ascii=False))
            continue
        name, view = games.event_view(match, event, seen.viewer)
        if as_json:
            record = {"version": version, "name": name, "timestamp": event.timestamp.isoformat()}
            click.echo(json.dumps({**record, "view": view}, ensure_ascii=False))
            continue
        line = Text(f"{version:>5}  {fmt.when(event.timestamp)}  ")
        line.append(f"{name:<15}", style="bold")
        line.append(f" {games.summary(match, name, view)}")
        out.print(line)
    shown.end(last)
    warn_if_broken(settings.db, loaded)


@main.command(short_help="The state after event VERSION, as a viewer saw it.")
@click.argument("match_text", metavar="MATCH")
@click.argument("version", type=click.IntRange(min=1))
@click.option("--seat", type=click.IntRange(min=0), help="The view this seat's player had.")
@click.option("--spectator", is_flag=True, help="The view a spectator had.")
@click.option("--json", "as_json", is_flag=True, help="Print the state view as JSON.")
@step.referee_option
@click.pass_obj
def at(
    settings: Settings,
    match_text: str,
    version: int,
    seat: int | None,
    spectator: bool,
    as_json: bool,
    referee: bool,
) -> None:
    """The state of a match right after event VERSION, as the referee saw it.

    Rebuilt by applying the stored events one by one up to VERSION. --seat N shows what
    seat N's player could see then, --spectator what a spectator could. A match still in
    play is shown as a spectator sees it unless --referee is given.
    """
    loaded = load(settings.db, match_text, upto=version)
    seen = step.viewer_of(seat, spectator, referee, loaded.live)
    match_id, records = loaded.match_id, loaded.records
    steps = list(walk(records, version))
    if steps[-1][1].version < version:
        raise ReplayError(
            f"match {match_id} has {loaded.last} events: there is no version {version}"
        )
    event, match = steps[-1]
    viewer = seen.viewer
    if seen.seat is not None:
        step.check_seat(seen, match, version)
        who = f"the player of {fmt.seat(match, seen.seat)}"
    else:
        who = "the referee (everything)" if viewer.sees_everything else "a spectator"
    view = games.state_view(match, viewer)
    if as_json:
        click.echo(json.dumps(view, indent=2, ensure_ascii=False))
    else:
        out = console()
        name, event_view = games.event_view(match, event, viewer)
        head = Text(f"Match {match_id} at version {version} of {loaded.last}", style="bold")
        out.print(head)
        out.print(
            Text(f"Last event: {name}, {fmt.when(event.timestamp)} UTC: ")
            + Text(games.summary(match, name, event_view))
        )
        out.print(Text(f"Seen by {who}"))
        for line in games.state_lines(match, view):
            out.print(Text(line))
    warn_if_broken(settings.db, loaded)


main.add_command(verify)
main.add_command(checkpoint)
main.add_command(step.step)
main.add_command(explain)
main.add_command(export)
main.add_command(disputes)
main.add_command(ruling)
main.add_command(tournament)
