"""Tournaments: pure rules, no I/O (docs/tournaments.md, TO-x.y).

Given the entrants in seed order, the results and rulings so far, and who withdrew, the
pairing and standings functions say who sits where in a round and why, and how the
entrants stand. The tournament aggregate (:class:`Tournament`) records their answers in
its events, chained and signed like a match's; anyone can recompute them
(:mod:`domain.tournament.sheet`).
"""

from domain.tournament.aggregate import Tournament
from domain.tournament.duplicate import duplicate_seed
from domain.tournament.elimination import (
    bracket_order,
    bracket_size,
    elimination_rounds,
    pair_single_elimination,
)
from domain.tournament.formats import Format, default_rounds, pair_round
from domain.tournament.model import (
    TABLE_SIZES,
    Bye,
    MatchResult,
    Penalty,
    ReplaceResult,
    Round,
    Ruling,
    Table,
    table_sizes,
)
from domain.tournament.round_robin import (
    pair_round_robin,
    round_robin_rounds,
    round_robin_schedule,
)
from domain.tournament.standings import (
    BYE_POINTS,
    DEFAULT_TIE_BREAKS,
    Standing,
    TieBreak,
    effective_results,
    points_of,
    seat_points,
    standings,
)
from domain.tournament.swiss import pair_swiss, swiss_ranking
from domain.tournament.verdicts import Penalise, ReplaceWith, ReplayFrom, RulingKind, Stands

__all__ = [
    "BYE_POINTS",
    "DEFAULT_TIE_BREAKS",
    "TABLE_SIZES",
    "Bye",
    "Format",
    "MatchResult",
    "Penalise",
    "Penalty",
    "ReplaceResult",
    "ReplaceWith",
    "ReplayFrom",
    "Round",
    "Ruling",
    "RulingKind",
    "Standing",
    "Stands",
    "Table",
    "TieBreak",
    "Tournament",
    "bracket_order",
    "bracket_size",
    "default_rounds",
    "duplicate_seed",
    "effective_results",
    "elimination_rounds",
    "pair_round",
    "pair_round_robin",
    "pair_single_elimination",
    "pair_swiss",
    "points_of",
    "round_robin_rounds",
    "round_robin_schedule",
    "seat_points",
    "standings",
    "swiss_ranking",
    "table_sizes",
]
