"""Phase 1, the village (VI-2.1): a family arranges its members in its three cottages.

The check reads only the family's members and the proposed cottages, so it is a pure
function of them: the aggregate passes both in and records what comes out. The default
arrangement a deadline applies is in :mod:`domain.village.defaults`.
"""

from __future__ import annotations

from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.village import model
from domain.village.commands import Arrange
from domain.village.model import COTTAGE_CAPACITY, COTTAGES, FAMILY_LIMIT, KINDS, Counts

RULE = "VI-2.1"


def check_arrangement(cmd: Arrange, have: Counts) -> tuple[list[Counts], Counts]:
    """The cottages ``cmd`` proposes for a family whose members are ``have``, and the
    members it discards; a refusal names VI-2.1. At most 6 to a cottage; every member
    housed, or exactly 18 above 18 (the rest discarded, as the family chooses)."""
    if len(cmd.cottages) != COTTAGES:
        raise InvalidArgument(RULE, f"a family has exactly {COTTAGES} cottages")
    cottages: list[Counts] = []
    for i, cottage in enumerate(cmd.cottages):
        for kind, n in cottage.items():
            if kind not in KINDS:
                raise InvalidArgument(RULE, f"{kind!r} is not a kind of villager")
            if n < 0:
                raise InvalidArgument(RULE, "a count of villagers cannot be negative")
        placed = model.counts(cottage)
        if model.total(placed) > COTTAGE_CAPACITY:
            raise InvalidArgument(
                RULE, f"cottage {i} would hold {model.total(placed)}: at most 6 each"
            )
        cottages.append(placed)
    housed = model.added(*cottages)
    for kind in KINDS:
        if housed[kind] > have[kind]:
            raise RuleViolation(
                RULE, f"family {cmd.family} has {have[kind]} {kind}, not {housed[kind]}"
            )
    must = min(model.total(have), FAMILY_LIMIT)
    if model.total(housed) != must:
        raise RuleViolation(
            RULE,
            f"family {cmd.family} must house {must} members"
            + (" and discard the rest" if must < model.total(have) else ", all of them"),
        )
    discarded = {k: have[k] - housed[k] for k in KINDS}
    return cottages, discarded
