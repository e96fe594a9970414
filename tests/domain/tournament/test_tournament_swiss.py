"""Swiss pairings against a hand-worked tournament of eight (TO-3)."""

from __future__ import annotations

from fractions import Fraction

from tournament_support import beat, byes_of, seats_of

from domain.tournament import MatchResult, Penalty, pair_swiss, swiss_ranking

EIGHT = list("ABCDEFGH")

# Round 1 (all on 0): A-E, B-F, C-G, D-H. Upsets on three tables.
ROUND_1 = [
    beat(1, 1, ("A", "E"), "A"),
    beat(1, 2, ("B", "F"), "F"),
    beat(1, 3, ("C", "G"), "G"),
    beat(1, 4, ("D", "H"), "H"),
]
# Round 2, as paired below: G-A, F-H, B-D, E-C.
ROUND_2 = [
    beat(2, 1, ("G", "A"), "A"),
    beat(2, 2, ("F", "H"), "H"),
    beat(2, 3, ("B", "D"), "B"),
    beat(2, 4, ("E", "C"), "C"),
]


def test_to_3_3_round_1_is_top_half_against_bottom_half() -> None:
    r = pair_swiss(EIGHT, [], 1)
    assert seats_of(r) == [("A", "E"), ("B", "F"), ("C", "G"), ("D", "H")]
    assert not r.byes
    assert {t.reason for t in r.tables} == {
        "Swiss: score group 0 points, top half against bottom half"
    }


def test_to_3_3_round_2_pairs_each_score_group_and_balances_first_seats() -> None:
    # Ranking: A F G H (1 point, by seed) then B C D E (0).
    ranked, points = swiss_ranking(EIGHT, ROUND_1)
    assert points["A"] == 1 and points["B"] == 0
    assert ranked == list("AFGHBCDE")
    r = pair_swiss(EIGHT, ROUND_1, 2)
    # A-G and F-H in the 1-point group; B-D and C-E in the 0-point group. A, B, C sat
    # first in round 1, so G, and E, take the first seat; F and H both sat second, so
    # the higher-ranked F sits first; B and D both sat first, so B.
    assert seats_of(r) == [("G", "A"), ("F", "H"), ("B", "D"), ("E", "C")]
    assert r.tables[0].reason == "Swiss: score group 1 point, top half against bottom half"
    assert r.tables[2].reason == "Swiss: score group 0 points, top half against bottom half"


def test_to_3_4_round_3_avoids_a_repeat_inside_the_score_group() -> None:
    # Points: A 2, H 2 | B 1, C 1, F 1, G 1 | D 0, E 0.
    # A-H. In {B, C, F, G} the top-half opponent of B is F, met in round 1: B takes G,
    # the next member; then C-F, then D-E. Nobody meets again.
    r = pair_swiss(EIGHT, ROUND_1 + ROUND_2, 3)
    assert seats_of(r) == [("H", "A"), ("G", "B"), ("C", "F"), ("D", "E")]
    assert r.tables[0].reason == "Swiss: score group 2 points, top half against bottom half"
    assert r.tables[1].reason == (
        "Swiss: score group 1 point, next opponent in the group so that no one meets again"
    )
    assert r.tables[2].reason == "Swiss: score group 1 point, top half against bottom half"


def test_to_3_6_a_withdrawal_leaves_seven_and_the_lowest_ranked_has_the_bye() -> None:
    # E withdraws after round 2: D, last of those still in, has the bye (TO-3.2).
    still_in = [e for e in EIGHT if e != "E"]
    r = pair_swiss(still_in, ROUND_1 + ROUND_2, 3)
    assert byes_of(r) == ["D"]
    assert r.byes[0].reason == "bye: lowest-ranked entrant without a bye"
    assert seats_of(r) == [("H", "A"), ("G", "B"), ("C", "F")]


def test_to_3_2_byes_go_round_before_anyone_has_a_second() -> None:
    three = ["A", "B", "C"]
    results: list[MatchResult] = []
    byes = []
    for n, winner in enumerate(["A", "C", "C"], start=1):
        r = pair_swiss(three, results, n)
        byes += byes_of(r)
        (table,) = r.tables
        results += [beat(n, 1, (table.seats[0], table.seats[1]), winner)]
        results += [MatchResult.bye(n, b) for b in byes_of(r)]
    # Round 1: C (last); round 2: A 1, C 1, B 0, so B; round 3: only A has had none.
    assert byes == ["C", "B", "A"]
    fourth = pair_swiss(three, results, 4)
    assert fourth.byes[0].reason.startswith("bye: everyone has had one")


def test_to_3_4_a_repeat_only_when_every_pairing_has_one() -> None:
    two = ["A", "B"]
    r = pair_swiss(two, [beat(1, 1, ("A", "B"), "A")], 2)
    assert seats_of(r) == [("B", "A")]
    assert r.tables[0].reason.endswith("a repeat meeting, as every pairing of this round has one")


def test_to_3_1_penalties_count_in_the_ranking() -> None:
    # After round 1: A F G H on 1 point; a penalty of 1 puts A among those on 0.
    ranked, points = swiss_ranking(EIGHT, ROUND_1, [Penalty(1, "A", Fraction(1))])
    assert ranked == list("FGHABCDE")
    assert points["A"] == 0


def test_to_3_5_three_seats_take_the_ranking_in_turn_passing_over_meetings() -> None:
    nine = list("ABCDEFGHI")
    first = pair_swiss(nine, [], 1, table_size=3)
    assert seats_of(first) == [("A", "B", "C"), ("D", "E", "F"), ("G", "H", "I")]
    results = [
        MatchResult(1, 1, ("A", "B", "C"), (1, 2, 3)),
        MatchResult(1, 2, ("D", "E", "F"), (1, 1, 1)),
        MatchResult(1, 3, ("G", "H", "I"), (1, 2, 3)),
    ]
    # TO-5.2 at three seats: 1, 1/2, 0; three tied share 1/2 each. Ranking: A G (1),
    # B D E F H (1/2), C I (0). Table 1: A, G, then B has met A: D. Table 2: B, E, then
    # F has met E: H. Table 3: F, C, I. Nobody meets again.
    second = pair_swiss(nine, results, 2, table_size=3)
    assert seats_of(second) == [("A", "G", "D"), ("B", "E", "H"), ("F", "C", "I")]
    assert [t.reason for t in second.tables] == [
        "Swiss: next 3 in the ranking from 1 point, passing over those who met someone "
        "at the table",
        "Swiss: next 3 in the ranking from 0.5 points, passing over those who met someone "
        "at the table",
        "Swiss: next 3 in the ranking from 0.5 points",
    ]


def test_to_3_5_four_seats_repeat_only_what_no_one_can_avoid() -> None:
    first = pair_swiss(EIGHT, [], 1, table_size=4)
    assert seats_of(first) == [("A", "B", "C", "D"), ("E", "F", "G", "H")]
    results = [
        MatchResult(1, 1, ("A", "B", "C", "D"), (1, 2, 3, 4)),
        MatchResult(1, 2, ("E", "F", "G", "H"), (1, 2, 3, 4)),
    ]
    # Ranking A E B F C G D H. Any table of four holds two from one first-round table.
    second = pair_swiss(EIGHT, results, 2, table_size=4)
    assert seats_of(second) == [("A", "E", "B", "F"), ("C", "G", "D", "H")]
    assert second.tables[0].reason.endswith(
        "2 repeat meeting(s), none of the unseated being new to the table"
    )
