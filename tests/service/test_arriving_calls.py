"""Calls stamped on arrival and not yet handled: what a held race waits for (JS-4.2a),
and what is let go when a call never reaches its handler."""

from __future__ import annotations

import pytest

import server.stamps
from server.stamps import ARRIVING_FOR_NS, Stamper


class FakeClock:
    """The stamper's monotonic clock, moved by the test alone."""

    def __init__(self) -> None:
        self.now_ns = 10**12

    def __call__(self) -> int:
        return self.now_ns


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(server.stamps.time, "monotonic_ns", fake)
    return fake


def test_js_4_2a_a_call_not_yet_handled_is_waited_for_until_its_handler_takes_its_stamp(
    clock: FakeClock,
) -> None:
    stamper = Stamper()
    arrived = stamper.arrival()
    assert stamper.arriving_by(arrived.monotonic_ns)
    assert not stamper.arriving_by(arrived.monotonic_ns - 1)  # it came after that time
    server.stamps._ARRIVAL.set(arrived)
    assert stamper.on_arrival(seen_version=3).sequence == arrived.sequence
    assert not stamper.arriving_by(arrived.monotonic_ns)


def test_js_4_2a_calls_that_never_reach_their_handler_are_let_go_on_the_next_arrival(
    clock: FakeClock,
) -> None:
    """An undecodable message or a call refused for its rate never picks its stamp up;
    the table must not grow with them while no race is held (nobody asks arriving_by)."""
    stamper = Stamper()
    for _ in range(2000):
        stamper.arrival()
        clock.now_ns += 1_000_000
    assert len(stamper._arriving) == ARRIVING_FOR_NS // 1_000_000 + 1
    clock.now_ns += ARRIVING_FOR_NS + 1
    fresh = stamper.arrival()
    assert list(stamper._arriving) == [fresh.sequence]
    assert not stamper.arriving_by(fresh.monotonic_ns - 1)
