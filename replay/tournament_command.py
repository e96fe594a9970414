"""``totem-replay tournament``: verify, show and export a tournament's result sheet.

SHEET|ID is a sheet file (written by ``tournament export`` or given by the server) or
a tournament id read from the store of ``--db``. The matches a sheet lists are always
read from the store. Exit status as the other commands': 0 done, 1 a check failed (or a
shown tournament fails its own chain), 2 an error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from domain.tournament import sheet as sheets
from replay.audit import FAILED, OK
from replay.explain import explain
from replay.explain_rules import HUMAN_LIMIT_MS
from replay.store import ReplayError
from replay.tournament_checks import CHECKS, TournamentReport, verify_tournament
from replay.tournament_html import page
from replay.tournament_show import lines
from replay.tournament_source import LoadedTournament, load_tournament, tournament_id
from replay.tournament_view import describe
from replay.verifying import expected_key
from storage.sheets import SheetError, sheet_document

LABELS = {OK: "OK", FAILED: "FAILED"}
#: As ``verify``'s: a check failed.
EXIT_FAILED = 1


@click.group(short_help="Verify, show and export a tournament's result sheet.")
def tournament() -> None:
    """A tournament's result sheet, checked and shown without the server.

    SHEET|ID is a result sheet file (an existing file, or a name ending in .jsonl) or a
    tournament id (a whole UUID) read from the store of --db. The matches the sheet
    lists are read from that store.
    """


@tournament.command("verify", short_help="Check a result sheet and every match it lists.")
@click.argument("source", metavar="SHEET|ID")
@click.option(
    "--key",
    metavar="HEX|FILE",
    help="The server's public key, obtained outside the store (`totem server-key`): 64 hex "
    "digits, PEM, or a file holding either. The sheet must then be signed by it, and so "
    "must every match it lists.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.pass_context
def verify_command(ctx: click.Context, source: str, key: str | None, as_json: bool) -> None:
    """Check a tournament's events and result sheet, and every match the sheet lists,
    each check reported by name with its first failing position.

    The tournament: a sheet file's header and lines (sheet file), the hash chain, each
    round's pairing, each round's duplicate seed, the revealed seed against its
    commitment, the sheet's standings, matches and rulings against the events (result
    sheet), and the server's Ed25519 signature of the sheet (signature; by --key only,
    if given). A tournament that has not ended, or whose sheet is not signed, fails.

    Each match the sheet lists, voided ones too, read from the store: it verifies as
    `totem-replay verify MATCH` does, ends at the version and digest the sheet lists, and
    is of the tournament's game (matches); it has ended, its seats were taken with the
    tokens of the table's entrants in seat order, and its places are those the
    tournament recorded (match results); with duplicate tables, its options hold the luck
    its round's seed gives (duplicate luck).

    Exit status 0 when every check holds or does not apply; 1 when one fails; 2 on an
    error (no such file or tournament, a store that cannot be opened for an ID).
    """
    db: str = ctx.obj.db
    public_key = expected_key(key)
    loaded = load_tournament(db, source)
    report = verify_tournament(loaded, db, public_key)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        for line in report_lines(report):
            click.echo(line)
    if not report.ok:
        ctx.exit(EXIT_FAILED)


def report_lines(report: TournamentReport) -> list[str]:
    """The text of a report: the verdict, each check, each problem, the notes."""
    where = f"from the {report.source}"
    if report.ok:
        out = [
            f"OK tournament {report.tournament_id} ({where}): {report.events} events, "
            f"sheet digest {report.digest}, every check holds"
        ]
    else:
        first = report.findings[0]
        out = [
            f"FAILED tournament {report.tournament_id} ({where}): {len(report.findings)} "
            f"problem(s); first: {first.check} at {first.where}: {first.reason}"
        ]
    for check in CHECKS:
        status, detail = report.status(check)
        out.append(f"  {check + ':':<16} {LABELS.get(status, 'not applicable')}  {detail}")
    if len(report.findings) > 1:
        out.append("  problems:")
        out += [f"    {f.check} at {f.where}: {f.reason}" for f in report.findings]
    out += [f"  {note}" for note in report.notes]
    return out


@tournament.command("show", short_help="Rounds, results, rulings and standings.")
@click.argument("source", metavar="SHEET|ID")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def show_command(ctx: click.Context, source: str, as_json: bool) -> None:
    """Title, game, format, entrants, each round's tables with the reasons they were
    paired, results and match ids, byes, disputes and rulings (judge, reason), and the
    standings (final, or so far) with the tie-breaks named and the criterion that
    separates each row from the next.

    Shown from the tournament's events alone. When its chain, pairings or sheet do not
    hold, a warning follows on stderr and the exit status is 1 (`tournament verify`
    says more, and checks the matches).
    """
    loaded = load_tournament(ctx.obj.db, source)
    events = _events(loaded)
    described = describe(loaded.tournament_id, events)
    if as_json:
        click.echo(json.dumps(described, indent=2, ensure_ascii=False))
    else:
        for line in lines(described):
            click.echo(line)
    problems = [(f.version, f.message) for f in sheets.verify(events)]
    problems += [(p.version, p.reason) for p in loaded.problems]
    if problems:
        version, reason = min(problems)
        click.echo(
            f"warning: tournament {loaded.tournament_id} fails verification at version "
            f"{version}: {reason}. What is shown above may be forged: `totem-replay "
            "tournament verify` says more.",
            err=True,
        )
        ctx.exit(EXIT_FAILED)


@tournament.command("disputes", short_help="The disputes, each with its match's evidence.")
@click.argument("source", metavar="SHEET|ID")
@click.option("--all", "every", is_flag=True, help="Ruled disputes too, with their rulings.")
@click.pass_context
def disputes_command(ctx: click.Context, source: str, every: bool) -> None:
    """The referees' queue (TO-10.2): each dispute not ruled on, oldest first (with
    --all, every dispute and how it was ruled), with the evidence of the disputed match
    at the disputed version, as `totem-replay explain MATCH VERSION` gives it (a grab
    race's receive order and gaps, or the rules that decided the event). A dispute of a
    result as a whole (version 0) names the match's last version to look at."""
    loaded = load_tournament(ctx.obj.db, source)
    tournament = sheets.replay(_events(loaded))
    shown = tournament.disputes if every else tournament.open_disputes()
    if not shown:
        click.echo("no dispute " + ("filed" if every else "waits for a ruling"))
        return
    rulings = {r.dispute: r for r in tournament.ruling_records}
    for dispute in shown:
        click.echo(
            f"dispute {dispute.number}: {dispute.entrant}, round {dispute.round} table "
            f"{dispute.table}, match {dispute.match_id} at version {dispute.version}: "
            f"{dispute.text}"
        )
        ruled = rulings.get(dispute.number)
        if ruled is not None:
            click.echo(f"  ruled by {ruled.judge}: {ruled.kind.value}: {ruled.reason}")
        if dispute.version:
            ctx.invoke(
                explain,
                match_text=dispute.match_id,
                version=dispute.version,
                human_limit_ms=HUMAN_LIMIT_MS,
                as_json=False,
                referee=False,
            )
        else:
            click.echo("  the result as a whole: `totem-replay show MATCH` and `verify MATCH`")


def _events(loaded: LoadedTournament) -> list[object]:
    events = loaded.events()
    if events is None:
        bad = next(r for r in loaded.records if r.event is None or r.error)
        raise ReplayError(
            f"tournament {loaded.tournament_id}: the event at version {bad.version} cannot be "
            "read; run `totem-replay tournament verify` for details"
        )
    return events


@tournament.command("export", short_help="Write the result sheet file, and an HTML page.")
@click.argument("source", metavar="ID")
@click.option(
    "--sheet",
    "sheet_file",
    metavar="FILE",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write the result sheet (JSON Lines) to FILE ('-': standard output).",
)
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write one self-contained HTML page of the sheet to FILE.",
)
@click.option(
    "--referee",
    is_flag=True,
    help="Export a tournament that has not ended: its events then hold the secret seed "
    "from which every round's duplicate luck derives. Only for the operator's referee.",
)
@click.pass_context
def export_command(
    ctx: click.Context, source: str, sheet_file: Path, html_file: Path | None, referee: bool
) -> None:
    """Write the result sheet of tournament ID from the store: a JSON Lines file, a
    header line then one line per event of the tournament, from which `tournament
    verify SHEET` checks everything again without the server (docs/tournaments.md,
    "Verifying a result sheet"). With --html, a page of the standings, rounds, results,
    match ids with digests, disputes and rulings, and the verification when it was made:
    one file, no script, nothing loaded from elsewhere.

    Only an ended tournament has a sheet (--referee exports one that has not ended).
    Exit status 0 written, 1 written but a check of `tournament verify` fails (with
    --html, which verifies; a warning on stderr), 2 an error.
    """
    db: str = ctx.obj.db
    wanted = tournament_id(source)
    loaded = load_tournament(db, str(wanted))
    events = _events(loaded)
    try:
        document = sheet_document(wanted, events, unended=referee)
    except SheetError as exc:
        hint = " (--referee exports it all the same)" if "has not ended" in str(exc) else ""
        raise ReplayError(f"{exc}{hint}") from exc
    report = None
    html_text = None
    if html_file is not None:
        report = verify_tournament(loaded, db)
        html_text = page(describe(wanted, events), report.as_json())
    _write(sheet_file, document)
    if html_file is not None and html_text is not None:
        _write(html_file, html_text)
    if report is not None and not report.ok:
        first = report.findings[0]
        click.echo(
            f"warning: tournament {wanted} fails verification: {first.check} at "
            f"{first.where}: {first.reason}",
            err=True,
        )
        ctx.exit(EXIT_FAILED)


def _write(path: Path, text: str) -> None:
    if str(path) == "-":
        sys.stdout.write(text)
        return
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot write {path}: {exc.strerror or exc}") from exc
