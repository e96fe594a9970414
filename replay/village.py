"""Village in the replay tool: event summaries, the village drawn as text, and the
checks of ``verify``: births re-derived from the revealed seed (or the prearranged
sexes, VI-2.4) and every spell reveal checked against its commitment (VI-2.2); and what
``explain`` says of a feast, a census, a family wiped out and the end."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from domain.kernel.randomness import effective_seed
from domain.village import Options, Village
from domain.village import commitments as cm
from domain.village.births import birth_stream, sex_of
from domain.village.model import KINDS
from domain.village.phases import PHASE_NAMES
from replay import format as fmt
from replay.draws import Carried, timeline
from replay.explain_rules import Context, Explanation

#: Short names of the kinds, for the drawing: girl, boy, young woman … elder.
SHORT = {
    "girl": "g",
    "boy": "b",
    "young_woman": "yw",
    "young_man": "ym",
    "mature_woman": "mw",
    "mature_man": "mm",
    "elder": "E",
}


def members(counts: dict[str, int]) -> str:
    """``yw2 ym2 mw1 mm1 E1``, or ``empty``."""
    text = " ".join(f"{SHORT[k]}{counts[k]}" for k in KINDS if counts.get(k))
    return text or "empty"


def _people(items: Sequence[dict[str, Any]]) -> str:
    return ", ".join(f"a {p['kind'].replace('_', ' ')} of cottage {p['cottage']}" for p in items)


def _family(match: Village, family: int) -> str:
    if not match.players:
        return f"family {family}"
    return f"family {family} ({fmt.seat(match, match.party_owner(family))})"


def _spells(names: Sequence[str]) -> str:
    return ", ".join(n.replace("_", " ") for n in names) or "none"


def summarise(match: Village, name: str, view: dict[str, Any]) -> str | None:
    """One line saying what a (referee-view) event did, or None for the fallback."""
    stamp = fmt.stamp(fmt.received(view.get("stamp")))
    default = " (deadline default)" if view.get("by_default") else ""
    v = view
    text: str
    if name == "Created":
        options = v["options"]
        variations = [
            n
            for n in ("village", "spells_a", "spells_b", "feast_a", "feast_b", "totem_a", "totem_b")
            if options.get(n)
        ]
        text = (
            f"Village for up to {options['max_players']} players, variations "
            f"{', '.join(variations) or 'none'}"
        )
        if options.get("prearranged"):
            text += ", prearranged sexes"
        text += f"; seed commitment {fmt.short(v['seed_commitment'])}"
    elif name == "Founded":
        text = f"{v['families']} families founded, each {members(v['members'])}, {v['birds']} birds"
    elif name == "RoundBegan":
        text = f"round {v['round']} begins, start family {v['start_family']}"
        if v["restarts"]:
            text += f"; restarting {', '.join(map(str, v['restarts']))}"
    elif name == "PhaseBegan":
        text = f"phase {v['phase']}: {PHASE_NAMES[v['phase']]}"
    elif name == "DecisionAwaited":
        d = v["decision"]
        owed = ", ".join(_family(match, f) for f in d["parties"])
        text = f"awaiting {d['kind'].replace('_', ' ')} ({d['rule']}) from {owed}"
    elif name == "WipedOut":
        text = f"{_family(match, v['family'])} is wiped out (VI-3.1)"
    elif name == "Dismantled":
        text = f"{_family(match, v['family'])} has no elder: its pole falls to {v['pole']} (VI-3.2)"
    elif name == "Arranged":
        cottages = " | ".join(members(c) for c in v["cottages"])
        text = f"{_family(match, v['family'])} arranges {cottages}"
        if any(v["discarded"].values()):
            text += f", discarding {members(v['discarded'])}"
    elif name == "SpellsChosen":
        text = f"{_family(match, v['family'])} chooses {v['count']} spells"
        if "spells" in v:
            text += f" ({_spells(v['spells'])})"
        if v["birds"]:
            text += f", sacrificing {v['birds']} birds"
        text += f"; commitment {fmt.short(v['commitment'])}"
    elif name == "SpellPlaced":
        spell = v["spell"].replace("_", " ") if "spell" in v else "a spell"
        text = (
            f"{_family(match, v['family'])} places {spell} face down on cottage {v['cottage']} "
            f"of family {v['target_family']} (position {v['position']})"
        )
    elif name == "SpellsPassed":
        text = f"{_family(match, v['family'])} passes, losing {v['lost']} spells"
    elif name == "PlacementsSubmitted":
        text = f"{_family(match, v['family'])} submits {v['count']} placements"
    elif name == "PlacementsRevealed":
        text = f"{len(v['placements'])} spells go on the board face down"
    elif name == "SpellsRevealed":
        shown = ", ".join(
            f"{r['spell'].replace('_', ' ')} at {r['position']}" for r in v["reveals"]
        )
        text = f"{_family(match, v['family'])} reveals {shown or 'nothing'}"
    elif name == "Born":
        parts = [
            f"family {c['family']} cottage {c['cottage']}: {c['girls']} girls, {c['boys']} boys"
            for c in v["children"]
        ]
        text = "births: " + ("; ".join(parts) or "none")
        if v["draws"]:
            text += f" ({len(v['draws'])} drawn, {v['prearranged']} prearranged)"
    elif name == "CatchShared":
        parts = [f"family {c['family']} {c['got']} of {c['claim']}" for c in v["claims"]]
        text = f"the catch of {v['catch']} birds: " + ", ".join(parts)
    elif name == "Feasted":
        parts = [
            f"family {m['family']} eats {m['eaten']} of {m['need']}"
            + (f", {m['deaths']} die" if m["deaths"] else "")
            for m in v["meals"]
        ]
        text = "the feast: " + "; ".join(parts)
    elif name == "VictimsChosen":
        text = (
            f"{_family(match, v['family'])} chooses the victims of family {v['starving']}: "
            f"{_people(v['victims'])}"
        )
    elif name == "VictimsNamed":
        text = f"{_family(match, v['family'])} names {v['count']} victims of family {v['starving']}"
    elif name == "VictimsRevealed":
        text = f"the names are revealed: family {v['starving']} loses {_people(v['deaths'])}"
    elif name == "IllnessStruck":
        parts = [
            f"family {d['family']} cottage {d['cottage']} loses {members(d['killed'])}"
            for d in v["deaths"]
        ]
        text = "illness: " + "; ".join(parts)
    elif name == "YouthChosen":
        text = f"{_family(match, v['family'])} spares {_people(v['spared']) or 'nobody'}"
    elif name == "Aged":
        text = "a generation passes: everyone ages, elders die"
    elif name == "CensusTaken":
        text = f"census {v['sizes']}: pieces for {v['pieces'] or 'nobody'}"
        if v["birds"]:
            text += f", a bird for {v['birds']}"
    elif name == "RoundEnded":
        text = f"round {v['round']} ends; every chit published"
    elif name == "TotemCompleted":
        if v["winner"] is None:
            text = f"totems complete; families {v['tied']} tie: no winner"
        else:
            text = f"totems complete; {_family(match, v['winner'])} wins"
    else:
        return None
    return f"{text}{default} {stamp}".rstrip()


def state_lines(match: Village, view: dict[str, Any]) -> list[str]:
    """A state view (any viewer's) as text: each family with its cottages and their
    members, the spells on each cottage (``?`` face down and unknown to the viewer,
    ``spell?`` face down, ``spell!`` revealed), its pen and its pole; then the pending
    decision and what the viewer owes."""
    lines = [
        f"Village, status {match.status.value}, round {view['round']}, phase {view['phase']}"
        + (f" ({view['phase_name']})" if view["phase_name"] else "")
        + f", start family {view['start_family']}"
    ]
    for f in view["families"]:
        head = (
            f"Family {f['family']} ({f['name']}, seat {f['seat']}): {f['members']} members, "
            f"pen {f['birds']} birds, pole {'#' * f['pole']}{'.' * (6 - f['pole'])} {f['pole']}/6"
        )
        if f["wiped_out"]:
            head += ", wiped out"
        if f["elderless"]:
            head += ", no elder this round"
        if f["chosen"]:
            head += f"; chose {f['spell_count']} spells"
            if "spells" in f:
                head += f" ({_spells(f['spells'])})"
        lines.append(head)
        for c, cottage in enumerate(f["cottages"]):
            spots = [b for b in view["board"] if b["family"] == f["family"] and b["cottage"] == c]
            marks = []
            for b in spots:
                spell = b.get("spell")
                mark = "?" if spell is None else spell + ("!" if b["revealed"] else "?")
                marks.append(f"{mark}@{b['position']} by {b['owner']}")
            spells = f"  spells: {', '.join(marks)}" if marks else ""
            lines.append(f"  cottage {c}: {members(cottage)}{spells}")
        if any(f["unhoused"].values()):
            lines.append(f"  not housed yet: {members(f['unhoused'])}")
    decision = view.get("decision")
    if decision is not None:
        due = datetime.fromtimestamp(decision["deadline_ms"] / 1000, UTC)
        owed = ", ".join(map(str, decision["parties"]))
        lines.append(
            f"Pending: {decision['kind'].replace('_', ' ')} ({decision['rule']}) from families "
            f"{owed}, deadline {fmt.when(due)} UTC"
        )
    for d in view.get("legal", {}).get("decisions", []):
        lines.append(f"You owe: {d['kind'].replace('_', ' ')} for family {d['family']}")
    outcome = view.get("outcome")
    if outcome is not None:
        who = "no winner" if outcome["winner"] is None else f"family {outcome['winner']} wins"
        lines.append(f"Outcome: {who}; winning seats {outcome['seats']}")
    lines.append(f"Seed commitment: {view['seed_commitment']}")
    if view.get("seed"):
        lines.append(f"Seed: {view['seed']}")
    return lines


def check_draws(
    events: Sequence[tuple[int, str, dict[str, Any]]],
    carried: Carried | None = None,
) -> tuple[list[tuple[int, str]], list[str]]:
    """Re-derive every child's sex (VI-2.4) and check every revealed spell, and every
    round's chits, against the family's commitment (VI-2.2).

    ``events`` are ``(version, name, fields)`` of one whole match, in order, as
    recorded. For a fork, ``carried`` is what its ``Forked`` carries
    (:mod:`replay.draws`): the births and reveals in it are the origin's; they set the
    round, the commitments in force and the prearranged sexes used, from which the
    fork's births and reveals are checked. Returns the problems found, each at a
    version, and notes.
    """
    events, first = timeline(events, carried)
    problems: list[tuple[int, str]] = []
    notes: list[str] = []
    found, note = _check_commitments(events, first)
    problems += found
    notes.append(note)
    found, births_note = _check_births(events, first, carried)
    problems += found
    notes.append(births_note)
    return problems, notes


def _check_commitments(
    events: Sequence[tuple[int, str, dict[str, Any]]], first: int
) -> tuple[list[tuple[int, str]], str]:
    """Events before ``first`` (carried from a fork's origin) only set the round, the
    commitments and the placed chits in force."""
    problems: list[tuple[int, str]] = []
    round_number = 0
    committed: dict[int, str] = {}
    chits: dict[int, tuple[int, str]] = {}  # position -> (owner, chit)
    reveals = rounds = 0
    for index, (version, name, data) in enumerate(events):
        own = index >= first
        if name == "RoundBegan":
            round_number = data["round"]
            committed, chits = {}, {}
        elif name == "SpellsChosen":
            committed[data["family"]] = data["commitment"]
        elif name == "SpellPlaced":
            chits[data["position"]] = (data["family"], data["chit"])
        elif name == "PlacementsRevealed":
            for p in data["placements"]:
                chits[p["position"]] = (p["family"], p["chit"])
        elif name == "SpellsRevealed":
            for r in data["reveals"] if own else ():
                reveals += 1
                owner, chit = chits.get(r["position"], (data["family"], ""))
                again = cm.chit(round_number, data["family"], r["spell"], r["salt"])
                if owner != data["family"] or again != chit:
                    problems.append(
                        (
                            version,
                            f"the {r['spell']} revealed at position {r['position']} in round "
                            f"{round_number} does not match the chit family {data['family']} "
                            "placed: the reveal breaks its commitment (VI-2.2)",
                        )
                    )
        elif name == "RoundEnded" and own:
            rounds += 1
            for entry in data["chits"]:
                family = entry["family"]
                if family in committed and cm.commitment(entry["chits"]) != committed[family]:
                    problems.append(
                        (
                            version,
                            f"family {family}'s chits of round {data['round']} do not hash to "
                            "its commitment (VI-2.2)",
                        )
                    )
                placed = [c for p, (o, c) in sorted(chits.items()) if o == family]
                if entry["chits"][: len(placed)] != placed:
                    problems.append(
                        (
                            version,
                            f"family {family}'s published chits of round {data['round']} are "
                            "not those it placed (VI-2.2)",
                        )
                    )
    note = f"{reveals} spell reveals and {rounds} rounds of chits checked against the commitments"
    return problems, note


def _check_births(
    events: Sequence[tuple[int, str, dict[str, Any]]], first: int, carried: Carried | None
) -> tuple[list[tuple[int, str]], str]:
    """Births before ``first`` (carried from a fork's origin) only count the prearranged
    sexes they used."""
    options = Options.from_dict(dict(events[0][2]["options"]))
    given = options.prearranged_sexes or []
    births = []
    round_number = 0
    used = carried_used = 0  # prearranged sexes used, of which by carried births
    for index, (version, name, data) in enumerate(events):
        if name == "RoundBegan":
            round_number = data["round"]
        elif name == "Born" and index < first:
            used = carried_used = carried_used + data["prearranged"]
        elif name == "Born":
            births.append((version, round_number, data))
    if not births:
        return [], "no births yet: no random draw to check"
    problems: list[tuple[int, str]] = []
    seed = _seed(events, carried)
    drawn = 0
    for version, number, data in births:
        draws = list(data["draws"])
        random_children = [c for c in data["children"] if c["forced"] is None]
        girls = sum(c["girls"] for c in random_children)
        boys = sum(c["boys"] for c in random_children)
        if girls + boys != len(draws) or girls != draws.count("girl"):
            problems.append((version, f"round {number}'s children do not add up to its draws"))
            continue
        for c in data["children"]:
            if (c["forced"] == "girl" and c["boys"]) or (c["forced"] == "boy" and c["girls"]):
                problems.append(
                    (version, f"round {number}: a forced {c['forced']} birth has the other sex")
                )
        expected_pre = min(len(draws), max(0, len(given) - used))
        if data["prearranged"] != expected_pre:
            problems.append(
                (
                    version,
                    f"round {number} used {data['prearranged']} prearranged sexes, "
                    f"not {expected_pre} (VI-2.4)",
                )
            )
            continue
        expected = list(given[used : used + expected_pre])
        used += expected_pre
        rest = len(draws) - expected_pre
        if rest and seed is not None:
            rng = birth_stream(seed, number)
            expected += [sex_of(rng.randbelow(2)) for _ in range(rest)]
            drawn += rest
        elif rest:
            expected += draws[expected_pre:]
        if draws != expected:
            problems.append(
                (
                    version,
                    f"round {number}'s births are not the prearranged sexes and the draws "
                    "re-derived from the seed (VI-2.4)",
                )
            )
    if seed is None and any(len(d["draws"]) > d["prearranged"] for _, _, d in births):
        return problems, "seed not revealed yet: the drawn sexes cannot be re-derived until the end"
    return problems, (
        f"births of {len(births)} rounds checked: {used - carried_used} prearranged sexes, "
        f"{drawn} re-derived from the revealed seed"
    )


def _seed(
    events: Sequence[tuple[int, str, dict[str, Any]]], carried: Carried | None
) -> bytes | None:
    ended = next((d for _, n, d in events if n == "MatchEnded"), None)
    if ended is None:
        return None
    if carried is not None:
        return effective_seed(bytes.fromhex(ended["seed"]), carried.entropies)
    created = events[0][2]
    joined = [d for _, n, d in events if n == "PlayerJoined"]
    entropies = [bytes.fromhex(created["entropy"])]
    entropies += [bytes.fromhex(d["entropy"]) for d in joined]
    return effective_seed(bytes.fromhex(ended["seed"]), entropies)


#: Events whose problems are spell reveals checked against their commitments (VI-2.2).
COMMITMENT_EVENTS = frozenset(
    {"SpellsChosen", "SpellPlaced", "PlacementsRevealed", "SpellsRevealed"}
)

#: The game as the tool names it to a person (``step --help``, ``disputes``).
TITLE = "Village"

#: Kinds of event for ``step``'s ``next KIND``.
STEP_KINDS: dict[str, tuple[str, ...]] = {
    "round": ("RoundBegan",),
    "round-end": ("RoundEnded",),
    "phase": ("PhaseBegan",),
    "census": ("CensusTaken",),
    "feast": ("Feasted",),
    "birth": ("Born",),
    "victims": ("VictimsRevealed",),
    "illness": ("IllnessStruck",),
    "totem": ("TotemCompleted",),
}


# ---- explain: feast, census, the end (VI-2.6, VI-2.9, VI-3.1, VI-4.1) ---------------


def explain(ctx: Context) -> Explanation | None:
    """``explain``'s hook (:mod:`replay.explain_rules`): the rule ids and facts of a
    feast, a census, a wipe-out and the completed totem, read from the events; None for
    any other event."""
    name, fields = ctx.name, ctx.fields
    if name == "Feasted":
        facts = []
        for meal in fields["meals"]:
            text = (
                f"family {meal['family']}: {meal['members']} members need {meal['need']} "
                f"birds, ate {meal['eaten']}"
            )
            if meal["missing"]:
                text += f", {meal['missing']} missing: {meal['deaths']} die (starvation)"
            if meal["discarded"]:
                text += f", {meal['discarded']} birds over the pen's 5 discarded"
            facts.append(text)
        return Explanation(ctx.version, name, "the feast", ["VI-2.6"], facts)
    if name == "CensusTaken":
        sizes = fields["sizes"]
        top = max(sizes) if sizes else 0
        largest = [f for f, s in enumerate(sizes) if s == top]
        facts = [f"members per family: {_per_family(sizes)}"]
        facts.append(
            f"largest: {_families(largest)} with {top}" + (" (a tie)" if len(largest) > 1 else "")
        )
        facts.append(f"add a piece: {_families(fields['pieces'])}")
        if fields.get("blocked"):
            facts.append(f"entitled but blocked (wiped out or no elder): {fields['blocked']}")
        if fields.get("birds"):
            facts.append(f"a bird each: {_families(fields['birds'])}")
        rules = ["VI-2.9", "VI-7.5"] + (["VI-3.2"] if fields.get("blocked") else [])
        return Explanation(ctx.version, name, "the census", rules, facts)
    if name == "TotemCompleted":
        facts = [
            f"families with 6 pieces: {_families(fields['contenders'])}",
            f"members per family: {_per_family(fields['sizes'])}",
            f"birds per family: {_per_family(fields['birds'])}",
        ]
        if fields["winner"] is not None:
            title = f"family {fields['winner']} wins"
        else:
            title = f"no single winner: tied {_families(fields['tied'])}"
        facts.append(f"winning seats: {fmt.seats(ctx.after, fields['winning_seats'])}")
        return Explanation(ctx.version, name, title, ["VI-4.1", "VI-4.2", "VI-7.1"], facts)
    if name == "WipedOut":
        facts = [
            f"family {fields['family']} had no fertile woman or no fertile man after phase "
            f"{fields['phase']}: all {sum(fields['lost'].values())} members are lost"
        ]
        title = f"family {fields['family']} wiped out"
        return Explanation(ctx.version, name, title, ["VI-3.1"], facts)
    return None


def _families(numbers: Sequence[int]) -> str:
    return ", ".join(f"family {f}" for f in numbers) if numbers else "none"


def _per_family(values: Sequence[int]) -> str:
    return ", ".join(f"family {f} {v}" for f, v in enumerate(values))


# ---- the HTML pages' board (:mod:`replay.html`) -----------------------------------

#: The CSS of the classes :data:`BOARD_SCRIPT` draws with.
BOARD_CSS = """
.cottage { display: inline-block; border: 1px solid #a08a60; background: #f3ead8;
  border-radius: 4px 4px 0 0; padding: .3em; margin: .2em; min-width: 8em; font-size: .8em; }
.pole { display: inline-flex; gap: 2px; vertical-align: middle; }
.pole i { width: .8em; height: 1.2em; background: #ddd; border: 1px solid #999; }
.pole i.on { background: #8a5a2a; }
"""

#: Draws a referee state view of the game on the HTML pages: defines
#: ``draw(state, board)``, run in a scope of its own, with the pages' helpers
#: (``el``, ``seatName``, ``legend``: :data:`replay.html.SHARED_BOARD_SCRIPT`).
BOARD_SCRIPT = r"""
const KINDS = ["girl", "boy", "young_woman", "young_man", "mature_woman", "mature_man", "elder"];
const SHORT = {girl: "g", boy: "b", young_woman: "yw", young_man: "ym", mature_woman: "mw",
  mature_man: "mm", elder: "E"};
function people(counts) {
  return KINDS.filter((k) => counts[k]).map((k) => SHORT[k] + counts[k]).join(" ") || "empty";
}
function draw(state, board) {
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
"""
