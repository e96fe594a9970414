"""The extended game: Dice of Fate, Great Totem of Doom, Mini-Totem of Chaos, Salvation
Spaces (TR-5.1 … TR-5.7). Boards are 3×3 unless said otherwise::

    0 1 2
    3 4 5
    6 7 8

Die rolls are prearranged (one per turn, in order) so that each test knows its luck.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from domain_support import refused
from tribes_support import every, last, new_tribes, play, stack, tops

from domain.kernel import DomainError
from domain.kernel.views import Viewer
from domain.tribes import Tribes, views
from domain.tribes.match import BY_REVEALED, FROM_BESIDE, FROM_LIFTED, die_roll
from domain.tribes.pieces import DEFAULT_FACES, DOOM, MINI, corners, tribe_totem

#: Nine placements, alternating seats 0 and 1, that fill a 3×3 board without a line:
#: A B A / A B B / B A A (seat 0 is A). Seat 1 keeps its 5 on its mat.
FULL_BOARD = ["1@0", "1@1", "2@2", "2@4", "3@3", "3@5", "4@7", "4@6", "5@8"]


def extended(dice: list[str], **options: Any) -> tuple[Tribes, Any]:
    return new_tribes(2, extended=True, prearranged_dice=dice, **options)


def test_tr_5_1_the_die_is_rolled_at_the_start_of_every_turn_and_recorded() -> None:
    match, stamps = new_tribes(2, extended=True, cards=[])
    play(match, stamps, *_any_moves(match, stamps, 6))
    rolls = every(match, "DieRolled")
    assert len(rolls) == 7  # six turns played, the seventh begun
    seed = match.effective_seed()
    faces = list(DEFAULT_FACES)
    assert [r.face for r in rolls] == [die_roll(seed, k, faces) for k in range(7)]
    assert [r.seat for r in rolls] == [match.order[k % 2] for k in range(7)]
    assert match.die == rolls[-1].face


def _any_moves(match: Tribes, stamps: Any, count: int) -> list[str]:
    """Make ``count`` legal moves (the first offered each time); returns nothing to play."""
    for _ in range(count):
        seat = match.turn
        assert seat is not None
        legal = match.legal_actions(seat)
        if not legal["places"]:
            match.lift(seat, legal["lifts"][0], stamps())
            legal = match.legal_actions(seat)
        option = legal["places"][0]
        totem = None if option["from"] == "lifted" else option["totem"]
        match.place(seat, option["destinations"][-1], stamps(), totem)
    return []


def test_tr_5_1_the_die_faces_are_an_option() -> None:
    match, _stamps = new_tribes(2, extended=True, cards=[], dice_faces=["small"])
    assert match.die == "small" and match.demanded() == MINI
    assert match.options.dice_faces == ["small"]


def test_tr_5_1_the_base_game_has_no_die_and_no_special_totems() -> None:
    match, stamps = new_tribes(2)
    assert match.die is None and match.beside == []
    assert every(match, "DieRolled") == []
    error = refused(match, "TR-5.1", match.place, 0, 4, stamps(), DOOM)
    assert type(error).__name__ == "InvalidArgument"


def test_tr_5_2_blank_is_a_normal_turn() -> None:
    match, stamps = extended(["blank"])
    legal = match.legal_actions(0)
    assert legal["die"] == "blank" and legal["must_move"] is None
    assert [p["totem"] for p in legal["places"]] == [tribe_totem(0, s) for s in range(1, 6)]
    refused(match, "TR-5.2", match.place, 0, 4, stamps(), DOOM)


def test_tr_5_2_large_totem_the_player_must_move_the_great_totem_of_doom() -> None:
    match, stamps = extended(["large", "small", "blank"])
    legal = match.legal_actions(0)
    assert legal["die"] == "large" and legal["must_move"] == DOOM
    assert legal["places"] == [{"totem": DOOM, "from": FROM_BESIDE, "destinations": list(range(9))}]
    refused(match, "TR-5.2", match.place, 0, 4, stamps(), tribe_totem(0, 3))
    refused(match, "TR-5.2", match.place, 0, 4, stamps(), MINI)
    play(match, stamps, "doom@4")
    # Seat 1 rolled the small totem: the Mini-Totem of Chaos must move.
    legal = match.legal_actions(1)
    assert legal["die"] == "small" and legal["must_move"] == MINI
    assert legal["places"][0]["destinations"] == [0, 1, 2, 3, 5, 6, 7, 8]
    play(match, stamps, "mini@0")
    assert tops(match)[4] == "doom" and tops(match)[0] == "mini"
    # A special totem on the board moves by a lift and a place (TR-5.7).
    assert match.legal_actions(0)["must_move"] is None  # blank: a normal turn
    refused(match, "TR-5.2", match.lift, 0, 4, stamps())


def test_tr_5_2_a_required_totem_with_no_legal_destination_gives_a_normal_turn() -> None:
    # Nine blank turns fill the board; then seat 1 rolls the small totem, and the
    # Mini-Totem of Chaos, which needs an empty space, cannot move.
    match, stamps = extended(["blank"] * 9 + ["small"])
    play(match, stamps, *FULL_BOARD)
    assert match.die == "small" and match.turn == 1
    assert match.demanded() is None
    legal = match.legal_actions(1)
    assert legal["must_move"] is None
    assert legal["places"][0]["totem"] == tribe_totem(1, 5)
    play(match, stamps, "5@2")  # a normal turn


#: The reproduction of TR-8.3's case: seat 1 rolls the small totem on a full board (the
#: Mini cannot move: a normal turn), then lifts its 4 from space 5, which empties it.
DEMAND_SETTLED_DICE = ["small", "blank", "large", *["blank"] * 6, "small"]
DEMAND_SETTLED_MOVES = ["mini@4", "1@1", "doom@3", "2@6", "1@0", "3@8", "2@2", "4@5", "3@7"]


def test_tr_8_3_the_dies_demand_is_settled_when_the_turn_begins() -> None:
    match, stamps = new_tribes(
        2,
        board_size=3,
        extended=True,
        turn_timeout_ms=0,
        cards=[[1, 2]],
        prearranged_dice=DEMAND_SETTLED_DICE,
    )
    play(match, stamps, *DEMAND_SETTLED_MOVES)
    assert match.turn == 1 and match.die == "small" and all(match.board)
    assert match.legal_actions(1)["must_move"] is None  # the Mini has nowhere to go
    play(match, stamps, "5>")  # space 5 is empty now: the Mini could go there
    legal = match.legal_actions(1)
    assert legal["die"] == "small" and legal["must_move"] is None
    view = views.state_view(match, Viewer.player(1))
    assert view["legal"]["must_move"] is None
    # What is offered is what is accepted: the lifted 4, onto any smaller top.
    lifted = tribe_totem(1, 4)
    assert legal["lifts"] == []
    assert legal["places"] == [
        {"totem": lifted, "from": FROM_LIFTED, "destinations": [0, 1, 2, 6, 7, 8]}
    ]
    for destination in range(9):
        trial = copy.deepcopy(match)
        if destination in legal["places"][0]["destinations"]:
            trial.place(1, destination, stamps())
        else:
            with pytest.raises(DomainError):
                trial.place(1, destination, stamps())
    # The Mini is not demanded this turn (TR-8.1 names the die before the lift under way).
    refused(match, "TR-5.2", match.place, 1, 5, stamps(), MINI)
    refused(match, "TR-5.2", match.lift, 1, 4, stamps())
    play(match, stamps, "5>0")
    # Seat 0's turn begins with the small totem again, and the Mini can move now.
    assert match.turn == 0 and match.die == "small"
    assert match.legal_actions(0)["must_move"] == MINI


def test_tr_8_3_a_demand_that_stood_at_the_start_stands_with_its_totem_lifted() -> None:
    match, stamps = extended(["large", "blank", "large"])
    play(match, stamps, "doom@4", "1@0")
    assert match.legal_actions(0)["must_move"] == DOOM
    play(match, stamps, "4>")
    legal = match.legal_actions(0)
    assert legal["must_move"] == DOOM
    assert [(p["totem"], p["from"]) for p in legal["places"]] == [(DOOM, FROM_LIFTED)]
    refused(match, "TR-5.2", match.place, 0, 8, stamps(), tribe_totem(0, 1))


def test_tr_5_2_a_roll_that_leaves_no_legal_move_is_a_pass() -> None:
    # Seat 0's chief is out from round 2 (TR-4.1); its four others get covered, then it
    # rolls a blank: a normal turn with no move. (Had it rolled a special totem that can
    # move, it would have had to move it.)
    match, stamps = extended(["blank"])
    match.penalise(0, stamps())
    play(match, stamps, "1@0", "1@6", "2@1", "2@7", "3@2")
    play(match, stamps, "1@0", "2@0", "2@1", "3@1", "3@5", "4@5", "4@6", "5@6")
    assert [p.seat for p in every(match, "Passed")] == [0]
    assert last(match, "DieRolled").seat == 1  # the turn after the pass was rolled for


def test_tr_5_3_special_totems_start_beside_the_board_and_belong_to_no_tribe() -> None:
    """TR-5.3: both special totems start beside the board and belong to no tribe."""
    match, _ = extended(["blank"])
    assert match.beside == [DOOM, MINI]
    assert all(DOOM not in s and MINI not in s for s in match.board)


def test_tr_5_3_a_space_topped_by_a_special_totem_breaks_every_line_through_it() -> None:
    """TR-5.3: special totems never count towards a line and break every line through
    the space they top."""
    match, stamps = extended(["blank", "large"], salvation_spaces=[4], board_size=3)
    play(match, stamps, "1@1", "doom@1", "2@0", "1>4", "3@2")
    # Seat 0 tops 0 and 2; the Doom left space 1, uncovering seat 0's 1: row 0 wins only
    # when the line is really there, which it is now.
    won = last(match, "RoundWon")
    assert won.winner == 0 and won.lines == [[0, 1, 2]]
    match, stamps = extended(["blank", "small"])
    play(match, stamps, "1@0", "mini@1", "2@2")
    assert every(match, "RoundWon") == []  # the Mini on space 1 breaks row 0
    assert match.line_owner((0, 1, 2)) is None


def test_tr_5_4_the_doom_covers_any_tribe_totem_and_nothing_covers_it() -> None:
    match, stamps = extended(["blank", "large"])
    play(match, stamps, "5@4", "doom@4")  # larger than a Grand Chief
    assert stack(match, 4) == [(0, 5), (None, 6)]
    refused(match, "TR-5.4", match.place, 0, 4, stamps(), tribe_totem(0, 4))
    assert 4 not in match.legal_actions(0)["places"][0]["destinations"]


def test_tr_5_5_the_mini_moves_to_an_empty_space_only_and_nothing_covers_it() -> None:
    match, stamps = extended(["blank", "small", "blank", "large"])
    play(match, stamps, "1@4")
    refused(match, "TR-5.5", match.place, 1, 4, stamps(), MINI)  # onto a totem
    play(match, stamps, "mini@3")
    refused(match, "TR-5.5", match.place, 0, 3, stamps(), tribe_totem(0, 5))
    play(match, stamps, "2@5")
    refused(match, "TR-5.5", match.place, 1, 3, stamps(), DOOM)  # the Doom onto the Mini
    play(match, stamps, "doom@5")


def test_tr_5_6_salvation_spaces_are_the_corners_by_default() -> None:
    match, _ = extended(["blank"])
    assert match.salvation == corners(3) == [0, 2, 6, 8]
    match, _ = new_tribes(3, extended=True)
    assert match.salvation == [0, 3, 12, 15]
    match, _ = new_tribes(2)
    assert match.salvation == []  # the base game has none


def test_tr_5_6_the_doom_cannot_cover_a_tribe_totem_on_a_salvation_space() -> None:
    match, stamps = extended(["blank", "large"])
    play(match, stamps, "1@0")
    refused(match, "TR-5.6", match.place, 1, 0, stamps(), DOOM)
    assert 0 not in match.legal_actions(1)["places"][0]["destinations"]
    assert 2 in match.legal_actions(1)["places"][0]["destinations"]  # an empty corner
    play(match, stamps, "doom@2")


def test_tr_5_6_tribe_totems_still_cover_a_totem_on_a_salvation_space_by_size() -> None:
    match, stamps = extended(["blank"])
    play(match, stamps, "1@0", "3@0")
    assert stack(match, 0) == [(0, 1), (1, 3)]


def test_tr_5_6_salvation_spaces_are_an_option() -> None:
    match, stamps = extended(["blank"] * 3 + ["large"], board_size=3, salvation_spaces=[4])
    play(match, stamps, "1@4", "1@0", "2@8")
    refused(match, "TR-5.6", match.place, 1, 4, stamps(), DOOM)
    play(match, stamps, "doom@0")  # a corner, but not a Salvation Space here
    assert tops(match)[0] == "doom"


def test_tr_5_6_a_doom_with_only_protected_totems_to_cover_gives_a_normal_turn() -> None:
    match, stamps = extended(
        ["blank"] * 9 + ["large"], board_size=3, salvation_spaces=list(range(9))
    )
    play(match, stamps, *FULL_BOARD)
    assert match.die == "large" and match.demanded() is None
    assert match.legal_actions(1)["places"][0]["totem"] == tribe_totem(1, 5)


def test_tr_5_7_lift_then_place_for_a_special_totem_on_the_board() -> None:
    match, stamps = extended(["large", "blank", "large", "blank"])
    play(match, stamps, "doom@4", "1@1")
    refused(match, "TR-2.2a", match.place, 0, 8, stamps(), DOOM)  # it is on the board
    match.lift(0, 4, stamps())
    assert last(match, "Lifted").totem == DOOM
    refused(match, "TR-2.2a", match.place, 0, 4, stamps())
    match.place(0, 1, stamps())
    assert stack(match, 1) == [(1, 1), (None, 6)]


def _doom_over_seat_0s_row(salvation: list[int]) -> tuple[Tribes, Any]:
    """Seat 0 holds spaces 0 and 2; the Doom covers its 1 on space 1; then seat 1 rolls
    the large totem and lifts the Doom, revealing row 0 for seat 0."""
    match, stamps = extended(
        ["blank", "large", "blank", "blank", "blank", "large"],
        board_size=3,
        salvation_spaces=salvation,
    )
    play(match, stamps, "1@1", "doom@1", "2@0", "1@6", "3@2")
    assert every(match, "RoundWon") == []  # the Doom on space 1 breaks row 0
    match.lift(1, 1, stamps())
    assert last(match, "Lifted").revealed_lines == [[0, 1, 2]]
    return match, stamps


def test_tr_5_7_the_revealed_line_rule_with_the_doom_as_the_cover() -> None:
    match, stamps = _doom_over_seat_0s_row([4])
    assert match.forced_destinations() == [0, 2]
    refused(match, "TR-3.2", match.place, 1, 4, stamps())
    match.place(1, 2, stamps())
    assert every(match, "RoundWon") == []


def test_tr_5_7_the_revealed_line_wins_when_the_doom_cannot_cover_it() -> None:
    match, stamps = _doom_over_seat_0s_row([0, 2])  # both ends are Salvation Spaces
    assert match.forced_destinations() == []
    match.place(1, 4, stamps())
    won = last(match, "RoundWon")
    assert (won.winner, won.by) == (0, BY_REVEALED)


@pytest.mark.parametrize("face", ["large", "small"])
def test_tr_5_2_the_roll_of_a_special_totem_limits_the_legal_actions(face: str) -> None:
    match, stamps = extended(["blank", "blank", face])
    play(match, stamps, "2@4", "3@8")
    legal = match.legal_actions(0)
    assert legal["lifts"] == []
    assert [p["totem"] for p in legal["places"]] == [DOOM if face == "large" else MINI]
