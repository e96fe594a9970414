"""What the user is putting together for one owed Village decision, before sending it.

A :class:`Draft` is built from the decision the server lists (``VillageOwedDecision``):
its choices become rows of cells the user steps through with the keys, each cell a value
among the options the choices allow (how many of a kind in a cottage, a spell or not, a
cottage among the targets), starting from the decision's default. :meth:`Draft.command`
turns the cells into the command. The rows come from the server's choices alone, so the
client holds no copy of the rules: a draft that breaks one (too many housed, too many
spells for the pole) is sent all the same, and the server's refusal says why.

Free of Textual, so that it can be tested on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from totem.v1 import village_pb2 as pb
from totem_client.games.village import VillageCommand
from totem_client.play.village_text import (
    KIND_FIELDS,
    Families,
    kind_word,
    spell_word,
)

Key = tuple[int, int, int]
"""What identifies an owed decision: its family, kind and deadline."""


def key_of(decision: pb.VillageOwedDecision) -> Key:
    return (decision.family, decision.kind, decision.deadline_ms)


@dataclass
class Cell:
    """One value the user sets: an index into ``options`` (their labels)."""

    options: list[str]
    index: int = 0

    def step(self, by: int) -> None:
        self.index = (self.index + by) % len(self.options)

    @property
    def label(self) -> str:
        return self.options[self.index]


@dataclass
class Row:
    """A line of the draft: what it is about and its cells."""

    label: str
    cells: list[Cell]


def _counts(limit: int, start: int) -> Cell:
    return Cell([str(n) for n in range(limit + 1)], min(start, limit))


def _toggle(on: bool) -> Cell:
    return Cell(["no", "yes"], int(on))


@dataclass
class Draft:
    """The rows of one owed decision, the cursor, and how they become a command."""

    decision: pb.VillageOwedDecision
    rows: list[Row]
    build: Callable[[Draft], VillageCommand]
    row: int = 0
    column: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> Key:
        return key_of(self.decision)

    def command(self) -> VillageCommand:
        return self.build(self)

    def values(self, row: int) -> list[int]:
        return [cell.index for cell in self.rows[row].cells]

    def move(self, rows: int, columns: int) -> None:
        """Move the cursor: ``rows`` up or down (wrapping), ``columns`` along the row."""
        if not self.rows:
            return
        self.row = (self.row + rows) % len(self.rows)
        width = len(self.rows[self.row].cells)
        self.column = min(max(0, self.column + columns), width - 1)

    def change(self, by: int) -> None:
        """Step the cell under the cursor through its options (wrapping)."""
        if self.rows:
            self.rows[self.row].cells[self.column].step(by)


# ---- the drafts of each kind ---------------------------------------------------------------


def _arrange(decision: pb.VillageOwedDecision, families: Families) -> Draft:
    members = decision.arrange.members
    start = decision.default.arrange.cottages
    kinds = [k for k in KIND_FIELDS if getattr(members, k)]
    rows = [
        Row(
            f"{kind.replace('_', ' ')} ({getattr(members, kind)})",
            [
                _counts(getattr(members, kind), getattr(start[c], kind) if c < len(start) else 0)
                for c in range(3)
            ],
        )
        for kind in kinds
    ]

    def build(draft: Draft) -> VillageCommand:
        cottages = [pb.VillageCounts() for _ in range(3)]
        for row, kind in enumerate(kinds):
            for cottage, count in enumerate(draft.values(row)):
                setattr(cottages[cottage], kind, count)
        return VillageCommand(arrange=pb.VillageArrange(family=decision.family, cottages=cottages))

    notes = [
        f"house {decision.arrange.house}, at most {decision.arrange.capacity} a cottage; "
        "the cells are cottages 0 | 1 | 2"
    ]
    return Draft(decision, rows, build, notes=notes)


def _choose(decision: pb.VillageOwedDecision, families: Families) -> Draft:
    choices = decision.choose
    chosen = set(decision.default.choose_spells.spells)
    spells = list(choices.spells)
    rows = [Row(spell_word(s), [_toggle(s in chosen)]) for s in spells]
    rows.append(
        Row(
            "birds to sacrifice",
            [_counts(choices.birds, decision.default.choose_spells.birds)],
        )
    )

    def build(draft: Draft) -> VillageCommand:
        picked = [s for row, s in enumerate(spells) if draft.values(row)[0]]
        birds = draft.values(len(spells))[0]
        return VillageCommand(
            choose_spells=pb.VillageChooseSpells(family=decision.family, spells=picked, birds=birds)
        )

    notes = [
        f"up to {choices.max_spells} spells: {choices.pieces} free (the pole), "
        "one more per bird sacrificed"
    ]
    return Draft(decision, rows, build, notes=notes)


def _target_words(targets: Sequence[pb.VillageTarget], families: Families) -> list[str]:
    return [f"{families(t.family)} cottage {t.cottage}" for t in targets]


def _target_index(targets: Sequence[pb.VillageTarget], family: int, cottage: int) -> int:
    for i, t in enumerate(targets):
        if t.family == family and t.cottage == cottage:
            return i
    return 0


def _place(decision: pb.VillageOwedDecision, families: Families) -> Draft:
    choices = decision.place
    hand = list(choices.hand)
    targets = list(choices.targets)
    start = decision.default.place_spell
    spell_index = hand.index(start.spell) if start.spell in hand else 0
    rows = [
        Row("spell", [Cell([spell_word(s) for s in hand] or ["none"], spell_index)]),
        Row(
            "on",
            [
                Cell(
                    _target_words(targets, families) or ["nowhere"],
                    _target_index(targets, start.target_family, start.cottage),
                )
            ],
        ),
    ]

    def build(draft: Draft) -> VillageCommand:
        spell = hand[draft.values(0)[0]] if hand else pb.VILLAGE_SPELL_UNSPECIFIED
        target = targets[draft.values(1)[0]] if targets else pb.VillageTarget()
        return VillageCommand(
            place_spell=pb.VillagePlaceSpell(
                family=decision.family,
                spell=spell,
                target_family=target.family,
                cottage=target.cottage,
            )
        )

    notes = ["p passes: no more spells this round"] if choices.can_pass else []
    return Draft(decision, rows, build, notes=notes)


def _submit(decision: pb.VillageOwedDecision, families: Families) -> Draft:
    choices = decision.place
    hand = list(choices.hand)
    targets = list(choices.targets)
    words = _target_words(targets, families)
    optional = not choices.all_required
    if optional:
        words.append("not placed")
    by_spell = {p.spell: p for p in decision.default.submit_placements.placements}
    rows = []
    for spell in hand:
        placed = by_spell.get(spell)
        if placed is not None:
            start = _target_index(targets, placed.target_family, placed.cottage)
        else:
            start = len(targets) if optional else 0
        rows.append(Row(spell_word(spell), [Cell(words or ["nowhere"], start)]))

    def build(draft: Draft) -> VillageCommand:
        placements = []
        for row, spell in enumerate(hand):
            index = draft.values(row)[0]
            if index < len(targets):
                target = targets[index]
                placements.append(
                    pb.VillagePlacement(
                        spell=spell, target_family=target.family, cottage=target.cottage
                    )
                )
        return VillageCommand(
            submit_placements=pb.VillageSubmitPlacements(
                family=decision.family, placements=placements
            )
        )

    return Draft(decision, rows, build)


def _reveal(
    decision: pb.VillageOwedDecision, families: Families, board: Sequence[pb.VillageSpot]
) -> Draft:
    positions = list(decision.reveal.revealable)
    start = set(decision.default.reveal_spells.positions)
    spots = {s.position: s for s in board}
    rows = []
    for position in positions:
        spot = spots.get(position)
        where = f" on {families(spot.family)} cottage {spot.cottage}" if spot else ""
        what = spell_word(spot.spell) if spot else "spell"
        rows.append(Row(f"#{position} {what}{where}", [_toggle(position in start)]))

    def build(draft: Draft) -> VillageCommand:
        shown = [p for row, p in enumerate(positions) if draft.values(row)[0]]
        return VillageCommand(
            reveal_spells=pb.VillageRevealSpells(family=decision.family, positions=shown)
        )

    return Draft(decision, rows, build, notes=["a spell not revealed has no effect"])


def _people_rows(
    candidates: Sequence[pb.VillageCandidate],
    start: Sequence[pb.VillagePerson],
    limit: Callable[[pb.VillageCandidate], int],
) -> list[Row]:
    rows = []
    for c in candidates:
        already = sum(1 for p in start if p.cottage == c.cottage and p.kind == c.kind)
        rows.append(
            Row(
                f"cottage {c.cottage}: {kind_word(c.kind)} ({c.count} there)",
                [_counts(min(c.count, limit(c)), already)],
            )
        )
    return rows


def _people(candidates: Sequence[pb.VillageCandidate], draft: Draft) -> list[pb.VillagePerson]:
    people = []
    for row, c in enumerate(candidates):
        people += [pb.VillagePerson(cottage=c.cottage, kind=c.kind)] * draft.values(row)[0]
    return people


def _victims(decision: pb.VillageOwedDecision, families: Families) -> Draft:
    choices = decision.victims
    candidates = list(choices.candidates)
    rows = _people_rows(
        candidates, decision.default.choose_victims.victims, lambda c: choices.count
    )

    def build(draft: Draft) -> VillageCommand:
        return VillageCommand(
            choose_victims=pb.VillageChooseVictims(
                family=decision.family, victims=_people(candidates, draft)
            )
        )

    elders = "elders allowed" if choices.elders else "never an elder"
    notes = [f"{choices.count} victims of {families(choices.starving)}, {elders}"]
    return Draft(decision, rows, build, notes=notes)


def _youth(decision: pb.VillageOwedDecision, families: Families) -> Draft:
    choices = decision.youth
    candidates = list(choices.candidates)
    needs = list(choices.needs)

    def need(c: pb.VillageCandidate) -> int:
        return needs[c.cottage] if c.cottage < len(needs) else 0

    candidates = [c for c in candidates if need(c)]
    rows = _people_rows(candidates, decision.default.spare_from_age.spared, need)

    def build(draft: Draft) -> VillageCommand:
        return VillageCommand(
            spare_from_age=pb.VillageSpareFromAge(
                family=decision.family, spared=_people(candidates, draft)
            )
        )

    notes = [
        f"per cottage at most {' '.join(map(str, needs))}, "
        f"at least {' '.join(map(str, choices.minimum))}"
    ]
    return Draft(decision, rows, build, notes=notes)


def draft_for(
    decision: pb.VillageOwedDecision, families: Families, board: Sequence[pb.VillageSpot]
) -> Draft:
    """A fresh draft of ``decision``, its cells set to the decision's default."""
    kind = decision.kind
    if kind == pb.VILLAGE_DECISION_KIND_ARRANGE:
        return _arrange(decision, families)
    if kind == pb.VILLAGE_DECISION_KIND_CHOOSE:
        return _choose(decision, families)
    if kind == pb.VILLAGE_DECISION_KIND_PLACE:
        return _place(decision, families)
    if kind == pb.VILLAGE_DECISION_KIND_SUBMIT:
        return _submit(decision, families)
    if kind == pb.VILLAGE_DECISION_KIND_REVEAL:
        return _reveal(decision, families, board)
    if kind in (pb.VILLAGE_DECISION_KIND_VICTIMS, pb.VILLAGE_DECISION_KIND_NAME_VICTIMS):
        return _victims(decision, families)
    if kind == pb.VILLAGE_DECISION_KIND_YOUTH:
        return _youth(decision, families)

    def default(draft: Draft) -> VillageCommand:
        return decision.default

    return Draft(decision, [], default)


__all__ = ["Cell", "Draft", "Key", "Row", "draft_for", "key_of"]
