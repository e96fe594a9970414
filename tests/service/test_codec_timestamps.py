"""Times on the wire: the codec's own conversion gives exactly what protobuf's does."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given
from hypothesis import strategies as st

from server.codec import timestamp


@given(st.datetimes(timezones=st.one_of(st.none(), st.just(UTC), st.timezones())))
def test_timestamp_matches_protobufs_own_conversion(when: datetime) -> None:
    """Every event and summary carries a time; a naive time counts as UTC, as
    ``Timestamp.FromDatetime`` takes it, and times before 1970 keep non-negative nanos."""
    expected = Timestamp()
    expected.FromDatetime(when)
    assert timestamp(when) == expected


def test_timestamp_keeps_microseconds_before_the_epoch() -> None:
    got = timestamp(datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC))
    assert (got.seconds, got.nanos) == (-1, 999_999_000)
