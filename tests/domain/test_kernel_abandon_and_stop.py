"""A match that does not complete: abandoned (JS-8.3) or stopped by a referee (JS-8.3).

Every game ends this way through the kernel, citing its own end rule (Tribes TR-3.5,
Village VI-4.1). Whether the players were away is the server's observation; the domain
records it as the statement of the end.
"""

from __future__ import annotations

from typing import Any

import pytest
from domain_support import NO_SPECIALS, events_since, new_match, refused
from test_jungle_speed_ending import four_seats_all_face_up
from tribes_support import new_tribes
from village_support import new_village

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed.options import Options as JungleSpeedOptions
from domain.kernel import EndReason, MatchStatus
from domain.kernel.errors import InvalidArgument
from domain.kernel.options import DEFAULT_ABANDON_AFTER_MS
from domain.tribes.options import Options as TribesOptions
from domain.village.options import Options as VillageOptions


def ended(match: Any) -> Any:
    last = match.pending_events[-1]
    assert type(last).__name__ == "MatchEnded"
    assert match.status is MatchStatus.ENDED
    return last


def test_js_8_3_an_abandoned_match_keeps_the_finishing_order_so_far() -> None:
    match, stamps = four_seats_all_face_up("ES")
    assert match.grab(0, stamps()) == "duel"  # seat 0 finishes first (JS-8.1)
    assert match.seats_in_play() == [1, 2, 3]
    match.abandon("every player still in play was away for 300000 ms")
    end = ended(match)
    assert match.end_reason is EndReason.ABANDONED
    assert end.statement == "every player still in play was away for 300000 ms"
    assert match.result == [
        {"seat": 0, "place": 1},
        {"seat": 1, "place": 2},
        {"seat": 2, "place": 2},
        {"seat": 3, "place": 2},
    ]
    error = refused(match, "JS-8.3", match.reveal, 1, stamps())
    assert "ended" in error.message


def test_js_8_3_a_waiting_match_nobody_joins_can_be_abandoned() -> None:
    match = JungleSpeed.create(JungleSpeedOptions(max_players=4), b"\x01" * 32)
    match.abandon("nobody joined for 3600 s: 0 of 4 seats taken")
    assert match.end_reason is EndReason.ABANDONED
    assert match.result == []
    assert ended(match).seed == match.seed  # the seed is revealed as at any end


def test_js_8_3_a_referee_stops_a_match_with_a_stated_result() -> None:
    match, _ = new_match(3, **NO_SPECIALS)
    version = match.version
    result = [{"seat": 2, "place": 1}, {"seat": 0, "place": 2}, {"seat": 1, "place": 2}]
    match.stop("  player 1 left the venue; scores as agreed  ", result)
    assert [type(e).__name__ for e in events_since(match, version)] == ["MatchEnded"]
    assert ended(match).statement == "player 1 left the venue; scores as agreed"
    assert match.end_reason is EndReason.STOPPED
    assert match.result == result
    refused(match, "JS-8.3", match.stop, "again", None)


def test_js_8_3_a_stop_without_a_result_takes_the_standings() -> None:
    match, _ = new_match(2, **NO_SPECIALS)
    match.stop("power cut")
    assert match.result == [{"seat": 0, "place": 1}, {"seat": 1, "place": 1}]


@pytest.mark.parametrize(
    ("statement", "result"),
    [
        ("", None),
        ("   ", None),
        ("x" * 201, None),
        ("line\nbreak", None),
        ("bidi \u202e override", None),
        ("ok", [{"seat": 0, "place": 1}]),  # a seat left out
        ("ok", [{"seat": 0, "place": 1}, {"seat": 0, "place": 2}]),  # a seat twice
        ("ok", [{"seat": 0, "place": 1}, {"seat": 1, "place": 3}]),  # beyond the seats
        ("ok", [{"seat": 0, "place": 0}, {"seat": 1, "place": 1}]),  # places start at 1
    ],
)
def test_js_8_3_a_stop_needs_a_printable_statement_and_a_whole_result(
    statement: str, result: list[dict[str, int]] | None
) -> None:
    match, _ = new_match(2, **NO_SPECIALS)
    error = refused(match, "JS-8.3", match.stop, statement, result)
    assert isinstance(error, InvalidArgument)


def test_tr_3_5_a_tribes_match_is_stopped_and_abandoned_like_any_other() -> None:
    match, _ = new_tribes(2)
    match.stop("the venue closes", [{"seat": 1, "place": 1}, {"seat": 0, "place": 2}])
    assert match.end_reason is EndReason.STOPPED
    assert ended(match).statement == "the venue closes"
    with pytest.raises(Exception) as info:
        match.abandon("late")
    assert getattr(info.value, "rule", None) == "TR-3.5"
    other, _ = new_tribes(3)
    other.abandon("every player still in play was away")
    assert other.end_reason is EndReason.ABANDONED
    assert other.result == [{"seat": s, "place": 1} for s in range(3)]


def test_vi_4_1_a_village_match_is_stopped_and_abandoned_like_any_other() -> None:
    match, _ = new_village(2)
    match.stop("a player fell ill")
    assert match.end_reason is EndReason.STOPPED
    assert match.result == [{"seat": 0, "place": 1}, {"seat": 1, "place": 1}]
    other, _ = new_village(3)
    other.abandon("every player still in play was away")
    assert other.end_reason is EndReason.ABANDONED
    with pytest.raises(Exception) as info:
        other.stop("too late")
    assert getattr(info.value, "rule", None) == "VI-4.1"


@pytest.mark.parametrize(
    ("options", "rule"),
    [(JungleSpeedOptions, "JS-8.3"), (TribesOptions, "TR-3.5"), (VillageOptions, "VI-4.1")],
)
def test_abandon_after_ms_is_an_option_of_every_game(options: Any, rule: str) -> None:
    assert options().abandon_after_ms == DEFAULT_ABANDON_AFTER_MS
    assert options(abandon_after_ms=1_000).validate().abandon_after_ms == 1_000
    for bad in (999, 86_400_001):
        with pytest.raises(InvalidArgument) as info:
            options(abandon_after_ms=bad).validate()
        assert info.value.rule == rule


def test_js_8_3_a_match_stored_before_the_option_existed_takes_the_default() -> None:
    data = JungleSpeedOptions().to_dict()
    del data["abandon_after_ms"]
    match = JungleSpeed(options=data, seed="01" * 32, entropy="", referee_token_hash="")
    assert match.abandon_after_ms == DEFAULT_ABANDON_AFTER_MS
