"""What a referee may decide on a dispute (TO-10.3): the verdict a ruling records.

The tournament aggregate checks a verdict against the disputed table and records it in
its ``Ruled`` event with the judge and the reason; the standings read the rulings from
there (:meth:`domain.tournament.aggregate.Tournament.rulings`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction


class RulingKind(enum.Enum):
    """The kinds of ruling, as the ``Ruled`` event names them."""

    STANDS = "stands"
    REPLACE = "replace-result"
    REPLAY = "replay"
    PENALTY = "penalty"


@dataclass(frozen=True)
class Stands:
    """The result stands: nothing changes."""

    kind = RulingKind.STANDS


@dataclass(frozen=True)
class ReplaceWith:
    """The table's result is replaced (TO-6.1): ``places`` gives every seat of the table
    its place (a competition ranking), by entrant; ``forfeited`` names the seats that
    forfeit."""

    places: Mapping[str, int]
    forfeited: frozenset[str] = field(default_factory=frozenset)
    kind = RulingKind.REPLACE


@dataclass(frozen=True)
class ReplayFrom:
    """The match is played again from a fork of the disputed match at ``version``: the
    application created the fork, whose id is ``match_id``; its result will be the
    table's."""

    version: int
    match_id: str
    kind = RulingKind.REPLAY


@dataclass(frozen=True)
class Penalise:
    """``points`` are taken off ``entrant``'s total (TO-6.2)."""

    entrant: str
    points: Fraction
    kind = RulingKind.PENALTY


Verdict = Stands | ReplaceWith | ReplayFrom | Penalise
