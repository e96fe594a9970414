"""Phase 4, the catch (VI-2.5): families claim birds by their hunters, in turn order,
until the catch is used up.

The arithmetic (a cottage's hunters under its spells, a claim, the sharing) is in
:mod:`domain.village.model`; this gathers it over the match into what the
``CatchShared`` event records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.village import model
from domain.village.model import COTTAGES

if TYPE_CHECKING:
    from domain.village.match import Village


def shared(match: Village) -> tuple[int, list[dict[str, int]]]:
    """The size of the catch, and per family in turn order its hunters (counted per
    cottage under the revealed spells of phase 4), its claim and the birds it got:
    ``{"family", "hunters", "claim", "got"}``."""
    order = match.turn_order()
    hunters = [
        sum(
            model.hunters_in(match.cottages[f][c], match.spells_on(f, c, 4))
            for c in range(COTTAGES)
        )
        for f in order
    ]
    claims = [model.claim(h) for h in hunters]
    size = model.catch_size(match.family_count)
    got = model.share_catch(claims, size)
    return size, [
        {"family": f, "hunters": h, "claim": c, "got": g}
        for f, h, c, g in zip(order, hunters, claims, got, strict=True)
    ]
