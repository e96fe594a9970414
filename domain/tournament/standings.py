"""Standings from results and rulings alone, with named tie-breaks (TO-5, TO-6, TO-7).

Anyone holding a tournament's events can recompute its standings with :func:`standings`:
the function reads only the match results and the rulings, in the order recorded, and the
seed order. Each row says which criterion put it ahead of the next row, so a result sheet
explains itself.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from domain.kernel.errors import InvalidArgument
from domain.tournament.model import (
    MatchResult,
    Penalty,
    ReplaceResult,
    Ruling,
    check_places,
    pair_key,
)

#: What a bye scores (TO-5.3): as much as a win.
BYE_POINTS = Fraction(1)


class TieBreak(enum.Enum):
    """The criteria standings are ordered by. ``POINTS`` always comes first and ``SEED``
    always last (TO-7.1); an organiser chooses the others and their order."""

    POINTS = "points"
    BUCHHOLZ = "buchholz"
    MEDIAN_BUCHHOLZ = "median-buchholz"
    SONNEBORN_BERGER = "sonneborn-berger"
    HEAD_TO_HEAD = "head-to-head"
    SEED = "seed"


#: The tie-breaks used when an organiser names none.
DEFAULT_TIE_BREAKS = (TieBreak.BUCHHOLZ, TieBreak.SONNEBORN_BERGER, TieBreak.HEAD_TO_HEAD)


@dataclass(frozen=True)
class Standing:
    """One row of the standings.

    ``separated_by`` is the criterion that put this row ahead of the next one (None on
    the last row): the first of points, the tie-breaks in the organiser's order, and seed
    in which the two differ. ``head_to_head`` is the score among the entrants still tied
    when that tie-break was applied, or None if it was not reached or could not apply
    (TO-7.5).
    """

    rank: int
    entrant: str
    seed: int
    points: Fraction
    buchholz: Fraction
    median_buchholz: Fraction
    sonneborn_berger: Fraction
    head_to_head: Fraction | None
    played: int
    byes: int
    withdrawn: bool
    separated_by: TieBreak | None


def effective_results(
    results: Iterable[MatchResult], rulings: Iterable[Ruling] = ()
) -> list[MatchResult]:
    """The results as the rulings leave them (TO-6.1): each :class:`ReplaceResult`, in
    order, replaces the places and forfeits of the table it names; a later ruling on the
    same table replaces an earlier one."""
    out = list(results)
    where = {(r.round, r.table): i for i, r in enumerate(out) if not r.is_bye}
    for ruling in rulings:
        if not isinstance(ruling, ReplaceResult):
            continue
        index = where.get((ruling.round, ruling.table))
        if index is None:
            raise InvalidArgument(
                "TO-6.1",
                f"a ruling names table {ruling.table} of round {ruling.round}, which has no result",
            )
        old = out[index]
        check_places("TO-6.1", ruling.places)
        if len(ruling.places) != len(old.seats):
            raise InvalidArgument("TO-6.1", "a ruling gives one place for each seat")
        out[index] = MatchResult(old.round, old.table, old.seats, ruling.places, ruling.forfeited)
    return out


def seat_points(result: MatchResult, entrant: str) -> Fraction:
    """What one seat of one result scores (TO-5.2, TO-5.3).

    A bye scores :data:`BYE_POINTS`. A forfeiting seat scores 0. Otherwise, at a table of
    ``k`` seats, finishing ``j``-th is worth ``(k - j) / (k - 1)``: the winner 1, the last
    0, evenly between; seats tied for a place share the points of the positions they
    cover. At two seats: a win 1, a draw ½, a loss 0.
    """
    if result.is_bye:
        return BYE_POINTS
    if entrant in result.forfeited:
        return Fraction(0)
    k = len(result.seats)
    place = result.place_of(entrant)
    tied = result.places.count(place)
    return (Fraction(k - place) - Fraction(tied - 1, 2)) / (k - 1)


def pairwise_score(result: MatchResult, a: str, b: str) -> Fraction:
    """How ``a`` did against ``b`` at a table they shared: 1 ahead, ½ level, 0 behind. A
    forfeiting seat is behind every seat that did not forfeit, and level with another
    that did. Sonneborn–Berger and head-to-head are built on this (TO-7.4, TO-7.5)."""
    a_out, b_out = a in result.forfeited, b in result.forfeited
    if a_out or b_out:
        return Fraction(1, 2) if a_out and b_out else Fraction(0 if a_out else 1)
    pa, pb = result.place_of(a), result.place_of(b)
    return Fraction(1) if pa < pb else Fraction(1, 2) if pa == pb else Fraction(0)


def points_of(
    entrants: Iterable[str], results: Iterable[MatchResult], rulings: Iterable[Ruling] = ()
) -> dict[str, Fraction]:
    """Each entrant's points: the points of every result, as rulings leave them, less
    every penalty (TO-5.2, TO-6.2)."""
    rulings = list(rulings)
    totals = dict.fromkeys(entrants, Fraction(0))
    for result in effective_results(results, rulings):
        for entrant in result.seats:
            totals[entrant] = totals.get(entrant, Fraction(0)) + seat_points(result, entrant)
    for ruling in rulings:
        if isinstance(ruling, Penalty):
            totals[ruling.entrant] = totals.get(ruling.entrant, Fraction(0)) - ruling.points
    return totals


def check_tie_breaks(tie_breaks: Sequence[TieBreak]) -> None:
    """TO-7.1: points first and seed last are fixed; each other tie-break at most once."""
    if TieBreak.POINTS in tie_breaks or TieBreak.SEED in tie_breaks:
        raise InvalidArgument("TO-7.1", "points always come first and seed order last")
    if len(set(tie_breaks)) != len(tie_breaks):
        raise InvalidArgument("TO-7.1", "each tie-break is named at most once")


def standings(
    entrants: Sequence[str],
    results: Iterable[MatchResult],
    rulings: Iterable[Ruling] = (),
    tie_breaks: Sequence[TieBreak] = DEFAULT_TIE_BREAKS,
    withdrawn: Collection[str] = (),
) -> tuple[Standing, ...]:
    """The standings of every entrant (``entrants`` in seed order, withdrawn ones too).

    TO-7.1: rows are ordered by points, then by each of ``tie_breaks`` in turn among the
    entrants still level, then by seed; so ranks never repeat. Tie-breaks (TO-7.2 to
    TO-7.5) use the points after rulings and penalties.
    """
    check_tie_breaks(tie_breaks)
    rulings = list(rulings)
    played = effective_results(results, rulings)
    seed = {e: i for i, e in enumerate(entrants, start=1)}
    unknown = {e for r in played for e in r.seats} - seed.keys()
    if unknown:
        raise InvalidArgument("TO-5.1", f"results name entrants not in the tournament: {unknown}")
    points = points_of(entrants, played, [r for r in rulings if isinstance(r, Penalty)])

    # Opponent points met, and how each did against each opponent, per table shared.
    opposition: dict[str, list[Fraction]] = defaultdict(list)
    sonneborn: dict[str, Fraction] = defaultdict(Fraction)
    against: dict[frozenset[str], dict[str, Fraction]] = defaultdict(lambda: defaultdict(Fraction))
    tables: dict[str, int] = defaultdict(int)
    byes: dict[str, int] = defaultdict(int)
    for result in played:
        if result.is_bye:
            byes[result.seats[0]] += 1
            continue
        for a in result.seats:
            tables[a] += 1
            for b in result.seats:
                if a == b:
                    continue
                score = pairwise_score(result, a, b)
                opposition[a].append(points[b])
                sonneborn[a] += score * points[b]
                against[pair_key(a, b)][a] += score

    def buchholz(e: str) -> Fraction:
        return sum(opposition[e], Fraction(0))

    def median_buchholz(e: str) -> Fraction:
        met = sorted(opposition[e])
        return sum(met[1:-1] if len(met) >= 3 else met, Fraction(0))

    head_to_head: dict[str, Fraction] = {}

    def values(criterion: TieBreak, group: list[str]) -> Mapping[str, Fraction]:
        """Each member's value for ``criterion`` (higher is better) within ``group``."""
        if criterion is TieBreak.POINTS:
            return {e: points[e] for e in group}
        if criterion is TieBreak.BUCHHOLZ:
            return {e: buchholz(e) for e in group}
        if criterion is TieBreak.MEDIAN_BUCHHOLZ:
            return {e: median_buchholz(e) for e in group}
        if criterion is TieBreak.SONNEBORN_BERGER:
            return {e: sonneborn[e] for e in group}
        if criterion is TieBreak.HEAD_TO_HEAD:
            if any(pair_key(a, b) not in against for a, b in combinations(group, 2)):
                return dict.fromkeys(group, Fraction(0))
            scores = {
                a: sum((against[pair_key(a, b)][a] for b in group if b != a), Fraction(0))
                for a in group
            }
            head_to_head.update(scores)
            return scores
        return {e: Fraction(-seed[e]) for e in group}

    criteria = [TieBreak.POINTS, *tie_breaks, TieBreak.SEED]

    def refine(group: list[str], level: int) -> tuple[list[str], list[TieBreak]]:
        """``group`` in order, and the criterion between each two consecutive members."""
        if len(group) == 1:
            return group, []
        criterion = criteria[level]
        value = values(criterion, group)
        order: list[str] = []
        between: list[TieBreak] = []
        for i, v in enumerate(sorted(set(value.values()), reverse=True)):
            if i:
                between.append(criterion)
            members, inner = refine([e for e in group if value[e] == v], level + 1)
            order += members
            between += inner
        return order, between

    order, between = refine(list(entrants), 0)
    gone = set(withdrawn)
    return tuple(
        Standing(
            rank=rank,
            entrant=e,
            seed=seed[e],
            points=points[e],
            buchholz=buchholz(e),
            median_buchholz=median_buchholz(e),
            sonneborn_berger=sonneborn[e],
            head_to_head=head_to_head.get(e),
            played=tables[e],
            byes=byes[e],
            withdrawn=e in gone,
            separated_by=between[rank - 1] if rank <= len(between) else None,
        )
        for rank, e in enumerate(order, start=1)
    )
