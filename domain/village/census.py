"""Phase 8, totem construction (VI-2.9): the census of members decides who adds a
totem piece and who gets a bird instead.

The awards by size are :func:`domain.village.model.census_awards`; here they meet the
match: a wiped-out family (VI-7.5) or one that lost its elders this round (VI-3.2) still
counts but builds nothing, and a pole never grows past 6.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from domain.village import model
from domain.village.model import POLE_MAX

if TYPE_CHECKING:
    from domain.village.match import Village


class Census(NamedTuple):
    """What the ``CensusTaken`` event records."""

    #: Members of every family, by family.
    sizes: list[int]
    #: Families that add a piece.
    pieces: list[int]
    #: Families the census awards a piece that may not build it (VI-3.2, VI-7.5).
    blocked: list[int]
    #: Families that get a bird.
    birds: list[int]


def take(match: Village) -> Census:
    """The round's census, families in order of their numbers."""
    sizes = [match.size(f) for f in match.families]
    pieces, birds = model.census_awards(sizes, match.options.totem_b)
    builders = [f for f in pieces if not match.wiped[f] and not match.elderless[f]]
    return Census(
        sizes=sizes,
        pieces=[f for f in builders if match.poles[f] < POLE_MAX],
        blocked=[f for f in pieces if f not in builders],
        birds=birds,
    )
