"""``totem-replay export --html``: one self-contained page, stepped through in a real
headless Chromium with the page's own controls, showing at each version what ``at``
shows (the referee's state) and drawing each game's board from it.

The test copies the page and adds a script that clicks its buttons, moves its slider,
types in its version box and presses its arrow keys, recording after each action what
the page then shows; Chromium runs it and prints the resulting document. Chromium is
installed by ``.ci/run``; without it these tests fail, they are not skipped.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from replay_support import (
    Run,
    Store,
    change_byte,
    digit_offset,
    json_lines,
    open_store,
    stored_state,
)
from test_replay_tribes import store_tribes
from test_replay_village import store_village

BROWSERS = ("chromium", "chromium-browser", "google-chrome")

#: Actions on the page's own controls, as ``(kind, argument)``.
Action = tuple[str, Any]

HARNESS = """
<script>
(() => {
  const ACTIONS = @ACTIONS@;
  const $ = (id) => document.getElementById(id);
  const results = [];
  for (const [kind, arg] of ACTIONS) {
    if (kind === "click") {
      $(arg).dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true}));
    } else if (kind === "slider" || kind === "box") {
      const input = $(kind === "slider" ? "slider" : "version");
      input.value = String(arg);
      input.dispatchEvent(new Event(kind === "slider" ? "input" : "change", {bubbles: true}));
    } else if (kind === "key") {
      document.body.dispatchEvent(new KeyboardEvent("keydown", {key: arg, bubbles: true}));
    }
    results.push({
      box: $("version").value,
      slider: $("slider").value,
      current: $("current").textContent,
      event: $("event").textContent,
      lines: $("lines").textContent,
      checks: Array.from(document.querySelectorAll("#board [data-check]"),
        (node) => node.getAttribute("data-check")),
      numbers: Array.from(document.querySelectorAll("#board .space .num"),
        (node) => node.textContent),
      legend: Array.from(document.querySelectorAll("#board [data-legend] dt"),
        (node) => node.textContent),
      cottages: Array.from(document.querySelectorAll("#board .cottage"),
        (node) => node.firstChild.textContent),
      races: Array.from(document.querySelectorAll("#races .race"), (race) => ({
        version: race.getAttribute("data-version"),
        hidden: race.hidden,
        title: race.querySelector("h3").textContent,
        rows: Array.from(race.querySelectorAll("tbody tr"), (row) => ({
          seat: row.getAttribute("data-seat"),
          sequence: row.getAttribute("data-sequence"),
          cells: Array.from(row.cells, (cell) => cell.textContent),
        })),
      })).filter((race) => !race.hidden),
      canonical: $("canonical").textContent,
      digest: $("hashed-digest").textContent,
    });
  }
  const out = document.createElement("pre");
  out.id = "harness-results";
  out.textContent = JSON.stringify(results);
  document.body.append(out);
})();
</script>
"""


def browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"no headless browser on PATH (looked for {', '.join(BROWSERS)}): run .ci/run")


def dump_dom(url: str, tmp_path: Path) -> str:
    """The document Chromium holds once the page has loaded and its scripts have run
    (their promises included, within the virtual time budget)."""
    done = subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=300,  # a guard against a hung browser, not a measure of speed
        check=False,
    )
    assert "</html>" in done.stdout, f"no document (exit {done.returncode}): {done.stderr[-2000:]}"
    return done.stdout


def drive(page: Path, actions: list[Action], tmp_path: Path) -> list[dict[str, Any]]:
    """Open a copy of the page with the harness in Chromium; what it showed after each
    action."""
    text = page.read_text(encoding="utf-8")
    harness = tmp_path / "harness.html"
    script = HARNESS.replace("@ACTIONS@", json.dumps(actions))
    harness.write_text(text.replace("</body>", script + "</body>"), encoding="utf-8")
    dom = dump_dom(harness.as_uri(), tmp_path)
    found = re.search(r'<pre id="harness-results">(.*?)</pre>', dom, re.S)
    assert found, "the page did not run"
    results: list[dict[str, Any]] = json.loads(html.unescape(found.group(1)))
    return results


def expected_versions(actions: list[Action], last: int) -> list[int]:
    """The version each action leads to, by what the controls are for."""
    version, shown = 1, []
    for kind, arg in actions:
        if kind == "click" or kind == "key":
            version = {
                "first": 1,
                "Home": 1,
                "prev": max(1, version - 1),
                "ArrowLeft": max(1, version - 1),
                "next": min(last, version + 1),
                "ArrowRight": min(last, version + 1),
                "last": last,
                "End": last,
            }[arg]
        else:
            version = min(max(1, int(arg)), last)
        shown.append(version)
    return shown


def actions_for(last: int) -> list[Action]:
    middle = last // 2
    return [
        ("click", "next"),
        ("click", "next"),
        ("click", "prev"),
        ("slider", middle),
        ("click", "next"),
        ("key", "ArrowRight"),
        ("key", "ArrowLeft"),
        ("box", last - 7),
        ("click", "last"),
        ("click", "next"),
        ("key", "Home"),
        ("click", "prev"),
        ("key", "End"),
        ("box", 3),
        ("click", "first"),
    ]


def js_checks(state: dict[str, Any]) -> list[str]:
    """What the Jungle Speed board must draw: each seat's piles and visible card, the pot
    under the totem (JS-2)."""
    seats = [
        f"seat {s['seat']}: {s['face_down_count']} down, {s['face_up_count']} up, top "
        + (f"#{s['face_up'][-1]['id']}" if s["face_up"] else "none")
        for s in state["seats"]
    ]
    return [*seats, f"pot {len(state['pot'])}"]


def tribes_checks(state: dict[str, Any]) -> list[str]:
    """Every space of the Tribes board with its stack, bottom to top."""

    def totem(t: dict[str, Any]) -> str:
        return f"{t['seat']}:{t['size']}" if t["kind"] == "TRIBE" else str(t["kind"])

    return [
        f"space {s['space']}: " + ("/".join(totem(t) for t in s["stack"]) or "empty")
        for s in state["spaces"]
    ]


def village_checks(state: dict[str, Any]) -> list[str]:
    """Every Village family with its members and its pole."""
    return [
        f"family {f['family']}: {f['members']} members, pole {f['pole']}" for f in state["families"]
    ]


def check_page(
    run: Run,
    db: Path,
    match_id: UUID,
    events: int,
    checks: Callable[[dict[str, Any]], list[str]],
    tmp_path: Path,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Step through the page with its controls, checking each version against ``at``;
    each version's state (``at --json``) with what the page showed there."""
    page = tmp_path / "match.html"
    exported = run("export", match_id, "--html", "-o", page, db=db)
    assert exported.exit_code == 0, exported.output
    actions = actions_for(events)
    shown = drive(page, actions, tmp_path)
    versions = expected_versions(actions, events)
    assert len(shown) == len(actions)
    seen_states = []
    for action, version, seen in zip(actions, versions, shown, strict=True):
        at = run("at", match_id, version, db=db)
        state = json.loads(run("at", match_id, version, "--json", db=db).stdout)
        head, last_event, _viewer, *lines = at.stdout.splitlines()
        assert head == f"Match {match_id} at version {version} of {events}"
        where = f"after {action}, expecting version {version}"
        assert seen["current"] == f"version {version} of {events}", where
        assert seen["box"] == seen["slider"] == str(version), where
        # ``Last event: NAME, TIME UTC: SUMMARY`` in ``at``; ``NAME · TIME UTC · SUMMARY`` here.
        said = re.fullmatch(r"Last event: (\w+), (.+?) UTC: (.*)", last_event)
        assert said, last_event
        name, time, summary = said.groups()
        assert seen["event"] == f"{name} \u00b7 {time} UTC \u00b7 {summary}", where
        assert seen["lines"].splitlines() == lines, where
        assert seen["checks"] == checks(state), where
        seen_states.append((state, seen))
    return seen_states


def test_jungle_speed_page_steps_like_at(run: Run, store: Store, tmp_path: Path) -> None:
    check_page(run, store.db, store.ended.id, store.ended.version, js_checks, tmp_path)


def test_tribes_page_steps_like_at(run: Run, tmp_path: Path) -> None:
    db = tmp_path / "tribes.db"
    arena = open_store(db)
    try:
        match = store_tribes(arena, players=3, max_events=120, board_size=3)
    finally:
        arena.close()
    for state, seen in check_page(run, db, match.id, match.version, tribes_checks, tmp_path):
        # Each space shows its number, the one events and `at` name it by.
        assert seen["numbers"] == [str(s["space"]) for s in state["spaces"]]
        assert {"seat:size", "DOOM", "MINI", "green space"} <= set(seen["legend"])


def test_village_page_steps_like_at(run: Run, tmp_path: Path) -> None:
    db = tmp_path / "village.db"
    arena = open_store(db)
    try:
        match = store_village(arena, max_events=160)
    finally:
        arena.close()
    shown = [
        seen for _, seen in check_page(run, db, match.id, match.version, village_checks, tmp_path)
    ]
    # Every symbol the cottages use is in the legend (VI-1.2's kinds of people).
    symbols = {
        re.sub(r"\d+$", "", word)
        for seen in shown
        for text in seen["cottages"]
        for word in text.split(": ", 1)[1].split()
        if word != "empty"
    }
    assert len(symbols) >= 3, symbols
    for seen in shown:
        assert symbols <= set(seen["legend"]), symbols - set(seen["legend"])
        assert {"pole", "pen", "spell?", "spell!", "faded"} <= set(seen["legend"])


def test_a_game_without_a_renderer_shows_its_state_lines(
    run: Run, store: Store, tmp_path: Path
) -> None:
    page = tmp_path / "match.html"
    assert run("export", store.playing.id, "--html", "-o", page).exit_code == 0
    text = page.read_text(encoding="utf-8")
    # The same page, as if its game had no drawing of its own.
    page.write_text(text.replace('"game":"jungle_speed"', '"game":"unknown_game"', 1))
    shown = drive(page, [("click", "last")], tmp_path)
    assert shown[0]["checks"] == ["lines"]
    assert shown[0]["current"] == f"version {store.playing.version} of {store.playing.version}"


def test_the_page_loads_nothing_from_outside(run: Run, store: Store, tmp_path: Path) -> None:
    page = tmp_path / "match.html"
    assert run("export", store.ended.id, "--html", "-o", page).exit_code == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "http://" not in text and "https://" not in text
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*[a-z]*:?//""", text, re.I)
    assert not re.search(r"<(link|iframe|img|object|embed)\b", text, re.I)
    for call in ("fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "import(", "@import"):
        assert call not in text, call
    # The embedded data cannot close its script element early.
    data = text.split('<script type="application/json" id="match-data">', 1)[1]
    assert "</" not in data.split("</script>", 1)[0]


def test_export_html_to_standard_output(run: Run, store: Store) -> None:
    result = run("export", store.waiting.id, "--html")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<!DOCTYPE html>") and result.stdout.endswith("</html>\n")


#: The events ``explain`` reads as a grab race (JS-4.2, JS-5.1, JS-5.2).
RACES = ("DuelWon", "ArrowsWon", "WrongGrab", "LateGrab")


def test_js_4_2_js_5_1_each_race_shows_explains_reading(
    run: Run, store: Store, tmp_path: Path
) -> None:
    """At a version that decided a race, or is a wrong grab, the page shows that race as
    `explain --json` reads it: its title and every contender in the recorded order; at
    any other version, none."""
    match = store.ended
    page = tmp_path / "match.html"
    assert run("export", match.id, "--html", "-o", page).exit_code == 0
    events = json_lines(run("events", match.id, "--json").stdout)
    races = [e["version"] for e in events if e["name"] in RACES]
    assert races
    sections = re.findall(r'<section class="race" data-version="(\d+)"', page.read_text())
    assert sections == [str(v) for v in races]
    firsts = {e["name"]: e["version"] for e in reversed(events) if e["name"] in RACES}
    chosen = sorted(firsts.values())
    assert len(chosen) >= 2, firsts  # a won race and a wrong grab at least
    quiet = next(e["version"] for e in events if e["name"] == "Revealed")
    shown = drive(page, [("box", v) for v in [*chosen, quiet]], tmp_path)
    for version, seen in zip(chosen, shown, strict=False):
        explained = json.loads(run("explain", match.id, version, "--json").stdout)
        [race] = seen["races"]
        assert race["version"] == str(version)
        assert race["title"].endswith(explained["title"])
        rows = race["rows"]
        contenders = explained["contenders"]
        assert [(r["seat"], r["sequence"]) for r in rows] == [
            (str(c["seat"]), str(c["sequence"])) for c in contenders
        ]
        assert [r["cells"][0] for r in rows] == [c["outcome"] for c in contenders]
    assert shown[-1]["races"] == []


def verification_rows(text: str) -> dict[str, str]:
    return dict(re.findall(r'<tr data-check="([^"]+)" data-status="([^"]+)">', text))


def test_the_page_holds_what_verify_reports(run: Run, store: Store, tmp_path: Path) -> None:
    """The verification computed at export is `verify`'s: its verdict line and the status
    of each check; on a damaged store, FAILED at the version `verify` names."""
    match = store.ended
    for damaged in (False, True):
        if damaged:
            version = [
                e["version"]
                for e in json_lines(run("events", match.id, "--json").stdout)
                if e["name"] == "Revealed"
            ][4]
            state = stored_state(store.db, match.id, version)
            at = digit_offset(state, "wall_ns") + 7
            change_byte(store.db, match.id, version, at, ord("0") + (state[at] - ord("0") + 1) % 10)
        page = tmp_path / f"match-{damaged}.html"
        # A page is written all the same; export warns and exits 1 when the match fails.
        assert run("export", match.id, "--html", "-o", page).exit_code == (1 if damaged else 0)
        text = page.read_text(encoding="utf-8")
        verified = run("verify", match.id)
        report = json.loads(run("verify", match.id, "--json").stdout)
        verdict = re.search(r'<p class="verdict (\w+)">(.*?)</p>', text)
        assert verdict is not None
        assert verdict.group(1) == ("failed" if damaged else "ok")
        assert html.unescape(verdict.group(2)) == verified.stdout.splitlines()[0]
        assert verification_rows(text) == {
            name: check["status"] for name, check in report["checks"].items()
        }
        assert f'data-ok="{str(not damaged).lower()}"' in text
