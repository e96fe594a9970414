"""People named by a decision: ``(cottage, kind)`` pairs, checked and recorded.

The feast's victims (VI-2.6) and those youth spares (VI-2.8) are named the same way:
members of one kind in one cottage are interchangeable (see :mod:`domain.village.model`),
so a person is a cottage and a kind, and naming one twice means two of that kind there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.village.model import COTTAGES, ELDER, KINDS, Person


def check_people(
    rule: str,
    family: int,
    cottages: Sequence[Mapping[str, int]],
    people: Sequence[Person],
    elders: bool,
) -> None:
    """Every named person exists in ``family``'s ``cottages`` (counting repeats), and is
    no elder unless ``elders``: a refusal names ``rule``."""
    wanted: dict[tuple[int, str], int] = {}
    for cottage, kind in people:
        if not 0 <= cottage < COTTAGES:
            raise InvalidArgument(rule, f"cottage {cottage} does not exist")
        if kind not in KINDS:
            raise InvalidArgument(rule, f"{kind!r} is not a kind of villager")
        if kind == ELDER and not elders:
            raise RuleViolation(rule, "an elder may not be chosen as a victim here")
        wanted[(cottage, kind)] = wanted.get((cottage, kind), 0) + 1
    for (cottage, kind), n in wanted.items():
        have = cottages[cottage][kind]
        if n > have:
            raise RuleViolation(
                rule, f"cottage {cottage} of family {family} has {have} {kind}, not {n}"
            )


def person_dicts(people: Sequence[Person]) -> list[dict[str, Any]]:
    """People as events and views carry them: ``{"cottage", "kind"}`` each."""
    return [{"cottage": c, "kind": k} for c, k in people]
