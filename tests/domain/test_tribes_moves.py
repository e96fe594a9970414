"""Turns and moves: from the mat or a visible top, lift then place, covering (TR-2.2 … TR-2.5)."""

from __future__ import annotations

from domain_support import refused
from tribes_support import every, last, names_since, new_tribes, play, stack, tops

from domain.kernel import MatchStatus
from domain.tribes.match import DRAWN_MOVE_LIMIT
from domain.tribes.pieces import tribe_totem


def test_tr_2_2_only_the_seat_whose_turn_it_is_moves() -> None:
    match, stamps = new_tribes(2)
    assert match.turn == 0
    refused(match, "TR-2.2", match.place, 1, 4, stamps(), tribe_totem(1, 3))
    refused(match, "TR-2.2", match.lift, 1, 4, stamps())
    play(match, stamps, "3@4")
    assert match.turn == 1
    refused(match, "TR-2.2", match.lift, 0, 4, stamps())


def test_tr_2_2_one_of_your_own_totems_from_the_mat_or_a_visible_top() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "2@4", "3@0")
    # Seat 0 may not place or lift seat 1's totems.
    refused(match, "TR-2.2", match.place, 0, 8, stamps(), tribe_totem(1, 1))
    refused(match, "TR-2.2", match.lift, 0, 0, stamps())
    refused(match, "TR-2.2", match.lift, 0, 8, stamps())  # nothing there
    # Its own visible totem can be lifted and moved.
    play(match, stamps, "4>8")
    assert tops(match)[8] == (0, 2) and match.board[4] == []


def test_tr_2_2_a_covered_totem_cannot_be_chosen() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "2@4", "3@4")  # seat 1's 3 covers seat 0's 2
    # Seat 0's 2 is neither on its mat nor on top: no peeking.
    error = refused(match, "TR-2.2", match.place, 0, 8, stamps(), tribe_totem(0, 2))
    assert "space 4" not in error.message  # the refusal does not say where it lies
    refused(match, "TR-2.2", match.lift, 0, 4, stamps())  # the top is seat 1's


def test_tr_2_2a_a_board_move_is_a_lift_then_a_place() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "1@4", "5@0")
    version = match.version
    match.lift(0, 4, stamps())
    assert names_since(match, version) == ["Lifted"]
    assert match.lifted is not None and match.board[4] == []
    assert match.turn == 0  # the turn is not over
    match.place(0, 8, stamps())
    assert names_since(match, version) == ["Lifted", "Placed"]
    assert tops(match)[8] == (0, 1)
    assert last(match, "Placed").origin == 4


def test_tr_2_2a_the_lift_uncovers_the_totem_below_to_everyone_at_once() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "1@4", "3@4", "5@0")
    match.lift(1, 4, stamps())
    lifted = last(match, "Lifted")
    assert lifted.totem == tribe_totem(1, 3)
    assert lifted.uncovered == tribe_totem(0, 1)  # in the event: public
    assert tops(match)[4] == (0, 1)


def test_tr_2_2a_a_lifted_totem_cannot_go_back_or_be_swapped() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "2@4", "5@0", "1@2", "3@6", "4>")
    refused(match, "TR-2.2a", match.place, 0, 4, stamps())  # back on its own space
    refused(match, "TR-2.2a", match.place, 0, 8, stamps(), tribe_totem(0, 3))  # swapped
    refused(match, "TR-2.2a", match.lift, 0, 2, stamps())  # a second lift
    match.place(0, 8, stamps(), tribe_totem(0, 2))  # naming the lifted one is fine


def test_tr_2_2a_a_place_with_nothing_lifted_must_name_a_mat_totem() -> None:
    match, stamps = new_tribes(2)
    refused(match, "TR-2.2a", match.place, 0, 4, stamps())


def test_tr_2_2a_a_lift_with_no_legal_destination_is_refused_under_tr_2_3() -> None:
    # 3×3 filled without a line (seat 0: A, seat 1: B):   A B A / A B B / B A A
    match, stamps = new_tribes(2)
    play(match, stamps, "1@0", "1@1", "2@2", "2@4", "3@3", "3@5", "4@7", "4@6", "5@8")
    assert all(match.board) and match.turn == 1
    # Seat 1's 1 on space 1 could go nowhere: no empty space, nothing smaller on top.
    refused(match, "TR-2.3", match.lift, 1, 1, stamps())
    assert 1 not in match.legal_actions(1)["lifts"]
    assert match.legal_actions(1)["lifts"] == [4, 5, 6]


def test_tr_2_3_covering_by_a_strictly_larger_totem_whoever_owns_it() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "3@4")
    refused(match, "TR-2.3", match.place, 1, 4, stamps(), tribe_totem(1, 3))  # equal
    refused(match, "TR-2.3", match.place, 1, 4, stamps(), tribe_totem(1, 2))  # smaller
    play(match, stamps, "5@4")  # sizes need not be consecutive
    assert stack(match, 4) == [(0, 3), (1, 5)]


def test_tr_2_3_covering_ones_own_totem() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "1@0", "5@8", "2@0")
    assert stack(match, 0) == [(0, 1), (0, 2)]
    play(match, stamps, "3@6", "0>4")  # and moving it off one's own totem again
    assert stack(match, 0) == [(0, 1)] and tops(match)[4] == (0, 2)


def test_tr_2_3_the_destination_differs_from_the_origin() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "2@4", "5@0", "4>")
    assert 4 not in match.legal_actions(0)["places"][0]["destinations"]


def test_tr_2_4_covered_totems_stay_and_the_one_below_shows_when_the_top_leaves() -> None:
    """TR-2.4: covered totems never leave the game; the one below shows when the top goes."""
    match, stamps = new_tribes(2)
    play(match, stamps, "1@4", "2@4", "3@4")
    assert stack(match, 4) == [(0, 1), (1, 2), (0, 3)]
    play(match, stamps, "5@0", "4>8")  # seat 0 moves its 3: seat 1's 2 shows
    assert tops(match)[4] == (1, 2)
    assert stack(match, 4) == [(0, 1), (1, 2)]


def test_tr_2_5_a_player_with_no_legal_move_passes_without_a_command() -> None:
    # Seat 0's chief is out (TR-4.1, from round 2); its four others get covered one by
    # one, leaving it no totem to move: the server records the pass.
    match, stamps = new_tribes(2)
    match.penalise(0, stamps())
    play(match, stamps, "1@0", "1@6", "2@1", "2@7", "3@2")  # round 1: seat 0 wins
    assert match.round == 2 and match.mats[0] == [1, 2, 3, 4]
    version = match.version
    play(match, stamps, "1@0", "2@0", "2@1", "3@1", "3@5", "4@5", "4@6", "5@6")
    passed = every(match, "Passed")
    assert [p.seat for p in passed] == [0]
    assert names_since(match, version)[-1] == "Passed"
    assert match.turn == 1 and match.passes == 1
    play(match, stamps, "1@8")  # seat 1 moves on; seat 0 passes again
    assert [p.seat for p in every(match, "Passed")] == [0, 0]
    assert match.turn == 1
    assert match.status is MatchStatus.PLAYING


def test_tr_2_5_a_round_without_a_winner_after_the_move_limit_is_drawn() -> None:
    match, stamps = new_tribes(2, round_move_limit=3)
    play(match, stamps, "1@0", "1@8", "2@4")
    drawn = last(match, "RoundDrawn")
    assert drawn.round == 1 and drawn.reason == DRAWN_MOVE_LIMIT
    assert every(match, "RoundWon") == []
    assert match.badges == [[], []]  # no badge
    assert match.round == 2 and all(s == [] for s in match.board)


def test_tr_2_5_passes_do_not_count_towards_the_move_limit() -> None:
    match, stamps = new_tribes(2, round_move_limit=12)
    match.penalise(0, stamps())
    play(match, stamps, "1@0", "1@6", "2@1", "2@7", "3@2")
    play(match, stamps, "1@0", "2@0", "2@1", "3@1", "3@5", "4@5", "4@6", "5@6")
    play(match, stamps, "1@8", "8>7", "7>4")  # seat 0 passes before and after each
    assert match.moves == 11 and len(every(match, "Passed")) == 4
    assert every(match, "RoundDrawn") == []
    play(match, stamps, "4>8")  # the twelfth move
    assert last(match, "RoundDrawn").reason == DRAWN_MOVE_LIMIT
