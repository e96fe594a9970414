"""Receive stamps: taken the moment gRPC hands a race-deciding call to the event loop,
before its message is read (JS-5.1), and the times events were written to each player's
stream, from which a grab's reaction time is read (``ReceiveStamp.seen_sent_monotonic_ns``)."""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from uuid import UUID

import grpc

from domain.kernel.stamps import ReceiveStamp

#: Versions remembered per seat: a grab names an event it has just seen, so a short
#: window is enough and memory stays bounded whatever the match's length.
SENT_WINDOW = 256

#: A call stamped on arrival whose handler has not picked its stamp up within this
#: long (ns) is taken to have ended before its message was read (a cancelled call).
ARRIVING_FOR_NS = 1_000_000_000


class Stamper:
    """Hands out receive stamps in receive order for one server process, and remembers
    when recent events were first written to each seat's Watch stream."""

    def __init__(self, instance: str = "") -> None:
        #: This server instance's name, in every stamp it takes ("" for a lone server).
        self.instance = instance
        self._sequence = itertools.count(1)
        self._sent: dict[UUID, dict[int, OrderedDict[int, int]]] = {}
        #: Calls stamped on arrival whose handler has not run yet: sequence → monotonic_ns,
        #: in arrival order.
        self._arriving: dict[int, int] = {}

    def stamp(self, seen_version: int = 0, on_stream: bool = False) -> ReceiveStamp:
        return ReceiveStamp(
            sequence=next(self._sequence),
            monotonic_ns=time.monotonic_ns(),
            wall_ns=time.time_ns(),
            seen_version=seen_version,
            instance=self.instance,
            on_stream=on_stream,
        )

    def on_arrival(self, seen_version: int) -> ReceiveStamp:
        """The stamp :class:`ArrivalStamps` took when this call arrived, completed with the
        version its message says the client had seen; a fresh one for a call that came in
        without the interceptor (a servicer called directly)."""
        arrived = _ARRIVAL.get()
        if arrived is None:
            return self.stamp(seen_version)
        _ARRIVAL.set(None)
        self._arriving.pop(arrived.sequence, None)
        return dataclasses.replace(arrived, seen_version=seen_version)

    def arrival(self) -> ReceiveStamp:
        """A stamp for a call that has just arrived, its message not read yet; the call's
        handler picks it up with :meth:`on_arrival`. Until then the call counts among
        those :meth:`arriving_by` reports."""
        stamp = self.stamp()
        self._forget_stale(stamp.monotonic_ns)
        self._arriving[stamp.sequence] = stamp.monotonic_ns
        return stamp

    def _forget_stale(self, now_ns: int) -> None:
        """Let go of calls stamped more than :data:`ARRIVING_FOR_NS` before ``now_ns``
        that never reached their handler (a message that would not decode, a call refused
        for its rate): the oldest come first, so the sweep stops at the first fresh one and
        the table stays bounded however rarely a race is held."""
        stale = now_ns - ARRIVING_FOR_NS
        while self._arriving:
            sequence, arrived = next(iter(self._arriving.items()))
            if arrived >= stale:
                return
            del self._arriving[sequence]

    def arriving_by(self, monotonic_ns: int) -> bool:
        """Whether a call stamped on arrival at or before ``monotonic_ns`` has not reached
        its handler yet: its command, if it is one, may still belong before that time
        (a race held open, :mod:`domain.kernel.ties`). Calls that never reach it are
        forgotten after :data:`ARRIVING_FOR_NS`."""
        self._forget_stale(time.monotonic_ns())
        return any(arrived <= monotonic_ns for arrived in self._arriving.values())

    def written(self, match_id: UUID, seat: int, version: int) -> None:
        """The event at ``version`` was just written to a stream of ``seat``; the first
        stream to get it counts (a player with two streams reacts to the earlier)."""
        sent = self._sent.setdefault(match_id, {}).setdefault(seat, OrderedDict())
        if version not in sent:
            sent[version] = time.monotonic_ns()
            if len(sent) > SENT_WINDOW:
                sent.popitem(last=False)

    def with_sent_time(self, stamp: ReceiveStamp, match_id: UUID, seat: int | None) -> ReceiveStamp:
        """``stamp`` with the time its ``seen_version`` reached ``seat``'s stream, if it
        did on this process within the window (a referee command has no seat)."""
        times = self._sent.get(match_id, {}).get(seat) if seat is not None else None
        sent = times.get(stamp.seen_version, 0) if times is not None else 0
        return dataclasses.replace(stamp, seen_sent_monotonic_ns=sent) if sent else stamp

    def forget(self, match_id: UUID) -> None:
        """The match ended, or its actor left for being idle: its times are let go."""
        self._sent.pop(match_id, None)

    def remembers(self, match_id: UUID) -> bool:
        """Whether any time an event reached a stream of this match is kept."""
        return match_id in self._sent


_ARRIVAL: ContextVar[ReceiveStamp | None] = ContextVar("arrival_stamp", default=None)


def stamp_arrival(stamper: Stamper) -> None:
    """Stamp the call this context runs on arrival, its message not read yet, as
    :class:`ArrivalStamps` does on gRPC: for a protocol adapter's own hook (the web
    port's, :mod:`server.web`). Its handler picks the stamp up with
    :meth:`Stamper.on_arrival`."""
    _ARRIVAL.set(stamper.arrival())


class ArrivalStamps(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Stamps race-deciding calls the moment gRPC hands them to the event loop.

    An interceptor runs when the call's headers have arrived, in the call's own task and
    before its message is read; the handler runs only after another turn of the loop has
    read the message. Stamping here keeps that turn, and whatever the loop did during it,
    out of the receive order. The handler picks the stamp up with :meth:`Stamper.on_arrival`.
    """

    def __init__(self, stamper: Stamper, methods: frozenset[str]) -> None:
        self._stamper = stamper
        self._methods = methods

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        if handler_call_details.method in self._methods:
            _ARRIVAL.set(self._stamper.arrival())
        return await continuation(handler_call_details)
