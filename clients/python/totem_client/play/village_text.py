"""Words for the Village screen: people, spells, decisions, commands and events, from the
contract (``totem.v1.village``).

Kept apart from the widgets so that what the screen says is decided in one place. Nothing
here knows the rules: everything is named from the messages the server sent. A family is
named with the seat that plays it ("family 1 (bob)"), taken from the newest state.
"""

from __future__ import annotations

from collections.abc import Iterable

from totem.v1 import village_pb2 as pb
from totem_client.games.village import VillageCommand
from totem_client.messages import MatchEvent
from totem_client.play.words import Names, describe_common

KIND_FIELDS = ("girl", "boy", "young_woman", "young_man", "mature_woman", "mature_man", "elder")
KIND_SHORT = {"girl": "g", "boy": "b", "young_woman": "yw", "young_man": "ym"}
KIND_SHORT |= {"mature_woman": "mw", "mature_man": "mm", "elder": "E"}
#: What each decision asks, in words.
DECISION_WORDS: dict[int, str] = {
    pb.VILLAGE_DECISION_KIND_ARRANGE: "arrange the cottages",
    pb.VILLAGE_DECISION_KIND_CHOOSE: "choose spells",
    pb.VILLAGE_DECISION_KIND_PLACE: "place a spell",
    pb.VILLAGE_DECISION_KIND_SUBMIT: "submit every placement",
    pb.VILLAGE_DECISION_KIND_REVEAL: "reveal spells",
    pb.VILLAGE_DECISION_KIND_VICTIMS: "choose victims",
    pb.VILLAGE_DECISION_KIND_NAME_VICTIMS: "name victims",
    pb.VILLAGE_DECISION_KIND_YOUTH: "spare from age",
}


def enum_word(enum: object, value: int, prefix: str) -> str:
    name: str = enum.Name(value)  # type: ignore[attr-defined]
    return name.removeprefix(prefix).lower().replace("_", " ")


def kind_word(kind: int) -> str:
    return enum_word(pb.VillageKind, kind, "VILLAGE_KIND_")


def spell_word(spell: int) -> str:
    return enum_word(pb.VillageSpell, spell, "VILLAGE_SPELL_") if spell else "face down"


def decision_word(kind: int) -> str:
    return DECISION_WORDS.get(kind, "a decision")


def counts_words(counts: pb.VillageCounts) -> str:
    parts = [f"{getattr(counts, k)}{KIND_SHORT[k]}" for k in KIND_FIELDS if getattr(counts, k)]
    return " ".join(parts) or "empty"


def people_words(people: Iterable[pb.VillagePerson]) -> str:
    """ "a girl of cottage 2, a boy of cottage 0" """
    named = [f"a {kind_word(p.kind)} of cottage {p.cottage}" for p in people]
    return ", ".join(named) or "nobody"


class Families:
    """Family numbers with the seat that plays each, from the newest state."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def update(self, state: pb.VillageState) -> None:
        for family in state.families:
            if family.name:
                self.names[family.family] = family.name

    def __call__(self, family: int) -> str:
        name = self.names.get(family)
        return f"family {family} ({name})" if name else f"family {family}"

    def listed(self, families: Iterable[int]) -> str:
        return ", ".join(self(f) for f in families) or "nobody"


def command_words(command: VillageCommand, families: Families | None = None) -> str:
    """A command in words, as the owed decisions' panel and the log show it."""
    fam = families or Families()
    which = command.WhichOneof("command")
    if which is None:
        return "nothing"
    body = getattr(command, which)
    if which == "arrange":
        return "arrange " + " | ".join(counts_words(c) for c in body.cottages)
    if which == "choose_spells":
        spells = ", ".join(spell_word(s) for s in body.spells) or "no spell"
        return f"choose {spells}" + (f", sacrificing {body.birds} birds" if body.birds else "")
    if which == "place_spell":
        return f"place {spell_word(body.spell)} on {fam(body.target_family)} cottage {body.cottage}"
    if which == "pass_spells":
        return "pass: place no more spells this round"
    if which == "submit_placements":
        placed = [
            f"{spell_word(p.spell)} on {fam(p.target_family)} cottage {p.cottage}"
            for p in body.placements
        ]
        return "submit " + ("; ".join(placed) or "no placement")
    if which == "reveal_spells":
        positions = " ".join(f"#{p}" for p in body.positions)
        return f"reveal {positions}" if positions else "reveal nothing (keep them secret)"
    if which == "choose_victims":
        return "victims: " + people_words(body.victims)
    if which == "spare_from_age":
        return "spare " + people_words(body.spared)
    return which.replace("_", " ")


def describe(event: MatchEvent, names: Names, families: Families) -> str:
    """One line of the event log: what happened, in words, with its version."""
    kind = event.WhichOneof("event")
    text = describe_common(event, names) or f"event {kind}"
    if kind == "village":
        text = _describe_game(event.village, families)
    return f"v{event.version}  {text}"


def _default(by_default: bool) -> str:
    return " (the deadline's default)" if by_default else ""


def _describe_decision(decision: pb.VillageDecision, fam: Families) -> str:
    what = decision_word(decision.kind)
    if decision.kind == pb.VILLAGE_DECISION_KIND_REVEAL:
        what += f" of phase {decision.phase}"
    if decision.kind in (
        pb.VILLAGE_DECISION_KIND_VICTIMS,
        pb.VILLAGE_DECISION_KIND_NAME_VICTIMS,
    ):
        what += f": {decision.deaths} of {fam(decision.starving)}"
    if decision.kind == pb.VILLAGE_DECISION_KIND_YOUTH:
        what += f": per cottage {' '.join(map(str, decision.needs))}"
    return f"awaiting {fam.listed(decision.parties)}: {what} ({decision.rule})"


def _describe_game(body: pb.VillageEvent, fam: Families) -> str:
    kind = body.WhichOneof("event")
    if kind == "created":
        return "match created"
    if kind == "founded":
        founded = body.founded
        each = f"{counts_words(founded.members)}, {founded.birds} birds"
        return f"{founded.families} families founded, each {each}"
    if kind == "round_began":
        began = body.round_began
        text = f"round {began.round} began; {fam(began.start_family)} acts first"
        if began.restarts:
            text += f"; {fam.listed(began.restarts)} restart with {counts_words(began.members)}"
        return text
    if kind == "phase_began":
        return f"phase {body.phase_began.phase} began"
    if kind == "decision_awaited":
        return _describe_decision(body.decision_awaited.decision, fam)
    if kind == "wiped_out":
        wiped = body.wiped_out
        return f"{fam(wiped.family)} was wiped out, losing {counts_words(wiped.lost)} (VI-3.1)"
    if kind == "dismantled":
        dismantled = body.dismantled
        return (
            f"{fam(dismantled.family)} has no elder: its pole is down to {dismantled.pole} (VI-3.2)"
        )
    if kind == "arranged":
        arranged = body.arranged
        text = f"{fam(arranged.family)} arranged its cottages: " + " | ".join(
            counts_words(c) for c in arranged.cottages
        )
        if any(getattr(arranged.discarded, k) for k in KIND_FIELDS):
            text += f", discarding {counts_words(arranged.discarded)}"
        return text + _default(arranged.by_default)
    if kind == "spells_chosen":
        chosen = body.spells_chosen
        plural = "" if chosen.count == 1 else "s"
        text = f"{fam(chosen.family)} chose {chosen.count} spell{plural} in secret"
        if chosen.birds:
            text += f", sacrificing {chosen.birds} bird{'' if chosen.birds == 1 else 's'}"
        if chosen.spells:
            text += f" ({', '.join(spell_word(s) for s in chosen.spells)})"
        return text + _default(chosen.by_default)
    if kind == "spell_placed":
        placed = body.spell_placed
        what = spell_word(placed.spell) if placed.spell else "a spell"
        return (
            f"{fam(placed.family)} placed {what} face down on {fam(placed.target_family)} "
            f"cottage {placed.cottage} (#{placed.position})" + _default(placed.by_default)
        )
    if kind == "spells_passed":
        passed = body.spells_passed
        return f"{fam(passed.family)} passed, losing {passed.lost} unplaced spells"
    if kind == "placements_submitted":
        submitted = body.placements_submitted
        return (
            f"{fam(submitted.family)} submitted {submitted.count} placements in secret"
            + _default(submitted.by_default)
        )
    if kind == "placements_revealed":
        on_board = [
            f"#{p.position} by {fam(p.family)} on {fam(p.target_family)} cottage {p.cottage}"
            for p in body.placements_revealed.placements
        ]
        return "the placements went on the board: " + ("; ".join(on_board) or "none")
    if kind == "spells_revealed":
        revealed = body.spells_revealed
        shown = ", ".join(f"{spell_word(x.spell)} (#{x.position})" for x in revealed.reveals)
        what = f"revealed {shown}" if shown else "kept its spells secret"
        return f"{fam(revealed.family)} {what} in phase {revealed.phase}" + _default(
            revealed.by_default
        )
    if kind == "born":
        births = [
            f"{fam(b.family)} cottage {b.cottage}: {b.girls} girls, {b.boys} boys"
            for b in body.born.children
            if b.girls or b.boys
        ]
        return "births: " + ("; ".join(births) or "no child")
    if kind == "catch_shared":
        claims = [
            f"{fam(c.family)} {c.got} ({c.hunters} hunters)" for c in body.catch_shared.claims
        ]
        return f"the catch of {body.catch_shared.catch} birds: " + "; ".join(claims)
    if kind == "feasted":
        meals = []
        for m in body.feasted.meals:
            meal = f"{fam(m.family)} ate {m.eaten}"
            if m.deaths:
                meal += f", {m.missing} missing: {m.deaths} must die"
            meals.append(meal)
        return "the feast: " + "; ".join(meals)
    if kind == "victims_chosen":
        victims = body.victims_chosen
        return (
            f"{fam(victims.family)} chose the victims of {fam(victims.starving)}: "
            f"{people_words(victims.victims)}" + _default(victims.by_default)
        )
    if kind == "victims_named":
        named = body.victims_named
        return (
            f"{fam(named.family)} named {named.count} victims of {fam(named.starving)} in secret"
            + (_default(named.by_default))
        )
    if kind == "victims_revealed":
        revealed_names = body.victims_revealed
        lost = people_words(revealed_names.deaths)
        return f"the names were revealed: {fam(revealed_names.starving)} lost {lost}"
    if kind == "illness_struck":
        struck = [
            f"{fam(i.family)} cottage {i.cottage} lost {counts_words(i.killed)}"
            for i in body.illness_struck.deaths
        ]
        return "illness: " + ("; ".join(struck) or "nobody died")
    if kind == "youth_chosen":
        youth = body.youth_chosen
        return f"{fam(youth.family)} spared {people_words(youth.spared)} from age" + _default(
            youth.by_default
        )
    if kind == "aged":
        return "everyone aged a generation; elders died"
    if kind == "census_taken":
        census = body.census_taken
        sizes = ", ".join(f"{fam(i)} {n}" for i, n in enumerate(census.sizes))
        text = f"census: {sizes}; a piece for {fam.listed(census.pieces)}"
        if census.blocked:
            text += f"; none for {fam.listed(census.blocked)}"
        if census.birds:
            text += f"; a bird for {fam.listed(census.birds)}"
        return text
    if kind == "round_ended":
        return f"round {body.round_ended.round} ended: the spells leave the board"
    if kind == "totem_completed":
        completed = body.totem_completed
        if completed.HasField("winner"):
            return f"a totem pole is complete: {fam(completed.winner)} wins"
        return f"totem poles complete, tied: {fam.listed(completed.tied)}"
    return (kind or "event").replace("_", " ")


__all__ = [
    "DECISION_WORDS",
    "Families",
    "command_words",
    "counts_words",
    "decision_word",
    "describe",
    "kind_word",
    "people_words",
    "spell_word",
]
