"""What each viewer sees of a tournament's events: the one place its redaction happens.

Bearer-token hashes (the organiser's, each entrant's and each referee's) are nobody's
business, the operator's referee included, as in a match. The tournament's seed and the
duplicate seed of each round stay secret until the final event reveals the seed: the
seed of a round fixes the luck of its tables (the deal, the cards, the dice), and a
player who knew it would know what is to come. Only the operator's referee
(:attr:`~domain.kernel.views.Viewer.sees_everything`) sees them before.
"""

from __future__ import annotations

from typing import Any

from domain.kernel.match import payload
from domain.kernel.views import Viewer

#: Fields of a tournament's events no viewer is shown.
UNSHOWN = frozenset({"organiser_token_hash", "token_hash"})
#: Fields shown only to a viewer who sees everything, until the end reveals them.
SECRET = frozenset({"seed", "duplicate_seed"})


def event_view(evt: object, viewer: Viewer) -> tuple[str, dict[str, Any]]:
    """``evt``'s name and the fields ``viewer`` may see. The final event reveals the seed
    to everyone; anyone can then re-derive each round's duplicate seed."""
    name = type(evt).__name__
    data = {k: v for k, v in payload(evt).items() if k not in UNSHOWN}
    if name != "TournamentEnded" and not viewer.sees_everything:
        for key in SECRET:
            data.pop(key, None)
    return name, data
