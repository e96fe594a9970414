"""``totem-replay ruling MATCH VERSION [--note TEXT] -o FILE.html``: one printable page
holding the position at VERSION, the race it belongs to, the verification, the match
digest and the signature, the note and when it was made; a bad version or a live match
writes nothing. The sheet is rendered in a real headless Chromium (``.ci/run`` installs
it)."""

from __future__ import annotations

import html
import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from replay_support import Run, Store, change_byte, digit_offset, json_lines, stored_state
from test_replay_html import browser, dump_dom, js_checks
from test_replay_html_check import signed_export

NOTE = 'Seat 1 says <she> grabbed first & the bot was "too fast"'


def race_version(run: Run, match_id: object, db: Path | None = None) -> int:
    events = json_lines(run("events", match_id, "--json", db=db).stdout)
    return int(next(e["version"] for e in events if e["name"] == "DuelWon"))


def test_a_ruling_sheet_holds_each_part(run: Run, tmp_path: Path) -> None:
    """JS-4.2, JS-5.1: the sheet of a race holds the position, the race as `explain`
    reads it, `verify`'s report, the match digest, the signature, the note and when."""
    signed_page = signed_export(run, tmp_path)
    db, match_id = signed_page.db, signed_page.match_id
    version = race_version(run, match_id, db)
    sheet = tmp_path / "ruling.html"
    before = datetime.now(UTC).replace(microsecond=0)
    made = run("ruling", match_id, version, "--note", NOTE, "-o", sheet, db=db)
    after = datetime.now(UTC)
    assert made.exit_code == 0, made.output
    text = sheet.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "@media print" in text
    assert f"match {match_id}, version {version}" in text
    # The note, shown and never obeyed.
    assert html.escape(NOTE) in text and NOTE not in text
    # When it was made.
    stamp = re.search(r"<th>Sheet made</th><td>(\S+) by totem-replay", text)
    assert stamp is not None
    assert before <= datetime.fromisoformat(stamp.group(1)) <= after
    # The position at VERSION, as `at` gives it (the referee's view).
    at = run("at", match_id, version, db=db).stdout.splitlines()
    assert html.escape("\n".join(at[3:])) in text
    assert html.escape(at[1].split(": ", 1)[1]) in text  # the event's summary
    # The race, as `explain` reads it.
    explained = json.loads(run("explain", match_id, version, "--json", db=db).stdout)
    rows = re.findall(r'<tr data-seat="(\d+)" data-sequence="(\d+)">', text)
    assert rows == [(str(c["seat"]), str(c["sequence"])) for c in explained["contenders"]]
    assert html.escape(explained["title"]) in text
    # The verification, as `verify` reports it.
    report = json.loads(run("verify", match_id, "--json", db=db).stdout)
    assert report["ok"]
    checks = dict(re.findall(r'<tr data-check="([^"]+)" data-status="([^"]+)">', text))
    assert checks == {name: c["status"] for name, c in report["checks"].items()}
    # The match digest and the server's signature, in full.
    shown = json.loads(run("show", match_id, "--json", db=db).stdout)
    assert shown["digest"] in text
    ended = json_lines(run("events", match_id, "--json", db=db).stdout)[-1]
    assert ended["name"] == "MatchEnded"
    assert signed_page.key.public_bytes.hex() in text
    bundle = tmp_path / "match.jsonl"
    assert run("export", match_id, "-o", bundle, db=db).exit_code == 0
    signature = json_lines(bundle.read_text())[-1]["unhashed"]["signature"]
    assert signature and signature in text


def test_a_sheet_away_from_a_race_says_so(run: Run, store: Store, tmp_path: Path) -> None:
    sheet = tmp_path / "ruling.html"
    made = run("ruling", store.ended.id, 2, "-o", sheet)
    assert made.exit_code == 0, made.output
    text = sheet.read_text(encoding="utf-8")
    assert "No grab race" in text and 'class="contenders"' not in text
    assert '<p class="note-text empty">(no note)</p>' in text
    # It has ended, but this store's server did not sign.
    assert "none: MatchEnded carries no server signature" in text


def test_a_version_the_match_lacks_is_an_error_and_writes_nothing(
    run: Run, store: Store, tmp_path: Path
) -> None:
    sheet = tmp_path / "ruling.html"
    last = store.ended.version
    beyond = run("ruling", store.ended.id, last + 1, "-o", sheet)
    assert beyond.exit_code == 2
    assert f"has versions 1 to {last}: there is no version {last + 1}" in beyond.output
    zero = run("ruling", store.ended.id, 0, "-o", sheet)
    assert zero.exit_code == 2
    assert not sheet.exists()


def test_a_live_match_is_refused_without_referee(run: Run, store: Store, tmp_path: Path) -> None:
    """JS-9.2: a sheet shows the referee's view, so a match in play is refused, as
    `export` refuses it, unless asked for as its referee."""
    sheet = tmp_path / "ruling.html"
    refused = run("ruling", store.playing.id, 5, "-o", sheet)
    assert refused.exit_code == 2
    assert "still being played" in refused.output and "--referee" in refused.output
    assert not sheet.exists()
    allowed = run("ruling", store.playing.id, 5, "-o", sheet, "--referee")
    assert allowed.exit_code == 0, allowed.output
    assert "none: the match has not ended" in sheet.read_text()


def test_a_sheet_of_a_damaged_match_says_failed_and_exits_1(
    run: Run, store: Store, tmp_path: Path
) -> None:
    match = store.ended
    events = json_lines(run("events", match.id, "--json").stdout)
    version = [e["version"] for e in events if e["name"] == "Revealed"][3]
    state = stored_state(store.db, match.id, version)
    at = digit_offset(state, "wall_ns") + 7
    change_byte(store.db, match.id, version, at, ord("0") + (state[at] - ord("0") + 1) % 10)
    sheet = tmp_path / "ruling.html"
    made = run("ruling", match.id, version + 1, "-o", sheet)
    assert made.exit_code == 1
    assert f"fails verification (first bad version {version})" in made.output
    text = sheet.read_text(encoding="utf-8")
    assert f"first bad version {version}" in text and 'data-ok="false"' in text


def test_the_sheet_renders_in_chromium(run: Run, store: Store, tmp_path: Path) -> None:
    """The sheet draws the position with the replay's own board: each seat's piles and
    visible card, and the pot (JS-2)."""
    match = store.ended
    version = race_version(run, match.id)
    sheet = tmp_path / "ruling.html"
    assert run("ruling", match.id, version, "--note", NOTE, "-o", sheet).exit_code == 0
    dom = dump_dom(sheet.as_uri(), tmp_path)
    state = json.loads(run("at", match.id, version, "--json").stdout)
    board = dom.split('<div id="board"', 1)[1].split('<pre id="lines"', 1)[0]
    drawn = [html.unescape(c) for c in re.findall(r' data-check="([^"]+)"', board)]
    assert drawn == js_checks(state)
    # And it prints: Chromium makes a PDF of it with the sheet's print styles.
    pdf = tmp_path / "ruling.pdf"
    printed = subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'print-profile'}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={pdf}",
            sheet.as_uri(),
        ],
        capture_output=True,
        timeout=300,  # a guard against a hung browser, not a measure of speed
        check=False,
    )
    assert pdf.exists(), printed.stderr[-2000:]
    assert pdf.read_bytes().startswith(b"%PDF-")


def test_a_bundle_makes_the_same_sheet(run: Run, store: Store, tmp_path: Path) -> None:
    """A judge given only the audit bundle makes the sheet the store makes."""
    match = store.ended
    version = race_version(run, match.id)
    bundle = tmp_path / "match.jsonl"
    assert run("export", match.id, "-o", bundle).exit_code == 0
    sheets = []
    for source in (str(match.id), str(bundle)):
        sheet = tmp_path / "ruling.html"
        made = run("ruling", source, version, "--note", NOTE, "-o", sheet)
        assert made.exit_code == 0, made.output
        sheets.append(re.sub(r"<th>Sheet made</th><td>[^<]*</td>", "", sheet.read_text()))
    assert sheets[0] == sheets[1]
    assert 'data-ok="true"' in sheets[1] and 'class="contenders"' in sheets[1]


def test_a_note_is_shown_never_obeyed(run: Run, store: Store, tmp_path: Path) -> None:
    """A note that looks like markup or like one of the sheet's own placeholders is
    printed as typed: no element, no script, nothing put in its place."""
    note = "@JS@ @DATA@ @LINES@ </script><script>alert(1)</script>"
    sheet = tmp_path / "ruling.html"
    made = run(
        "ruling", store.ended.id, race_version(run, store.ended.id), "--note", note, "-o", sheet
    )
    assert made.exit_code == 0, made.output
    text = sheet.read_text(encoding="utf-8")
    assert f'<p class="note-text">{html.escape(note)}</p>' in text
    assert text.count("<script") == 2 and "alert(1)</script>" not in text
