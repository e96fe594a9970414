"""Round robin pairings against hand-worked schedules (TO-1.2, TO-2)."""

from __future__ import annotations

import pytest
from tournament_support import byes_of, seats_of

from domain.kernel import InvalidArgument
from domain.tournament import pair_round_robin, round_robin_rounds, table_sizes

FOUR = ["1", "2", "3", "4"]
FIVE = ["1", "2", "3", "4", "5"]


def test_to_2_1_four_entrants_circle_method() -> None:
    # m = 4, m - 1 = 3: in round r, 4 meets r, and i + j = 2r (mod 3) for the others.
    rounds = [pair_round_robin(FOUR, r) for r in (1, 2, 3)]
    assert [seats_of(r) for r in rounds] == [
        [("1", "4"), ("2", "3")],
        [("4", "2"), ("3", "1")],
        [("3", "4"), ("1", "2")],
    ]
    assert all(not r.byes for r in rounds)
    assert rounds[1].tables[0].reason == "round robin, circle method, round 2"
    assert round_robin_rounds(FOUR) == 3


def test_to_2_1_five_entrants_one_bye_each_round() -> None:
    # A "bye" is number 6: in round r, entrant r meets it; i + j = 2r (mod 5) meet.
    rounds = [pair_round_robin(FIVE, r) for r in range(1, 6)]
    assert [seats_of(r) for r in rounds] == [
        [("2", "5"), ("3", "4")],
        [("3", "1"), ("4", "5")],
        [("4", "2"), ("5", "1")],
        [("5", "3"), ("1", "2")],
        [("1", "4"), ("2", "3")],
    ]
    assert [byes_of(r) for r in rounds] == [["1"], ["2"], ["3"], ["4"], ["5"]]
    assert rounds[0].byes[0].reason.startswith("bye: round robin, odd number of entrants")
    assert round_robin_rounds(FIVE) == 5


def test_to_2_4_a_withdrawn_entrants_opponent_has_a_bye_and_nobody_moves() -> None:
    # Round 3 of five: 3 sits out, 4 meets 2, 5 meets 1. Entrant 4 has withdrawn.
    r = pair_round_robin(FIVE, 3, withdrawn={"4"})
    assert seats_of(r) == [("5", "1")]
    assert r.tables[0].number == 1
    assert byes_of(r) == ["3", "2"]
    assert r.byes[1].reason == "bye: round robin, opponent 4 withdrew"
    assert "4" not in r.entrants()


def test_to_1_2_table_sizes_are_as_equal_as_possible() -> None:
    assert table_sizes(9, 4) == ([3, 3, 3], 0)
    assert table_sizes(5, 2) == ([2, 2], 1)
    assert table_sizes(7, 4) == ([4, 3], 0)
    assert table_sizes(5, 4) == ([3, 2], 0)
    assert table_sizes(5, 4, min_seats=3) == ([4], 1)
    assert table_sizes(2, 4, min_seats=3) == ([], 2)


def test_to_2_2_six_entrants_at_three_seats() -> None:
    # Worked by hand from TO-2.2's rule; six at three seats need at least four rounds
    # (round 1 meets 6 pairs, every later one at most 4 new of the 15).
    six = ["1", "2", "3", "4", "5", "6"]
    assert round_robin_rounds(six, 3) == 4
    rounds = [pair_round_robin(six, r, 3) for r in range(1, 5)]
    assert [seats_of(r) for r in rounds] == [
        [("1", "2", "3"), ("4", "5", "6")],
        [("1", "4", "2"), ("3", "5", "6")],
        [("1", "5", "2"), ("3", "4", "6")],
        [("6", "1", "2"), ("3", "4", "5")],
    ]
    assert rounds[3].tables[0].reason == "round robin, spread schedule, round 4"


def test_to_2_4_at_three_seats_a_table_plays_without_the_withdrawn() -> None:
    six = ["1", "2", "3", "4", "5", "6"]
    r = pair_round_robin(six, 2, 3, withdrawn={"4"})
    assert seats_of(r) == [("1", "2"), ("3", "5", "6")]
    assert r.tables[0].reason == "round robin, spread schedule, round 2, without 4 (withdrawn)"
    short = pair_round_robin(six, 2, 3, withdrawn={"4", "2"}, min_seats=2)
    assert byes_of(short) == ["1"]
    assert short.byes[0].reason == "bye: round robin, opponent 4, 2 withdrew"


def test_to_2_3_no_round_past_the_schedule() -> None:
    with pytest.raises(InvalidArgument) as refused:
        pair_round_robin(FOUR, 4)
    assert refused.value.rule == "TO-2.3"


def test_to_1_1_table_size_and_entrants_are_checked() -> None:
    for call in (
        lambda: pair_round_robin(FOUR, 1, table_size=5),
        lambda: pair_round_robin(["1"], 1),
        lambda: pair_round_robin(["1", "1"], 1),
        lambda: pair_round_robin(FOUR, 0),
        lambda: pair_round_robin(FOUR, 1, table_size=3, min_seats=4),
    ):
        with pytest.raises(InvalidArgument) as refused:
            call()
        assert refused.value.rule == "TO-1.1"
