"""Lines and winning rounds: the revealed-line rule, precedence, badges, the Feathers
(TR-3.1 … TR-3.5).

Boards are 3×3 unless said otherwise; spaces are numbered row by row::

    0 1 2
    3 4 5
    6 7 8
"""

from __future__ import annotations

import pytest
from domain_support import refused
from tribes_support import every, last, new_tribes, play, tops, win_round_for_seat_0

from domain.kernel import InvalidArgument, MatchStatus
from domain.tribes.match import BY_LINE, BY_REVEALED
from domain.tribes.pieces import tribe_totem


def test_tr_3_1_three_visible_totems_of_one_tribe_in_a_row_column_or_diagonal() -> None:
    for moves, line in (
        (["1@0", "1@6", "2@1", "2@7", "3@2"], [0, 1, 2]),  # a row
        (["1@0", "1@2", "2@3", "2@5", "3@6"], [0, 3, 6]),  # a column
        (["1@0", "1@1", "2@4", "2@2", "3@8"], [0, 4, 8]),  # a diagonal
    ):
        match, stamps = new_tribes(2)
        play(match, stamps, *moves)
        won = last(match, "RoundWon")
        assert (won.winner, won.by, won.lines) == (0, BY_LINE, [line])


def test_tr_3_1_a_covered_totem_does_not_count_and_mixed_tribes_are_no_line() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "1@0", "2@1", "2@2", "5@6", "3@1")
    # Row 0 reads seat 0, seat 0, seat 0 only now that seat 0's 3 covers seat 1's 2.
    assert last(match, "RoundWon").lines == [[0, 1, 2]]
    match, stamps = new_tribes(2)
    play(match, stamps, "1@0", "2@1", "2@2")
    assert every(match, "RoundWon") == []  # 0 and 2 are seat 0's, 1 is seat 1's


def test_tr_3_1_any_three_in_a_row_on_a_larger_board() -> None:
    match, stamps = new_tribes(2, board_size=4)
    play(match, stamps, "1@1", "1@12", "2@2", "2@13", "3@3")
    assert last(match, "RoundWon").lines == [[1, 2, 3]]
    match, stamps = new_tribes(2, board_size=5)
    play(match, stamps, "1@6", "1@0", "2@12", "2@1", "3@18")
    assert last(match, "RoundWon").lines == [[6, 12, 18]]


def _row_0_revealed_for_seat_0(cover_size: int) -> list[str]:
    """Seat 0 holds spaces 0 and 2 of row 0; its 1 on space 1 lies under seat 1's
    ``cover_size`` totem. Seat 1 plays on; then it is seat 1's turn again."""
    return ["1@1", f"{cover_size}@1", "2@0", "5@8", "3@2", "1@6", "4@3"]


def test_tr_3_2_revealed_line_must_be_covered_when_the_lifted_totem_can() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, *_row_0_revealed_for_seat_0(3))
    match.lift(1, 1, stamps())
    lifted = last(match, "Lifted")
    assert lifted.uncovered == tribe_totem(0, 1) and lifted.revealed_lines == [[0, 1, 2]]
    # Seat 1's 3 can cover seat 0's 2 on space 0, not its 3 on space 2.
    assert match.forced_destinations() == [0]
    legal = match.legal_actions(1)
    assert legal["forced_cover"] is True and legal["places"][0]["destinations"] == [0]
    refused(match, "TR-3.2", match.place, 1, 4, stamps())
    refused(match, "TR-2.3", match.place, 1, 2, stamps())
    match.place(1, 0, stamps())
    assert every(match, "RoundWon") == []  # the line is broken; play goes on
    assert match.turn == 0


def test_tr_3_2_revealed_line_wins_for_the_opponent_when_no_cover_is_possible() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, *_row_0_revealed_for_seat_0(2))
    match.lift(1, 1, stamps())
    assert last(match, "Lifted").revealed_lines == [[0, 1, 2]]
    # Seat 1's 2 can cover neither seat 0's 2 nor its 3: anywhere legal, and seat 0 wins.
    assert match.forced_destinations() == []
    assert match.legal_actions(1)["forced_cover"] is False
    match.place(1, 4, stamps())
    won = last(match, "RoundWon")
    assert (won.winner, won.by, won.lines) == (0, BY_REVEALED, [[0, 1, 2]])
    assert match.badges == [["wisdom"], []]


def _centre_reveals_two_lines(cover_size: int) -> list[str]:
    """Seat 0's 1 on the centre lies under seat 1's ``cover_size`` totem; seat 0 holds
    spaces 1, 3, 5 and 7, so lifting the cover reveals row 3-4-5 and column 1-4-7."""
    return [
        "1@4",
        f"{cover_size}@4",
        "2@1",
        "1@0",
        "3@3",
        "5@2",
        "4@5",
        "4@0",
        "5@7",
    ]


def test_tr_3_2_two_revealed_lines_of_one_opponent_when_no_cover_is_possible() -> None:
    # A lift uncovers one totem, so the lines it reveals are one opponent's (TR-3.3).
    match, stamps = new_tribes(2)
    play(match, stamps, *_centre_reveals_two_lines(2))
    match.lift(1, 4, stamps())
    assert last(match, "Lifted").revealed_lines == [[1, 4, 7], [3, 4, 5]]
    assert match.forced_destinations() == []
    match.place(1, 8, stamps())
    won = last(match, "RoundWon")
    assert (won.winner, won.by, won.lines) == (0, BY_REVEALED, [[1, 4, 7], [3, 4, 5]])


def test_tr_3_2_covering_one_of_two_revealed_lines_leaves_the_other_winning() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, *_centre_reveals_two_lines(3))
    match.lift(1, 4, stamps())
    # Seat 1's 3 covers only seat 0's 2 on space 1: it must go there (decided here).
    assert match.forced_destinations() == [1]
    refused(match, "TR-3.2", match.place, 1, 8, stamps())
    match.place(1, 1, stamps())
    won = last(match, "RoundWon")
    assert (won.winner, won.by, won.lines) == (0, BY_REVEALED, [[3, 4, 5]])


def test_tr_3_2_one_cover_can_break_two_overlapping_lines() -> None:
    # 4×4, row 0 = spaces 0 1 2 3: seat 0 holds 0, 2 and 3; its 1 lies on space 1 under
    # seat 1's 4. Uncovering it completes 0-1-2 and 1-2-3; covering space 2 breaks both.
    match, stamps = new_tribes(2, board_size=4)
    play(match, stamps, "1@1", "4@1", "2@0", "1@12", "3@2", "2@15", "5@3", "3@9", "4@10")
    match.lift(1, 1, stamps())
    assert last(match, "Lifted").revealed_lines == [[0, 1, 2], [1, 2, 3]]
    assert match.forced_destinations() == [0, 2]
    match.place(1, 2, stamps())
    assert every(match, "RoundWon") == []


def test_tr_3_3_the_movers_line_wins_when_the_forced_cover_completes_it() -> None:
    match, stamps = new_tribes(2)
    # Row 0 is seat 0's once space 1 is uncovered; seat 1 holds 5 and 8.
    play(match, stamps, "1@1", "4@1", "2@0", "2@5", "3@2", "3@8", "4@6")
    match.lift(1, 1, stamps())
    assert match.forced_destinations() == [0, 2]
    match.place(1, 2, stamps(), badge="boldness")  # covers seat 0's 3: column 2-5-8
    won = last(match, "RoundWon")
    assert (won.winner, won.by, won.lines) == (1, BY_LINE, [[2, 5, 8]])
    assert match.badges == [[], ["boldness"]]


def test_tr_3_3_a_revealed_opponent_line_comes_before_the_movers_own_line() -> None:
    match, stamps = new_tribes(2)
    # Seat 1 lifts its 2 from space 1 (uncovering seat 0's row 0, no cover possible) and
    # completes its own row 6-7-8 with it: seat 0 wins.
    play(match, stamps, "1@1", "2@1", "2@0", "3@6", "3@2", "4@7", "4@4")
    match.lift(1, 1, stamps())
    assert match.forced_destinations() == []
    assert tops(match)[6:8] == [(1, 3), (1, 4)]
    match.place(1, 8, stamps(), badge="tenacity")  # seat 1 completes row 6-7-8 too...
    won = last(match, "RoundWon")
    assert (won.winner, won.by) == (0, BY_REVEALED)  # ...but the revealed line wins
    assert match.badges == [["wisdom"], []]  # and seat 1's named badge counts for nothing


def test_tr_3_3_uncovering_ones_own_totem_can_complete_ones_own_line() -> None:
    match, stamps = new_tribes(2)
    # Seat 0's 1 on space 1 under its own 3; lifting the 3 away completes row 0.
    play(match, stamps, "1@1", "5@8", "2@0", "4@7", "4@2", "1@6", "3@1", "2@3", "1>4")
    won = last(match, "RoundWon")
    assert (won.winner, won.by, won.lines) == (0, BY_LINE, [[0, 1, 2]])


def test_tr_3_4_the_winner_takes_the_badge_named_in_the_winning_move() -> None:
    match, stamps = new_tribes(2)
    win_round_for_seat_0(match, stamps, badge="tenacity")
    assert match.badges[0] == ["tenacity"]
    win_round_for_seat_0(match, stamps)
    assert match.badges[0] == ["tenacity", "wisdom"]  # else the first missing (TR-1.5)
    # A badge named in a move that does not win counts for nothing.
    play(match, stamps, "1@0", "1@6!loyalty")
    assert match.badges == [["tenacity", "wisdom"], []]


def test_tr_3_4_naming_a_badge_one_holds_is_an_invalid_argument() -> None:
    match, stamps = new_tribes(2)
    win_round_for_seat_0(match, stamps, badge="loyalty")
    error = refused(match, "TR-3.4", match.place, 0, 4, stamps(), tribe_totem(0, 1), "loyalty")
    assert isinstance(error, InvalidArgument)
    error = refused(match, "TR-3.4", match.place, 0, 4, stamps(), tribe_totem(0, 1), "courage")
    assert isinstance(error, InvalidArgument)
    assert match.legal_actions(0)["badges"] == ["wisdom", "boldness", "tenacity"]


def test_tr_3_5_a_whole_match_won_with_the_feathers_of_greatness() -> None:
    match, stamps = new_tribes(2)
    for _ in range(4):
        win_round_for_seat_0(match, stamps)
    assert match.badges[0] == ["wisdom", "loyalty", "boldness", "tenacity"]
    assert match.status is MatchStatus.PLAYING
    win_round_for_seat_0(match, stamps)
    won = last(match, "RoundWon")
    assert won.feathers is True and won.badge is None and won.round == 5
    assert match.status is MatchStatus.ENDED
    assert match.result == [{"seat": 0, "place": 1}, {"seat": 1, "place": 2}]
    assert type(match.pending_events[-1]).__name__ == "MatchEnded"


def test_tr_3_5_others_rank_by_badges_held() -> None:
    match, stamps = new_tribes(3, board_size=3)
    # Seat 1 wins one round first (seat order 0, 1, 2 every round).
    play(match, stamps, "1@3", "1@0", "1@6", "2@4", "2@1", "2@8", "3@7", "3@2")
    assert match.badges == [[], ["wisdom"], []]
    for _ in range(5):
        play(match, stamps, "1@0", "1@3", "1@6", "2@1", "2@4", "2@8", "3@2")
    assert match.result == [
        {"seat": 0, "place": 1},
        {"seat": 1, "place": 2},
        {"seat": 2, "place": 3},
    ]


@pytest.mark.parametrize(
    "command", ["lift", "place", "penalise", "start", "timer", "join", "reissue"]
)
def test_tr_3_5_any_command_after_the_end_names_tr_3_5(command: str) -> None:
    match, stamps = new_tribes(2, turn_timeout_ms=1_000)
    for _ in range(5):
        win_round_for_seat_0(match, stamps)
    assert match.status is MatchStatus.ENDED
    calls = {
        "lift": (match.lift, 0, 0, stamps()),
        "place": (match.place, 0, 4, stamps(), tribe_totem(0, 1)),
        "penalise": (match.penalise, 1, stamps()),
        "start": (match.start, 0, stamps()),
        "timer": (match.fire_timer, stamps(after_ms=5_000)),
        "join": (match.join, "late", b"", "h9", stamps()),
        "reissue": (match.reissue_token, 1, "h10"),
    }
    call, *args = calls[command]
    refused(match, "TR-3.5", call, *args)
    assert tops(match)[2] == (0, 3)
