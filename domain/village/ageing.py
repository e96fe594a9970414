"""Phase 7, generation change (VI-2.8): everyone ages one step, but each revealed
``youth`` spell spares one person of its cottage, whom the family chooses.

Here are the decisions before it (which families owe one, how many each cottage must
and may spare, the check of a family's choice) and the generation change itself, worked
out whole for the ``Aged`` event to record (:func:`generation`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.kernel.errors import RuleViolation
from domain.village import model
from domain.village.commands import SpareFromAge
from domain.village.model import COTTAGES, ELDER
from domain.village.people import check_people, person_dicts

if TYPE_CHECKING:
    from domain.village.match import Village

RULE = "VI-2.8"


def youth_needs(match: Village, family: int) -> list[int]:
    """How many people each cottage of the family keeps from ageing: one per revealed
    ``youth`` spell on it (several spare one each, decided here), at most everyone."""
    return [
        min(len(match.spells_on(family, c, 7)), model.total(match.cottages[family][c]))
        for c in range(COTTAGES)
    ]


def youth_minimum(match: Village, family: int) -> list[int]:
    """How many a family must spare per cottage: as many as it could spare without
    an elder. Sparing an elder is the family's choice (VI-7.4), never forced, and
    the default never does it; so a cottage of elders only may spare none."""
    return [
        min(need, model.total(match.cottages[family][c]) - match.cottages[family][c][ELDER])
        for c, need in enumerate(youth_needs(match, family))
    ]


def next_to_spare(match: Village) -> int | None:
    """The next family in turn order that owes the choice of whom youth spares: one with
    a ``youth`` spell on a cottage that holds anyone, and that has not answered yet in
    this phase's youth stage."""
    return next(
        (
            f
            for f in match.turn_order()
            if (f not in match.acted or match.stage != "youth") and any(youth_needs(match, f))
        ),
        None,
    )


def generation(
    match: Village, spared: list[list[Any]]
) -> tuple[list[list[model.Counts]], list[list[model.Counts]]]:
    """Every family's cottages after the generation change (VI-2.8): everyone but the
    ``spared`` (``[family, cottage, kind]`` each) ages one step and elders die; and who
    in each cottage was a child before it, whatever they became: the next phase 1's new
    members (VI-7.8). A family out of play keeps its cottages as they are."""
    cottages = [[dict(c) for c in family] for family in match.cottages]
    newcomers = [[dict(c) for c in family] for family in match.newcomers]
    for f in match.families:
        for c in range(COTTAGES):
            kept = model.empty()
            for family, cottage, kind in spared:
                if family == f and cottage == c:
                    kept[kind] += 1
            before = match.cottages[f][c]
            cottages[f][c], _ = model.aged(before, kept)
            new = model.empty()
            for kind in model.CHILDREN:
                stay = kept[kind]
                new[kind] += stay
                becomes = model.AGES_TO[kind]
                assert becomes is not None
                new[becomes] += before[kind] - stay
            newcomers[f][c] = new
    return cottages, newcomers


def check_spared(match: Village, cmd: SpareFromAge) -> list[dict[str, Any]]:
    """The people ``cmd`` spares, as the event records them: members of the family,
    per cottage no more than its ``youth`` spells spare and no fewer than the family
    must (:func:`youth_minimum`)."""
    check_people(RULE, cmd.family, match.cottages[cmd.family], cmd.spared, elders=True)
    needs = youth_needs(match, cmd.family)
    least = youth_minimum(match, cmd.family)
    for c in range(COTTAGES):
        n = sum(1 for cottage, _ in cmd.spared if cottage == c)
        if not least[c] <= n <= needs[c]:
            many = str(needs[c]) if least[c] == needs[c] else f"{least[c]} to {needs[c]}"
            raise RuleViolation(
                RULE, f"youth spares {many} people in cottage {c} of family {cmd.family}"
            )
    return person_dicts(cmd.spared)
