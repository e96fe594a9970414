"""Presence across server instances (JS-8.3): a player is at the table through any
instance, and an instance that goes silent takes its streams with it."""

from __future__ import annotations

import uuid

from server.presence import DEAD_AFTER_MS, Presence

MATCH = uuid.uuid4()


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def pair() -> tuple[Presence, Presence, Clock]:
    """Two instances' presences, each telling the other what it announces."""
    clock = Clock()
    a, b = Presence(clock=clock), Presence(clock=clock)
    a.announce = lambda message: b.heard("a", message)
    b.announce = lambda message: a.heard("b", message)
    return a, b, clock


def test_js_8_3_a_stream_through_another_instance_keeps_the_seat_present() -> None:
    a, b, clock = pair()
    b.stream_opened(MATCH, 0)
    assert a.away_since_ms(MATCH, [0]) is None
    clock.ms += 500
    b.stream_closed(MATCH, 0)
    assert a.away_since_ms(MATCH, [0]) == clock.ms


def test_js_8_3_a_command_through_another_instance_counts_as_presence() -> None:
    a, b, clock = pair()
    clock.ms += 10_000
    b.acted(MATCH, 1)
    assert a.away_since_ms(MATCH, [1]) == clock.ms


def test_js_8_3_a_silent_instance_takes_its_streams_with_it_from_its_last_heartbeat() -> None:
    a, b, clock = pair()
    b.stream_opened(MATCH, 0)
    last = clock.ms
    b.announce = None  # b is killed: nothing more is heard from it
    clock.ms += DEAD_AFTER_MS // 2
    a.beat()
    assert a.away_since_ms(MATCH, [0]) is None  # not yet taken for gone
    clock.ms += DEAD_AFTER_MS
    a.beat()
    assert a.away_since_ms(MATCH, [0]) == last


def test_js_8_3_an_instance_that_says_goodbye_leaves_at_once() -> None:
    a, b, clock = pair()
    b.stream_opened(MATCH, 2)
    clock.ms += 100
    b.bye()
    assert a.away_since_ms(MATCH, [2]) == clock.ms


def test_js_8_3_a_new_instance_learns_the_streams_already_open() -> None:
    a, b, _ = pair()
    b.stream_opened(MATCH, 0)
    b.stream_opened(MATCH, 0)
    late = Presence(clock=a._clock)
    b.announce = lambda message: late.heard("b", message)
    late.announce = lambda message: b.heard("late", message)
    late.hello()
    assert late.away_since_ms(MATCH, [0]) is None
    b.stream_closed(MATCH, 0)
    assert late.away_since_ms(MATCH, [0]) is None  # one of the two is still open
