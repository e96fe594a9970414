"""Tribes in the replay tool: event summaries, the board as a grid, the draws check,
and what ``explain`` says of a round won or drawn and of a line a lift revealed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from domain.kernel.randomness import effective_seed
from domain.tribes import Options, Tribes
from domain.tribes.match import BY_REVEALED, DRAWN_PASSES, die_roll, truth_cards, turn_order
from replay import format as fmt
from replay.draws import Carried, timeline
from replay.explain_rules import Context, Explanation

FACE_WORDS = {
    "blank": "blank (a normal turn)",
    "large": "the large totem (the Great Totem of Doom must move)",
    "small": "the small totem (the Mini-Totem of Chaos must move)",
}


def totem(data: dict[str, Any] | None) -> str:
    """A totem of a view: ``seat 1's 4``, ``the Doom``, ``the Mini``."""
    if data is None:
        return "nothing"
    if data["kind"] == "DOOM":
        return "the Doom"
    if data["kind"] == "MINI":
        return "the Mini"
    return f"seat {data['seat']}'s {data['size']}"


def _own(data: dict[str, Any], seat: int) -> str:
    """A totem moved by ``seat``: ``its 4`` when it is the seat's own."""
    if data["kind"] == "TRIBE" and data["seat"] == seat:
        return f"its {data['size']}"
    return totem(data)


def cell(data: dict[str, Any]) -> str:
    """A totem in a grid cell: ``1:4`` (seat 1's size 4), ``DOOM``, ``MINI``."""
    if data["kind"] == "TRIBE":
        return f"{data['seat']}:{data['size']}"
    return str(data["kind"])


def line(spaces: Sequence[int]) -> str:
    return "-".join(str(s) for s in spaces)


def summarise(match: Tribes, name: str, view: dict[str, Any]) -> str | None:
    """One line saying what a (referee-view) event did, or None for the fallback."""
    stamp = fmt.stamp(fmt.received(view.get("stamp")))
    text: str
    if name == "Created":
        text = _options_text(view["options"])
        text += f"; seed commitment {fmt.short(view['seed_commitment'])}"
        if view.get("seed"):
            text += f", seed {fmt.short(view['seed'])}"
    elif name == "Started":
        size = view["board_size"]
        text = f"play begins on a {size}×{size} board"
        if view["salvation_spaces"]:
            text += f", Salvation Spaces {', '.join(map(str, view['salvation_spaces']))}"
    elif name == "RoundStarted":
        cards = ", ".join(f"{fmt.seat(match, s)} {c}" for s, c in enumerate(view["cards"]))
        order = fmt.seats(match, view["order"])
        text = f"round {view['round']}: Cards of Truth {cards}; order {order}"
    elif name == "DieRolled":
        text = f"{fmt.seat(match, view['seat'])} rolls {FACE_WORDS.get(view['face'], view['face'])}"
    elif name == "Lifted":
        text = (
            f"{fmt.seat(match, view['seat'])} lifts {_own(view['totem'], view['seat'])} from "
            f"space {view['space']}, "
        )
        if view["uncovered"] is None:
            text += "leaving it empty"
        else:
            text += f"uncovering {totem(view['uncovered'])}"
        if view["revealed_lines"]:
            lines = ", ".join(line(x) for x in view["revealed_lines"])
            rival = view["uncovered"]["seat"]
            text += f": it completes {fmt.seat(match, rival)}'s line {lines}"
        if view["cause"] == "timeout":
            text += " (turn timer)"
    elif name == "Placed":
        origin = "its mat" if view["origin"] is None else f"space {view['origin']}"
        if view["totem"]["kind"] != "TRIBE" and view["origin"] is None:
            origin = "beside the board"
        text = (
            f"{fmt.seat(match, view['seat'])} places {_own(view['totem'], view['seat'])} from "
            f"{origin} on space {view['destination']}"
        )
        if view["covered"] is not None:
            text += f", covering {totem(view['covered'])}"
        if view["badge"]:
            text += f", naming {view['badge']}"
        if view["cause"] == "timeout":
            text += " (turn timer)"
    elif name == "Passed":
        text = f"{fmt.seat(match, view['seat'])} has no legal move and passes"
    elif name == "RoundWon":
        lines = ", ".join(line(x) for x in view["lines"])
        how = "an opponent's move revealed their line" if view["by"] == BY_REVEALED else "line"
        text = f"round {view['round']} won by {fmt.seat(match, view['winner'])} ({how} {lines})"
        if view["feathers"]:
            text += ": takes the Feathers of Greatness"
        else:
            text += f": takes the {view['badge']} badge"
    elif name == "RoundDrawn":
        why = "every player passed" if view["reason"] == DRAWN_PASSES else "the move limit"
        text = f"round {view['round']} drawn ({why}): no badge"
    elif name == "Penalised":
        text = (
            f"the referee penalises {fmt.seat(match, view['seat'])} for coaching: its Grand "
            f"Chief leaves the game from round {view['from_round']}"
        )
    else:
        return None
    return f"{text} {stamp}".rstrip()


def _options_text(o: dict[str, Any]) -> str:
    board = f"{o['board_size']}×{o['board_size']}" if o["board_size"] else "sized by players"
    text = (
        f"{'extended' if o['extended'] else 'base'} game for up to {o['max_players']} players, "
        f"board {board}, turn timer {o['turn_timeout_ms']} ms, round move limit "
        f"{o['round_move_limit']}"
    )
    if o["extended"]:
        text += f", die {'/'.join(o['dice_faces'])}"
        salvation = o["salvation_spaces"]
        text += ", Salvation Spaces " + (
            "the corners" if salvation is None else ", ".join(map(str, salvation)) or "none"
        )
    if o.get("prearranged"):
        text += ", prearranged draws"
    return text


def state_lines(match: Tribes, view: dict[str, Any]) -> list[str]:
    """A state view (any viewer's) as text: the board as a grid (each stack top first
    when the view holds whole stacks), the mats, badges and the die."""
    options = view["options"]
    lines = [
        f"Tribes {'extended' if options['extended'] else 'base'}, status {match.status.value}, "
        f"round {view['round']}"
    ]
    turn = view.get("turn")
    head = f"Turn: {'nobody' if turn is None else fmt.seat(match, turn)}"
    if view["die"]:
        head += f"; die: {FACE_WORDS.get(view['die'], view['die'])}"
    lines.append(head)
    lifted = view.get("lifted")
    if lifted is not None:
        text = f"Lifted: {totem(lifted['totem'])} from space {lifted['origin']}"
        if lifted["revealed_lines"]:
            text += "; revealed lines " + ", ".join(line(x) for x in lifted["revealed_lines"])
        lines.append(text)
    lines += _grid(view)
    for s in view["seats"]:
        text = f"{fmt.seat(match, s['seat'])}: card {s['card'] or '-'}, mat "
        text += " ".join(map(str, s["mat"])) if s["mat"] else "empty"
        text += ", badges " + (", ".join(s["badges"]) if s["badges"] else "none")
        if s["chief_removed"]:
            text += "; Grand Chief out of the game (coaching)"
        elif s["penalised"]:
            text += "; penalised for coaching (its Grand Chief leaves next round)"
        lines.append(text)
    if options["extended"]:
        beside = ", ".join(totem(t) for t in view["beside"]) or "nothing"
        lines.append(f"Beside the board: {beside}")
    lines.append(
        f"Moves this round: {view['moves']} of {options['round_move_limit']}; "
        f"passes in a row: {view['passes']}"
    )
    if view.get("turn_deadline_ms"):
        due = datetime.fromtimestamp(view["turn_deadline_ms"] / 1000, UTC)
        lines.append(f"Turn timer due at {fmt.when(due)} UTC")
    lines.append(f"Seed commitment: {view['seed_commitment']}")
    if view.get("seed"):
        lines.append(f"Seed: {view['seed']}")
    return lines


def _grid(view: dict[str, Any]) -> list[str]:
    size = view["board_size"]
    if not size:
        return ["Board: not set up yet"]
    whole = any("stack" in s for s in view["spaces"])
    cells = []
    for space in view["spaces"]:
        if whole:
            text = "/".join(cell(t) for t in reversed(space["stack"])) or "."
        else:
            text = cell(space["top"]) if "top" in space else "."
        cells.append(text + ("*" if space["salvation"] else ""))
    width = max(3, *(len(c) for c in cells))
    what = "each stack top to bottom" if whole else "the top of each stack"
    out = [f"Board {size}×{size} ({what}, / between totems; seat:size, * a Salvation Space):"]
    out.append("     " + " ".join(f"{c:^{width}}" for c in range(size)))
    for row in range(size):
        row_cells = cells[row * size : (row + 1) * size]
        out.append(f"  {row:>2} " + " ".join(f"{c:^{width}}" for c in row_cells))
    return out


def check_draws(
    events: Sequence[tuple[int, str, dict[str, Any]]],
    carried: Carried | None = None,
) -> tuple[list[tuple[int, str]], list[str]]:
    """Re-derive the Cards of Truth of every round (TR-2.1) and every die roll (TR-5.1)
    from the revealed seed and the entropies, or check them against the prearranged
    sequence of the options.

    ``events`` are ``(version, name, fields)`` of one whole match, in order. For a fork,
    ``carried`` is what its ``Forked`` carries (:mod:`replay.draws`): the rounds and
    rolls in it are the origin's, and the fork's continue their count (its first round
    after the fork draws on the stream of the origin's next). Returns the problems
    found, each at a version, and notes on what was or could not be checked.
    """
    events, first = timeline(events, carried)
    options = Options.from_dict(dict(events[0][2]["options"]))
    rounds = [(i >= first, v, d) for i, (v, n, d) in enumerate(events) if n == "RoundStarted"]
    rolls = [(i >= first, v, d) for i, (v, n, d) in enumerate(events) if n == "DieRolled"]
    if not rounds:
        return [], ["no round yet: no random draw to check"]
    problems: list[tuple[int, str]] = []
    for own, version, data in rounds:
        if own and list(data["order"]) != turn_order(list(data["cards"])):
            problems.append((version, f"round {data['round']}'s order is not by ascending card"))
    ended = next(((v, d) for v, n, d in events if n == "MatchEnded"), None)
    seed: bytes | None = None
    if ended is not None:
        try:
            if carried is None:
                created = events[0][2]
                joined = [d for _, n, d in events if n == "PlayerJoined"]
                entropies = [bytes.fromhex(created["entropy"])]
                entropies += [bytes.fromhex(d["entropy"]) for d in joined]
            else:
                entropies = list(carried.entropies)
            seed = effective_seed(bytes.fromhex(ended[1]["seed"]), entropies)
        except (KeyError, TypeError, ValueError) as exc:
            at = rounds[0][1] if carried is None else ended[0]
            return [*problems, (at, f"the seed or an entropy is not readable: {exc}")], []
    notes: list[str] = []
    found, note = _check_cards(options, rounds, seed)
    problems += found
    notes += [note] if note else []
    found, note = _check_rolls(options, rolls, seed)
    problems += found
    notes += [note] if note else []
    if seed is None:
        notes.append("seed not revealed yet: the draws cannot be re-derived until the end")
    if carried is not None:
        notes.append(
            f"a fork: {sum(not own for own, _, _ in rounds)} rounds and "
            f"{sum(not own for own, _, _ in rolls)} die rolls before it are the origin's, "
            "those after it come from the fork's seed"
        )
    return problems, notes


#: A recorded draw: whether it is the match's own (not carried from a fork's origin),
#: its version and its fields.
Draw = tuple[bool, int, dict[str, Any]]


def _check_cards(
    options: Options, rounds: list[Draw], seed: bytes | None
) -> tuple[list[tuple[int, str]], str | None]:
    problems = []
    given = options.prearranged_cards
    for index, (own, version, data) in enumerate(rounds):
        if not own:
            continue
        cards = list(data["cards"])
        if given is not None:
            expected: list[int] | None = list(given[index % len(given)])
            what = "the prearranged cards"
        elif seed is not None:
            expected = truth_cards(seed, index, len(cards))
            what = "the draw re-derived from the seed"
        else:
            expected = None
        if expected is not None and cards != expected:
            problems.append(
                (version, f"round {data['round']}'s Cards of Truth are not {what} (TR-2.1)")
            )
    own_rounds = sum(own for own, _, _ in rounds)
    if given is not None:
        return problems, f"Cards of Truth of {own_rounds} rounds: prearranged in the options"
    if seed is not None:
        return problems, f"Cards of Truth of {own_rounds} rounds re-derived from the revealed seed"
    return problems, None


def _check_rolls(
    options: Options, rolls: list[Draw], seed: bytes | None
) -> tuple[list[tuple[int, str]], str | None]:
    own_rolls = sum(own for own, _, _ in rolls)
    if not own_rolls:
        return [], None
    problems = []
    given = options.prearranged_dice
    for index, (own, version, data) in enumerate(rolls):
        if not own:
            continue
        if given is not None:
            expected: str | None = given[index % len(given)]
            what = "the prearranged roll"
        elif seed is not None:
            expected = die_roll(seed, index, options.dice_faces)
            what = "the roll re-derived from the seed"
        else:
            expected = None
        if expected is not None and data["face"] != expected:
            problems.append((version, f"die roll {index} is not {what} (TR-5.1)"))
    if given is not None:
        return problems, f"{own_rolls} die rolls: prearranged in the options"
    if seed is not None:
        return problems, f"{own_rolls} die rolls re-derived from the revealed seed"
    return problems, None


#: The game as the tool names it to a person (``step --help``, ``disputes``).
TITLE = "Tribes"

#: Kinds of event for ``step``'s ``next KIND``.
STEP_KINDS: dict[str, tuple[str, ...]] = {
    "round": ("RoundStarted",),
    "round-end": ("RoundWon", "RoundDrawn"),
    "roll": ("DieRolled",),
    "lift": ("Lifted",),
    "place": ("Placed",),
    "pass": ("Passed",),
    "penalty": ("Penalised",),
}


# ---- explain: lines (TR-2.5, TR-3.1 … TR-3.5) ---------------------------------------


def explain(ctx: Context) -> Explanation | None:
    """``explain``'s hook (:mod:`replay.explain_rules`): the rule ids and facts of a round
    won or drawn and of a lift that revealed a line, read from the events; None for any
    other event."""
    name, fields, match = ctx.name, ctx.fields, ctx.after
    if name == "RoundWon":
        winner = fields["winner"]
        rules = ["TR-3.1", "TR-3.3"]
        if fields["by"] == "revealed":
            rules.insert(1, "TR-3.2")
            how = "an opponent's line revealed by a lift and left intact (TR-3.2)"
        else:
            how = "a line of the mover's own tribe (TR-3.1)"
        facts = [f"won by {how}"]
        facts += [f"line on spaces {', '.join(map(str, line))}" for line in fields["lines"]]
        if fields.get("feathers"):
            rules.append("TR-3.5")
            facts.append("the winner held all four badges: the Feathers of Greatness")
        elif fields.get("badge"):
            rules.append("TR-3.4")
            facts.append(f"badge taken: {fields['badge']}")
        title = f"round {fields['round']} won by {fmt.seat(match, winner)}"
        return Explanation(ctx.version, name, title, rules, facts)
    if name == "RoundDrawn":
        reason = fields["reason"]
        fact = (
            "every player passed in a row: nobody had a legal move"
            if reason == "passes"
            else "the round reached its move limit without a winner"
        )
        title = f"round {fields['round']} drawn ({reason})"
        return Explanation(ctx.version, name, title, ["TR-2.5"], [fact, "no badge is taken"])
    if name == "Lifted" and fields.get("revealed_lines"):
        lines = [", ".join(map(str, line)) for line in fields["revealed_lines"]]
        facts = [f"the lift uncovered totem {fields['uncovered']}"]
        facts += [f"it completes an opponent's line on spaces {line}" for line in lines]
        facts.append("the lifted totem must cover one of those lines' other spaces if it can")
        title = f"a line revealed by {fmt.seat(match, fields['seat'])}'s lift"
        return Explanation(ctx.version, name, title, ["TR-3.2", "TR-3.1"], facts)
    return None


# ---- the HTML pages' board (:mod:`replay.html`) -----------------------------------

#: The CSS of the classes :data:`BOARD_SCRIPT` draws with.
BOARD_CSS = """
.grid { display: grid; gap: 3px; } .space { background: #e8dcc0; border: 1px solid #a08a60;
  min-height: 4.5em; padding: 2px; display: flex; flex-direction: column-reverse;
  justify-content: flex-start; align-items: center; font-size: .75em; }
.space.salvation { background: #cfe8c8; } .chip { border-radius: 4px; padding: 0 .3em;
  margin: 1px; color: #fff; font-weight: bold; }
.chip.DOOM { background: #222; } .chip.MINI { background: #888; }
.s0 { background: #c0392b; } .s1 { background: #2471a3; } .s2 { background: #1e8449; }
.s3 { background: #b7950b; } .s4 { background: #7d3c98; } .s5 { background: #ca6f1e; }
.space { position: relative; padding-top: 1.1em; }
.space .num { position: absolute; top: 1px; left: 3px; font-size: .9em; color: #6a5a3a; }
"""

#: Draws a referee state view of the game on the HTML pages: defines
#: ``draw(state, board)``, run in a scope of its own, with the pages' helpers
#: (``el``, ``seatName``, ``legend``: :data:`replay.html.SHARED_BOARD_SCRIPT`).
BOARD_SCRIPT = r"""
function totemText(t) {
  if (t.kind === "TRIBE") return t.seat + ":" + t.size;
  return t.kind;
}
function chip(t) {
  return el("span", "chip " + (t.kind === "TRIBE" ? "s" + t.seat : t.kind), totemText(t));
}
function draw(state, board) {
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
"""
