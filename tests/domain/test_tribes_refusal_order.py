"""Which rule a refusal names when a command breaks several (TR-8.1): the first that
applies in the rules' order. One test per step of it; each command breaks the step's rule
and at least one rule of a later step, and must be refused with the step's. Boards are
3×3 with seat order 0, 1 every round::

    0 1 2
    3 4 5
    6 7 8

Every refusal goes through ``refused``, which also checks that it changed nothing; and
what is refused is never offered by the legal actions, which share the same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain_support import Stamps, refused
from tribes_support import last, new_tribes, play, win_round_for_seat_0

from domain.kernel import MatchStatus
from domain.tribes import Tribes
from domain.tribes.match import FROM_LIFTED
from domain.tribes.pieces import DOOM, MINI, tribe_totem

BLANKS = ["blank"] * 5


def _refused_and_not_offered(
    match: Tribes, rule: str, command: Callable[..., Any], *args: Any, **kwargs: Any
) -> None:
    """``refused`` with ``rule``; and neither the lift nor the place is among what the
    seat's legal actions offer."""
    seat = args[0]
    legal = match.legal_actions(seat)
    refused(match, rule, command, *args, **kwargs)
    if command == match.lift:
        assert args[1] not in legal["lifts"]
    else:
        named = args[3] if len(args) > 3 else kwargs.get("totem")
        for option in legal["places"]:
            if option["totem"] == named or (named is None and option["from"] == FROM_LIFTED):
                assert args[1] not in option["destinations"]


def _seat_1_holds_wisdom(**options: Any) -> tuple[Tribes, Stamps]:
    """Seat 1 wins round 1 with its middle row and takes the first badge, Wisdom."""
    match, stamps = new_tribes(2, **options)
    play(match, stamps, "1@0", "1@3", "2@1", "2@4", "3@8", "3@5")
    assert last(match, "RoundWon").winner == 1 and match.badges[1] == ["wisdom"]
    return match, stamps


def test_tr_8_1_step_1_the_end_of_the_match_comes_before_the_turn() -> None:
    match, stamps = new_tribes(2)
    for _ in range(5):
        win_round_for_seat_0(match, stamps)
    assert match.status is MatchStatus.ENDED and match.turn is None
    # Nobody's turn, a covered-or-placed totem, a held badge: the end is named.
    refused(match, "TR-3.5", match.place, 1, 4, stamps(), tribe_totem(1, 1))
    refused(match, "TR-3.5", match.place, 0, 0, stamps(), tribe_totem(0, 1), "wisdom")
    refused(match, "TR-3.5", match.lift, 0, 0, stamps())


def test_tr_8_1_step_2_the_turn_comes_before_the_die() -> None:
    match, stamps = new_tribes(2, extended=True, prearranged_dice=["small", "blank"])
    assert match.turn == 0 and match.demanded() == MINI
    # Seat 1 moves out of turn something other than the Mini the die demands (TR-5.2),
    # and the Doom the die does not demand, onto an empty space.
    _refused_and_not_offered(match, "TR-2.2", match.place, 1, 4, stamps(), tribe_totem(1, 1))
    _refused_and_not_offered(match, "TR-2.2", match.place, 1, 4, stamps(), DOOM)
    _refused_and_not_offered(match, "TR-2.2", match.lift, 1, 4, stamps())


def test_tr_8_1_step_3_the_die_comes_before_the_totem_and_the_destination() -> None:
    # Round 1 (five blank rolls): seat 0, penalised, wins it; from round 2 its Grand
    # Chief is out of the game (TR-4.1). Round 2's first roll demands the Mini.
    match, stamps = new_tribes(
        2, extended=True, prearranged_dice=[*BLANKS, "small", "blank", "blank"]
    )
    match.penalise(0, stamps())
    win_round_for_seat_0(match, stamps)
    assert match.removed == [0] and match.turn == 0 and match.demanded() == MINI
    # The removed Grand Chief (TR-4.1), while the die demands the Mini.
    _refused_and_not_offered(match, "TR-5.2", match.place, 0, 4, stamps(), tribe_totem(0, 5))
    # The Doom, which the die does not demand, onto nothing wrong.
    _refused_and_not_offered(match, "TR-5.2", match.place, 0, 4, stamps(), DOOM)
    # Placing "the lifted totem" with nothing lifted falls under the die while it demands
    # (a reading TR-8.1 fixes; without a demand it is TR-2.2a, step 6).
    _refused_and_not_offered(match, "TR-5.2", match.place, 0, 4, stamps())
    # Lifting an empty space moves nothing, so not the Mini either.
    _refused_and_not_offered(match, "TR-5.2", match.lift, 0, 4, stamps())
    play(match, stamps, "mini@4", "1@0")  # seat 0's turn again, with a blank roll
    assert match.demanded() is None
    # The Mini, not demanded, onto a totem (TR-5.5): the die is named first.
    _refused_and_not_offered(match, "TR-5.2", match.place, 0, 0, stamps(), MINI)
    _refused_and_not_offered(match, "TR-5.2", match.lift, 0, 4, stamps())


def test_tr_8_1_step_4_a_removed_grand_chief_comes_before_the_totem_lifted() -> None:
    match, stamps = new_tribes(2)
    match.penalise(0, stamps())
    win_round_for_seat_0(match, stamps)
    assert match.removed == [0]
    play(match, stamps, "1@4", "1@0", "4>")  # seat 0 lifts its 1
    # Its removed chief, named instead of the lifted 1 (TR-2.2a): TR-4.1.
    _refused_and_not_offered(match, "TR-4.1", match.place, 0, 8, stamps(), tribe_totem(0, 5))


def test_tr_8_1_step_5_a_totem_not_the_movers_comes_before_the_lift_under_way() -> None:
    match, stamps = new_tribes(2)
    # Seat 1's 3 covers seat 0's 1 on 4; seat 1's 5 stands on 0; seat 0 lifts its 2.
    play(match, stamps, "1@4", "3@4", "2@8", "5@0", "8>")
    # A second lift (TR-2.2a) of another tribe's totem: TR-2.2.
    _refused_and_not_offered(match, "TR-2.2", match.lift, 0, 4, stamps())
    # A second lift of an empty space: nothing of the mover's is there (TR-2.2).
    _refused_and_not_offered(match, "TR-2.2", match.lift, 0, 2, stamps())
    # Naming its covered 1 (TR-2.2, no peeking) instead of the lifted 2 (TR-2.2a).
    error = refused(match, "TR-2.2", match.place, 0, 2, stamps(), tribe_totem(0, 1))
    assert "space" not in error.message  # the refusal never says where it lies


def test_tr_8_1_step_6_the_totem_lifted_or_to_lift_comes_before_the_destination() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "2@4", "5@0", "1@2", "3@8", "4>")  # seat 0 lifts its 2
    # Its mat's 3 instead of the lifted 2, onto seat 1's 5 (TR-2.3): TR-2.2a.
    _refused_and_not_offered(match, "TR-2.2a", match.place, 0, 0, stamps(), tribe_totem(0, 3))
    # A second lift, of its own 1 on top of space 2: TR-2.2a.
    _refused_and_not_offered(match, "TR-2.2a", match.lift, 0, 2, stamps())
    match.place(0, 6, stamps())
    play(match, stamps, "4@1")  # seat 0's turn, nothing lifted
    # "The lifted totem" with nothing lifted and no demand, onto a larger top: TR-2.2a.
    _refused_and_not_offered(match, "TR-2.2a", match.place, 0, 0, stamps())
    # Its 1, on top of space 2, named as if from the mat, onto seat 1's 5 (TR-2.3):
    # lift it first (TR-2.2a).
    _refused_and_not_offered(match, "TR-2.2a", match.place, 0, 0, stamps(), tribe_totem(0, 1))


def test_tr_8_1_step_6_a_special_totem_named_from_beside_while_on_the_board() -> None:
    match, stamps = new_tribes(2, extended=True, prearranged_dice=["small", "blank", "small"])
    play(match, stamps, "mini@4", "1@0")
    assert match.demanded() == MINI
    # Named from beside the board while it stands on 4, onto a totem (TR-5.5): TR-2.2a.
    _refused_and_not_offered(match, "TR-2.2a", match.place, 0, 0, stamps(), MINI)


def test_tr_8_1_step_7_the_mini_then_the_doom_then_salvation_come_before_sizes() -> None:
    # Seat 1's 1 on 4 under the Doom, its 2 on 3 and its 3 on 5; seat 0's 1 on the
    # Salvation Space 0 (a corner).
    dice = ["blank", "blank", "blank", "blank", "large", "blank", "large"]
    match, stamps = new_tribes(2, extended=True, prearranged_dice=dice)
    play(match, stamps, "1@0", "1@4", "2@8", "2@3", "doom@4")
    # Seat 1's 3 onto the Doom breaks TR-5.4 and TR-2.3: TR-5.4.
    _refused_and_not_offered(match, "TR-5.4", match.place, 1, 4, stamps(), tribe_totem(1, 3))
    play(match, stamps, "3@5", "4>")  # seat 0 lifts the Doom: seat 1's row 3, 4, 5 shows
    assert match.forced_destinations() == [3, 5]
    # The Doom onto seat 0's 1 on a Salvation Space, off the forced cover (TR-3.2): TR-5.6.
    _refused_and_not_offered(match, "TR-5.6", match.place, 0, 0, stamps())

    match, stamps = new_tribes(2, extended=True, prearranged_dice=["large", "small"])
    play(match, stamps, "doom@4")
    # The Mini onto the Doom: TR-5.5 (the Mini onto a totem) before TR-5.4.
    _refused_and_not_offered(match, "TR-5.5", match.place, 1, 4, stamps(), MINI)


def test_tr_8_1_step_8_sizes_come_before_the_forced_cover() -> None:
    match, stamps = _seat_1_holds_wisdom()
    # Round 2: seat 1 lifts its 3 from space 1, uncovering seat 0's 1: seat 0's top row
    # shows, and only space 0 can be covered (TR-3.2).
    play(match, stamps, "1@1", "3@1", "2@0", "5@8", "3@2", "1@6", "4@3", "1>")
    assert match.forced_destinations() == [0]
    # The 3 onto seat 1's own 5, off the forced cover, naming a badge held: TR-2.3.
    refused(match, "TR-2.3", match.place, 1, 8, stamps(), None, "wisdom")
    _refused_and_not_offered(match, "TR-2.3", match.place, 1, 8, stamps())


def test_tr_8_1_step_9_the_forced_cover_comes_before_the_badge() -> None:
    match, stamps = _seat_1_holds_wisdom()
    play(match, stamps, "1@1", "3@1", "2@0", "5@8", "3@2", "1@6", "4@3", "1>")
    # An empty space off the forced cover, naming a badge held: TR-3.2.
    refused(match, "TR-3.2", match.place, 1, 4, stamps(), None, "wisdom")
    _refused_and_not_offered(match, "TR-3.2", match.place, 1, 4, stamps())


def test_tr_8_1_step_10_a_badge_held_is_named_last() -> None:
    match, stamps = _seat_1_holds_wisdom()
    play(match, stamps, "1@1", "3@1", "2@0", "5@8", "3@2", "1@6", "4@3", "1>")
    # The forced cover itself, naming a badge held: TR-3.4, refused as a bad argument.
    error = refused(match, "TR-3.4", match.place, 1, 0, stamps(), None, "wisdom")
    assert type(error).__name__ == "InvalidArgument"
    assert "wisdom" not in match.legal_actions(1)["badges"]
    match.place(1, 0, stamps(), None, "loyalty")  # the same move, with a badge not held
