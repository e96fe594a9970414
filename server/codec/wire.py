"""The pieces every game's codec is made of: times and receive stamps on the wire. The
codec package (:mod:`server.codec`) registers the games' codecs; they import this
module, never the package."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp

from domain.kernel.stamps import ReceiveStamp
from totem.v1 import common_pb2, match_service_pb2, tournament_service_pb2

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


def stamp_message(stamp: ReceiveStamp) -> common_pb2.ReceiveStamp:
    received = Timestamp()
    received.FromNanoseconds(stamp.wall_ns)
    return common_pb2.ReceiveStamp(
        sequence=stamp.sequence,
        monotonic_ns=stamp.monotonic_ns,
        received_at=received,
        seen_version=stamp.seen_version,
        seen_sent_monotonic_ns=stamp.seen_sent_monotonic_ns,
        instance=stamp.instance,
        on_stream=stamp.on_stream,
        receive=stamp.receive,
        client_reaction_ms=stamp.client_reaction_ms,
    )


#: A request that carries a game's options in a ``options`` oneof (``jungle_speed``,
#: ``tribes``, ``village``) and ``abandon_after_ms``: a match's creation, or a
#: tournament's, whose tables are all created with them.
OptionsRequest = (
    match_service_pb2.CreateMatchRequest | tournament_service_pb2.CreateTournamentRequest
)
