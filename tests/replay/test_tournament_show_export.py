"""``totem-replay tournament show`` and ``export``: what a judge reads of a tournament,
from its sheet file or from the store (TO-7.6, TO-9.2, TO-10.4, TO-11.2)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from replay_support import open_store
from tournament_store import REFEREE, TITLE, Played, swiss_cup, under_way

from entrypoints.totem_replay import main
from replay.sheet_file import read_sheet
from storage.sheets import FORMAT


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Played, Played]:
    db = tmp_path_factory.mktemp("shown") / "totem.db"
    arena = open_store(db)
    try:
        return db, swiss_cup(arena), under_way(arena)
    finally:
        arena.close()


def run(db: Path, *args: object) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), "tournament", *map(str, args)])


def test_show_names_rounds_reasons_results_rulings_and_tie_breaks_TO_7_6(
    stored: tuple[Path, Played, Played],
) -> None:
    db, cup, _ = stored
    result = run(db, "show", cup.id)
    assert result.exit_code == 0, result.output
    text = result.stdout
    tournament = cup.tournament
    assert TITLE in text and "Format:    swiss, 2 seats a table, 2 rounds, duplicate tables" in text
    assert "Tie-breaks: points, Buchholz, Sonneborn-Berger, head-to-head, seed" in text
    for state in tournament.round_states:
        for table in state.tables:
            assert f"table {table.number}: {' - '.join(table.seats)}   [{table.reason}]" in text
            assert (
                f"match {table.match_id} (version {table.version}, digest {table.digest})" in text
            )
    voided = cup.voided[(1, 2)]
    assert f"voided by a replay: match {voided.id}" in text
    for ruling in tournament.ruling_records:
        assert f"judge {REFEREE}" in text and f"reason: {ruling.reason}" in text
    assert "Final standings:" in text
    for row in tournament.final_standings:
        assert f"  {row['rank']:>4}  {row['entrant']:<20}" in text
    assert "separated from the next by" in text


def test_show_json_matches_the_sheet(stored: tuple[Path, Played, Played]) -> None:
    db, cup, _ = stored
    shown = json.loads(run(db, "show", cup.id, "--json").stdout)
    assert shown["standings"] == cup.tournament.final_standings
    assert shown["standings_final"] is True
    assert [r["judge"] for r in shown["rulings"]] == [REFEREE] * 4
    assert [r["kind"] for r in shown["rulings"]] == [
        "stands",
        "replay",
        "replace-result",
        "penalty",
    ]


def test_show_of_a_tournament_under_way_gives_the_standings_so_far_and_no_secret(
    stored: tuple[Path, Played, Played],
) -> None:
    """TO-10.4: standings after any round; the seed stays hidden until the end (TO-12.1)."""
    db, _, still = stored
    result = run(db, "show", still.id)
    shown = json.loads(run(db, "show", still.id, "--json").stdout)
    assert result.exit_code == 0, result.output
    assert "Standings so far (not final)" in result.stdout and "not revealed yet" in result.stdout
    assert shown["seed"] is None
    assert still.tournament.seed not in result.stdout + json.dumps(shown)


def test_export_writes_a_sheet_that_verifies_and_rebuilds_the_stored_events_TO_11_2(
    stored: tuple[Path, Played, Played], tmp_path: Path
) -> None:
    db, cup, _ = stored
    sheet, page = tmp_path / "cup.jsonl", tmp_path / "cup.html"
    done = run(db, "export", cup.id, "--sheet", sheet, "--html", page)
    assert done.exit_code == 0, done.output
    head = json.loads(sheet.read_text().splitlines()[0])
    assert head["format"] == FORMAT and head["tournament_id"] == str(cup.id)
    assert head["game"] == "jungle_speed" and head["events"] == cup.tournament.version
    arena = open_store(db)
    try:
        stored_events = list(arena.events.get(cup.id))
    finally:
        arena.close()
    rebuilt = [r.event for r in read_sheet(sheet).records]
    assert [type(e) for e in rebuilt] == [type(e) for e in stored_events]
    assert [vars(e) for e in rebuilt] == [vars(e) for e in stored_events]
    assert run(db, "verify", sheet).exit_code == 0
    assert run(db, "show", sheet).stdout == run(db, "show", cup.id).stdout


def test_an_unended_tournament_is_exported_only_for_the_referee_TO_11_1(
    stored: tuple[Path, Played, Played], tmp_path: Path
) -> None:
    db, _, still = stored
    refused = run(db, "export", still.id, "--sheet", tmp_path / "s.jsonl")
    assert refused.exit_code == 2 and "has not ended" in refused.output
    assert not (tmp_path / "s.jsonl").exists()
    allowed = run(db, "export", still.id, "--sheet", tmp_path / "s.jsonl", "--referee")
    assert allowed.exit_code == 0, allowed.output
    assert run(db, "verify", tmp_path / "s.jsonl").exit_code == 1


class Page(HTMLParser):
    """The text, tags and attributes of a page, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_html_sheet_is_self_contained_escaped_and_complete(
    stored: tuple[Path, Played, Played], tmp_path: Path
) -> None:
    db, cup, _ = stored
    page = tmp_path / "cup.html"
    assert run(db, "export", cup.id, "--sheet", tmp_path / "s.jsonl", "--html", page).exit_code == 0
    html = page.read_text()
    parsed = Page()
    parsed.feed(html)
    text = " ".join(parsed.text)
    assert "script" not in parsed.tags and "link" not in parsed.tags and "img" not in parsed.tags
    assert not any(v and ("http:" in v or "https:" in v) for _, v in parsed.attrs)
    assert TITLE in text and "<Open>" not in html  # the title's markup is shown, never obeyed
    assert "OK tournament" in text  # the verification when the page was made
    for entry in cup.tournament.match_list():
        assert entry["match_id"] in text and entry["digest"] in text
        for voided in entry["voided"]:
            assert voided["match_id"] in text and voided["digest"] in text
    for ruling in cup.tournament.ruling_records:
        assert ruling.reason in text and ruling.judge in text
    rows = [a for a in parsed.attrs if a[0] == "data-entrant"]
    assert [v for _, v in rows] == [r["entrant"] for r in cup.tournament.final_standings]
    assert "Buchholz" in text and "Sonneborn-Berger" in text


def test_help_names_the_subcommands() -> None:
    result = CliRunner().invoke(main, ["tournament", "--help"])
    assert result.exit_code == 0
    for name in ("verify", "show", "export"):
        assert name in result.output


def test_disputes_lists_the_queue_with_the_disputed_race_s_evidence_TO_10_2(
    stored: tuple[Path, Played, Played],
) -> None:
    db, cup, _ = stored
    queue = run(db, "disputes", cup.id)
    assert queue.exit_code == 0, queue.output
    assert queue.stdout.strip() == "no dispute waits for a ruling"
    every = run(db, "disputes", cup.id, "--all")
    assert every.exit_code == 0, every.output
    text = every.stdout
    tournament = cup.tournament
    for dispute in tournament.disputes:
        assert f"dispute {dispute.number}: {dispute.entrant}, round {dispute.round}" in text
    for ruling in tournament.ruling_records:
        assert f"ruled by {REFEREE}: {ruling.kind.value}: {ruling.reason}" in text
    # The dispute at version 10 is explained as `totem-replay explain` explains it.
    (at_ten,) = [d for d in tournament.disputes if d.version == 10]
    alone = CliRunner().invoke(main, ["--db", str(db), "explain", at_ten.match_id, "10"])
    assert alone.exit_code == 0 and alone.stdout.strip() and alone.stdout in text
