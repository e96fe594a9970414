"""``export --html``: one HTML file that steps through a match, readable anywhere.

Every version's referee state view, event summary and state lines are computed here, by
the same functions as ``at`` and ``events``, and embedded as JSON; the page only draws
them, each game's board with the script and CSS its replay module gives (its entry in
:mod:`replay.games`: this module names no game). Beside them the page holds what a judge
rules on: each race's evidence as ``explain`` reads it, the verification as ``verify``
reports it when the page is made, and each event's canonical encoding with the server's
signature, which the page checks again in the browser (:mod:`replay.html_check`). The
file loads nothing from anywhere (no URL, no request): CSS and script are inline, so it
can be mailed, archived and opened offline. The referee view shows every hidden card:
give the page only to those who may see it.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from domain.kernel.match import MatchAggregate
from domain.kernel.views import Viewer
from replay import format as fmt
from replay import games, html_check, html_parts
from replay.evidence import signature_of
from replay.store import ReplayError


def frame(event: Any, match: MatchAggregate) -> dict[str, Any]:
    """What the page shows at one version: the event that led there and the state, and
    the event as it was hashed (:func:`replay.html_check.chain_entry`)."""
    name, view = games.event_view(match, event, Viewer.referee())
    state = games.state_view(match, Viewer.referee())
    return {
        "version": event.originator_version,
        "name": name,
        "time": fmt.when(event.timestamp),
        "summary": games.summary(match, name, view),
        "state": state,
        "lines": games.state_lines(match, state),
        **html_check.chain_entry(event),
    }


def page(
    steps: Iterable[tuple[Any, MatchAggregate]],
    races: Mapping[int, dict[str, Any]],
    verification: dict[str, Any],
) -> str:
    """The whole HTML file for a match's steps (each event with the state it leads to),
    ``explain``'s reading of each grab event, by version
    (:func:`replay.evidence.race_pages`), and ``verify``'s report of the match
    (:func:`replay.evidence.verification`). Each step is read as it comes: the
    aggregate is changed in place by the next event."""
    shown: list[dict[str, Any]] = []
    sections: list[str] = []
    match: MatchAggregate | None = None
    last: Any = None
    for last, match in steps:
        shown.append(frame(last, match))
        race = races.get(last.originator_version)
        if race is not None and race.get("contenders"):
            sections.append(html_parts.race_html(race))
    if match is None:
        raise ReplayError("the match has no events to show")
    signature = signature_of(last)
    ended = type(last).__name__ == "MatchEnded"
    data = {
        "match_id": str(match.id),
        "game": type(match).GAME,
        "digest": match.digest,
        "signature": signature,
        "frames": shown,
    }
    title = f"Totem Arena replay: {type(match).GAME} match {match.id}"
    return fill(
        TEMPLATE,
        TITLE=html.escape(title),
        CSS=PAGE_CSS + BOARD_CSS + html_parts.CSS,
        VERIFICATION=html_parts.verification_html(verification, WHEN),
        SIGNATURE=html_parts.signature_html(str(match.id), match.digest, signature, ended),
        RACES="".join(sections),
        JS=BOARD_SCRIPT + html_check.SCRIPT + STEP_SCRIPT,
        DATA=script_json(data),
    )


def fill(template: str, **parts: str) -> str:
    """The template with each ``@NAME@`` replaced by its part, in one pass: a part (which
    may hold stored text, such as a player's name) is never searched for another."""
    return re.sub(r"@([A-Z_]+)@", lambda found: parts[found.group(1)], template)


#: When the page's verification was computed, as its heading says it.
WHEN = "when this page was made"


def script_json(data: object) -> str:
    """JSON that cannot end its script element early: ``<`` is written as ``\\u003c``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>@CSS@</style>
</head>
<body>
<header>
  <h1 id="title"></h1>
  <p id="digest"></p>
  <section id="check" data-status="checking" aria-live="polite">
    <strong id="check-result">Checking the chain and the signature in this browser&#x2026;</strong>
    <pre id="check-detail"></pre>
  </section>
  <details id="evidence">
    <summary>Verification when this page was made, the match digest and the signature</summary>
    @VERIFICATION@
    @SIGNATURE@
  </details>
</header>
<nav id="controls">
  <button id="first" type="button" title="First version (Home)">&#x00AB; first</button>
  <button id="prev" type="button" title="Previous version (&#x2190;)">&#x25C0; previous</button>
  <input id="slider" type="range" min="1" value="1" aria-label="version">
  <button id="next" type="button" title="Next version (&#x2192;)">next &#x25B6;</button>
  <button id="last" type="button" title="Last version (End)">last &#x00BB;</button>
  <label>version <input id="version" type="number" min="1" value="1"></label>
  <span id="current"></span>
</nav>
<p id="event"></p>
<p id="frame-warning" hidden></p>
<main>
  <section id="board" aria-label="board"></section>
  <pre id="lines"></pre>
</main>
<section id="races">@RACES@</section>
<details id="hashed">
  <summary>This event as hashed (its canonical encoding, docs/audit.md)</summary>
  <p id="hashed-digest"></p>
  <pre id="canonical"></pre>
</details>
<script type="application/json" id="match-data">@DATA@</script>
<script>@JS@</script>
</body>
</html>
"""

#: The stepping page's own layout: header, controls, the check's verdict.
PAGE_CSS = """
body { font-family: system-ui, sans-serif; margin: 1em; background: #f6f4ee; color: #222; }
h1 { font-size: 1.2em; margin: 0; } #digest { font-family: monospace; font-size: .8em; }
nav { display: flex; gap: .5em; align-items: center; flex-wrap: wrap; position: sticky; top: 0;
  background: #f6f4ee; padding: .4em 0; }
#slider { flex: 1; min-width: 12em; } #version { width: 6em; }
#current { font-weight: bold; } #event { font-family: monospace; }
main { display: flex; gap: 1em; flex-wrap: wrap; align-items: flex-start; }
#board { flex: 1; min-width: 20em; } #lines { flex: 1; min-width: 20em; font-size: .8em;
  white-space: pre-wrap; background: #fff; padding: .5em; border: 1px solid #ccc; }
#check { border: 2px solid #888; border-radius: 6px; padding: .3em .5em; margin: .4em 0;
  background: #fff; }
#check[data-status="verified"] { border-color: #1e7a1e; color: #1e7a1e; }
#check[data-status="tampered"], #check[data-status="signature-fails"] { border-color: #b01010;
  color: #b01010; background: #fdecec; }
#check[data-status="unsigned"], #check[data-status="unavailable"] { border-color: #b07000; }
#check-detail { font-size: .8em; white-space: pre-wrap; overflow-wrap: anywhere; margin: .2em 0 0;
  color: #222; }
#frame-warning { color: #b01010; font-weight: bold; }
#canonical { font-size: .75em; white-space: pre-wrap; overflow-wrap: anywhere; background: #fff;
  padding: .5em; border: 1px solid #ccc; }
"""

#: The layout every game's board uses: rows of panels, whose turn it is, a legend.
SHARED_BOARD_CSS = """
.row { display: flex; gap: .6em; flex-wrap: wrap; align-items: flex-start; }
.panel { background: #fff; border: 1px solid #bbb; border-radius: 6px; padding: .5em; }
.turn { outline: 3px solid #d08000; } .finished { opacity: .5; }
.legend { font-size: .8em; display: flex; flex-wrap: wrap; gap: .2em 1em; margin: .5em 0;
  padding: .3em .5em; border: 1px dashed #a08a60; }
.legend div { display: flex; gap: .3em; align-items: center; }
.legend dt { font-weight: bold; } .legend dd { margin: 0; }
"""

#: What every game's drawing may use: ``$``, ``el``, ``seatName`` and ``legend``.
SHARED_BOARD_SCRIPT = r"""
"use strict";
const $ = (id) => document.getElementById(id);
function el(tag, cls, text, attrs) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}
function seatName(state, seat) {
  const s = (state.seats || state.families || [])[seat];
  return s && s.name ? "seat " + seat + " (" + s.name + ")" : "seat " + seat;
}
function legend(entries) {
  const box = el("dl", "legend", null, {"data-legend": ""});
  for (const [term, meaning] of entries) {
    const item = el("div");
    item.append(el("dt", "", term), el("dd", "", meaning));
    box.append(item);
  }
  return box;
}
"""


def renderers(boards: Mapping[str, str]) -> str:
    """``const RENDERERS``: each game's drawing function by game name, from the script
    its replay module gives (:attr:`replay.games.GameReplay.board_script`), which
    defines ``draw(state, board)``. Each script runs in a function scope of its own, so
    that two games' helpers never clash, whatever they are named."""
    entries = "".join(
        f"  {json.dumps(game)}: (() => {{{script}  return draw;\n}})(),\n"
        for game, script in boards.items()
    )
    return "const RENDERERS = {\n" + entries + "};"


#: The drawing of a game without its own, and ``drawFrame(game, frame, board)``, which
#: draws with the game's renderer or falls back on the state's lines, should the game
#: have none or its drawing fail.
DRAW_FRAME_SCRIPT = r"""
function generic(frame, board) {
  board.append(el("pre", "panel", frame.lines.join("\n"), {"data-check": "lines"}));
}
function drawFrame(game, frame, board) {
  board.replaceChildren();
  const draw = RENDERERS[game];
  try {
    if (draw) draw(frame.state, board); else generic(frame, board);
  } catch (err) {
    board.replaceChildren();
    generic(frame, board);
  }
}
"""

#: The boards, shared with the ruling sheet (:mod:`replay.ruling`): the layout all boards
#: use, then each game's own (:attr:`replay.games.GameReplay.board_css`).
BOARD_CSS = SHARED_BOARD_CSS + "".join(game.board_css for game in games.REPLAYS.values())

#: Draws one frame's state: ``drawFrame(game, frame, board)``, for every page; each game
#: drawn by its own script, as its entry in :mod:`replay.games` gives it.
BOARD_SCRIPT = (
    SHARED_BOARD_SCRIPT
    + renderers(
        {name: game.board_script for name, game in games.REPLAYS.items() if game.board_script}
    )
    + DRAW_FRAME_SCRIPT
)

#: The stepping page: controls, the race evidence and the event as hashed of each
#: version, and the check of the whole chain once loaded.
STEP_SCRIPT = r"""
const DATA = JSON.parse(document.getElementById("match-data").textContent);
const FRAMES = DATA.frames;
let index = 0;
let firstBad = null;
function show(i) {
  index = Math.max(0, Math.min(FRAMES.length - 1, i));
  const f = FRAMES[index];
  $("slider").value = String(f.version);
  $("version").value = String(f.version);
  $("current").textContent = "version " + f.version + " of " + FRAMES.length;
  $("event").textContent = f.name + " \u00B7 " + f.time + " UTC \u00B7 " + f.summary;
  $("lines").textContent = f.lines.join("\n");
  drawFrame(DATA.game, f, $("board"));
  for (const race of document.querySelectorAll("#races .race")) {
    race.hidden = race.getAttribute("data-version") !== String(f.version);
  }
  $("hashed-digest").textContent = "digest " + f.digest;
  $("canonical").textContent = f.canonical;
  const warn = $("frame-warning");
  warn.hidden = firstBad === null || f.version < firstBad;
  warn.textContent = warn.hidden ? "" : "Version " + f.version + " is at or after the first " +
    "bad version, " + firstBad + ": the chain does not prove what it shows.";
}
function goTo(version) {
  const v = parseInt(version, 10);
  if (!Number.isNaN(v)) show(FRAMES.findIndex((f) => f.version >= v) >= 0 ?
    FRAMES.findIndex((f) => f.version >= v) : FRAMES.length - 1);
}
$("title").textContent = "Totem Arena \u2014 " + DATA.game + " match " + DATA.match_id;
$("digest").textContent = "match digest " + DATA.digest;
$("slider").max = String(FRAMES[FRAMES.length - 1].version);
$("version").max = String(FRAMES[FRAMES.length - 1].version);
$("first").addEventListener("click", () => show(0));
$("prev").addEventListener("click", () => show(index - 1));
$("next").addEventListener("click", () => show(index + 1));
$("last").addEventListener("click", () => show(FRAMES.length - 1));
$("slider").addEventListener("input", (e) => goTo(e.target.value));
$("version").addEventListener("change", (e) => goTo(e.target.value));
document.addEventListener("keydown", (e) => {
  if (e.target && e.target.tagName === "INPUT" && e.target.type === "number") return;
  const moves = {ArrowLeft: index - 1, ArrowRight: index + 1, Home: 0, End: FRAMES.length - 1};
  if (e.key in moves) { e.preventDefault(); show(moves[e.key]); }
});
const start = /v=(\d+)/.exec(location.hash);
if (start) goTo(start[1]); else show(0);
runCheck(DATA, (bad) => { firstBad = bad; show(index); });
"""
