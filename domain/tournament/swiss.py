"""Swiss: entrants on the same points meet, and nobody meets anyone twice if avoidable (TO-3).

No draw is made: every choice goes by the ranking (points, then seed order), so a round's
pairing is a function of the entrants still in, the results and the rulings so far. The
seed order itself is the tournament's (the aggregate may draw it from its committed seed
at the start).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from domain.tournament.model import (
    Bye,
    MatchResult,
    Round,
    Ruling,
    Table,
    byes_had,
    check_round_number,
    check_table_size,
    meetings,
    pair_key,
    points_word,
    table_sizes,
)
from domain.tournament.standings import effective_results, points_of


@dataclass(frozen=True)
class _Pair:
    high: str
    low: str
    reason: str


def swiss_ranking(
    entrants: Sequence[str], results: Sequence[MatchResult], rulings: Sequence[Ruling] = ()
) -> tuple[list[str], dict[str, Fraction]]:
    """TO-3.1: the entrants still in, by points (after rulings and penalties), then seed."""
    points = points_of(entrants, results, rulings)
    seed = {e: i for i, e in enumerate(entrants)}
    return sorted(entrants, key=lambda e: (-points[e], seed[e])), points


def pair_swiss(
    entrants: Sequence[str],
    results: Sequence[MatchResult],
    round_number: int,
    table_size: int = 2,
    rulings: Sequence[Ruling] = (),
    min_seats: int = 2,
) -> Round:
    """Round ``round_number`` of a Swiss tournament among ``entrants``: those still in,
    in seed order (TO-3.6: a withdrawn entrant is simply not among them). ``results`` and
    ``rulings`` are everything so far, withdrawn entrants' included."""
    check_round_number(round_number)
    check_table_size(table_size, min_seats)
    if len(entrants) < 2:
        alone = tuple(Bye(e, "bye: the only entrant left") for e in entrants)
        return Round(round_number, (), alone)
    played = effective_results(results, rulings)
    ranked, points = swiss_ranking(entrants, played, rulings)
    if table_size == 2:
        return _pair_two_seats(round_number, ranked, points, played)
    return _pair_tables(round_number, ranked, points, played, table_size, min_seats)


def _pair_two_seats(
    round_number: int, ranked: list[str], points: dict[str, Fraction], played: list[MatchResult]
) -> Round:
    """TO-3.2 to TO-3.4 at two-seat tables."""
    met = meetings(played)
    had = byes_had(played)
    fewest = min(had[e] for e in ranked)
    # TO-3.2: the bye goes to an entrant with the fewest byes (normally none), the lowest
    # ranked first; a higher one only if that lets the others be paired with fewer
    # repeated meetings (TO-3.4).
    candidates: list[str | None] = (
        [e for e in reversed(ranked) if had[e] == fewest] if len(ranked) % 2 else [None]
    )
    for allowed in range(len(ranked) // 2 + 1):
        for n, bye in enumerate(candidates):
            rest = tuple(e for e in ranked if e != bye)
            pairs = _search(rest, points, met, allowed, set())
            if pairs is None:
                continue
            byes: tuple[Bye, ...] = ()
            if bye is not None:
                why = (
                    "bye: lowest-ranked entrant without a bye"
                    if fewest == 0
                    else "bye: everyone has had one; lowest-ranked entrant with the fewest"
                )
                if n:
                    why += f", above {n} lower who would leave someone to meet again"
                byes = (Bye(bye, why),)
            firsts = Counter(r.seats[0] for r in played if not r.is_bye)
            tables = tuple(
                Table(i, _seat_order(p, firsts), p.reason) for i, p in enumerate(pairs, start=1)
            )
            return Round(round_number, tables, byes)
    raise AssertionError("some pairing always exists")  # pragma: no cover


def _seat_order(pair: _Pair, firsts: Counter[str]) -> tuple[str, str]:
    """TO-3.3: the entrant who has sat first less often sits first; if equal, the higher
    ranked."""
    if firsts[pair.low] < firsts[pair.high]:
        return pair.low, pair.high
    return pair.high, pair.low


def _search(
    remaining: tuple[str, ...],
    points: dict[str, Fraction],
    met: Counter[frozenset[str]],
    allowed: int,
    failed: set[tuple[tuple[str, ...], int]],
) -> list[_Pair] | None:
    """The first pairing of ``remaining`` (ranked) with at most ``allowed`` repeated
    meetings, in the order of TO-3.3: the highest-ranked entrant ``p`` takes each
    candidate in turn, and the rest are paired the same way; ``failed`` remembers
    what cannot be completed."""
    if not remaining:
        return []
    if (remaining, allowed) in failed:
        return None
    p = remaining[0]
    group = [e for e in remaining if points[e] == points[p]]
    below = list(remaining[len(group) :])
    if len(group) == 1:
        order = below
    else:
        half = len(group) // 2
        order = group[half:] + group[half - 1 : 0 : -1] + below
    for c in order:
        repeat = met[pair_key(p, c)] > 0
        if repeat and allowed == 0:
            continue
        rest = tuple(e for e in remaining if e not in (p, c))
        tail = _search(rest, points, met, allowed - repeat, failed)
        if tail is None:
            continue
        return [_Pair(p, c, _reason(p, c, group, points, repeat)), *tail]
    failed.add((remaining, allowed))
    return None


def _reason(p: str, c: str, group: list[str], points: dict[str, Fraction], repeat: bool) -> str:
    if len(group) == 1 or c not in group:
        why = (
            f"Swiss: floated down from {points_word(points[p])} "
            f"to score group {points_word(points[c])}"
        )
    elif c == group[len(group) // 2]:
        why = f"Swiss: score group {points_word(points[p])}, top half against bottom half"
    else:
        why = (
            f"Swiss: score group {points_word(points[p])}, "
            "next opponent in the group so that no one meets again"
        )
    if repeat:
        why += "; a repeat meeting, as every pairing of this round has one"
    return why


def _pair_tables(
    round_number: int,
    ranked: list[str],
    points: dict[str, Fraction],
    played: list[MatchResult],
    table_size: int,
    min_seats: int,
) -> Round:
    """TO-3.5: three or four seats. Tables take TO-1.2's sizes; the byes go to the
    lowest-ranked entrants with the fewest byes. Then each table in turn takes the
    highest-ranked unseated entrant and fills each further seat with the highest-ranked
    unseated entrant who has met those already at the table the fewest times."""
    met = meetings(played)
    had = byes_had(played)
    rank = {e: i for i, e in enumerate(ranked)}
    sizes, bye_count = table_sizes(len(ranked), table_size, min_seats)
    byes = sorted(ranked, key=lambda e: (had[e], -rank[e]))[:bye_count]
    unseated = [e for e in ranked if e not in byes]
    tables: list[Table] = []
    for size in sizes:
        seats = [unseated.pop(0)]
        skipped = False
        while len(seats) < size:
            nxt = min(unseated, key=lambda e: (sum(met[pair_key(e, s)] for s in seats), rank[e]))
            skipped |= nxt != unseated[0]
            seats.append(nxt)
            unseated.remove(nxt)
        repeats = sum(met[pair_key(a, b)] > 0 for i, a in enumerate(seats) for b in seats[i + 1 :])
        why = f"Swiss: next {size} in the ranking from {points_word(points[seats[0]])}"
        if skipped:
            why += ", passing over those who met someone at the table"
        if repeats:
            why += f"; {repeats} repeat meeting(s), none of the unseated being new to the table"
        tables.append(Table(len(tables) + 1, tuple(seats), why))
    return Round(
        round_number,
        tuple(tables),
        tuple(
            Bye(e, "bye: lowest-ranked entrant without a bye")
            if had[e] == 0
            else Bye(e, "bye: everyone has had one; lowest-ranked entrant with the fewest")
            for e in byes
        ),
    )
