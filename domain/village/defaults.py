"""What the server plays for a family whose deadline passed (VI-2.1 … VI-2.8).

A match never stalls: when a decision's deadline passes, every family that still owes it
gets the documented default, built here as an ordinary command and checked like one
(``fire_timer`` applies it through the same path as a player's). A player's view shows
each default in advance, among its legal actions, so nothing here may depend on a
hidden fact of another family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.village import model
from domain.village.ageing import youth_needs
from domain.village.commands import (
    Arrange,
    ChooseSpells,
    ChooseVictims,
    FamilyCommand,
    PlaceSpell,
    RevealSpells,
    SpareFromAge,
    SubmitPlacements,
)
from domain.village.model import COTTAGE_CAPACITY, COTTAGES, FAMILY_LIMIT, KINDS, Counts, Person
from domain.village.revealing import revealable

if TYPE_CHECKING:
    from domain.village.match import Village


def default_command(match: Village, family: int) -> FamilyCommand:
    """What the deadline does for ``family`` (each phase's timeout default): the default
    arrangement, no spell chosen, the spells left placed on the family's own cottage 0,
    every spell it may reveal revealed, the default victims, the default people spared."""
    decision = match.decision
    assert decision is not None and decision.owed_by(family)
    kind = decision.kind
    if kind == "arrange":
        cottages, _ = default_arrangement(match, family)
        return Arrange(family, cottages)
    if kind == "choose":
        return ChooseSpells(family, [], 0)
    if kind == "place":
        return PlaceSpell(family, match.hands[family][0], family, 0)
    if kind == "submit":
        return SubmitPlacements(family, [(s, family, 0) for s in match.hands[family]])
    if kind == "reveal":
        return RevealSpells(family, revealable(match, family))
    if kind in ("victims", "name_victims"):
        return ChooseVictims(family, default_victims(match, family))
    return SpareFromAge(family, default_spared(match, family))


def default_arrangement(match: Village, family: int) -> tuple[list[Counts], Counts]:
    """The phase 1 default (VI-2.1, VI-7.8): last round's cottages kept; new members
    (those who were children at the last generation change, and a new or restarted
    family's) go to the lowest-numbered cottage with room, youngest kind first; a
    family above 18 discards the surplus youngest first (new members before the
    others of a kind, then from the highest-numbered cottage). Returns the cottages
    and the discarded members."""
    keep = [
        {k: c[k] - n[k] for k in KINDS}
        for c, n in zip(match.cottages[family], match.newcomers[family], strict=True)
    ]
    new = model.added(match.pool[family], *match.newcomers[family])
    surplus = max(0, model.total(new) + sum(map(model.total, keep)) - FAMILY_LIMIT)
    discarded = model.empty()
    for kind in KINDS:
        for place in [new, *reversed(keep)]:
            take = min(surplus, place[kind])
            place[kind] -= take
            discarded[kind] += take
            surplus -= take
    for kind in KINDS:
        for _ in range(new[kind]):
            cottage = next(c for c in keep if model.total(c) < COTTAGE_CAPACITY)
            cottage[kind] += 1
    return [model.counts(c) for c in keep], discarded


def default_victims(match: Village, family: int) -> list[Person]:
    """The victims the deadline names for ``family`` (VI-2.6, VI-7.7): the default
    order over the starving family; under feast_b each namer its slice of that order,
    so that the defaults never name one person twice."""
    decision = match.decision
    assert decision is not None
    detail = decision.detail
    starving = detail["starving"]
    elders = bool(detail["elders"])
    if decision.kind == "name_victims":
        everyone = model.default_victims(match.cottages[starving], detail["deaths"], elders)
        start = 0
        for f, share in detail["shares"]:
            if f == family:
                return everyone[start : start + share]
            start += share
        raise AssertionError("the family has no share")
    return model.default_victims(match.cottages[starving], detail["deaths"], elders)


def default_spared(match: Village, family: int) -> list[Person]:
    """The people the deadline spares from ageing (VI-2.8): per cottage, one per
    ``youth`` spell, the first present in the order mature woman, mature man, young
    woman, young man, girl, boy; never an elder (VI-7.4)."""
    needs = youth_needs(match, family)
    return [
        (c, kind)
        for c in range(COTTAGES)
        for kind in model.default_spared(match.cottages[family][c], needs[c])
    ]
