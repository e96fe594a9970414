"""What one client, one seat or one burst may make the server hold, and how much.

Every bound is an option of :class:`Limits` (``totem serve`` has a flag and an environment
variable for each). Beyond a bound the server answers ``RESOURCE_EXHAUSTED`` with a retry
hint (:class:`server.errors.ServiceError`), and nothing is written.

- :class:`CommandRates`: commands per seat per second, a token bucket per match and seat.
- :class:`StreamSlots`: open ``Watch`` streams per connection and per client address.
- :class:`CallLimit`: calls in flight in the whole process, refused at the door.
- :class:`WriteDeadlines`: how long one ``Watch`` write may wait for its client.
- ``max_message_bytes``: the largest request message either port reads.

The retirement of idle match actors is applied where it happens (:mod:`server.actors`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import grpc

from domain.kernel.refusals import DEFAULT_QUOTA
from domain.kernel.ties import MAX_WINDOW_US
from server.errors import ServiceError, status_text, trailing_metadata

#: How close two receive stamps may be and still not show which command reached the
#: server first, in milliseconds: both read on open Play streams, or either an Act call
#: (measured: docs/api.md, "Stamp precision"; docs/performance.md, "Grab races").
STREAM_PRECISION_MS = 0.2
CALL_PRECISION_MS = 2.0


@dataclass(frozen=True)
class Limits:
    """The server's bounds; the defaults suit a server of a few hundred players."""

    #: How long one write of a Watch or Play stream may wait for the client to take it; a stream
    #: whose write takes longer is ended with RESOURCE_EXHAUSTED and its resume version.
    stream_write_timeout_s: float = 5.0
    #: Open Watch and Play streams on one connection (one HTTP/2 connection: one channel).
    streams_per_connection: int = 50
    #: Open Watch and Play streams from one client address, all its connections together.
    streams_per_address: int = 100
    #: Commands (``Act``) one seat of one match may send per second, on average...
    commands_per_second: float = 20.0
    #: ...and at once, after a quiet moment.
    command_burst: int = 40
    #: Calls in flight in the whole process (streams included); beyond, refused at once.
    max_concurrent_calls: int = 2000
    #: The largest request message the server reads, in bytes, on the gRPC port and the web
    #: port alike (gRPC's own default): a larger one is refused with RESOURCE_EXHAUSTED.
    max_message_bytes: int = 4 * 1024 * 1024
    #: Calls gRPC's core may hold for the server before it has taken them: beyond, it
    #: cancels them itself (a bare CANCELLED). Kept well above ``max_concurrent_calls`` so
    #: that a burst reaches the server and is refused with a retry hint instead.
    pending_calls: int = 20000
    #: A match actor with no work waiting or running and no timer leaves after this many
    #: idle seconds; the next call for its match loads the match again from the store.
    idle_actor_s: float = 60.0
    #: Refused commands kept as evidence per seat of a match, and for its referee
    #: (:mod:`domain.kernel.refusals`); beyond, they are only counted.
    refusals_kept_per_seat: int = DEFAULT_QUOTA
    #: The tie windows recorded in every match whose rules hold simultaneous commands
    #: (JS-4.2a, :mod:`domain.kernel.ties`), in milliseconds: for a race first grabbed on
    #: an open Play stream, and for one first grabbed with an Act call. Never below the
    #: stamp precision measured for each (docs/api.md, "Stamp precision").
    tie_window_ms: float = STREAM_PRECISION_MS
    call_tie_window_ms: float = CALL_PRECISION_MS

    def __post_init__(self) -> None:
        for name in (
            "stream_write_timeout_s",
            "commands_per_second",
            "idle_actor_s",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        for name in (
            "streams_per_connection",
            "streams_per_address",
            "command_burst",
            "max_concurrent_calls",
            "max_message_bytes",
            "pending_calls",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.refusals_kept_per_seat < 0:
            raise ValueError("refusals_kept_per_seat cannot be negative")
        for name, floor in (
            ("tie_window_ms", STREAM_PRECISION_MS),
            ("call_tie_window_ms", CALL_PRECISION_MS),
        ):
            if not floor <= getattr(self, name) <= MAX_WINDOW_US / 1000:
                raise ValueError(
                    f"{name} must be between the stamp precision, {floor} ms, and "
                    f"{MAX_WINDOW_US // 1000} ms (JS-4.2a)"
                )

    def tie_windows_us(self) -> tuple[int, int]:
        """The tie windows as a match records them: (stream, call), in microseconds."""
        return round(self.tie_window_ms * 1000), round(self.call_tie_window_ms * 1000)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Limits:
        """The defaults, but for the ``TOTEM_*`` variables set in ``environ``: the same
        names ``totem serve`` reads (:data:`ENV_NAMES`)."""
        values: dict[str, Any] = {}
        for name, variable in ENV_NAMES.items():
            text = environ.get(variable)
            if text:
                kind = type(getattr(cls, name))
                try:
                    values[name] = kind(float(text)) if kind is int else kind(text)
                except ValueError:
                    raise ValueError(f"{variable}={text!r} is not a number") from None
        return cls(**values)

    def grpc_options(self) -> list[tuple[str, int]]:
        """Channel arguments of the gRPC server these limits need."""
        return [
            ("grpc.server.max_pending_requests", self.pending_calls),
            ("grpc.server.max_pending_requests_hard_limit", self.pending_calls),
            ("grpc.max_receive_message_length", self.max_message_bytes),
        ]


#: The environment variable of each limit, for ``totem serve`` and :meth:`Limits.from_env`.
ENV_NAMES = {
    "stream_write_timeout_s": "TOTEM_STREAM_WRITE_TIMEOUT",
    "streams_per_connection": "TOTEM_STREAMS_PER_CONNECTION",
    "streams_per_address": "TOTEM_STREAMS_PER_ADDRESS",
    "commands_per_second": "TOTEM_COMMANDS_PER_SECOND",
    "command_burst": "TOTEM_COMMAND_BURST",
    "max_concurrent_calls": "TOTEM_MAX_CONCURRENT_CALLS",
    "max_message_bytes": "TOTEM_MAX_MESSAGE_BYTES",
    "pending_calls": "TOTEM_PENDING_CALLS",
    "idle_actor_s": "TOTEM_IDLE_ACTOR_SECONDS",
    "refusals_kept_per_seat": "TOTEM_REFUSALS_KEPT_PER_SEAT",
    "tie_window_ms": "TOTEM_TIE_WINDOW_MS",
    "call_tie_window_ms": "TOTEM_CALL_TIE_WINDOW_MS",
}


def exhausted(message: str, retry_after_ms: int) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"{message}; try again in {retry_after_ms} ms",
        retry_after_ms=retry_after_ms,
    )


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; time is given, never read."""

    __slots__ = ("at_ns", "burst", "rate", "tokens")

    def __init__(self, rate: float, burst: int, now_ns: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.at_ns = now_ns

    def take(self, now_ns: int) -> int | None:
        """Spend one token: None if there was one, else the milliseconds until there is."""
        if now_ns > self.at_ns:
            self.tokens = min(self.burst, self.tokens + (now_ns - self.at_ns) * self.rate / 1e9)
            self.at_ns = now_ns
        if self.tokens >= 1:
            self.tokens -= 1
            return None
        return max(1, math.ceil((1 - self.tokens) / self.rate * 1000))


class CommandRates:
    """A token bucket per match and seat (the referee's commands share one, seat None).

    Taken inside the match's actor, where the token's seat is known, at the command's
    receive stamp: a command beyond the rate is refused before it runs, so it writes
    nothing and costs the match only a look at the bucket. Memory follows the live
    matches: a match's buckets are forgotten when its actor leaves."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[UUID, dict[int | None, TokenBucket]] = {}

    def take(self, match_id: UUID, seat: int | None, now_ns: int) -> None:
        """Spend one of the seat's commands, or raise RESOURCE_EXHAUSTED with a hint."""
        seats = self._buckets.setdefault(match_id, {})
        bucket = seats.get(seat)
        if bucket is None:
            bucket = seats[seat] = TokenBucket(self.rate, self.burst, now_ns)
        wait_ms = bucket.take(now_ns)
        if wait_ms is not None:
            who = "the referee" if seat is None else f"seat {seat}"
            raise exhausted(
                f"{who} sent more than {self.rate:g} commands a second (bursts of "
                f"{self.burst}); this one was not applied",
                wait_ms,
            )

    def forget(self, match_id: UUID) -> None:
        self._buckets.pop(match_id, None)

    def matches(self) -> int:
        return len(self._buckets)


#: When a client refused a stream for having too many open may try again: a stream
#: closes when its client cancels it or its match ends, which no clock predicts.
STREAM_RETRY_MS = 1000


class StreamSlots:
    """Counts the open Watch and Play streams of each connection and each client address."""

    def __init__(self, per_connection: int, per_address: int) -> None:
        self.per_connection = per_connection
        self.per_address = per_address
        self._connections: dict[str, int] = {}
        self._addresses: dict[str, int] = {}

    @contextlib.contextmanager
    def held(self, connection: str, address: str) -> Iterator[None]:
        """A slot for one stream while the block runs; RESOURCE_EXHAUSTED when none is
        free (the block does not run)."""
        if self._connections.get(connection, 0) >= self.per_connection:
            raise exhausted(
                f"this connection has {_streams(self.per_connection)} open already: "
                "close one, or open another connection",
                STREAM_RETRY_MS,
            )
        if self._addresses.get(address, 0) >= self.per_address:
            raise exhausted(
                f"this client address has {_streams(self.per_address)} open already: close one",
                STREAM_RETRY_MS,
            )
        _add(self._connections, connection, 1)
        _add(self._addresses, address, 1)
        try:
            yield
        finally:
            _add(self._connections, connection, -1)
            _add(self._addresses, address, -1)

    def open(self, address: str | None = None) -> int:
        """Streams open from ``address``, or in all."""
        if address is None:
            return sum(self._addresses.values())
        return self._addresses.get(address, 0)


class WriteDeadlines:
    """Ends a stream write its client does not take in time (``timeout_s``).

    One timer serves every stream of the process, instead of an ``asyncio.timeout`` per
    write: each event goes to every watcher of its match, and a timer made and cancelled
    for each write was a measurable share of the server's time (docs/performance.md).
    A write notes when it began; a sweep every quarter of the timeout cancels the writes
    that began ``timeout_s`` ago or more, so a stuck write ends between ``timeout_s``
    and 1.25 × ``timeout_s`` after it began. The sweep runs only while writes wait.
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._begun: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._sweep: asyncio.TimerHandle | None = None

    async def write(self, context: grpc.aio.ServicerContext, data: Any) -> bool:
        """``context.write(data)``; False if it was cut for taking too long. Cancelling
        the caller's task for any other reason still cancels it."""
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        self._begun[task] = loop.time()
        if self._sweep is None:
            self._sweep = loop.call_later(self.timeout_s / 4, self._sweeping)
        try:
            await context.write(data)
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            self._expired.discard(task)
            task.uncancel()
            return False
        finally:
            self._begun.pop(task, None)
        return True

    def waiting(self) -> int:
        """Writes under way now."""
        return len(self._begun)

    def _sweeping(self) -> None:
        self._sweep = None
        if not self._begun:
            return
        loop = asyncio.get_running_loop()
        late = loop.time() - self.timeout_s
        for task, begun in list(self._begun.items()):
            if begun <= late and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        self._sweep = loop.call_later(self.timeout_s / 4, self._sweeping)


def _streams(count: int) -> str:
    return f"{count} stream" if count == 1 else f"{count} streams"


def _add(counts: dict[str, int], key: str, delta: int) -> None:
    count = counts.get(key, 0) + delta
    if count:
        counts[key] = count
    else:
        counts.pop(key, None)


#: When a call refused because the process is busy may try again.
BUSY_RETRY_MS = 200


class CallLimit(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """At most ``limit`` calls in flight in the process; the next ones are answered
    RESOURCE_EXHAUSTED with a retry hint at once, before their handler runs.

    grpc's own ``maximum_concurrent_rpcs`` does not do this in ``grpc.aio``: it stops
    taking calls from the transport, where they wait, and a burst beyond the transport's
    backlog is cancelled there, bare. Here every call is taken and either run or refused.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_flight = 0
        self.refused = 0
        #: Each method's handler and its counted form, made once: every call asks.
        self._counted: dict[str, tuple[grpc.RpcMethodHandler, Any]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        if self.in_flight >= self.limit:
            self.refused += 1
            return _refusing(handler, self.limit)
        method = handler_call_details.method
        made = self._counted.get(method)
        if made is None or made[0] is not handler:
            made = self._counted[method] = (handler, _counted(handler, self))
        return made[1]

    def enter(self) -> None:
        """Count one call of another adapter (the web port's) in flight, from the same
        budget as gRPC's calls; RESOURCE_EXHAUSTED, counted as refused, beyond it. Every
        :meth:`enter` that did not raise is followed by one :meth:`leave`."""
        if self.in_flight >= self.limit:
            self.refused += 1
            raise busy(self.limit)
        self.in_flight += 1

    def leave(self) -> None:
        self.in_flight -= 1


def busy(limit: int) -> ServiceError:
    """The refusal of a call beyond ``limit`` calls in flight."""
    return exhausted(
        f"the server has {limit} calls under way, its limit: this call was not run",
        BUSY_RETRY_MS,
    )


_KINDS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")


def _kind(handler: grpc.RpcMethodHandler) -> str:
    return next(kind for kind in _KINDS if getattr(handler, kind) is not None)


def _counted(handler: grpc.RpcMethodHandler, limit: CallLimit) -> Any:
    """``handler``, counted in flight while it runs (a call cancelled before its handler
    starts never counts). Every handler of this server is asynchronous."""
    kind = _kind(handler)
    behaviour = getattr(handler, kind)

    if inspect.isasyncgenfunction(behaviour):

        async def streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            limit.in_flight += 1
            try:
                async for item in behaviour(request, context):
                    yield item
            finally:
                limit.in_flight -= 1

        return handler._replace(**{kind: streaming})
    if not inspect.iscoroutinefunction(behaviour):
        return handler  # a synchronous handler runs in gRPC's threads: not counted here

    async def running(request: Any, context: grpc.aio.ServicerContext) -> Any:
        limit.in_flight += 1
        try:
            return await behaviour(request, context)
        finally:
            limit.in_flight -= 1

    return handler._replace(**{kind: running})


def _refusing(handler: grpc.RpcMethodHandler, limit: int) -> Any:
    """A handler of the same kind that refuses its call at once."""
    refusal = busy(limit)

    async def refuse(request: Any, context: grpc.aio.ServicerContext) -> None:
        await context.abort(refusal.code, status_text(refusal), trailing_metadata(refusal))

    return handler._replace(**{_kind(handler): refuse})
