"""Typed commands and the one dispatch every game extends (MatchAggregate.execute).

A command sent through ``execute`` records exactly what the game's own method records;
a command of another game is refused without an event; who may send each command is
part of its type.
"""

from __future__ import annotations

from typing import Any

import pytest
from domain_support import NO_SPECIALS, Stamps, new_match, refused
from tribes_support import new_tribes
from village_support import new_village

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed.commands import Grab, Reveal
from domain.jungle_speed.options import Options
from domain.kernel.commands import Command, Start, Stop
from domain.kernel.match import MatchAggregate, MatchStatus, payload
from domain.tribes.commands import LiftTotem, Penalise, PlaceTotem
from domain.tribes.pieces import tribe_totem
from domain.village.commands import Arrange
from domain.village.defaults import default_command


def recorded(match: MatchAggregate) -> list[tuple[str, dict[str, Any]]]:
    return [(type(e).__name__, payload(e)) for e in match.pending_events]


def test_js_3_1_js_4_2_jungle_speed_commands_record_what_their_methods_record() -> None:
    by_method, stamps_a = new_match(2, **NO_SPECIALS)
    by_command, stamps_b = new_match(2, **NO_SPECIALS)
    for _ in range(6):
        seat = by_method.turn
        assert seat is not None
        by_method.reveal(seat, stamps_a())
        by_command.execute(Reveal(), seat, stamps_b())
    by_method.grab(1, stamps_a())
    by_command.execute(Grab(), 1, stamps_b())
    assert recorded(by_command) == recorded(by_method)


def test_tr_2_2_a_totem_placed_by_size_is_the_acting_seats_own() -> None:
    match, stamps = new_tribes(2)
    seat = match.turn
    assert seat is not None
    space = match.forced_destinations()[0] if match.forced_destinations() else 0
    match.execute(PlaceTotem(space, size=3), seat, stamps())
    assert match.top(space) == tribe_totem(seat, 3)


def test_tr_2_2_lift_and_place_through_execute_record_what_their_methods_record() -> None:
    by_method, stamps_a = new_tribes(2)
    by_command, stamps_b = new_tribes(2)
    first, second = by_method.turn, by_command.turn
    assert first is not None and first == second
    other = 1 - first
    by_method.place(first, 0, stamps_a(), tribe_totem(first, 2))
    by_command.execute(PlaceTotem(0, size=2), first, stamps_b())
    by_method.place(other, 1, stamps_a(), tribe_totem(other, 1))
    by_command.execute(PlaceTotem(1, size=1), other, stamps_b())
    assert by_method.lift_refusal(first, 0) is None
    by_method.lift(first, 0, stamps_a())
    by_command.execute(LiftTotem(0), first, stamps_b())
    by_method.place(first, 2, stamps_a())
    by_command.execute(PlaceTotem(2), first, stamps_b())
    assert by_command.top(2) == tribe_totem(first, 2)
    assert recorded(by_command) == recorded(by_method)


def test_tr_4_1_a_penalty_names_the_penalised_seat_not_the_sender() -> None:
    match, stamps = new_tribes(2)
    match.execute(Penalise(1), None, stamps())
    assert type(match.pending_events[-1]).__name__ == "Penalised"
    assert match.pending_events[-1].seat == 1


def test_vi_2_1_village_decisions_through_execute_are_the_families_own() -> None:
    by_method, stamps_a = new_village(2)
    by_command, stamps_b = new_village(2)
    family = 0
    decision = default_command(by_method, family)
    assert isinstance(decision, Arrange)
    seat = by_method.party_owner(family)
    by_method.act(seat, decision, stamps_a())
    by_command.execute(decision, seat, stamps_b())
    assert recorded(by_command) == recorded(by_method)


def test_js_1_5_start_and_js_8_3_stop_are_every_games_commands() -> None:
    stamps = Stamps()
    match, _ = new_match(3, stamps=stamps, **NO_SPECIALS)  # full: started by itself
    match.execute(Stop("the venue closes"), None, stamps())
    assert match.status is MatchStatus.ENDED
    assert type(match.pending_events[-1]).__name__ == "MatchEnded"
    assert match.pending_events[-1].statement == "the venue closes"

    waiting = JungleSpeed.create(Options(max_players=4), b"\x02" * 32)
    for seat in range(2):
        waiting.join(f"p{seat}", b"", f"hash-{seat}", stamps())
    waiting.execute(Start(), 1, stamps())
    assert waiting.status is MatchStatus.PLAYING


@pytest.mark.parametrize(
    ("command", "referee"),
    [
        (Start(), False),
        (Stop("why"), True),
        (Reveal(), False),
        (Grab(), False),
        (LiftTotem(0), False),
        (PlaceTotem(0, size=1), False),
        (Penalise(0), True),
        (Arrange(0, []), False),
    ],
)
def test_who_may_send_a_command_is_part_of_its_type(command: Command, referee: bool) -> None:
    assert command.REFEREE is referee


def test_tr_1_1_a_command_of_another_game_is_refused_and_records_nothing() -> None:
    match, stamps = new_tribes(2)
    error = refused(match, "TR-1.1", match.execute, Reveal(), 0, stamps())  # type: ignore[arg-type]
    assert "Reveal is not a command of tribes" in error.message
