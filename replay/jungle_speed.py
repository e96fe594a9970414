"""Jungle Speed in the replay tool: event summaries, the state as text, the deal check,
and (from :mod:`replay.jungle_speed_explain`) what ``explain`` and ``disputes`` read of
its grab races."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from domain.jungle_speed import JungleSpeed, Options
from domain.jungle_speed.match import deal_piles, recycle_orders, shuffled_deck
from domain.kernel.randomness import effective_seed
from replay import format as fmt
from replay import jungle_speed_explain
from replay.draws import Carried, timeline
from replay.ties import check_ties, tie_of

#: The rule of simultaneous grabs, whose winner is drawn (JS-4.2a).
TIE_RULE = "JS-4.2a"


def card(match: JungleSpeed, data: dict[str, Any]) -> str:
    """A card of a view (a dict with its id) as the deck names it."""
    return str(match.card(int(data["id"])))


def cards(match: JungleSpeed, items: Sequence[dict[str, Any]]) -> str:
    return ", ".join(card(match, c) for c in items) if items else "none"


def summarise(match: JungleSpeed, name: str, view: dict[str, Any]) -> str | None:
    """One line saying what a (referee-view) event did, or None for the fallback."""
    stamp = fmt.stamp(fmt.received(view.get("stamp")))
    text: str
    if name == "Created":
        o = view["options"]
        text = (
            f"{o['variant']} for up to {o['max_players']} players, "
            f"turn timer {o['turn_timeout_ms']} ms, min reveal interval "
            f"{o['min_reveal_interval_ms']} ms, specials {o['inward_arrows']} inward / "
            f"{o['outward_arrows']} outward / {o['coloured_arrows']} coloured"
        )
        if o.get("prearranged"):
            text += ", prearranged deal"
        text += f"; seed commitment {fmt.short(view['seed_commitment'])}"
        if view.get("seed"):
            text += f", seed {fmt.short(view['seed'])}"
    elif name == "Dealt":
        counts = view["face_down_counts"]
        each = ", ".join(f"{fmt.seat(match, s)} {n}" for s, n in enumerate(counts))
        text = f"{sum(counts) + len(view['pot'])} cards dealt face down: {each}"
        text += f"; pot: {cards(match, view['pot'])}; {fmt.seat(match, view['first_turn'])} first"
    elif name == "Revealed":
        text = f"{fmt.seat(match, view['seat'])} reveals {card(match, view['card'])}"
        if view.get("cause") == "timeout":
            text += " (turn timer)"
    elif name == "OutwardReveal":
        shown = "; ".join(
            f"{fmt.seat(match, r['seat'])} {card(match, r['card'])}" for r in view["reveals"]
        )
        text = f"outward arrows of {fmt.seat(match, view['triggered_by'])}: all reveal: {shown}"
    elif name == "DuelWon":
        text = (
            f"{fmt.seat(match, view['winner'])} wins the duel against "
            f"{fmt.seats(match, view['losers'])}"
        )
        if view.get("annulled"):
            text += f"; other duels annulled ({fmt.seats(match, view['annulled'])})"
        if view.get("arrows_annulled"):
            text += "; arrows race annulled"
        text += tie_text(match, view)
    elif name == "ArrowsWon":
        text = f"{fmt.seat(match, view['winner'])} wins the arrows race"
        if view.get("annulled"):
            text += f"; duels annulled ({fmt.seats(match, view['annulled'])})"
        text += tie_text(match, view)
    elif name == "WrongGrab":
        text = (
            f"{fmt.seat(match, view['seat'])} grabs wrongly: takes every face-up pile and the pot"
        )
    elif name == "LateGrab":
        text = (
            f"{fmt.seat(match, view['seat'])} grabs late: the race was decided at version "
            f"{view['decided_at_version']}"
        )
    elif name == "PilesRecycled":
        text = "turn timer, nobody can reveal: face-up piles shuffled and turned over"
    elif name == "PlayerFinished":
        text = f"{fmt.seat(match, view['seat'])} finishes {fmt.ordinal(view['place'])}"
    else:
        return None
    return f"{text} {stamp}".rstrip()


def tie_text(match: JungleSpeed, view: dict[str, Any]) -> str:
    """What a summary adds for a race won by a draw among simultaneous grabs (JS-4.2a):
    the window, each contender in receive order (its seat, target, receive number and
    µs after the first) and the one drawn; empty for a race won alone."""
    tie = tie_of(view)
    if tie is None:
        return ""
    shown = []
    for index, entry in enumerate(tie.contenders):
        number = f", in match #{entry.receive}" if entry.receive else ""
        what = "drawn" if index == tie.drawn else "lost the draw"
        shown.append(
            f"{fmt.seat(match, entry.seat)} (target {entry.target or 'default'}{number}) "
            f"+{tie.after_first_us(entry):g} µs: {what}"
        )
    return (
        f"; {TIE_RULE} tie within {tie.window_us} µs, contender {tie.drawn} of "
        f"{len(tie.contenders)} drawn: {'; '.join(shown)}"
    )


def state_lines(match: JungleSpeed, view: dict[str, Any]) -> list[str]:
    """A state view (any viewer's) as text; shows only what the view holds."""
    options = view["options"]
    lines = [f"Jungle Speed {options['variant']}, status {match.status.value}"]
    turn = view.get("turn")
    lines.append(f"Turn: {'nobody' if turn is None else fmt.seat(match, turn)}")
    for s in view["seats"]:
        head = f"{fmt.seat(match, s['seat'])}: {s['face_down_count']} face down, "
        head += f"{s['face_up_count']} face up"
        if s["finished"]:
            place = getattr(match, "places", {}).get(s["seat"])
            head += ", finished" + (f" {fmt.ordinal(place)}" if place else "")
        lines.append(head)
        if "face_down" in s:
            lines.append(f"  face down (top first): {cards(match, s['face_down'])}")
        elif s["face_down_count"]:
            lines.append(f"  face down: {s['face_down_count']} cards, hidden from this viewer")
        lines.append(f"  face up (bottom first): {cards(match, s['face_up'])}")
    lines.append(f"Pot ({len(view['pot'])}): {cards(match, view['pot'])}")
    duels = [fmt.seats(match, d["seats"]) for d in view["open_duels"]]
    lines.append(f"Open duels: {'; '.join(duels) if duels else 'none'}")
    lines.append(f"Arrows race: {'open' if view['arrows_race_open'] else 'none'}")
    if view.get("coloured_mode"):
        lines.append("Duels match by colour (coloured arrows)")
    if view.get("turn_deadline_ms"):
        due = datetime.fromtimestamp(view["turn_deadline_ms"] / 1000, UTC)
        lines.append(f"Turn timer due at {fmt.when(due)} UTC")
    lines.append(f"Seed commitment: {view['seed_commitment']}")
    if view.get("seed"):
        lines.append(f"Seed: {view['seed']}")
    return lines


def check_draws(
    events: Sequence[tuple[int, str, dict[str, Any]]],
    carried: Carried | None = None,
) -> tuple[list[tuple[int, str]], list[str]]:
    """Re-derive the random draws from the revealed seed and the entropies (JS-9.1):
    the deal (JS-2.1), every recycling of the piles (JS-3.4) and the draw of every tie
    between simultaneous grabs (JS-4.2a, :mod:`replay.ties`), whose contenders and
    winner are checked even before the seed is revealed.

    ``events`` are ``(version, name, fields)`` of one whole match, in order. For a fork,
    ``carried`` is what its ``Forked`` carries (:mod:`replay.draws`): the deal and the
    recyclings in it are the origin's, and the fork's recyclings continue their count
    (the fork's first has the stream of the origin's next). Returns the problems found,
    each at a version, and notes on what was or could not be checked.
    """
    events, first = timeline(events, carried)
    created = events[0][2]
    dealt = next(((i, v, d) for i, (v, n, d) in enumerate(events) if n == "Dealt"), None)
    ended = next(((v, d) for v, n, d in events if n == "MatchEnded"), None)
    if dealt is None:
        return [], ["no deal yet: no random draw to check"]
    at, version, deal = dealt
    own_deal = at >= first  # not carried from the origin
    joined = [d for i, (_, n, d) in enumerate(events) if n == "PlayerJoined" and i < at]
    problems: list[tuple[int, str]] = []
    if own_deal and deal.get("seats") != len(joined):
        problems.append(
            (version, f"the deal is for {deal.get('seats')} seats but {len(joined)} joined")
        )
    if own_deal and deal.get("down") is not None:
        problems += _check_piles(created, version, deal)
    if ended is None:
        if own_deal:
            problems += _check_prearranged(created, version, deal)
        tied, tie_notes = _check_ties(events, first, created, None)
        secret = "seed not revealed yet: the draws cannot be re-derived until the end"
        return problems + tied, [secret, *tie_notes]
    try:
        seed = bytes.fromhex(ended[1]["seed"])
        if carried is None:
            entropies = [bytes.fromhex(created["entropy"])]
            entropies += [bytes.fromhex(d["entropy"]) for d in joined]
        else:
            entropies = list(carried.entropies)
    except (KeyError, TypeError, ValueError) as exc:
        at_version = version if own_deal else ended[0]
        problems.append((at_version, f"the seed or an entropy is not readable hex: {exc}"))
        return problems, []
    match_seed = effective_seed(seed, entropies)
    found: list[tuple[int, str]] = []
    notes: list[str] = []
    if own_deal:
        found, notes = _check_deal(created, version, deal, match_seed, len(entropies))
    recycled = [(i, v, d) for i, (v, n, d) in enumerate(events) if n == "PilesRecycled"]
    for index, (i, at_version, fields) in enumerate(recycled):
        if i < first:
            continue
        orders = [list(o) for o in fields["orders"]]
        if orders != recycle_orders(match_seed, index, [len(o) for o in orders]):
            found.append(
                (
                    at_version,
                    f"recycling {index} of the piles is not the shuffle re-derived from the seed",
                )
            )
    origin = sum(i < first for i, _, _ in recycled)
    if carried is not None:
        notes.append(
            f"{len(recycled) - origin} recyclings of the piles after the fork re-derived from "
            f"its revealed seed, counted on from the origin's {origin}"
        )
    elif recycled:
        notes.append(f"{len(recycled)} recyclings of the piles re-derived from the revealed seed")
    tied, tie_notes = _check_ties(events, first, created, match_seed)
    return problems + found + tied, notes + tie_notes


def _check_ties(
    events: Sequence[tuple[int, str, dict[str, Any]]],
    first: int,
    created: dict[str, Any],
    match_seed: bytes | None,
) -> tuple[list[tuple[int, str]], list[str]]:
    """Every tie of simultaneous grabs recorded from position ``first`` on (JS-4.2a),
    against the tie windows the match's options record (0, absent, in a match created
    before the windows existed)."""
    options = created.get("options") or {}
    windows = (int(options.get("tie_window_us", 0)), int(options.get("call_tie_window_us", 0)))
    return check_ties(
        events, first, match_seed, game=JungleSpeed.GAME, rule=TIE_RULE, windows=windows
    )


def _check_piles(
    created: dict[str, Any], version: int, deal: dict[str, Any]
) -> list[tuple[int, str]]:
    """The piles a ``Dealt`` records are the deal of the deck it records (JS-2.1)."""
    ru = Options.from_dict(dict(created["options"])).variant == "RU"
    down, pot = deal_piles(list(deal["deck"]), int(deal["seats"]), ru)
    if [list(p) for p in deal["down"]] != down or list(deal.get("pot") or []) != pot:
        return [(version, "the recorded piles are not the deal of the recorded deck (JS-2.1)")]
    return []


def _check_prearranged(
    created: dict[str, Any], version: int, deal: dict[str, Any]
) -> list[tuple[int, str]]:
    deal_given = created["options"].get("prearranged_deal")
    if deal_given is not None and list(deal["deck"]) != list(deal_given):
        return [(version, "the recorded deck is not the prearranged deal of the match options")]
    return []


def _check_deal(
    created: dict[str, Any],
    version: int,
    deal: dict[str, Any],
    match_seed: bytes,
    contributions: int,
) -> tuple[list[tuple[int, str]], list[str]]:
    options = Options.from_dict(dict(created["options"]))
    recorded = list(deal["deck"])
    if options.prearranged_deal is not None:
        found = _check_prearranged(created, version, deal)
        note = "deal prearranged in the options (JS-2.4): the recorded deck is that deal"
        return found, [] if found else [note]
    derived = shuffled_deck(match_seed, len(options.deck()))
    if recorded != derived:
        at = next(
            (i for i, (a, b) in enumerate(zip(recorded, derived, strict=False)) if a != b),
            min(len(recorded), len(derived)),
        )
        reason = (
            "the recorded deck is not the shuffle re-derived from the revealed seed and "
            f"the entropies (first difference at position {at} of {len(derived)})"
        )
        return [(version, reason)], []
    return [], [
        f"deal re-derived from the revealed seed and {contributions} entropies: "
        "matches the recorded deck"
    ]


#: The game as the tool names it to a person (``step --help``, ``disputes``).
TITLE = "Jungle Speed"

#: Kinds of event for ``step``'s ``next KIND``.
STEP_KINDS: dict[str, tuple[str, ...]] = {
    "reveal": ("Revealed", "OutwardReveal"),
    "duel": ("DuelWon",),
    "arrows": ("ArrowsWon",),
    "grab": ("DuelWon", "ArrowsWon", "WrongGrab", "LateGrab"),
    "wrong": ("WrongGrab",),
    "late": ("LateGrab",),
    "recycle": ("PilesRecycled",),
    "finish": ("PlayerFinished",),
}
#: What ``step --help`` says of a kind beside its name.
STEP_KIND_NOTES = {"grab": "any grab"}

#: ``explain``'s hook and the grab races ``explain`` and ``disputes`` read, kept in a
#: module of their own for their length (the reading of a race's opening is long).
explain = jungle_speed_explain.explain
RACES = jungle_speed_explain.RACES


# ---- the HTML pages' board (:mod:`replay.html`) -----------------------------------

#: The CSS of the classes :data:`BOARD_SCRIPT` draws with.
BOARD_CSS = """
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
"""

#: Draws a referee state view of the game on the HTML pages: defines
#: ``draw(state, board)``, run in a scope of its own, with the pages' helpers
#: (``el``, ``seatName``, ``legend``: :data:`replay.html.SHARED_BOARD_SCRIPT`).
BOARD_SCRIPT = r"""
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
function draw(state, board) {
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
"""
