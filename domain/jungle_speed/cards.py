"""The Jungle Speed deck (JS-1).

Card ids are the wire identity of a card: symbol cards first, ``id = 4 * shape + colour``
over :data:`SHAPES` and :data:`COLOURS`, then the special cards in the order inward,
outward, coloured arrows.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Any

COLOURS: tuple[str, ...] = ("PURPLE", "GREEN", "ORANGE", "YELLOW")

#: Six look-alike families of three shapes (JS-1.2). Only identical shapes duel.
FAMILIES: dict[str, tuple[str, str, str]] = {
    "STAR": ("POINTED", "ROUNDED", "HOLLOW"),
    "CROSS": ("PLAIN", "BARRED", "HOLLOW"),
    "RING": ("SINGLE", "DOUBLE", "BROKEN"),
    "WAVE": ("SINGLE", "DOUBLE", "CROSSED"),
    "LEAF": ("PLAIN", "VEINED", "SPLIT"),
    "KNOT": ("LOOSE", "TIGHT", "TWISTED"),
}

SHAPES: tuple[str, ...] = tuple(f"{family}_{v}" for family, vs in FAMILIES.items() for v in vs)
SYMBOL_CARDS = len(SHAPES) * len(COLOURS)


class Kind(enum.Enum):
    SYMBOL = "SYMBOL"
    INWARD_ARROWS = "INWARD_ARROWS"
    OUTWARD_ARROWS = "OUTWARD_ARROWS"
    COLOURED_ARROWS = "COLOURED_ARROWS"


SPECIAL_KINDS = (Kind.INWARD_ARROWS, Kind.OUTWARD_ARROWS, Kind.COLOURED_ARROWS)


@dataclass(frozen=True)
class Card:
    id: int
    kind: Kind
    shape: str | None = None
    colour: str | None = None

    @property
    def is_special(self) -> bool:
        return self.kind is not Kind.SYMBOL

    def key(self, by_colour: bool) -> str | None:
        """What must be identical for a duel (JS-4.1); specials never match (JS-1.3)."""
        if self.is_special:
            return None
        return self.colour if by_colour else self.shape

    def to_dict(self) -> dict[str, Any]:
        """The card as views show it. Built once per card (a view shows dozens of cards,
        and every event on a stream carries a view): read it, never change it."""
        return self._data

    @functools.cached_property
    def _data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "kind": self.kind.value}
        if self.shape is not None:
            data["shape"] = self.shape
            data["colour"] = self.colour
        return data

    def __str__(self) -> str:
        if self.is_special:
            return f"#{self.id} {self.kind.value.lower().replace('_', ' ')}"
        assert self.shape is not None and self.colour is not None
        return f"#{self.id} {self.shape.lower()} {self.colour.lower()}"


class Deck:
    """The cards of one match, given how many of each special card it has (JS-1.3)."""

    def __init__(self, inward: int = 3, outward: int = 3, coloured: int = 2) -> None:
        cards = [
            Card(i, Kind.SYMBOL, SHAPES[i // len(COLOURS)], COLOURS[i % len(COLOURS)])
            for i in range(SYMBOL_CARDS)
        ]
        for kind, count in zip(SPECIAL_KINDS, (inward, outward, coloured), strict=True):
            cards.extend(Card(len(cards), kind) for _ in range(count))
        self.cards: tuple[Card, ...] = tuple(cards)

    def __len__(self) -> int:
        return len(self.cards)

    def __getitem__(self, card_id: int) -> Card:
        return self.cards[card_id]
