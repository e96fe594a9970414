"""JS-4.2a: grabs received within the tie window after a race's first grab are
simultaneous; the winner is drawn from the match's committed randomness and the deciding
event records every contender, its stamp and the draw."""

from __future__ import annotations

import dataclasses

import pytest
from domain_support import INWARD, SEED, arranged, new_match, sym

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import InvalidArgument, ReceiveStamp
from domain.kernel.ties import tie_draw

S = 3  # a shape shared by the duellists
A, B = sym(10, 0), sym(11, 1)

#: The windows of the tests: 200 µs on streams, 2 ms for calls.
WINDOWS = {"tie_window_us": 200, "call_tie_window_us": 2000}
T0 = 5_000_000_000  # a receive time, ns


def stamp(sequence: int, after_us: float, on_stream: bool = True, **more: object) -> ReceiveStamp:
    """A grab's stamp ``after_us`` after T0."""
    at = T0 + int(after_us * 1000)
    return ReceiveStamp(sequence, at, at, on_stream=on_stream, **more)  # type: ignore[arg-type]


def duel(n: int = 3, seed: bytes = SEED, **options: object) -> JungleSpeed:
    """Seats 0 and 1 in a duel, seat 2 (if any) outside it."""
    tops = [[sym(S, 0)], [sym(S, 1)], [A], [B]][:n]
    match, stamps = new_match(n, deck=arranged(n, tops), seed=seed, **{**WINDOWS, **options})
    for seat in range(n):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[0, 1]]
    return match


def decided(match: JungleSpeed, since: int) -> list[tuple[str, dict[str, object]]]:
    return [
        (type(e).__name__, vars(e)) for e in match.pending_events if e.originator_version > since
    ]


def test_js_4_2a_grabs_within_the_window_are_drawn_and_the_draw_recorded() -> None:
    match = duel()
    version = match.version
    first, second = stamp(100, 0), stamp(101, 150)
    assert match.grab(1, first) == "held"
    assert match.grab(0, second) == "held"
    assert match.held_until_ns() == first.monotonic_ns + 200_000
    assert decided(match, version) == []  # nothing decided while the window is open
    match.settle_held()
    ((name, won),) = decided(match, version)
    assert name == "DuelWon"
    drawn = tie_draw(match.effective_seed(), "jungle_speed", version + 1, 2)
    tie = won["tie"]
    assert tie == {
        "window_us": 200,
        "contenders": [
            {"seat": 1, "target": "default", "stamp": first.to_dict()},
            {"seat": 0, "target": "default", "stamp": second.to_dict()},
        ],
        "drawn": drawn,
    }
    assert won["winner"] == tie["contenders"][drawn]["seat"]
    assert won["stamp"] == tie["contenders"][drawn]["stamp"]
    assert won["losers"] == [1 - won["winner"]]
    assert match.held is None


def test_js_4_2a_either_contender_can_win_the_draw() -> None:
    """The draw is the seed's, not the receive order's: over several seeds the grab
    received second wins too."""
    winners = set()
    for byte in range(12):
        match = duel(seed=bytes([byte]) * 32)
        match.grab(1, stamp(100, 0))
        match.grab(0, stamp(101, 10))
        match.settle_held()
        winners.add(match.pending_events[-1].winner)
    assert winners == {0, 1}


def test_js_4_2a_a_grab_just_outside_the_window_loses_as_js_4_2_says() -> None:
    match = duel()
    version = match.version
    assert match.grab(1, stamp(100, 0)) == "held"
    assert match.grab(0, stamp(101, 200.001)) == "late"
    (name, won), (late_name, late) = decided(match, version)
    assert (name, won["winner"], won["tie"]) == ("DuelWon", 1, None)
    assert (late_name, late["seat"], late["decided_at_version"]) == ("LateGrab", 0, version + 1)


def test_js_4_2a_a_grab_at_the_window_edge_is_simultaneous() -> None:
    match = duel()
    match.grab(1, stamp(100, 0))
    assert match.grab(0, stamp(101, 200)) == "held"


def test_js_4_2a_a_lone_grab_settles_as_an_ordinary_win() -> None:
    match = duel()
    version = match.version
    first = stamp(100, 0)
    assert match.grab(0, first) == "held"
    match.settle_held()
    ((name, won),) = decided(match, version)
    assert (name, won["winner"], won["stamp"], won["tie"]) == ("DuelWon", 0, first.to_dict(), None)


def test_js_4_2a_a_call_opens_the_call_window() -> None:
    """A grab stamped when its call was admitted (Act) is coarser: the call window."""
    match = duel()
    first = stamp(100, 0, on_stream=False)
    assert match.grab(1, first) == "held"
    assert match.held_until_ns() == first.monotonic_ns + 2_000_000
    assert match.grab(0, stamp(101, 1500, on_stream=False)) == "held"
    match.settle_held()
    assert match.pending_events[-1].tie["window_us"] == 2000


def test_js_4_2a_a_stamp_of_another_instance_is_never_simultaneous() -> None:
    match = duel()
    version = match.version
    match.grab(1, stamp(100, 0, instance="a"))
    assert match.grab(0, stamp(7, 10, instance="b")) == "late"
    assert [n for n, _ in decided(match, version)] == ["DuelWon", "LateGrab"]


def test_js_4_2a_a_grab_that_would_not_win_settles_the_race_first() -> None:
    """Seat 2 is in no duel: its grab is wrong (JS-5.2) after the race is decided."""
    match = duel()
    version = match.version
    match.grab(1, stamp(100, 0))
    assert match.grab(2, stamp(101, 50)) == "wrong"
    assert [n for n, _ in decided(match, version)] == ["DuelWon", "WrongGrab"]


def test_js_4_2a_a_second_grab_of_the_same_seat_does_not_join() -> None:
    match = duel()
    version = match.version
    match.grab(1, stamp(100, 0))
    assert match.grab(1, stamp(101, 50)) == "late"
    assert [n for n, _ in decided(match, version)] == ["DuelWon", "LateGrab"]


def test_js_4_2a_an_inward_arrows_race_among_three() -> None:
    deck = arranged(3, [[A], [INWARD[0]], [B]])
    match, stamps = new_match(3, deck=deck, **WINDOWS)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    version = match.version
    for i, seat in enumerate((2, 0, 1)):
        assert match.grab(seat, stamp(100 + i, 60 * i)) == "held"
    match.settle_held()
    ((name, won),) = decided(match, version)
    drawn = tie_draw(match.effective_seed(), "jungle_speed", version + 1, 3)
    assert name == "ArrowsWon"
    assert won["tie"]["drawn"] == drawn
    assert won["winner"] == (2, 0, 1)[drawn]


def test_js_4_2a_a_reveal_comes_after_the_held_race() -> None:
    match = duel()
    version = match.version
    match.grab(0, stamp(100, 0))
    match.reveal(1, stamp(101, 10))  # the loser starts (JS-4.5): the race came first
    assert [n for n, _ in decided(match, version)] == ["DuelWon", "Revealed"]


def test_js_4_2a_without_a_window_the_first_grab_wins_at_once() -> None:
    match = duel(tie_window_us=0, call_tie_window_us=0)
    assert match.grab(1, stamp(100, 0)) == "duel"
    assert match.grab(0, stamp(101, 1)) == "late"


def test_js_4_2a_the_receive_numbers_of_every_contender_are_accounted() -> None:
    match = duel()
    match.grab(1, stamp(100, 0, receive=7))
    match.grab(0, stamp(101, 10, receive=8))
    match.settle_held()
    assert match.last_receive == 8


def test_js_4_2a_replay_rebuilds_the_drawn_race_without_drawing() -> None:
    match = duel()
    match.grab(1, stamp(100, 0))
    match.grab(0, stamp(101, 10))
    match.settle_held()
    events = match.collect_events()
    rebuilt = None
    for evt in events:
        rebuilt = evt.mutate(rebuilt)
    assert rebuilt is not None
    assert (rebuilt.down, rebuilt.up, rebuilt.turn) == (match.down, match.up, match.turn)


@pytest.mark.parametrize("name", ["tie_window_us", "call_tie_window_us"])
def test_js_4_2a_windows_out_of_range_are_refused(name: str) -> None:
    with pytest.raises(InvalidArgument, match=r"JS-4\.2a"):
        Options(**{name: 1_000_001}).validate()
    assert dataclasses.replace(Options(), **{name: 200}).validate()
