"""Single-elimination brackets against hand-worked examples (TO-4)."""

from __future__ import annotations

import pytest
from tournament_support import beat, byes_of, seats_of

from domain.kernel import InvalidArgument, RuleViolation
from domain.tournament import (
    MatchResult,
    ReplaceResult,
    bracket_order,
    elimination_rounds,
    pair_single_elimination,
)

EIGHT = list("ABCDEFGH")
SIX = list("ABCDEF")


def test_to_4_2_bracket_order_by_doubling() -> None:
    assert bracket_order(2) == [1, 2]
    assert bracket_order(4) == [1, 4, 2, 3]
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert elimination_rounds(8) == 3
    assert elimination_rounds(6) == 3
    assert elimination_rounds(5) == 3


def test_to_4_2_eight_entrants_through_to_the_final() -> None:
    r1 = pair_single_elimination(EIGHT, [], 1)
    assert seats_of(r1) == [("A", "H"), ("D", "E"), ("B", "G"), ("C", "F")]
    assert r1.tables[1].reason == (
        "single elimination, round 1, bracket match 2: seed 4 against seed 5"
    )
    results = [
        beat(1, 1, ("A", "H"), "A"),
        beat(1, 2, ("D", "E"), "E"),
        beat(1, 3, ("B", "G"), "B"),
        beat(1, 4, ("C", "F"), "F"),
    ]
    r2 = pair_single_elimination(EIGHT, results, 2)
    assert seats_of(r2) == [("A", "E"), ("B", "F")]
    results += [beat(2, 1, ("A", "E"), "E"), beat(2, 2, ("B", "F"), "B")]
    r3 = pair_single_elimination(EIGHT, results, 3)
    assert seats_of(r3) == [("E", "B")]
    assert r3.tables[0].reason == (
        "single elimination, round 3, bracket match 1: seed 5 against seed 2"
    )


def test_to_4_2_six_entrants_the_top_two_seeds_have_byes() -> None:
    r1 = pair_single_elimination(SIX, [], 1)
    # Bracket of 8: 1-(8), 4-5, 2-(7), 3-6.
    assert seats_of(r1) == [("D", "E"), ("C", "F")]
    assert byes_of(r1) == ["A", "B"]
    assert r1.byes[0].reason == (
        "bye: seed 1 of 6; a bracket of 8 has 2 byes, and the top seeds take them"
    )
    results = [beat(1, 1, ("D", "E"), "D"), beat(1, 2, ("C", "F"), "F")]
    r2 = pair_single_elimination(SIX, results, 2)
    assert seats_of(r2) == [("A", "D"), ("B", "F")]
    assert not r2.byes


def test_to_4_4_a_withdrawn_entrants_opponent_goes_on() -> None:
    # F won in round 1 and then withdrew: B goes on with a bye; the result stands.
    results = [beat(1, 1, ("D", "E"), "D"), beat(1, 2, ("C", "F"), "F")]
    r2 = pair_single_elimination(SIX, results, 2, withdrawn={"F": 2})
    assert seats_of(r2) == [("A", "D")]
    assert byes_of(r2) == ["B"]
    assert r2.byes[0].reason == "bye: no opponent in round 2, the one due withdrew"
    results += [beat(2, 1, ("A", "D"), "A")]
    final = pair_single_elimination(SIX, results, 3, withdrawn={"F": 2})
    assert seats_of(final) == [("A", "B")]


def test_to_4_4_withdrawn_before_round_1_gives_a_bye_then() -> None:
    r1 = pair_single_elimination(SIX, [], 1, withdrawn={"E": 1})
    assert seats_of(r1) == [("C", "F")]
    assert byes_of(r1) == ["A", "D", "B"]
    r2 = pair_single_elimination(SIX, [beat(1, 1, ("C", "F"), "C")], 2, withdrawn={"E": 1})
    assert seats_of(r2) == [("A", "D"), ("B", "C")]


def test_to_4_5_a_round_needs_every_result_of_the_one_before() -> None:
    with pytest.raises(RuleViolation) as refused:
        pair_single_elimination(SIX, [beat(1, 1, ("D", "E"), "D")], 2)
    assert refused.value.rule == "TO-4.5"


def test_to_4_3_a_drawn_table_needs_a_ruling_naming_a_winner() -> None:
    results = [MatchResult(1, 1, ("D", "E"), (1, 1)), beat(1, 2, ("C", "F"), "C")]
    with pytest.raises(RuleViolation) as refused:
        pair_single_elimination(SIX, results, 2)
    assert refused.value.rule == "TO-4.3"
    ruled = pair_single_elimination(SIX, results, 2, rulings=[ReplaceResult(1, 1, (2, 1))])
    assert seats_of(ruled) == [("A", "E"), ("B", "C")]


def test_to_4_1_two_seats_only_and_no_round_past_the_final() -> None:
    with pytest.raises(InvalidArgument) as refused:
        pair_single_elimination(EIGHT, [], 1, table_size=4)
    assert refused.value.rule == "TO-4.1"
    with pytest.raises(InvalidArgument) as refused:
        pair_single_elimination(EIGHT, [], 4)
    assert refused.value.rule == "TO-4.2"


def test_to_4_4_a_bracket_recomputes_each_round_with_the_withdrawals_of_its_time() -> None:
    # E withdrew before round 1, so D went on with a bye; D then beat A in round 2 and
    # withdrew before the final. The final is C's bye, not A's: D's win stands.
    withdrawn = {"E": 1, "D": 3}
    results = [beat(1, 1, ("C", "F"), "C")]
    r2 = pair_single_elimination(SIX, results, 2, withdrawn=withdrawn)
    assert seats_of(r2) == [("A", "D"), ("B", "C")]
    results += [beat(2, 1, ("A", "D"), "D"), beat(2, 2, ("B", "C"), "C")]
    final = pair_single_elimination(SIX, results, 3, withdrawn=withdrawn)
    assert seats_of(final) == []
    assert byes_of(final) == ["C"]
