"""Village (Totem, 1995): families, secret spells, births and the totem pole (VI-1 … VI-7)."""

from domain.village.commands import (
    Arrange,
    ChooseSpells,
    ChooseVictims,
    FamilyCommand,
    PassSpells,
    PlaceSpell,
    RevealSpells,
    SpareFromAge,
    SubmitPlacements,
)
from domain.village.match import Village
from domain.village.options import Options

__all__ = [
    "Arrange",
    "ChooseSpells",
    "ChooseVictims",
    "FamilyCommand",
    "Options",
    "PassSpells",
    "PlaceSpell",
    "RevealSpells",
    "SpareFromAge",
    "SubmitPlacements",
    "Village",
]
