"""Properties of the pairings over many fields and results (Hypothesis)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.tournament import (
    MatchResult,
    elimination_rounds,
    pair_round_robin,
    pair_single_elimination,
    pair_swiss,
    round_robin_rounds,
)
from domain.tournament.model import byes_had, meetings, pair_key


def names(n: int) -> list[str]:
    return [f"e{i}" for i in range(1, n + 1)]


@given(st.integers(min_value=2, max_value=16))
def test_to_2_1_circle_method_meets_every_pair_exactly_once(n: int) -> None:
    entrants = names(n)
    rounds = [pair_round_robin(entrants, r) for r in range(1, round_robin_rounds(entrants) + 1)]
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    met = Counter(pair_key(*t.seats) for r in rounds for t in r.tables)
    assert set(met) == {pair_key(a, b) for a, b in combinations(entrants, 2)}
    assert set(met.values()) == {1}
    for r in rounds:
        seated = [e for t in r.tables for e in t.seats] + [b.entrant for b in r.byes]
        assert sorted(seated) == sorted(entrants)
    assert Counter(b.entrant for r in rounds for b in r.byes) == (
        Counter(entrants) if n % 2 else Counter()
    )


@settings(max_examples=40)
@given(st.integers(min_value=3, max_value=12), st.sampled_from([3, 4]))
def test_to_2_2_spread_schedule_meets_every_pair_and_seats_everyone_once(
    n: int, table_size: int
) -> None:
    entrants = names(n)
    total = round_robin_rounds(entrants, table_size)
    rounds = [pair_round_robin(entrants, r, table_size) for r in range(1, total + 1)]
    met = {pair_key(a, b) for r in rounds for t in r.tables for a, b in combinations(t.seats, 2)}
    assert met == {pair_key(a, b) for a, b in combinations(entrants, 2)}
    for r in rounds:
        assert sorted(r.entrants()) == sorted(entrants)
        assert all(2 <= len(t.seats) <= table_size for t in r.tables)


def perfect_matchings(people: list[str]) -> Iterator[list[tuple[str, str]]]:
    if not people:
        yield []
        return
    first, rest = people[0], people[1:]
    for i, other in enumerate(rest):
        for tail in perfect_matchings(rest[:i] + rest[i + 1 :]):
            yield [(first, other), *tail]


def repeat_free_exists(entrants: list[str], results: list[MatchResult]) -> bool:
    """Brute force: some choice of bye (among the fewest byes) and pairing meets no one
    again."""
    met = meetings(results)
    had = byes_had(results)
    fewest = min(had[e] for e in entrants)
    choices = [e for e in entrants if had[e] == fewest] if len(entrants) % 2 else [None]
    for bye in choices:
        rest = [e for e in entrants if e != bye]
        for matching in perfect_matchings(rest):
            if not any(met[pair_key(a, b)] for a, b in matching):
                return True
    return False


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(min_value=2, max_value=8), st.integers(min_value=1, max_value=6))
def test_to_3_4_swiss_meets_no_one_again_when_a_pairing_avoids_it(
    data: st.DataObject, n: int, rounds: int
) -> None:
    entrants = names(n)
    results: list[MatchResult] = []
    for number in range(1, rounds + 1):
        r = pair_swiss(entrants, results, number)
        assert sorted(r.entrants()) == sorted(entrants)
        met = meetings(results)
        repeats = sum(met[pair_key(*t.seats)] > 0 for t in r.tables)
        if repeat_free_exists(entrants, results):
            assert repeats == 0
        had = byes_had(results)
        for bye in r.byes:
            # TO-3.2: no second bye while someone still in has had none.
            assert had[bye.entrant] == min(had[e] for e in entrants)
        for t in r.tables:
            places = data.draw(st.sampled_from([(1, 2), (2, 1), (1, 1)]))
            results.append(MatchResult(number, t.number, t.seats, places))
        results += [MatchResult.bye(number, b.entrant) for b in r.byes]
    byes = byes_had(results)
    assert max(byes.values(), default=0) - min(byes[e] for e in entrants) <= 1


@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(min_value=2, max_value=20))
def test_to_4_2_a_bracket_ends_with_one_winner(data: st.DataObject, n: int) -> None:
    entrants = names(n)
    gone: dict[str, int] = {}
    results: list[MatchResult] = []
    left = set(entrants)
    for number in range(1, elimination_rounds(n) + 1):
        if data.draw(st.booleans()) and len(left) > 2:
            quitter = data.draw(st.sampled_from(sorted(left)))
            gone[quitter] = number
        r = pair_single_elimination(entrants, results, number, withdrawn=gone)
        assert not r.entrants() & set(gone)
        assert len(r.entrants()) == len(set(r.entrants()))
        left = set()
        for t in r.tables:
            winner = data.draw(st.sampled_from(t.seats))
            results.append(
                MatchResult(number, t.number, t.seats, (1, 2) if winner == t.seats[0] else (2, 1))
            )
            left.add(winner)
        left |= {b.entrant for b in r.byes}
        if number == elimination_rounds(n):
            assert len(left) <= 1
