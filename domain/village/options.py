"""Village match options, fixed at creation and stored in the created event.

Every variation of the rules (VI-2.1, VI-2.2, VI-2.6, VI-2.9, VI-3.2) is a flag, and the
flags combine; each kind of decision has its own deadline, after which the documented
default applies (so a match never stalls).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from domain.kernel.errors import InvalidArgument
from domain.kernel.options import CommonOptions
from domain.village.model import BOY, GIRL

MAX_TIMEOUT_MS = 3_600_000
MAX_PREARRANGED_SEXES = 10_000

#: Kinds of deadline, each an option, with the rule that sets its default.
TIMEOUT_RULES = {
    "arrange": "VI-2.1",
    "choose": "VI-2.2",
    "place": "VI-2.2",
    "reveal": "VI-2.3",
    "victims": "VI-2.6",
    "youth": "VI-2.8",
}


@dataclass(frozen=True)
class Options(CommonOptions):
    """Options of a Village match.

    ``max_players``: 2 to 4 (VI-1.1); the match starts when the last seat is taken, or
    earlier at a seated player's request with at least two.
    Variations: ``village`` (smaller restart, VI-2.1), ``spells_a`` (passing, VI-2.2),
    ``spells_b`` (placements submitted at once, VI-2.2), ``feast_a`` / ``feast_b`` (the
    other families choose the victims, VI-2.6), ``totem_a`` (the whole pole is lost,
    VI-3.2), ``totem_b`` (census ties, VI-2.9).
    ``*_timeout_ms``: the deadline of each kind of decision, from the moment it is owed;
    0 means the default applies as soon as the server's timer fires.
    ``prearranged_sexes``: ``"girl"``/``"boy"`` for the children drawn at random, in the
    draw order of VI-2.4, across the whole match; when it runs out the seeded draws
    take over. Lets duplicate tables get the same births.
    """

    max_players: int = 4
    village: bool = False
    spells_a: bool = False
    spells_b: bool = False
    feast_a: bool = False
    feast_b: bool = False
    totem_a: bool = False
    totem_b: bool = False
    arrange_timeout_ms: int = 120_000
    choose_timeout_ms: int = 60_000
    place_timeout_ms: int = 30_000
    reveal_timeout_ms: int = 30_000
    victims_timeout_ms: int = 60_000
    youth_timeout_ms: int = 30_000
    prearranged_sexes: list[str] | None = field(default=None)

    def validate(self) -> Options:
        """Return self, or raise :class:`InvalidArgument` naming the rule of the bad field."""
        self.validate_common("VI-4.1")
        if not 2 <= self.max_players <= 4:
            raise InvalidArgument("VI-1.1", "max_players must be between 2 and 4")
        for kind, rule in TIMEOUT_RULES.items():
            name = f"{kind}_timeout_ms"
            if not 0 <= getattr(self, name) <= MAX_TIMEOUT_MS:
                raise InvalidArgument(rule, f"{name} must be between 0 and {MAX_TIMEOUT_MS}")
        if self.prearranged_sexes is not None:
            if len(self.prearranged_sexes) > MAX_PREARRANGED_SEXES:
                raise InvalidArgument(
                    "VI-2.4", f"a prearranged sequence holds at most {MAX_PREARRANGED_SEXES} sexes"
                )
            if any(s not in (GIRL, BOY) for s in self.prearranged_sexes):
                raise InvalidArgument(
                    "VI-2.4", 'a prearranged sequence of sexes holds only "girl" and "boy"'
                )
        return self

    def timeout_ms(self, kind: str) -> int:
        """The deadline of a kind of decision (its option)."""
        value: int = getattr(self, f"{kind}_timeout_ms")
        return value

    def variations(self) -> list[str]:
        """The variations in play, by name."""
        names = ("village", "spells_a", "spells_b", "feast_a", "feast_b", "totem_a", "totem_b")
        return [n for n in names if getattr(self, n)]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Options:
        return cls(**data)
