"""The typed commands of Village: one per kind of decision.

Each names the ``family`` that decides (a seat may play two, VI-7.1); the aggregate
checks that the sending seat plays it and that this family owes this decision now.
People are ``(cottage, kind)`` pairs: members of one kind in one cottage are
interchangeable (see :mod:`domain.village.model`). Besides these, a seated player may
:class:`~domain.kernel.commands.Start` the match. :func:`command_dict` gives a command
as plain data, the form in which a view shows the default of a decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.kernel.commands import Command
from domain.village import model
from domain.village.model import Person
from domain.village.people import person_dicts


@dataclass(frozen=True)
class Arrange(Command):
    """Phase 1 (VI-2.1): every member into the three cottages, at most 6 each; a family
    above 18 houses exactly 18 and the rest are discarded."""

    family: int
    cottages: Sequence[Mapping[str, int]]


@dataclass(frozen=True)
class ChooseSpells(Command):
    """Phase 2, step 1 (VI-2.2): the spells to cast and the birds to sacrifice, in secret."""

    family: int
    spells: Sequence[str]
    birds: int = 0


@dataclass(frozen=True)
class PlaceSpell(Command):
    """Phase 2, step 2 (VI-2.2): one chosen spell face down on a cottage of any family."""

    family: int
    spell: str
    target_family: int
    cottage: int


@dataclass(frozen=True)
class PassSpells(Command):
    """Phase 2, step 2, variation ``spells_a``: place no more spells this round."""

    family: int


@dataclass(frozen=True)
class SubmitPlacements(Command):
    """Phase 2, variation ``spells_b``: every placement at once, ``(spell, target family,
    cottage)`` each, in secret."""

    family: int
    placements: Sequence[tuple[str, int, int]]


@dataclass(frozen=True)
class RevealSpells(Command):
    """Start of phases 3, 4, 6, 7 (VI-2.3): the board positions of the family's face-down
    spells of this phase it reveals now (possibly none)."""

    family: int
    positions: Sequence[int] = field(default_factory=tuple)


@dataclass(frozen=True)
class ChooseVictims(Command):
    """Phase 5 (VI-2.6): who of the starving family dies. Its owner names them all; under
    ``feast_a`` each other family in turn names one; under ``feast_b`` each other family
    names its share in secret."""

    family: int
    victims: Sequence[Person]


@dataclass(frozen=True)
class SpareFromAge(Command):
    """Phase 7 (VI-2.8): for each revealed ``youth`` spell on one of the family's
    cottages, one person of that cottage who does not age."""

    family: int
    spared: Sequence[Person]


FamilyCommand = (
    Arrange
    | ChooseSpells
    | PlaceSpell
    | PassSpells
    | SubmitPlacements
    | RevealSpells
    | ChooseVictims
    | SpareFromAge
)


def command_dict(command: FamilyCommand) -> dict[str, Any]:
    """A command as plain data (lists, not tuples): how views and defaults show it."""
    data: dict[str, Any] = {"command": type(command).__name__, "family": command.family}
    if isinstance(command, Arrange):
        data["cottages"] = [model.counts(c) for c in command.cottages]
    elif isinstance(command, ChooseSpells):
        data["spells"] = list(command.spells)
        data["birds"] = command.birds
    elif isinstance(command, PlaceSpell):
        data.update(
            spell=command.spell, target_family=command.target_family, cottage=command.cottage
        )
    elif isinstance(command, SubmitPlacements):
        data["placements"] = [list(p) for p in command.placements]
    elif isinstance(command, RevealSpells):
        data["positions"] = list(command.positions)
    elif isinstance(command, ChooseVictims):
        data["victims"] = person_dicts(command.victims)
    elif isinstance(command, SpareFromAge):
        data["spared"] = person_dicts(command.spared)
    return data
