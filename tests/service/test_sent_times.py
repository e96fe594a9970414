"""The times events reached each seat's stream, kept for reaction evidence (JS-5.1)."""

from __future__ import annotations

from uuid import uuid4

from server.stamps import SENT_WINDOW, Stamper


def test_js_5_1_the_first_stream_to_get_an_event_counts_and_the_window_is_bounded() -> None:
    stamper = Stamper()
    match_id = uuid4()
    stamper.written(match_id, 1, 5)
    first = stamper.with_sent_time(stamper.stamp(5), match_id, 1).seen_sent_monotonic_ns
    stamper.written(match_id, 1, 5)  # a second stream of the same seat, later
    assert stamper.with_sent_time(stamper.stamp(5), match_id, 1).seen_sent_monotonic_ns == first
    assert first > 0
    # Another seat, a referee command and an unknown version get none.
    assert stamper.with_sent_time(stamper.stamp(5), match_id, 0).seen_sent_monotonic_ns == 0
    assert stamper.with_sent_time(stamper.stamp(5), match_id, None).seen_sent_monotonic_ns == 0
    assert stamper.with_sent_time(stamper.stamp(6), match_id, 1).seen_sent_monotonic_ns == 0
    for version in range(6, 6 + SENT_WINDOW):
        stamper.written(match_id, 1, version)
    # Version 5 fell out of the window; the newest is kept.
    assert stamper.with_sent_time(stamper.stamp(5), match_id, 1).seen_sent_monotonic_ns == 0
    newest = stamper.stamp(5 + SENT_WINDOW)
    assert stamper.with_sent_time(newest, match_id, 1).seen_sent_monotonic_ns > 0


def test_js_5_1_an_ended_match_is_forgotten() -> None:
    stamper = Stamper()
    match_id, other = uuid4(), uuid4()
    stamper.written(match_id, 0, 3)
    stamper.written(other, 0, 3)
    stamper.forget(match_id)
    assert stamper.with_sent_time(stamper.stamp(3), match_id, 0).seen_sent_monotonic_ns == 0
    assert stamper.with_sent_time(stamper.stamp(3), other, 0).seen_sent_monotonic_ns > 0
