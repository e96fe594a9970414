"""``totem-replay export``: a match as an audit bundle or as one self-contained HTML page."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

import click

from replay import format as fmt
from replay.bundle import bundle_lines
from replay.evidence import race_pages, verification
from replay.html import page
from replay.integrity import warn_if_broken
from replay.refusals import kept_refusals, refusal_events
from replay.source import load
from replay.step import referee_option, require_referee
from replay.store import ReplayError, walk


@click.command(short_help="An audit bundle (JSON Lines) or a self-contained HTML replay.")
@click.argument("match_text", metavar="MATCH")
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write to FILE instead of standard output.",
)
@click.option(
    "--html",
    "as_html",
    is_flag=True,
    help="One HTML file, with no outside resource, to step through the match in a browser.",
)
@referee_option
@click.pass_context
def export(
    ctx: click.Context, match_text: str, output: Path | None, as_html: bool, referee: bool
) -> None:
    """Export a match so that it can be checked without the store.

    By default an audit bundle: JSON Lines, a header line then one line per event, from
    which `totem-replay verify BUNDLE` recomputes every digest and every other command
    taking MATCH replays the match, then one line per event of the match's log of
    refused commands (counted in the header, its chain checked as the events' is).
    With --html, one page that draws the match at every version, with controls to step
    through it, each race's evidence (as `explain` reads it, refused grabs among the
    contenders) and the verification (as `verify` reports it); the page checks the chain and the
    server's signature again in the browser. Both hold everything, the referee's view
    included: a match still in play is exported only with --referee.
    """
    db: str = getattr(ctx.obj, "db", "")
    loaded = load(db, match_text)
    require_referee(loaded.live, referee, "an export")
    records = loaded.records
    # The aggregate is changed in place as events apply: each step is read as it comes.
    steps = fmt.progress(walk(records), len(records), "exporting")
    if as_html:
        races = race_pages(records, kept_refusals(db, loaded))
        _write(output, [page(steps, races, verification(db, loaded))])
    else:
        refused = refusal_events(db, loaded)
        lines = bundle_lines(steps, len(records), refused)
        _write(output, (line + "\n" for line in lines))
    warn_if_broken(db, loaded)


def _write(output: Path | None, chunks: Iterable[str]) -> None:
    """Everything is made before anything is written: a match that cannot be replayed
    leaves no half-written file or output behind."""
    chunks = list(chunks)
    if output is None:
        _emit(sys.stdout, chunks)
        return
    try:
        with output.open("w", encoding="utf-8") as file:
            _emit(file, chunks)
    except OSError as exc:
        raise ReplayError(f"cannot write {output}: {exc.strerror or exc}") from exc


def _emit(stream: TextIO, chunks: Iterable[str]) -> None:
    for chunk in chunks:
        stream.write(chunk)
