"""Standings from results and rulings, each tie-break deciding at least once (TO-5 to TO-7)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from tournament_support import beat

from domain.kernel import InvalidArgument
from domain.tournament import (
    MatchResult,
    Penalty,
    ReplaceResult,
    TieBreak,
    seat_points,
    standings,
)

FOUR = list("ABCD")

# Two rounds: A beats B, C beats D; then A beats C, D beats B.
TWO_ROUNDS = [
    beat(1, 1, ("A", "B"), "A"),
    beat(1, 2, ("C", "D"), "C"),
    beat(2, 1, ("A", "C"), "A"),
    beat(2, 2, ("D", "B"), "D"),
]

# A full round robin of four: A beats B and C, D beats A; B beats C and D; C beats D.
# Points: A 2, B 2, C 1, D 1. Buchholz is everyone else's points: A 4, B 4, C 5, D 5.
ROUND_ROBIN = [
    beat(1, 1, ("A", "D"), "D"),
    beat(1, 2, ("B", "C"), "B"),
    beat(2, 1, ("D", "B"), "B"),
    beat(2, 2, ("C", "A"), "A"),
    beat(3, 1, ("C", "D"), "C"),
    beat(3, 2, ("A", "B"), "A"),
]


def order(rows: tuple[object, ...]) -> list[tuple[str, TieBreak | None]]:
    return [(r.entrant, r.separated_by) for r in rows]  # type: ignore[attr-defined]


def test_to_7_2_buchholz_separates_equal_points() -> None:
    # C and D have 1 point; C met A (2) and D (1): Buchholz 3; D met C (1), B (0): 1.
    # (A met B and C: 1; B met A and D: 3.)
    rows = standings(FOUR, TWO_ROUNDS)
    assert order(rows) == [
        ("A", TieBreak.POINTS),
        ("C", TieBreak.BUCHHOLZ),
        ("D", TieBreak.POINTS),
        ("B", None),
    ]
    assert [r.points for r in rows] == [2, 1, 1, 0]
    assert [r.buchholz for r in rows] == [1, 3, 1, 3]
    assert [r.rank for r in rows] == [1, 2, 3, 4]


def test_to_7_4_sonneborn_berger_when_buchholz_is_level() -> None:
    # A beat B (2) and C (1): SB 3; B beat C and D: 2. C beat D (1): 1; D beat A (2): 2.
    rows = standings(FOUR, ROUND_ROBIN)
    assert order(rows) == [
        ("A", TieBreak.SONNEBORN_BERGER),
        ("B", TieBreak.POINTS),
        ("D", TieBreak.SONNEBORN_BERGER),
        ("C", None),
    ]
    assert [r.sonneborn_berger for r in rows] == [3, 2, 2, 1]
    assert [r.buchholz for r in rows] == [4, 4, 5, 5]


def test_to_7_5_head_to_head_when_named_before_sonneborn_berger() -> None:
    rows = standings(FOUR, ROUND_ROBIN, tie_breaks=(TieBreak.BUCHHOLZ, TieBreak.HEAD_TO_HEAD))
    assert order(rows) == [
        ("A", TieBreak.HEAD_TO_HEAD),
        ("B", TieBreak.POINTS),
        ("C", TieBreak.HEAD_TO_HEAD),
        ("D", None),
    ]
    assert [r.head_to_head for r in rows] == [1, 0, 1, 0]


def test_to_7_5_head_to_head_separates_nobody_unless_all_have_met() -> None:
    # A, B, C, D after round 1 of TWO_ROUNDS: A and C on 1 point never met.
    rows = standings(FOUR, TWO_ROUNDS[:2], tie_breaks=(TieBreak.HEAD_TO_HEAD,))
    assert order(rows)[0] == ("A", TieBreak.SEED)
    assert rows[0].head_to_head is None


def test_to_7_3_median_buchholz_and_seed_decide() -> None:
    six = list("ABCDEF")
    results = [
        beat(1, 1, ("A", "D"), "A"),
        beat(1, 2, ("B", "F"), "B"),
        beat(1, 3, ("C", "E"), "C"),
        beat(2, 1, ("A", "B"), "A"),
        beat(2, 2, ("C", "D"), "D"),
        beat(2, 3, ("E", "F"), "E"),
        beat(3, 1, ("A", "C"), "A"),
        beat(3, 2, ("B", "E"), "B"),
        beat(3, 3, ("D", "F"), "D"),
    ]
    # Points: A 3, B 2, D 2, C 1, E 1, F 0. B met F 0, A 3, E 1: median 1; D met A 3,
    # C 1, F 0: median 1, so seed. C met E 1, D 2, A 3: median 2; E met C 1, F 0, B 2:
    # median 1. (F met B 2, E 1, D 2: median 2.)
    rows = standings(six, results, tie_breaks=(TieBreak.MEDIAN_BUCHHOLZ,))
    assert order(rows) == [
        ("A", TieBreak.POINTS),
        ("B", TieBreak.SEED),
        ("D", TieBreak.POINTS),
        ("C", TieBreak.MEDIAN_BUCHHOLZ),
        ("E", TieBreak.POINTS),
        ("F", None),
    ]
    assert [r.median_buchholz for r in rows] == [2, 1, 1, 2, 1, 2]


def test_to_5_2_points_by_place_at_four_seats_with_a_shared_place() -> None:
    result = MatchResult(1, 1, ("A", "B", "C", "D"), (1, 2, 2, 4))
    assert [seat_points(result, e) for e in "ABCD"] == [1, Fraction(1, 2), Fraction(1, 2), 0]
    three = MatchResult(1, 1, ("A", "B", "C"), (1, 2, 3))
    assert [seat_points(three, e) for e in "ABC"] == [1, Fraction(1, 2), 0]
    draw = MatchResult(1, 1, ("A", "B"), (1, 1))
    assert [seat_points(draw, e) for e in "AB"] == [Fraction(1, 2), Fraction(1, 2)]


def test_to_5_2_a_forfeit_scores_nothing_and_to_5_3_a_bye_scores_a_win() -> None:
    forfeit = MatchResult(1, 1, ("A", "B"), (1, 2), forfeited=frozenset({"B"}))
    rows = standings(["A", "B", "C"], [forfeit, MatchResult.bye(1, "C")])
    assert [(r.entrant, r.points) for r in rows] == [("A", 1), ("C", 1), ("B", 0)]
    assert rows[1].byes == 1 and rows[1].played == 0 and rows[1].buchholz == 0


def test_to_6_1_a_ruling_replaces_a_result_and_to_6_2_a_penalty_takes_points() -> None:
    # Round 2 table 2 is ruled a win for B; A loses a point for conduct.
    rulings = [ReplaceResult(2, 2, (2, 1)), Penalty(2, "A", Fraction(1), "conduct")]
    rows = standings(FOUR, TWO_ROUNDS, rulings, withdrawn={"D"})
    assert {r.entrant: r.points for r in rows} == {"A": 1, "B": 1, "C": 1, "D": 0}
    assert rows[-1].entrant == "D" and rows[-1].withdrawn


def test_to_6_1_a_ruling_must_name_a_table_with_a_result() -> None:
    with pytest.raises(InvalidArgument) as refused:
        standings(FOUR, TWO_ROUNDS, [ReplaceResult(3, 1, (1, 2))])
    assert refused.value.rule == "TO-6.1"


def test_to_5_1_places_must_be_a_ranking() -> None:
    for places in [(1, 2, 2, 3), (1, 2, 4, 4), (2,)]:
        with pytest.raises(InvalidArgument) as refused:
            MatchResult(1, 1, tuple("ABCD"[: len(places)]), places)
        assert refused.value.rule == "TO-5.1"
    with pytest.raises(InvalidArgument):
        MatchResult(1, 1, ("A", "B"), (1, 2), forfeited=frozenset({"C"}))


def test_to_7_1_points_and_seed_are_fixed_and_each_tie_break_named_once() -> None:
    for tie_breaks in [(TieBreak.POINTS,), (TieBreak.SEED,), (TieBreak.BUCHHOLZ,) * 2]:
        with pytest.raises(InvalidArgument) as refused:
            standings(FOUR, TWO_ROUNDS, tie_breaks=tie_breaks)
        assert refused.value.rule == "TO-7.1"
