"""``totem-replay ruling``: one printable page a judge signs a ruling on.

It holds, for one version of a match: the position as the referee saw it (drawn by the
HTML replay's own board, with the state's text beside it for a printer or a browser
that runs no script), the event that led there and, if it is part of a grab race, the
race as ``explain`` reads it; the verification as ``verify`` reports it; the match
digest and the server's signature; the judge's note; and when the sheet was made. Like
the HTML replay, it loads nothing from anywhere and shows the referee's view.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from html import escape
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import click

from replay import html_parts
from replay.evidence import race_pages, signature_of, verification
from replay.html import BOARD_CSS, BOARD_SCRIPT, fill, frame, script_json
from replay.refusals import kept_refusals
from replay.source import load
from replay.step import referee_option, require_referee
from replay.store import Record, ReplayError, walk

#: When the sheet's verification was computed, as its heading says it.
WHEN = "when this sheet was made"


@click.command(short_help="A printable ruling sheet: the position at VERSION and its evidence.")
@click.argument("match_text", metavar="MATCH")
@click.argument("version", type=click.IntRange(min=1))
@click.option("--note", metavar="TEXT", default="", help="The judge's note, printed on the sheet.")
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="The HTML file to write.",
)
@referee_option
@click.pass_context
def ruling(
    ctx: click.Context, match_text: str, version: int, note: str, output: Path, referee: bool
) -> None:
    """Write a ruling sheet for the event at VERSION: one self-contained HTML page to
    print or archive, with the position right after it (the referee's view), the race
    it belongs to if it is a grab (as `explain` reads it), the verification of the whole
    match (as `verify` reports it), the match digest, the server's signature, the --note
    and when the sheet was made.

    It shows everything, as `export` does: a match still in play only with --referee.
    Exit status 0 when the sheet is written and the match verifies; 1 when the sheet is
    written but the match fails verification (the sheet says where); 2 for an error,
    such as a version the match does not have (nothing is written then).
    """
    db: str = getattr(ctx.obj, "db", "")
    loaded = load(db, match_text)
    require_referee(loaded.live, referee, "a ruling sheet")
    if version > loaded.last:
        raise ReplayError(
            f"match {loaded.match_id} has versions 1 to {loaded.last}: there is no version "
            f"{version}"
        )
    report = verification(db, loaded)
    races = race_pages(loaded.records, kept_refusals(db, loaded))
    sheet_text = sheet(loaded.records, version, report, note, datetime.now(UTC), races)
    try:
        output.write_text(sheet_text, encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot write {output}: {exc.strerror or exc}") from exc
    if not report["ok"]:
        click.echo(
            f"warning: match {loaded.match_id} fails verification (first bad version "
            f"{report['first_bad_version']}): the sheet says so; see `totem-replay verify`",
            err=True,
        )
        ctx.exit(1)


def sheet(
    records: list[Record],
    version: int,
    report: dict[str, Any],
    note: str,
    made: datetime,
    races: Mapping[int, dict[str, Any]],
) -> str:
    """The sheet's HTML for the event at ``version`` of the match of ``records``, with
    ``explain``'s reading of its race if it is a grab (``races``:
    :func:`replay.evidence.race_pages`)."""
    shown: dict[str, Any] | None = None
    game = match_id = ""
    for event, match in walk(records, version):
        if event.originator_version == version:
            shown = frame(event, match)
            game, match_id = type(match).GAME, str(match.id)
    if shown is None:
        raise ReplayError(f"the match has no version {version}")
    race = races.get(version)
    last = records[-1].event
    ended = type(last).__name__ == "MatchEnded"
    digest = report["digest"] or "unknown: the last stored event cannot be read"
    data = {"game": game, "frame": shown}
    title = f"Ruling sheet: {game} match {match_id}, version {version}"
    facts = [
        ("Match", match_id),
        ("Game", game),
        ("Version ruled on", f"{version} of {report['events']}"),
        ("Event", f"{shown['name']}, {shown['time']} UTC: {shown['summary']}"),
        ("Sheet made", f"{made.astimezone(UTC).isoformat(timespec='seconds')} by {_tool()}"),
    ]
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in facts)
    note_html = (
        f'<p class="note-text">{escape(note)}</p>'
        if note.strip()
        else '<p class="note-text empty">(no note)</p>'
    )
    return fill(
        TEMPLATE,
        TITLE=escape(title),
        CSS=SHEET_CSS + BOARD_CSS + html_parts.CSS,
        FACTS=rows,
        NOTE=note_html,
        LINES=escape("\n".join(shown["lines"])),
        RACE=html_parts.race_html(race) if race is not None else _no_race(shown),
        VERIFICATION=html_parts.verification_html(report, WHEN),
        SIGNATURE=html_parts.signature_html(match_id, digest, signature_of(last), ended),
        EVENT_DIGEST=escape(str(shown["digest"])),
        CANONICAL=escape(shown["canonical"]),
        JS=BOARD_SCRIPT + DRAW_SCRIPT,
        DATA=script_json(data),
    )


def _no_race(shown: dict[str, Any]) -> str:
    return (
        '<section class="race none"><p>No grab race: the event at version '
        f"{int(shown['version'])} ({escape(str(shown['name']))}) is not part of one.</p></section>"
    )


def _tool() -> str:
    try:
        return f"totem-replay {package_version('totem-arena')}"
    except PackageNotFoundError:
        return "totem-replay"


TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>@CSS@</style>
</head>
<body>
<h1>@TITLE@</h1>
<table class="facts" id="facts">@FACTS@</table>
<section id="note"><h2>Note</h2>@NOTE@</section>
<section id="position">
  <h2>The position right after this event (the referee's view)</h2>
  <div class="position">
    <div id="board" aria-label="board"></div>
    <pre id="lines">@LINES@</pre>
  </div>
</section>
@RACE@
@VERIFICATION@
<section id="digests">
  <h2>The match digest and the server's signature</h2>
  @SIGNATURE@
  <p class="small">Check the signature with <code>totem-replay verify MATCH --key KEY</code>,
  against the key the operator publishes (<code>totem server-key</code>).</p>
  <h3>The event ruled on, as hashed (docs/audit.md)</h3>
  <p>digest <code>@EVENT_DIGEST@</code></p>
  <pre id="canonical">@CANONICAL@</pre>
</section>
<section id="signoff"><p>Ruling: ____________________________________________</p>
<p>Judge: ____________________________ Date: ______________ Signature: ______________</p>
</section>
<script type="application/json" id="match-data">@DATA@</script>
<script>@JS@</script>
</body>
</html>
"""

SHEET_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #111; background: #fff; }
h1 { font-size: 1.25em; margin: 0 0 .4em; } h2 { font-size: 1.05em; margin: 1em 0 .3em; }
h3 { font-size: .95em; }
.position { display: flex; gap: 1em; flex-wrap: wrap; align-items: flex-start; }
#board { flex: 1; min-width: 20em; }
#lines, #canonical { flex: 1; min-width: 20em; font-size: .75em; white-space: pre-wrap;
  overflow-wrap: anywhere; border: 1px solid #ccc; padding: .5em; margin: 0; }
.note-text { white-space: pre-wrap; border-left: 3px solid #888; padding-left: .6em; }
.note-text.empty { color: #777; }
#signoff { margin-top: 2em; line-height: 2.2; }
@page { margin: 14mm; }
@media print {
  body { margin: 0; font-size: 10pt; }
  section, table, .panel, .race, .verification { break-inside: avoid; }
  #canonical { max-height: none; }
  .space, .card, .chip, .pole i, .totem { -webkit-print-color-adjust: exact;
    print-color-adjust: exact; }
}
"""

#: Draws the one position of the sheet with the replay's board.
DRAW_SCRIPT = r"""
const SHEET = JSON.parse(document.getElementById("match-data").textContent);
drawFrame(SHEET.game, SHEET.frame, $("board"));
"""
