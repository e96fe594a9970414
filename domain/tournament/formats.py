"""One entry point for every format: which function pairs a round, and how many rounds.

The tournament aggregate keeps every entrant in seed order and the set of those who
withdrew; this module hands each format what it needs (TO-2, TO-3, TO-4).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

from domain.tournament.elimination import elimination_rounds, pair_single_elimination
from domain.tournament.model import MatchResult, Round, Ruling, check_entrants
from domain.tournament.round_robin import pair_round_robin, round_robin_rounds
from domain.tournament.swiss import pair_swiss


class Format(enum.Enum):
    ROUND_ROBIN = "round-robin"
    SWISS = "swiss"
    SINGLE_ELIMINATION = "single-elimination"


def default_rounds(
    format: Format, entrants: Sequence[str], table_size: int = 2, min_seats: int = 2
) -> int:
    """The rounds a format takes: a round robin's schedule (TO-2.3), a bracket's depth
    (TO-4.2); for Swiss, as many as a bracket would take, the usual minimum to leave one
    entrant alone on top (an organiser may choose more, TO-3.7)."""
    check_entrants(entrants)
    if format is Format.ROUND_ROBIN:
        return round_robin_rounds(entrants, table_size, min_seats)
    return elimination_rounds(len(entrants))


def pair_round(
    format: Format,
    entrants: Sequence[str],
    round_number: int,
    results: Sequence[MatchResult] = (),
    rulings: Sequence[Ruling] = (),
    withdrawn: Mapping[str, int] | None = None,
    table_size: int = 2,
    min_seats: int = 2,
) -> Round:
    """Round ``round_number`` of a tournament of ``entrants`` (every one, in seed order),
    given the results and rulings so far and who has withdrawn: ``withdrawn`` maps each
    withdrawn entrant to the first round they do not play (a bracket recomputes its
    earlier rounds as they were paired, TO-4.4)."""
    check_entrants(entrants)
    gone = {e for e, first_missed in (withdrawn or {}).items() if first_missed <= round_number}
    if format is Format.ROUND_ROBIN:
        return pair_round_robin(entrants, round_number, table_size, gone, min_seats)
    if format is Format.SWISS:
        still_in = [e for e in entrants if e not in gone]
        return pair_swiss(still_in, results, round_number, table_size, rulings, min_seats)
    return pair_single_elimination(entrants, results, round_number, table_size, rulings, withdrawn)
