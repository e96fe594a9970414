"""``export --html``: one HTML file that steps through a match, readable anywhere.

Every version's referee state view, event summary and state lines are computed here, by
the same functions as ``at`` and ``events``, and embedded as JSON; the page only draws
them. Beside them the page holds what a judge rules on: each race's evidence as
``explain`` reads it, the verification as ``verify`` reports it when the page is made,
and each event's canonical encoding with the server's signature, which the page checks
again in the browser (:mod:`replay.html_check`). The file loads nothing from anywhere
(no URL, no request): CSS and script are inline, so it can be mailed, archived and
opened offline. The referee view shows every hidden card: give the page only to those
who may see it.
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

#: The boards, shared with the ruling sheet (:mod:`replay.ruling`).
BOARD_CSS = """
.row { display: flex; gap: .6em; flex-wrap: wrap; align-items: flex-start; }
.panel { background: #fff; border: 1px solid #bbb; border-radius: 6px; padding: .5em; }
.turn { outline: 3px solid #d08000; } .finished { opacity: .5; }
.card { display: inline-flex; flex-direction: column; align-items: center; justify-content: center;
  width: 5.6em; height: 6em; border: 3px solid #555; border-radius: 6px; background: #fff;
  font-size: .75em; text-align: center; vertical-align: top; }
.card .glyph { font-size: 2em; } .card.back { background: repeating-linear-gradient(45deg,
  #345 0 6px, #567 6px 12px); color: #fff; font-weight: bold; }
.card.GREEN { border-color: #2a8a2a; color: #2a8a2a; } .card.YELLOW { border-color: #c9a400;
  color: #9a7d00; } .card.ORANGE { border-color: #e06a00; color: #c05a00; }
.card.PURPLE { border-color: #7a3aa8; color: #7a3aa8; } .card.arrows { border-color: #222; }
.card.empty { border-style: dashed; color: #999; }
.totem { width: 5em; height: 5em; border-radius: 50%; background: radial-gradient(#c48a4a,
  #7a4a1a); color: #fff; display: flex; align-items: center; justify-content: center;
  font-weight: bold; text-align: center; font-size: .8em; }
.grid { display: grid; gap: 3px; } .space { background: #e8dcc0; border: 1px solid #a08a60;
  min-height: 4.5em; padding: 2px; display: flex; flex-direction: column-reverse;
  justify-content: flex-start; align-items: center; font-size: .75em; }
.space.salvation { background: #cfe8c8; } .chip { border-radius: 4px; padding: 0 .3em;
  margin: 1px; color: #fff; font-weight: bold; }
.chip.DOOM { background: #222; } .chip.MINI { background: #888; }
.s0 { background: #c0392b; } .s1 { background: #2471a3; } .s2 { background: #1e8449; }
.s3 { background: #b7950b; } .s4 { background: #7d3c98; } .s5 { background: #ca6f1e; }
.cottage { display: inline-block; border: 1px solid #a08a60; background: #f3ead8;
  border-radius: 4px 4px 0 0; padding: .3em; margin: .2em; min-width: 8em; font-size: .8em; }
.pole { display: inline-flex; gap: 2px; vertical-align: middle; }
.pole i { width: .8em; height: 1.2em; background: #ddd; border: 1px solid #999; }
.pole i.on { background: #8a5a2a; }
.space { position: relative; padding-top: 1.1em; }
.space .num { position: absolute; top: 1px; left: 3px; font-size: .9em; color: #6a5a3a; }
.legend { font-size: .8em; display: flex; flex-wrap: wrap; gap: .2em 1em; margin: .5em 0;
  padding: .3em .5em; border: 1px dashed #a08a60; }
.legend div { display: flex; gap: .3em; align-items: center; }
.legend dt { font-weight: bold; } .legend dd { margin: 0; }
"""

#: Draws one frame's state: ``drawFrame(game, frame, board)``, for every page.
BOARD_SCRIPT = r"""
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

const GLYPHS = {STAR: "\u2605", CROSS: "\u271A", RING: "\u25CE", WAVE: "\u2248",
  LEAF: "\u2766", KNOT: "\u221E"};
const ARROWS = {INWARD_ARROWS: "\u2192\u2190", OUTWARD_ARROWS: "\u2190\u2192",
  COLOURED_ARROWS: "\u2194"};
function card(c) {
  if (!c) return el("div", "card empty", "none");
  if (c.kind === "SYMBOL") {
    const node = el("div", "card " + c.colour, null, {title: "#" + c.id});
    node.append(el("span", "glyph", GLYPHS[c.shape.split("_")[0]] || "?"),
      el("span", "", c.shape.toLowerCase().replace("_", " ")),
      el("span", "", "#" + c.id + " " + c.colour.toLowerCase()));
    return node;
  }
  const node = el("div", "card arrows", null, {title: "#" + c.id});
  node.append(el("span", "glyph", ARROWS[c.kind] || "?"),
    el("span", "", c.kind.toLowerCase().replace("_", " ")), el("span", "", "#" + c.id));
  return node;
}
function jungleSpeed(state, board) {
  const seats = el("div", "row");
  for (const s of state.seats) {
    const top = s.face_up.length ? s.face_up[s.face_up.length - 1] : null;
    const check = "seat " + s.seat + ": " + s.face_down_count + " down, " + s.face_up_count +
      " up, top " + (top ? "#" + top.id : "none");
    const cls = "panel" + (state.turn === s.seat ? " turn" : "") + (s.finished ? " finished" : "");
    const panel = el("div", cls, null, {"data-check": check});
    panel.append(el("div", "", seatName(state, s.seat) + (s.finished ? " \u2014 finished" : "")));
    const pile = el("div", "card back", s.face_down_count + "\u00A0down");
    panel.append(pile, card(top), el("div", "", s.face_up_count + " face up"));
    seats.append(panel);
  }
  const middle = el("div", "row");
  const totem = el("div", "totem", "totem\u00A0\u00B7 pot " + state.pot.length,
    {"data-check": "pot " + state.pot.length});
  middle.append(totem);
  const notes = [];
  if (state.open_duels && state.open_duels.length) {
    notes.push("open duels: " + state.open_duels.map((d) => d.join(" vs ")).join("; "));
  }
  if (state.arrows_race_open) notes.push("inward-arrows race open");
  if (state.coloured_mode) notes.push("duels match by colour");
  middle.append(el("div", "panel", notes.join(" \u00B7 ") || "no race open"));
  board.append(seats, el("hr"), middle);
}

function totemText(t) {
  if (t.kind === "TRIBE") return t.seat + ":" + t.size;
  return t.kind;
}
function chip(t) {
  return el("span", "chip " + (t.kind === "TRIBE" ? "s" + t.seat : t.kind), totemText(t));
}
function tribes(state, board) {
  const n = state.board_size;
  const grid = el("div", "grid");
  grid.style.gridTemplateColumns = "repeat(" + n + ", minmax(4em, 1fr))";
  for (const sp of state.spaces) {
    const stack = sp.stack || (sp.top ? [sp.top] : []);
    const check = "space " + sp.space + ": " + (stack.map(totemText).join("/") || "empty");
    const cell = el("div", "space" + (sp.salvation ? " salvation" : ""), null,
      {"data-check": check, title: "space " + sp.space + (sp.salvation ? ", Salvation" : "")});
    cell.append(el("span", "num", sp.space));
    for (const t of stack) cell.append(chip(t));
    grid.append(cell);
  }
  const seats = el("div", "row");
  for (const s of state.seats) {
    const panel = el("div", "panel" + (state.turn === s.seat ? " turn" : ""));
    panel.append(el("span", "chip s" + s.seat, seatName(state, s.seat)),
      el("div", "", "card " + (s.card === undefined || s.card === null ? "hidden" : s.card) +
        ", mat " + (s.mat || []).join(" ") + ", badges " + ((s.badges || []).join(", ") ||
        "none")));
    seats.append(panel);
  }
  const info = [];
  if (state.die) info.push("die: " + state.die);
  if (state.lifted) info.push("lifted: " + totemText(state.lifted.totem));
  if (state.beside && state.beside.length) {
    info.push("beside the board: " + state.beside.map(totemText).join(", "));
  }
  board.append(grid, seats, el("p", "", info.join(" \u00B7 ")), legend([
    ["0, 1, 2\u2026", "the space's number, as the events name it (row by row from the top left)"],
    ["seat:size", "a tribe totem: its seat (colour) and its size"],
    ["DOOM", "the Doom totem"], ["MINI", "the Mini-Totem of Chaos"],
    ["green space", "a Salvation Space"],
    ["stack", "the referee sees each stack whole: its bottom totem lowest, its top highest"],
  ]));
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

const KINDS = ["girl", "boy", "young_woman", "young_man", "mature_woman", "mature_man", "elder"];
const SHORT = {girl: "g", boy: "b", young_woman: "yw", young_man: "ym", mature_woman: "mw",
  mature_man: "mm", elder: "E"};
function people(counts) {
  return KINDS.filter((k) => counts[k]).map((k) => SHORT[k] + counts[k]).join(" ") || "empty";
}
function village(state, board) {
  const row = el("div", "row");
  const spells = state.board || [];
  for (const f of state.families) {
    const check = "family " + f.family + ": " + f.members + " members, pole " + f.pole;
    const cls = "panel" + (f.wiped_out ? " finished" : "");
    const panel = el("div", cls, null, {"data-check": check});
    panel.append(el("div", "", "family " + f.family + " \u2014 seat " + f.seat + " (" +
      f.name + "): " + f.members + " members, pen " + f.birds + " birds"));
    const pole = el("span", "pole", null, {title: "pole " + f.pole});
    for (let i = 0; i < 6; i++) pole.append(el("i", i < f.pole ? "on" : ""));
    panel.append(el("span", "", "pole "), pole, el("span", "", " " + f.pole + "/6"));
    f.cottages.forEach((c, i) => {
      const here = spells.filter((s) => s.family === f.family && s.cottage === i)
        .map((s) => (s.spell || "?") + (s.revealed ? "!" : "?"));
      const box = el("div", "cottage", null, {title: "cottage " + i});
      box.append(el("div", "", "cottage " + i + ": " + people(c)));
      if (here.length) box.append(el("div", "", "spells: " + here.join(", ")));
      panel.append(box);
    });
    if (f.unhoused && people(f.unhoused) !== "empty") {
      panel.append(el("div", "", "unhoused: " + people(f.unhoused)));
    }
    row.append(panel);
  }
  const phase = "round " + state.round + ", phase " + state.phase +
    (state.phase_name ? " (" + state.phase_name + ")" : "");
  board.append(el("p", "", phase), row, legend([
    ["g", "girls"], ["b", "boys"], ["yw", "young women"], ["ym", "young men"],
    ["mw", "mature women"], ["mm", "mature men"], ["E", "elders"],
    ["g2 yw1", "how many of each live in a cottage: two girls, one young woman"],
    ["pole", "the family's totem pole: the filled pieces are built, of 6"],
    ["pen", "the family's birds"],
    ["spell?", "a spell placed face down (the referee sees which)"],
    ["spell!", "a spell its owner revealed"],
    ["?", "a face-down spell this view does not show"],
    ["faded", "a family wiped out"],
    ["unhoused", "members not yet placed in a cottage"],
  ]));
}

function generic(frame, board) {
  board.append(el("pre", "panel", frame.lines.join("\n"), {"data-check": "lines"}));
}
const RENDERERS = {jungle_speed: jungleSpeed, tribes: tribes, village: village};
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
