"""The turn timer's move (decided here), and which rule each refusal names (TR-8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from domain_support import Stamps, refused
from tribes_support import every, last, new_tribes, play, stack, tops

from domain.kernel import InvalidArgument
from domain.tribes import Tribes
from domain.tribes.match import CAUSE_TIMEOUT
from domain.tribes.pieces import DOOM, MINI, tribe_totem

TIMEOUT = 60_000


def _fire(match: Tribes, stamps: Stamps) -> None:
    deadline = match.timer_deadline_ms()
    assert deadline is not None
    match.fire_timer(stamps.at(deadline))


def test_the_turn_timer_runs_from_the_start_of_the_turn() -> None:
    match, stamps = new_tribes(2, turn_timeout_ms=TIMEOUT)
    assert match.timer_deadline_ms() == stamps.wall_ms + TIMEOUT
    refused(match, "TR-2.2", match.fire_timer, stamps(after_ms=TIMEOUT - 1))
    play(match, stamps, "1@4")
    assert match.timer_deadline_ms() == stamps.wall_ms + TIMEOUT
    play(match, stamps, "2@0")
    # A lift does not restart it: the whole turn has one deadline.
    deadline = match.timer_deadline_ms()
    stamps(after_ms=5_000)
    play(match, stamps, "4>")
    assert match.timer_deadline_ms() == deadline


def test_the_turn_timer_is_off_with_0() -> None:
    match, stamps = new_tribes(2, turn_timeout_ms=0)
    assert match.timer_deadline_ms() is None
    refused(match, "TR-2.2", match.fire_timer, stamps(after_ms=10**9))


def test_the_timers_move_is_the_smallest_mat_totem_on_the_lowest_free_space() -> None:
    match, stamps = new_tribes(2, turn_timeout_ms=TIMEOUT)
    _fire(match, stamps)
    placed = last(match, "Placed")
    assert (placed.seat, placed.totem, placed.destination) == (0, tribe_totem(0, 1), 0)
    assert placed.cause == CAUSE_TIMEOUT and placed.origin is None
    _fire(match, stamps)  # seat 1's 1 covers nothing: the lowest empty space
    assert tops(match)[:2] == [(0, 1), (1, 1)]


def test_the_timer_completes_an_unfinished_lift_within_the_forced_cover() -> None:
    match, stamps = new_tribes(2, turn_timeout_ms=TIMEOUT)
    # Seat 1's 3 covers seat 0's 1 on space 1; seat 0 holds spaces 0 and 2.
    play(match, stamps, "1@1", "3@1", "2@0", "5@8", "3@2", "1@6", "4@3", "1>")
    assert match.forced_destinations() == [0]
    _fire(match, stamps)
    placed = last(match, "Placed")
    assert (placed.seat, placed.destination, placed.cause) == (1, 0, CAUSE_TIMEOUT)
    assert every(match, "RoundWon") == []


def test_the_timer_lifts_and_places_when_nothing_can_be_placed_directly() -> None:
    # Extended: seat 0 rolls the large totem with the Doom on the board.
    match, stamps = new_tribes(
        2, turn_timeout_ms=TIMEOUT, extended=True, prearranged_dice=["large", "blank"]
    )
    play(match, stamps, "doom@4", "1@0")
    version = match.version
    _fire(match, stamps)
    new = [e for e in match.pending_events if e.originator_version > version]
    lifted, placed = new[0], new[1]
    assert type(lifted).__name__ == "Lifted" and lifted.space == 4 and lifted.totem == DOOM
    assert lifted.cause == CAUSE_TIMEOUT
    assert placed.destination == 1  # lowest legal: 0 holds a totem on a Salvation Space
    assert stack(match, 1) == [(None, 6)]


# ---- TR-8: which rule a refusal names ------------------------------------------------


def _after(moves: list[str], **options: Any) -> tuple[Tribes, Stamps]:
    match, stamps = new_tribes(2, **options)
    play(match, stamps, *moves)
    return match, stamps


Case = Callable[[], tuple[Tribes, Stamps, Callable[..., Any], tuple[Any, ...]]]


def _case(
    moves: list[str], command: str, *args: Any, **options: Any
) -> Callable[[], tuple[Tribes, Stamps, Callable[..., Any], tuple[Any, ...]]]:
    def build() -> tuple[Tribes, Stamps, Callable[..., Any], tuple[Any, ...]]:
        match, stamps = _after(moves, **options)
        call = getattr(match, command)
        resolved = tuple(stamps() if a == "stamp" else a for a in args)
        return match, stamps, call, resolved

    return build


EXT = {"extended": True}
REFUSALS: dict[str, tuple[Case, str]] = {
    "out of turn": (_case([], "place", 1, 4, "stamp", tribe_totem(1, 1)), "TR-2.2"),
    "a lifted totem put back on its own space": (
        _case(["2@4", "5@0", "4>"], "place", 0, 4, "stamp"),
        "TR-2.2a",
    ),
    "a lift with no legal destination": (
        _case(
            ["1@0", "1@1", "2@2", "2@4", "3@3", "3@5", "4@7", "4@6", "5@8"], "lift", 1, 1, "stamp"
        ),
        "TR-2.3",
    ),
    "covering the Great Totem of Doom": (
        _case(
            ["doom@4"],
            "place",
            1,
            4,
            "stamp",
            tribe_totem(1, 5),
            prearranged_dice=["large", "blank"],
            **EXT,
        ),
        "TR-5.4",
    ),
    "covering the Mini-Totem of Chaos": (
        _case(
            ["mini@4"],
            "place",
            1,
            4,
            "stamp",
            tribe_totem(1, 5),
            prearranged_dice=["small", "blank"],
            **EXT,
        ),
        "TR-5.5",
    ),
    "the Doom onto the Mini": (
        _case(["mini@4"], "place", 1, 4, "stamp", DOOM, prearranged_dice=["small", "large"], **EXT),
        "TR-5.5",
    ),
    "the Doom onto a tribe totem on a Salvation Space": (
        _case(["1@0"], "place", 1, 0, "stamp", DOOM, prearranged_dice=["blank", "large"], **EXT),
        "TR-5.6",
    ),
    "a move the die forbids": (
        _case([], "place", 0, 4, "stamp", tribe_totem(0, 1), prearranged_dice=["small"], **EXT),
        "TR-5.2",
    ),
    "the Mini when the die does not demand it": (
        _case([], "place", 0, 4, "stamp", MINI, prearranged_dice=["blank"], **EXT),
        "TR-5.2",
    ),
    "a foreign totem": (_case(["2@4"], "lift", 1, 4, "stamp"), "TR-2.2"),
    "a covered totem": (_case(["2@4", "3@4"], "place", 0, 0, "stamp", tribe_totem(0, 2)), "TR-2.2"),
    "a smaller-or-equal cover": (
        _case(["3@4"], "place", 1, 4, "stamp", tribe_totem(1, 3)),
        "TR-2.3",
    ),
    "a place with nothing lifted": (_case([], "place", 0, 4, "stamp"), "TR-2.2a"),
    "an unknown space": (_case([], "place", 0, 9, "stamp", tribe_totem(0, 1)), "TR-1.2"),
    "an unknown space to lift": (_case([], "lift", 0, -1, "stamp"), "TR-1.2"),
    "an unknown badge": (_case([], "place", 0, 4, "stamp", tribe_totem(0, 1), "glory"), "TR-3.4"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_tr_8_each_refusal_names_its_rule_and_changes_nothing(case: str) -> None:
    build, rule = REFUSALS[case]
    match, _, call, args = build()
    error = refused(match, rule, call, *args)
    assert isinstance(error, InvalidArgument) == (rule in ("TR-1.2", "TR-3.4"))


def test_tr_8_moving_a_penalised_grand_chief_names_tr_4_1() -> None:
    match, stamps = new_tribes(2)
    match.penalise(0, stamps())
    play(match, stamps, "1@0", "1@6", "2@1", "2@7", "3@2")
    refused(match, "TR-4.1", match.place, 0, 4, stamps(), tribe_totem(0, 5))
