"""No coaching (TR-4.1): the referee's penalty takes the Grand Chief out of the game from
the next round to start, so that the board in play is never altered."""

from __future__ import annotations

from domain_support import Stamps, refused
from tribes_support import SEED, every, last, new_tribes, play, win_round_for_seat_0

from domain.kernel import RuleViolation
from domain.tribes import Options, Tribes
from domain.tribes.pieces import tribe_totem


def test_tr_4_1_the_penalty_takes_effect_only_from_the_next_round() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "5@4")  # seat 0's Grand Chief is on the board
    match.penalise(0, stamps())
    penalised = last(match, "Penalised")
    assert penalised.seat == 0 and penalised.from_round == 2
    # This round goes on unchanged: the chief stays where it is and can still move.
    assert match.top(4) == tribe_totem(0, 5)
    assert match.penalised == [0] and match.removed == []
    play(match, stamps, "1@6", "4>0", "2@7", "1@1")
    assert match.top(0) == tribe_totem(0, 5)
    play(match, stamps, "3@5", "2@2")  # seat 0's row 0: its chief among the three
    assert last(match, "RoundWon").winner == 0
    # From round 2 on the chief is out of the game.
    assert match.round == 2 and match.removed == [0]
    assert match.mats == [[1, 2, 3, 4], [1, 2, 3, 4, 5]]
    refused(match, "TR-4.1", match.place, 0, 4, stamps(), tribe_totem(0, 5))
    assert all(p["totem"] != tribe_totem(0, 5) for p in match.legal_actions(0)["places"])
    win_round_for_seat_0(match, stamps)
    assert match.round == 3 and match.mats[0] == [1, 2, 3, 4]  # for the rest of the match


def test_tr_4_1_penalties_are_for_seated_players_once_each() -> None:
    match, stamps = new_tribes(3)
    match.penalise(2, stamps())
    refused(match, "TR-4.1", match.penalise, 2, stamps())  # already penalised
    refused(match, "TR-4.1", match.penalise, 3, stamps())  # nobody there
    match.penalise(0, stamps())
    assert [e.seat for e in every(match, "Penalised")] == [2, 0]


def test_tr_4_1_no_penalty_before_the_match_starts() -> None:
    stamps = Stamps()
    match = Tribes.create(Options(max_players=2), SEED)
    match.join("ann", b"", "h0", stamps())
    refused(match, "TR-4.1", match.penalise, 0, stamps())


def test_tr_4_1_a_penalty_does_not_change_the_turn_or_restart_its_timer() -> None:
    match, stamps = new_tribes(2, turn_timeout_ms=10_000)
    deadline = match.timer_deadline_ms()
    match.penalise(1, stamps(after_ms=4_000))
    assert match.turn == 0 and match.timer_deadline_ms() == deadline


def test_tr_8_2_a_second_penalty_of_a_seat_is_refused_under_tr_4_1() -> None:
    """TR-8.2: refused with TR-4.1 as a rule violation (the service answers
    FAILED_PRECONDITION), before the Grand Chief leaves the game and after."""
    match, stamps = new_tribes(2)
    match.penalise(1, stamps())
    error = refused(match, "TR-4.1", match.penalise, 1, stamps())
    assert isinstance(error, RuleViolation)
    win_round_for_seat_0(match, stamps)
    assert match.removed == [1]
    refused(match, "TR-4.1", match.penalise, 1, stamps())
    assert [e.seat for e in every(match, "Penalised")] == [1]
