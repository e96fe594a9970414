"""Phase 6, illness (VI-2.7): a revealed ``illness`` spell kills everyone in its
cottage, unless a cure protects them: ``big_cure`` everyone, ``little_cure`` everyone but
the children.

Nothing is chosen and nothing drawn here: the deaths follow from the revealed spells
alone. They are still worked out before the event and recorded in it, like every
outcome, so that the event says what happened without the rules to read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.village import model
from domain.village.model import COTTAGES, KINDS

if TYPE_CHECKING:
    from domain.village.match import Village


def deaths(match: Village) -> list[dict[str, Any]]:
    """Per cottage struck, in turn order, those the illness kills:
    ``{"family", "cottage", "killed"}`` (a count per kind; nobody under ``big_cure``).
    An empty cottage, or one without a revealed ``illness``, is not struck."""
    struck: list[dict[str, Any]] = []
    for f in match.turn_order():
        for c in range(COTTAGES):
            spells = match.spells_on(f, c, 6)
            cottage = match.cottages[f][c]
            if "illness" not in spells or model.total(cottage) == 0:
                continue
            if "big_cure" in spells:
                killed = model.empty()
            elif "little_cure" in spells:
                killed = {k: cottage[k] if k in model.CHILDREN else 0 for k in KINDS}
            else:
                killed = dict(cottage)
            struck.append({"family": f, "cottage": c, "killed": killed})
    return struck
