"""The pieces every game's codec is made of: times and receive stamps on the wire. The
codec package (:mod:`server.codec`) registers the games' codecs; they import this
module, never the package."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from totem.v1 import common_pb2

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def timestamp(when: datetime) -> Timestamp:
    """``when`` on the wire (a naive time is UTC, as ``Timestamp.FromDatetime`` takes it),
    by integer arithmetic: every event and every summary sent carries one, and
    ``FromDatetime`` goes through a time tuple."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    micros = (when - EPOCH) // MICROSECOND
    seconds, rest = divmod(micros, 1_000_000)
    return Timestamp(seconds=seconds, nanos=rest * 1000)


def stamp_message(data: dict[str, Any]) -> common_pb2.ReceiveStamp:
    received = Timestamp()
    received.FromNanoseconds(data["wall_ns"])
    return common_pb2.ReceiveStamp(
        sequence=data["sequence"],
        monotonic_ns=data["monotonic_ns"],
        received_at=received,
        seen_version=data["seen_version"],
        seen_sent_monotonic_ns=data.get("seen_sent_monotonic_ns", 0),
        instance=data.get("instance", ""),
        on_stream=data.get("on_stream", False),
        receive=data.get("receive", 0),
    )
