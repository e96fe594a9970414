"""The client's two streams of one match: the events of a Watch stream, which resumes by
itself (:class:`EventStream`), and one player's commands over a Play stream
(:class:`PlayStream`).

The :class:`~totem_client.client.Client` opens them (``watch``, ``play``) and they call
back into it for the gRPC call itself, so that the channel, its stub and the bearer
metadata stay in the client; this module names the client for typing only, so that the
client can import it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

import grpc

from totem.v1 import match_service_pb2
from totem_client.errors import TotemError
from totem_client.games import Command, act_request
from totem_client.messages import ActResponse, MatchEvent
from totem_client.reconnect import pause
from totem_client.service_client import ServiceClient

if TYPE_CHECKING:
    from totem_client.client import Client

M = TypeVar("M")
T = TypeVar("T")

#: Watch failures after which the stream is opened again from the last version seen.
RESUMABLE_CODES: frozenset[grpc.StatusCode] = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)


class _Gap(Exception):
    """The server skipped a version: treated like a broken stream."""


class ResumableStream(Generic[M, T]):
    """A server stream of numbered messages (``version``) read in version order, each
    exactly once, opened again after a transient failure from the last version yielded.

    When the stream breaks with a transient status (:data:`RESUMABLE_CODES`: the server
    is unavailable or restarting, or the stream fell behind and was closed with
    RESOURCE_EXHAUSTED), it is opened again with ``after_version`` = the last version
    yielded, after a pause (:func:`totem_client.reconnect.pause`: what the server's retry
    hint says, else 50 ms doubling up to 1 s). A version skipped counts as a break. It
    ends when the server ends the stream normally. After ``max_failures`` failures in a
    row with no message in between (None: no limit) the last failure is raised as a
    :class:`TotemError`, as is any failure that is not transient.

    ``last_version`` is the version of the last message yielded; ``resumes`` counts the
    times the stream was opened again. Use ``async with`` or :meth:`aclose` to stop early.
    A subclass opens the call (:meth:`_open`) and may turn each message into what it
    yields (:meth:`_item`).
    """

    def __init__(
        self, client: ServiceClient, after_version: int = 0, max_failures: int | None = 10
    ) -> None:
        self.client = client
        self.last_version = after_version
        self.resumes = 0
        self.max_failures = max_failures
        self._items = self._run()

    def _open(self) -> Any:
        """The stream's call, from :attr:`last_version` on."""
        raise NotImplementedError

    def _item(self, message: M) -> T:
        """What the stream yields for ``message`` (by default the message itself)."""
        return message  # type: ignore[return-value]

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        return await anext(self._items)

    async def aclose(self) -> None:
        """Stop watching: the call is cancelled."""
        await self._items.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[T, None]:
        failures = 0
        while True:
            call = self._open()
            try:
                async for message in call:
                    if message.version <= self.last_version:
                        continue  # already yielded before a resume
                    if message.version != self.last_version + 1:
                        raise _Gap(
                            f"the server sent version {message.version} after {self.last_version}"
                        )
                    self.last_version = message.version
                    failures = 0
                    yield self._item(message)
                return
            except grpc.aio.AioRpcError as error:
                failure = TotemError.from_rpc_error(error)
                if self.client.closed or error.code() not in RESUMABLE_CODES:
                    raise failure from error
            except _Gap as gap:
                failure = TotemError(grpc.StatusCode.DATA_LOSS, str(gap))
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if self.client.closed and task is not None and not task.cancelling():
                    # grpc.aio cancels the calls of a closed channel.
                    raise TotemError(
                        grpc.StatusCode.CANCELLED, "the client was closed while watching"
                    ) from None
                raise
            finally:
                call.cancel()
            failures += 1
            if self.max_failures is not None and failures > self.max_failures:
                raise failure
            await asyncio.sleep(self._backoff(failures, failure))
            self.resumes += 1

    def _backoff(self, failures: int, failure: TotemError) -> float:
        exhausted = failure.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        if failures == 1 and exhausted and failure.retry_delay is None:
            return 0.0  # it fell behind; the server is fine
        return pause(failures, failure)


class EventStream(ResumableStream[MatchEvent, MatchEvent]):
    """The events of one match in version order, each exactly once (see
    :class:`ResumableStream`): it ends when the match has ended and every event was
    sent. ``on_event`` is called with each event before it is yielded."""

    def __init__(
        self,
        client: Client,
        match_id: str,
        after_version: int = 0,
        *,
        token: str | None = None,
        with_state: bool = True,
        max_failures: int | None = 10,
        on_event: Callable[[MatchEvent], None] | None = None,
    ) -> None:
        super().__init__(client, after_version, max_failures)
        self.match_client = client
        self.match_id = match_id
        self.token = token
        self.with_state = with_state
        self.on_event = on_event

    def _open(self) -> Any:
        return self.match_client._open_watch(
            self.match_id, self.last_version, self.token, self.with_state
        )

    def _item(self, message: MatchEvent) -> MatchEvent:
        if self.on_event is not None:
            self.on_event(message)
        return message


#: The initial metadata with which the server says it has accepted a Play stream.
PLAY_ACCEPTED = ("totem-play", "accepted")

#: What the writer of a Play stream takes from its outbox: a request and the future of
#: its answer, or None to half-close the stream.
_Outgoing = tuple[match_service_pb2.PlayRequest, "asyncio.Future[Any]"] | None
#: What a Play stream sends first: no command, answered in its turn (``PlayRequest.ready``).
READY_REQUEST = match_service_pb2.PlayRequest(ready=match_service_pb2.PlayReady())


class PlayStream:
    """Commands for one token over one open Play stream (``MatchService.Play``).

    Why a stream: a command on a stream that is already open is receive-stamped the
    moment the server reads its message, while an Act call is stamped only once gRPC has
    set the call up, one call at a time. Grabs are decided by receive order (JS-5.1), so
    a player who races for the totem, or who sends commands often, gets a tighter and
    fairer receive order here. Everything else is Act's: :meth:`act` returns the
    ``ActResponse`` :meth:`Client.act` would, and raises the same :class:`TotemError`
    (code, rule, message, retry delay) for the same refusal; a refusal does not end the
    stream.

    The server answers the requests in the order they were sent, so answers are matched
    to commands by that order: one task writes every request, and queues the command's
    future just before writing it, so that the queue of waiting futures is in write
    order. Concurrent :meth:`act` calls are fine; each gets its own answer. A command
    whose ``act`` is cancelled before its request is written is never sent.

    When the stream itself ends with an error (UNAVAILABLE: the server shuts down, and
    the commands it had not answered were not applied; RESOURCE_EXHAUSTED: the caller
    has too many streams open; CANCELLED: the client closed), every command still
    waiting raises it, and so does every later one (:attr:`failure`): open another
    stream to go on (a :class:`Session` does so by itself). grpcio's asyncio client
    reports a write that races with the server ending the stream as INTERNAL instead of
    the server's status (grpc/grpc#36066); so a stream without a token, which the server
    ends at once, is never written to: its UNAUTHENTICATED is read instead; and the first
    request waits for the server's initial metadata, which it sends once it has accepted
    the stream (a refusal of the stream itself comes instead). A write that still races
    with the end of the accepted stream (the server went away) raises UNAVAILABLE.

    The first request of every stream is a ready request (``PlayRequest.ready``), no
    command: gRPC hands the server a stream's first message sooner than its later ones,
    so a grab that was its stream's first message would win close races against grabs on
    streams already used (docs/performance.md). :meth:`open` returns once it is
    answered.

    Use it as ``async with client.play(token=...) as stream:``, which opens it
    (:meth:`open`); leaving the block waits for the answers still due and ends the
    stream (:meth:`close`), or ends it at once if the block raised (:meth:`cancel`).
    Opened ahead of a race, the stream costs the race no setting up.
    """

    def __init__(self, client: Client, token: str) -> None:
        self.client = client
        self.token = token
        #: Why the stream ended, once it has ended with an error; None otherwise.
        self.failure: TotemError | None = None
        self._call: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._settling: asyncio.Task[None] | None = None
        self._outbox: asyncio.Queue[_Outgoing] = asyncio.Queue()
        self._waiting: deque[asyncio.Future[Any]] = deque()
        self._ready: asyncio.Future[None] | None = None
        self._closing = False
        self._ended = False
        self._write_failed = False

    def __repr__(self) -> str:
        state = "ended" if self._ended else "closing" if self._closing else "open"
        return f"PlayStream({state}, waiting={len(self._waiting)})"

    @property
    def done(self) -> bool:
        """True once no more commands can go over this stream: closed, or ended."""
        return self._ended or self._closing

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            await self.close()
        else:
            await self.cancel()

    async def open(self) -> None:
        """Open the stream now, rather than with the first command, and wait until the
        server has answered its ready request, or refused the stream: raise that refusal
        (UNAUTHENTICATED without a token, RESOURCE_EXHAUSTED with too many streams open,
        UNAVAILABLE while the server shuts down). A stream opened ahead of a race sends
        its first command at once."""
        if self.done:
            raise self._refusal()
        self._start()
        await self._settled()
        if self._ready is not None and not self._ended:
            assert self._reader is not None
            await asyncio.wait([self._ready, self._reader], return_when=asyncio.FIRST_COMPLETED)
        if self._ended:
            raise self._refusal()

    def _start(self) -> None:
        """Open the call and its reader (and, with a token, its writer), once."""
        if self._call is not None:
            return
        self._call = self.client._open_play(self.token)
        self._reader = asyncio.create_task(self._read(), name="totem play: answers")
        self._settling = asyncio.create_task(self._settle(), name="totem play: opening")
        if self.token:
            self._writer = asyncio.create_task(self._write(), name="totem play: requests")
            self._ready = asyncio.get_running_loop().create_future()
            # Retrieved here: a stream that ends before it is answered says so elsewhere.
            self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
            self._outbox.put_nowait((READY_REQUEST, self._ready))

    async def _settle(self) -> None:
        """Wait until the server has accepted the stream (its initial metadata says so)
        or ended it (then the reader has its status)."""
        with contextlib.suppress(grpc.aio.AioRpcError):  # the reader reports it
            if PLAY_ACCEPTED in tuple(await self._call.initial_metadata()):
                return
        assert self._reader is not None
        await asyncio.wait([self._reader])

    async def _settled(self) -> None:
        """Return once the stream is settled (:meth:`_settle`) or has ended."""
        assert self._reader is not None and self._settling is not None
        await asyncio.wait([self._settling, self._reader], return_when=asyncio.FIRST_COMPLETED)

    def _refusal(self) -> TotemError:
        """Why a command cannot go over this stream (it has ended, or it was closed)."""
        if self.failure is not None:
            return self.failure.copy()
        return TotemError(grpc.StatusCode.CANCELLED, "this Play stream is closed: open another")

    async def act(
        self,
        match_id: str,
        command: Command,
        *,
        seen_version: int = 0,
        seat: int | None = None,
    ) -> ActResponse:
        """Send one command over the stream and wait for its answer; arguments and
        result as :meth:`Client.act` (this stream's token acts). Raises
        :class:`TotemError` for a refused command (the stream stays open) and for the
        end of the stream (see the class)."""
        request = match_service_pb2.PlayRequest(
            act=act_request(match_id, command, seen_version=seen_version, seat=seat)
        )
        if self.done:
            raise self._refusal()
        self._start()
        if self._writer is None:
            # No token: the server ends the stream at once. A write racing with that
            # end would be reported as INTERNAL (grpc/grpc#36066): read the status.
            assert self._reader is not None
            await asyncio.wait([self._reader])
            raise self._refusal()
        answer: asyncio.Future[ActResponse] = asyncio.get_running_loop().create_future()
        # Synchronously after the check above: nothing is queued once the stream has ended.
        self._outbox.put_nowait((request, answer))
        return await answer

    async def close(self) -> None:
        """Send no more commands: the stream is half-closed once every command already
        given is written, and this returns once each has its answer and the server has
        ended the stream. A command given afterwards raises ``TotemError(CANCELLED)``."""
        if self._call is None:
            self._closing = self._ended = True
            return
        if not self._closing:
            self._closing = True
            self._outbox.put_nowait(None)
        assert self._reader is not None
        await asyncio.wait([self._reader])

    async def wait_ended(self) -> TotemError | None:
        """Wait until the stream has ended (the server ended it, or it was closed or
        cancelled) and return why: :attr:`failure`, None after a clean close. A player
        who keeps a stream open between commands learns here that it must open another
        (the server restarted); a stream never opened has nothing to wait for."""
        if self._reader is not None:
            await asyncio.wait([self._reader])
        return self.failure

    async def cancel(self) -> None:
        """End the stream now: commands still waiting raise ``TotemError(CANCELLED)``
        (the server may have applied those it had read already)."""
        self._closing = True
        if self._call is None:
            self._ended = True
            return
        self._call.cancel()
        assert self._reader is not None
        await asyncio.wait([self._reader])

    async def _write(self) -> None:
        """Write the requests in the order they were given, each command's future queued
        as waiting just before its request is written: the answers' order."""
        call = self._call
        await self._settled()
        while (item := await self._outbox.get()) is not None:
            request, answer = item
            if answer.done():
                continue  # its act was cancelled before it was sent: never sent
            self._waiting.append(answer)
            try:
                await call.write(request)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                # The stream has ended: the reader reads its status and hands it to
                # this command and every other still waiting.
                self._write_failed = True
                return
            except Exception as error:  # any other failure ends the stream
                self._end(TotemError(grpc.StatusCode.INTERNAL, f"could not send: {error}"))
                call.cancel()
                return
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await call.done_writing()

    async def _read(self) -> None:
        """Hand each answer to the oldest waiting command, until the stream ends; then
        hand its status to every command still waiting."""
        call = self._call
        try:
            while (response := await call.read()) is not grpc.aio.EOF:
                if not self._waiting:
                    self._end(
                        TotemError(grpc.StatusCode.INTERNAL, "the server answered no request")
                    )
                    call.cancel()
                    return
                self._answer(self._waiting.popleft(), response, self.client)
            self._end(None)
        except grpc.aio.AioRpcError as error:
            self._end(self._stream_error(TotemError.from_rpc_error(error)))
        except asyncio.CancelledError:
            closed = self.client.closed
            self._end(
                TotemError(
                    grpc.StatusCode.CANCELLED,
                    "the client was closed while playing" if closed else "the stream was cancelled",
                )
            )
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise

    @staticmethod
    def _answer(
        answer: asyncio.Future[Any], response: match_service_pb2.PlayResponse, client: Client
    ) -> None:
        outcome = response.WhichOneof("outcome")
        if outcome == "applied":
            client.kept(response.applied)  # applied, even if its act was cancelled since
        if answer.done():
            return  # its act was cancelled after it was sent; the answer was its own
        if outcome == "applied":
            answer.set_result(response.applied)
        elif outcome == "ready":
            answer.set_result(None)
        elif outcome == "refused":
            answer.set_exception(TotemError.from_status(response.refused))
        else:
            answer.set_exception(
                TotemError(grpc.StatusCode.UNKNOWN, "the server's answer had no outcome")
            )

    def _stream_error(self, error: TotemError) -> TotemError:
        """UNAVAILABLE, saying so, when grpc/grpc#36066 hid the server's status behind
        INTERNAL. The first write waits until the server has accepted the stream, so a
        write can only race with the end of an accepted stream: the server going away
        (its shutdown, a crash, a broken connection), which is UNAVAILABLE; as with any
        UNAVAILABLE, a command that was being sent may or may not have been applied, and
        the match's events say which."""
        if self._write_failed and error.code == grpc.StatusCode.INTERNAL:
            return TotemError(
                grpc.StatusCode.UNAVAILABLE,
                f"the stream ended while a command was being sent (grpcio reported "
                f"INTERNAL, {error.message!r}, instead of the server's status: "
                "grpc/grpc#36066)",
                error.rule,
                error.retry_delay,
            )
        return error

    def _end(self, failure: TotemError | None) -> None:
        """The stream is over: every command still waiting, sent or not, raises
        ``failure`` (or, after a clean end, that it was not answered)."""
        if self._ended:
            return
        self._ended = True
        self.failure = failure
        error = failure or TotemError(
            grpc.StatusCode.UNKNOWN, "the Play stream ended before this command was answered"
        )
        pending = list(self._waiting)
        self._waiting.clear()
        while not self._outbox.empty():
            item = self._outbox.get_nowait()
            if item is not None:
                pending.append(item[1])
        for answer in pending:
            if not answer.done():
                answer.set_exception(error.copy())
        for task in (self._writer, self._settling):
            if task is not None and not task.done():
                task.cancel()
