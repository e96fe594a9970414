"""One actor per live match: commands run one at a time, in the order received.

A request handler takes its receive stamp and submits its work without awaiting in
between, so the actor's queue order is the receive order (JS-4.2, JS-5.1). The actor
runs the work on its in-memory aggregate, saves the resulting events through a thread
(the library is synchronous), answers once they are committed (nothing acknowledged is
lost), then hands them to the publisher for the watchers. It also owns the match's
timer, set from the aggregate each time it runs work. A match without an actor has its
timer elsewhere: a wake-up its actor left (:meth:`Actors.wake_at`), or, for a match not
touched since the server started, its summary row's deadlines (:mod:`server.due`).

A command that leaves a race held open for simultaneous commands (JS-4.2a,
:mod:`domain.kernel.ties`) starts a batch: the actor waits out the window, takes the
commands of the same kind received within it from the head of its queue, runs them, has
the match decide, and saves and answers the batch together.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

import grpc
from eventsourcing.persistence import IntegrityError

from domain.kernel.match import MatchAggregate, MatchStatus, is_final
from domain.kernel.refusals import DEFAULT_QUOTA
from domain.kernel.signing import Signer
from server.commits import Committer
from server.due import DueMatches
from server.errors import ServiceError, shutting_down
from server.hub import EventHub, Frame
from server.presence import Presence
from server.refusals import Intake, RefusalKeeper
from server.stamps import Stamper
from storage.arena import Arena, MatchNotFound
from storage.threads import StoreThreads

log = logging.getLogger(__name__)

T = TypeVar("T")


class Deferred(Generic[T]):
    """The answer to a command whose outcome waits on commands received after it (a race
    held open, :mod:`domain.kernel.ties`): made by the actor once the match has settled
    what it held, before anything is saved or answered."""

    def __init__(self, answer: Callable[[], T]) -> None:
        self.answer = answer


#: A piece of work on a match; a command's may answer later (:class:`Deferred`).
Work = Callable[[MatchAggregate], T | Deferred[T]]
#: A piece of work waiting for its actor: the work, its caller's future, its command.
Queued = tuple[Work[Any], "asyncio.Future[Outcome[Any]]", Intake | None]

#: Commands waiting for one match beyond this are refused with RESOURCE_EXHAUSTED.
MAX_QUEUED = 1024
SAVE_ATTEMPTS = 5

#: A waiting match nobody joins for this long (ms) ends as abandoned.
WAITING_EXPIRY_MS = 3_600_000

#: Encodings for watchers (kinds of viewer times events) the publisher does on the event
#: loop; a larger batch goes to a worker thread (see :class:`Publisher`). Two Jungle
#: Speed events with their state take about 0.25 ms.
INLINE_ENCODINGS = 2

#: What a command refused while the server shuts down is told.
NOT_APPLIED = "this command was not applied: send it again"

#: Waiting for a race held open to close (:meth:`MatchActor._gather`), the actor sleeps
#: while more than this is left (ns), then goes round the loop until the deadline.
SPIN_NS = 1_000_000
#: How long (s), past a held race's deadline, the actor waits at most for calls stamped
#: within the window to reach their handler (a handler runs a turn of the loop after the
#: call's arrival stamp: :mod:`server.stamps`).
ARRIVAL_GRACE_S = 0.25


class WorkQueue(asyncio.Queue[Queued]):
    """An actor's queue, whose next piece of work can be looked at without taking it."""

    def _init(self, maxsize: int) -> None:
        self._queue: collections.deque[Queued] = collections.deque()

    def peek(self) -> Queued | None:
        return self._queue[0] if self._queue else None


class _DecideAgain(Exception):
    """A batch was refused on an old copy of its match: decide it again on the store's."""


class Outcome(Generic[T]):
    """What a piece of work returned and the events it caused (saved, in order)."""

    def __init__(self, value: T, events: list[Any], match: MatchAggregate) -> None:
        self.value = value
        self.events = events
        self.match = match


class MatchActor:
    def __init__(self, actors: Actors, match_id: UUID) -> None:
        self.actors = actors
        self.match_id = match_id
        self.match: MatchAggregate | None = None
        self.queue = WorkQueue(MAX_QUEUED)
        #: The match's refusal log and receive numbers (None until the match is loaded).
        self.refusals: RefusalKeeper | None = None
        self.timer: asyncio.TimerHandle | None = None
        #: The deadline (wall ms) :attr:`timer` was set for.
        self.timer_due_ms: int | None = None
        #: The version up to which the publisher has this match's events (None: it
        #: does not follow the match yet).
        self.published: int | None = None
        #: The highest version another server instance said it saved.
        self.heard_version = 0
        #: Read the store for newer events before the next piece of work, even if no
        #: other instance said it saved any (yet).
        self.look_again = False
        #: A piece of work is running: its save, if any, must be let finish.
        self.busy = False
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"match {match_id}")

    def submit(
        self, work: Work[T], writes: bool = True, intake: Intake | None = None
    ) -> asyncio.Future[Outcome[T]]:
        """Queue ``work``; synchronous, so callers keep their receive order. Work that
        ``writes`` is refused once the server has begun to shut down. The work of a
        command comes with its ``intake``: numbered when it runs, kept if refused."""
        if writes and self.actors.draining:
            raise shutting_down(NOT_APPLIED)
        future: asyncio.Future[Outcome[T]] = asyncio.get_running_loop().create_future()
        try:
            self.queue.put_nowait((work, future, intake))
        except asyncio.QueueFull:
            raise ServiceError(
                grpc.StatusCode.RESOURCE_EXHAUSTED, "too many commands are waiting for this match"
            ) from None
        return future

    async def _run(self) -> None:
        while True:
            item = await self._next()
            if item is None:
                return  # retired while idle
            batch = [item]
            self.busy = True
            try:
                try:
                    results = await self._execute(batch)
                except Exception as error:  # handed to the callers, who map it to a status
                    results = [error] * len(batch)
                    self._answer(batch, results)
                    lead = batch[0][2]
                    if lead is not None and self.refusals is not None:
                        self._keep(lead, error)  # after its answer
                else:
                    self._answer(batch, results)
                    # Answered first; the watchers' share of the work is the publisher's.
                    saved = [r for r in results if isinstance(r, Outcome)]
                    if saved:
                        self._published(saved[-1].events)
            finally:
                self.busy = False
                for _ in batch:
                    self.queue.task_done()
            if self._retired():
                return

    @staticmethod
    def _answer(batch: list[Queued], results: list[Outcome[Any] | Exception]) -> None:
        for (_, future, _), result in zip(batch, results, strict=True):
            if future.done():
                continue
            if isinstance(result, Outcome):
                future.set_result(result)
            else:
                future.set_exception(result)

    def refuse_waiting(self) -> int:
        """Refuse every command still waiting (none of them has run): the server is
        shutting down. Returns how many."""
        refused = 0
        while not self.queue.empty():
            _, future, _ = self.queue.get_nowait()
            if not future.done():
                future.set_exception(shutting_down(NOT_APPLIED))
            self.queue.task_done()
            refused += 1
        return refused

    async def _next(self) -> Queued | None:
        """The next piece of work, in the order submitted; or None once this actor has
        retired for being idle (:meth:`_idle_retired`)."""
        while True:
            if not self.queue.empty():
                return self.queue.get_nowait()  # busy: no timer to set
            idle = self.actors.idle_seconds
            if idle is None or self._timer_within(idle):
                return await self.queue.get()
            try:
                # Cancelling a get leaves the queue as it was: nothing submitted is lost.
                # A timeout in this task, not ``wait_for``: that runs the get as a task of
                # its own, two more turns of the loop before every command.
                async with asyncio.timeout(idle):
                    return await self.queue.get()
            except TimeoutError:
                if self._idle_retired():
                    return None

    def _timer_within(self, seconds: float) -> bool:
        """Whether the timer is set to fire within ``seconds``."""
        if self.timer is None:
            return False
        return self.timer.when() - asyncio.get_running_loop().time() <= seconds

    def _idle_retired(self) -> bool:
        """Leave if nothing waits, nothing runs and the timer, if any, is further away
        than the idle time: an idle match needs no actor, and its store holds
        everything; a far timer (a turn timer, an abandonment) is left with the actors,
        to bring an actor back when it is due. As in :meth:`_retired`, nothing awaits
        between the check and the removal, so work submitted later finds no actor and
        gets a fresh one, which loads the match from the store."""
        idle = self.actors.idle_seconds or 0.0
        if not self.queue.empty() or self.busy or self._timer_within(idle):
            return False
        if self.timer is not None:
            self.actors.wake_at(self.match_id, self.timer.when())
            self.cancel_timer()
        if self.published is not None and self.actors.hub.watchers(self.match_id):
            # Streams here carry on from this version, whatever is saved meanwhile.
            self.actors.left_at[self.match_id] = self.published
        self._save_refusals()
        self.actors.forget(self)
        return True

    def _retired(self) -> bool:
        """An ended match needs no actor: leave, so that memory follows live matches.

        Nothing awaits between this check and the removal, so a command submitted later
        finds no actor and gets a fresh one, which loads the match from the store.
        """
        if self.match is None or self.match.status is not MatchStatus.ENDED:
            return False
        if not self.queue.empty():
            return False
        self._save_refusals()
        self.actors.forget(self)
        self.actors.presence.forget(self.match_id)
        self.actors.left_at.pop(self.match_id, None)
        return True

    async def _loaded(self) -> MatchAggregate:
        """The match, as the store has it as far as this process knows: loaded if this
        actor has no copy (or dropped a spoiled one), caught up if another instance
        said it saved more (:meth:`heard`)."""
        app, threads = self.actors.app, self.actors.threads
        if self.match is None:
            match = await threads.call(app.load, self.match_id)
            left = self.actors.left_at.pop(self.match_id, None)
            if self.published is None and left is not None and left < match.version:
                # Saved by another instance while this match had no actor here: the
                # streams that stayed open get those events from where they are.
                self.actors.publisher.follow(await threads.call(app.load_at, self.match_id, left))
                self.published = left
            missed: list[Any] = []
            if self.published is not None and self.published < match.version:
                # Saved by another instance since this process last published: its
                # streams get those events too, from where they are.
                after = await threads.call(app.events_after, self.match_id, self.published)
                missed = [e for e in after if e.originator_version <= match.version]
            self._take(match, missed)
        elif self.match.version < self.heard_version or self.look_again:
            await self._catch_up()
        assert self.match is not None
        return self.match

    async def _catch_up(self) -> bool:
        """Apply and publish what the store holds beyond this actor's copy; whether
        there was anything."""
        assert self.match is not None
        self.look_again = False
        app = self.actors.app
        events = await self.actors.threads.call(app.events_after, self.match_id, self.match.version)
        for evt in events:
            evt.mutate(self.match)
        self._published(events)
        return bool(events)

    async def _stale(self, match: MatchAggregate) -> bool:
        """Whether another instance saved this match beyond ``match``, the copy a
        command was just refused on (the copy is brought up to date, or dropped)."""
        if self.match is None:  # spoiled: the reload brings whatever is newer
            before = match.version - len(match.pending_events)
            return bool(await self.actors.threads.call(self._newer, before))
        return await self._catch_up()

    def _newer(self, version: int) -> bool:
        return bool(self.actors.app.events_after(self.match_id, version)[:1])

    def _take(self, match: MatchAggregate, missed: list[Any] | None = None) -> None:
        """Work on ``match`` from now on; the publisher follows it from here (or, if it
        follows it already, is handed the ``missed`` events that lead to it). Every
        match a command runs on passes here, so every match that ends is signed."""
        match.signer = self.actors.signer
        self.match = match
        if self.published is None:
            self.actors.publisher.follow(match)
            self.published = match.version
        else:
            self._published(missed or [])

    def _published(self, events: list[Any]) -> None:
        """Hand saved events to the publisher (in order, after those handed before)."""
        if events:
            self.actors.publisher.send(self.match_id, events)
            self.published = events[-1].originator_version
            if is_final(events[-1]):
                self.actors.ended(self.match_id)

    def heard(self, version: int) -> None:
        """Another server instance saved this match up to ``version``."""
        self.heard_version = max(self.heard_version, version)

    def _keep(self, intake: Intake, error: Exception) -> None:
        """Keep a refused command, after its answer; whatever goes wrong there must not
        stop the actor."""
        assert self.refusals is not None
        try:
            self.refusals.keep(intake, error)
        except Exception:
            log.exception("match %s: a refused command was not kept", self.match_id)

    def _save_refusals(self) -> None:
        """The actor leaves: what its refusal log holds unsaved (counts beyond the
        quota included) is saved now."""
        if self.refusals is not None:
            self.refusals.save_soon()

    async def _keeper(self) -> RefusalKeeper:
        """The match's refusal keeper, its log read from the store the first time."""
        if self.refusals is None:
            app = self.actors.app
            stored = await self.actors.threads.call(app.load_refusal_log, self.match_id)
            self.refusals = RefusalKeeper(
                self.match_id,
                stored,
                self.actors.committer,
                self.actors.refusal_quota,
                self.actors.saving_refusals,
            )
        return self.refusals

    async def _execute(self, batch: list[Queued]) -> list[Outcome[Any] | Exception]:
        """Run ``batch``'s work on the match, in order, and save what it caused in one
        transaction; what each piece of work came to, in the same order.

        A batch is one piece of work, unless that work leaves a decision held open for
        simultaneous commands (:mod:`domain.kernel.ties`): then the commands of the same
        kind received within the window join it (:meth:`_gather`), the match settles
        what it held, and the answers that waited for it are made (:class:`Deferred`).
        A refused command of the batch is kept before the save, in its transaction. The
        batch's first piece of work raises if refused (nothing else ran); a later one
        that leaves the match half-changed spoils the whole batch."""
        for attempt in range(SAVE_ATTEMPTS):
            match = await self._loaded()
            try:
                values = await self._run_batch(match, batch, gather=attempt == 0)
            except _DecideAgain:
                continue
            match.settle_held()
            values = [v.answer() if isinstance(v, Deferred) else v for v in values]
            events: list[Any] = []
            if match.pending_events:
                # Refusals not saved yet go in the same transaction: a number is never
                # stored while a smaller one is not.
                refused = self.refusals.take() if self.refusals is not None else []
                try:
                    recordings = await self.actors.committer.save(match, *refused)
                except IntegrityError:
                    # Another server instance wrote to this match: reload and decide again.
                    self._unsaved(refused)
                    self.match = None
                    if attempt == SAVE_ATTEMPTS - 1:
                        raise
                    continue
                except BaseException:
                    self._unsaved(refused)
                    self.match = None
                    raise
                events = [r.domain_event for r in recordings]
                events = [e for e in events if e.originator_id == match.id]
            self._schedule_timer(match)
            return [v if isinstance(v, Exception) else Outcome(v, events, match) for v in values]
        raise AssertionError("unreachable")

    async def _run_batch(
        self, match: MatchAggregate, batch: list[Queued], gather: bool
    ) -> list[Any]:
        """Each piece of work's value, or a later one's refusal (kept now, the first
        time it is decided: a batch decided again on a newer copy keeps nothing twice)."""
        values: list[Any] = []
        receive = 0  # the batch's last receive number: the match may not hold it yet
        while len(values) < len(batch):
            work, _, intake = batch[len(values)]
            if intake is not None:
                (await self._keeper()).number(intake, match, after=receive)
                receive = intake.stamp.receive
            before = len(match.pending_events)
            try:
                values.append(work(match))
            except Exception as error:
                if values and len(match.pending_events) == before:
                    values.append(error)
                    if intake is not None and gather:
                        self._keep(intake, error)
                    continue
                if match.pending_events:  # a half-done command must not linger
                    self.match = None
                if not values and gather and self.actors.shared and await self._stale(match):
                    raise _DecideAgain from error  # refused on an old copy: the store's
                raise
            except BaseException:
                if match.pending_events:
                    self.match = None
                raise
            deadline = match.held_until_ns()
            if gather and deadline is not None and len(values) == len(batch):
                batch.extend(self._joining(await self._gather(deadline), batch[0][2]))
        return values

    async def _gather(self, deadline_ns: int) -> int:
        """Wait until a race held open until ``deadline_ns`` (the receive clock,
        ``monotonic_ns``) is past, and until every call stamped by then has reached its
        handler (capped at :data:`ARRIVAL_GRACE_S`), so that the commands received within
        the window are in the queue; return the deadline."""
        while (left := deadline_ns - time.monotonic_ns()) > 0:  # noqa: ASYNC110 (a clock)
            # The loop's timers are coarse (about a millisecond): sleep while that much
            # is left, then go round the loop, which reads the connections meanwhile.
            await asyncio.sleep((left - SPIN_NS) / 1e9 if left > SPIN_NS else 0)
        stamper = self.actors.stamper
        give_up = time.monotonic_ns() + int(ARRIVAL_GRACE_S * 1e9)
        while stamper.arriving_by(deadline_ns) and time.monotonic_ns() < give_up:  # noqa: ASYNC110
            await asyncio.sleep(0)  # one turn of the loop: the handlers read their messages
        return deadline_ns

    def _joining(self, deadline_ns: int, lead: Intake | None) -> list[Queued]:
        """The commands at the head of the queue, in order, of ``lead``'s kind and
        received by ``deadline_ns`` on the same server instance: taken from the queue."""
        joining: list[Queued] = []
        while (item := self.queue.peek()) is not None:
            intake = item[2]
            if (
                lead is None
                or intake is None
                or intake.action != lead.action
                or intake.stamp.instance != lead.stamp.instance
                or intake.stamp.monotonic_ns > deadline_ns
            ):
                break
            joining.append(self.queue.get_nowait())
        return joining

    def _unsaved(self, refused: list[Any]) -> None:
        if self.refusals is not None:
            self.refusals.not_saved(refused)

    # ---- the match timer -------------------------------------------------------

    def resume(self, match: MatchAggregate) -> None:
        """Take over a match just made here (created, forked) and set its timer."""
        self._take(match)
        self._schedule_timer(match)

    def _schedule_timer(self, match: MatchAggregate) -> None:
        """Set the timer for the match's next deadline: the game's own (a turn timer),
        or the moment the match is abandoned if nobody comes back (JS-8.3). A timer already
        set for that moment is kept: most commands leave the deadline where it was."""
        deadlines = [match.timer_deadline_ms(), self.actors.abandon_deadline_ms(match)]
        due = [d for d in deadlines if d is not None]
        when = None if not due or self.actors.draining else min(due)
        if self.timer is not None:
            if when == self.timer_due_ms:
                return
            self.timer.cancel()
            self.timer = None
        if when is None:
            return
        delay = max(0.0, when / 1000 - time.time())
        self.timer = asyncio.get_running_loop().call_later(delay, self._timer_fired)
        self.timer_due_ms = when

    def _timer_fired(self) -> asyncio.Future[Outcome[None]] | None:
        """Fire the match's timer (in order with its commands): what that comes to."""
        self.timer = None
        if self.actors.draining:
            return None  # the next server to run the match fires it
        stamp = self.actors.stamper.stamp()

        def fire(match: MatchAggregate) -> None:
            if match.status is MatchStatus.PLAYING and match.timer_due(stamp):
                match.fire_timer(stamp)
            if match.status is not MatchStatus.ENDED:
                statement = self.actors.abandonment(match, stamp.wall_ms)
                if statement is not None:
                    match.abandon(statement)

        try:
            future = self.submit(fire)
        except ServiceError:
            log.warning("timer of match %s deferred: queue full", self.match_id)
            self.timer = asyncio.get_running_loop().call_later(0.1, self._timer_fired)
            return None
        future.add_done_callback(self._timer_done)
        return future

    def _timer_done(self, future: asyncio.Future[Outcome[None]]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.error("timer of match %s failed", self.match_id, exc_info=future.exception())

    def cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    async def stop(self) -> None:
        """Stop at once; any work waiting or running is cancelled (see Actors.drain for
        the way that lets it end well)."""
        self.cancel_timer()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def _log_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("a match could not be brought up to date: %s", future.exception())


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


class Publisher:
    """Sends saved events to the hub, off the path that stamps, decides and answers.

    Each event goes out with the state of the match just after it, so the publisher
    keeps its own copy of every followed match and applies the saved events to it one
    at a time (a command's work moves the actor's match past all of its events at once).
    One queue, in order: a match's copy is replaced, advanced and dropped in the order
    its actor asked.

    Encoding for the watchers is the one piece of work that grows with them. It runs
    after the command's caller is answered. A batch of up to :data:`INLINE_ENCODINGS`
    encodings (kinds of viewer times events) runs right here, on the event loop: it
    takes about as long as the interpreter's switch interval (0.2 ms,
    :data:`server.serve.SWITCH_INTERVAL_S`), the longest a worker thread would keep the
    loop from stamping anyway, and the hand-off to a thread cost more than the encoding
    (a fifth of the server's throughput with one kind of watcher, docs/performance.md).
    A larger batch (many kinds of viewer, a catch-up) goes to a worker thread, which
    gives the loop the interpreter back every switch interval.
    """

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self._queue: asyncio.Queue[tuple[UUID, MatchAggregate | None, list[Any]]] = asyncio.Queue()
        self._matches: dict[UUID, MatchAggregate] = {}
        self._task = asyncio.get_running_loop().create_task(self._run(), name="publisher")

    def follow(self, match: MatchAggregate) -> None:
        """Publish the events saved after ``match``'s version from now on."""
        self._queue.put_nowait((match.id, copy.deepcopy(match), []))

    def send(self, match_id: UUID, events: list[Any]) -> None:
        """Publish these saved events of a followed match, in order."""
        if events:
            self._queue.put_nowait((match_id, None, events))

    def forget(self, match_id: UUID) -> None:
        self._queue.put_nowait((match_id, None, []))

    def followed(self) -> int:
        return len(self._matches)

    async def _run(self) -> None:
        while True:
            match_id, fresh, events = await self._queue.get()
            if fresh is not None:
                self._matches[match_id] = fresh
            elif not events:
                self._matches.pop(match_id, None)
            match = self._matches.get(match_id)
            if match is None or not events:
                continue
            # A stream that subscribes later gets these events from the store: its actor
            # had saved them before it subscribed.
            kinds = self.hub.kinds(match_id)
            if len(kinds) * len(events) > INLINE_ENCODINGS:
                batch = await asyncio.to_thread(self._encode, match, events, kinds)
            else:
                batch = self._encode(match, events, kinds)
            for frames in batch:
                self.hub.deliver(match_id, frames)

    def _encode(
        self, match: MatchAggregate, events: list[Any], kinds: frozenset[Hashable]
    ) -> list[dict[Hashable, Frame]]:
        """Apply each event to the publisher's copy and encode it for ``kinds``."""
        batch = []
        for evt in events:
            if evt.originator_version != match.version + 1:
                log.warning("match %s: event %d not published", match.id, evt.originator_version)
                continue
            evt.mutate(match)
            batch.append(self.hub.frames(match, evt, kinds))
        return batch

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


class Actors:
    """The live match actors of this server process."""

    def __init__(
        self,
        app: Arena,
        hub: EventHub,
        stamper: Stamper,
        threads: StoreThreads | None = None,
        signer: Signer | None = None,
        waiting_expiry_ms: int = WAITING_EXPIRY_MS,
        idle_seconds: float | None = None,
        group_commit: bool = True,
        refusal_quota: int = DEFAULT_QUOTA,
    ) -> None:
        self.app = app
        #: Refused commands kept per seat of a match (domain.kernel.refusals).
        self.refusal_quota = refusal_quota
        #: Saves of refusal logs under way, let finish before the store closes.
        self._refusal_saves: set[asyncio.Task[None]] = set()
        #: An actor idle this long leaves (None: only when its match ends).
        self.idle_seconds = idle_seconds
        #: Told the id of each match whose actor leaves (per-match memory to let go).
        self._on_retired: list[Callable[[UUID], None]] = [stamper.forget]
        self._on_ended: list[Callable[[UUID], None]] = []
        #: Signs the MatchEnded of every match these actors end (storage/keys.py).
        self.signer = signer
        self.hub = hub
        self.stamper = stamper
        self.threads = threads or StoreThreads()
        #: Saves the matches' events, several matches in a transaction (server/commits.py).
        self.committer = Committer(app, self.threads, together=group_commit)
        self.publisher = Publisher(hub)
        #: Other server instances write to the same store (server/cluster.py).
        self.shared = False
        #: Shutting down: commands are refused, timers no longer fire here.
        self.draining = False
        self._hurry = asyncio.Event()
        self._actors: dict[UUID, MatchActor] = {}
        #: The version up to which this process had published each match whose actor
        #: left for being idle while it had streams here (see MatchActor._loaded).
        self.left_at: dict[UUID, int] = {}
        #: Timers of matches whose actor left for being idle (:meth:`wake_at`).
        self._wakeups: dict[UUID, asyncio.TimerHandle] = {}
        #: Who is at each table, for abandonment (JS-8.3).
        self.presence = Presence(on_change=self._presence_changed)
        #: A waiting match nobody joins for this long ends as abandoned.
        self.waiting_expiry_ms = waiting_expiry_ms
        #: The timers of the live matches nobody has touched since the start (set by
        #: :meth:`recover`).
        self.due: DueMatches | None = None

    def saving_refusals(self, task: asyncio.Task[None]) -> None:
        """A match's refusal log is being saved by ``task``."""
        self._refusal_saves.add(task)
        task.add_done_callback(self._refusal_saves.discard)

    def actor(self, match_id: UUID) -> MatchActor:
        actor = self._actors.get(match_id)
        if actor is None:
            # The new actor sets the match's timer itself once it has loaded the match.
            wakeup = self._wakeups.pop(match_id, None)
            if wakeup is not None:
                wakeup.cancel()
            actor = self._actors[match_id] = MatchActor(self, match_id)
        return actor

    def wake_at(self, match_id: UUID, when: float) -> None:
        """Bring an actor back for the match at loop time ``when``, to fire its timer:
        its actor left for being idle, its timer far away."""
        loop = asyncio.get_running_loop()
        self._wakeups[match_id] = loop.call_at(when, self._wake, match_id)

    def _wake(self, match_id: UUID) -> None:
        self._wakeups.pop(match_id, None)
        if not self.draining:
            self.actor(match_id)._timer_fired()

    def waiting_wakeups(self) -> int:
        """How many matches without an actor have a timer to fire."""
        return len(self._wakeups)

    def foreign_write(self, match_id: UUID, version: int) -> None:
        """Another server instance saved ``match_id`` up to ``version``. The match's
        actor here catches up (in order with its commands): this process's streams get
        the events and the match's timer is set again. A live match gets an actor here
        even if nobody here asked for it, so that its timers still fire should that
        instance stop."""
        if self.draining:
            return
        self.actor(match_id).heard(version)
        self._bring_up_to_date(match_id)

    def look_again(self) -> None:
        """Notifications of other instances' writes may have been missed (the listening
        connection broke): every match held here reads the store for newer events, and
        its streams and timer catch up."""
        for match_id, actor in list(self._actors.items()):
            actor.look_again = True
            self._bring_up_to_date(match_id)

    def _bring_up_to_date(self, match_id: UUID) -> None:
        """Queue a piece of work that does nothing: the actor catches up before it."""
        try:
            future = self.submit(match_id, lambda match: None, writes=False)
        except ServiceError as error:  # its queue is full: the work in it catches up
            log.warning("match %s not brought up to date now: %s", match_id, error.message)
            return
        future.add_done_callback(_log_failure)

    def forget(self, actor: MatchActor) -> None:
        if self._actors.get(actor.match_id) is actor:
            del self._actors[actor.match_id]
            self.publisher.forget(actor.match_id)
            for forget in self._on_retired:
                forget(actor.match_id)

    def when_ended(self, listener: Callable[[UUID], None]) -> None:
        """Call ``listener(match_id)`` whenever a match's final event is saved (or, saved
        by another instance, reaches this one's actor)."""
        self._on_ended.append(listener)

    def ended(self, match_id: UUID) -> None:
        for listener in self._on_ended:
            listener(match_id)

    def when_retired(self, forget: Callable[[UUID], None]) -> None:
        """Call ``forget(match_id)`` whenever a match's actor leaves."""
        self._on_retired.append(forget)

    def live(self) -> int:
        """How many match actors this process holds now."""
        return len(self._actors)

    def followed(self) -> int:
        """How many matches the publisher keeps a copy of now."""
        return self.publisher.followed()

    # ---- abandonment (JS-8.3) ----------------------------------------------------

    def abandon_deadline_ms(self, match: MatchAggregate) -> int | None:
        """When ``match`` is abandoned if nothing changes (wall ms), or None: a waiting
        match nobody joins expires; a match in play whose remaining players are all away
        ends after its ``abandon_after_ms``. A change of presence sets the timer again."""
        if match.status is MatchStatus.WAITING:
            return _ms(match.modified_on) + self.waiting_expiry_ms
        if match.status is MatchStatus.PLAYING:
            away = self.away_since_ms(match)
            return None if away is None else away + match.abandon_after_ms
        return None

    def away_since_ms(self, match: MatchAggregate) -> int | None:
        """Since when every seat still in play has been away (wall ms), or None if one
        is present: never since before the match was created. A fork's seats were never
        seen (nobody joins a fork), and the server may have been up long before it: the
        absence counts from the fork's creation, not from the server's start."""
        away = self.presence.away_since_ms(match.id, match.seats_in_play())
        return None if away is None else max(away, _ms(match.created_on))

    def abandonment(self, match: MatchAggregate, now_ms: int) -> str | None:
        """What the server observed if ``match`` is abandoned at ``now_ms``, else None.
        The statement is recorded in the match's end."""
        deadline = self.abandon_deadline_ms(match)
        if deadline is None or now_ms < deadline:
            return None
        if match.status is MatchStatus.WAITING:
            return (
                f"nobody joined for {self.waiting_expiry_ms // 1000} s: "
                f"{len(match.players)} of {match.max_players} seats taken"
            )
        away = self.away_since_ms(match)
        assert away is not None
        seats = ", ".join(str(s) for s in match.seats_in_play())
        since = datetime.fromtimestamp(away / 1000, UTC).isoformat(timespec="milliseconds")
        return (
            f"every player still in play (seats {seats}) was away for "
            f"{match.abandon_after_ms} ms: no open stream and no command since {since}"
        )

    def _presence_changed(self, match_id: UUID) -> None:
        """Set the match's timer again: its abandonment may now be due at another time.
        An actor that has left (idle) comes back for it, through a read."""
        actor = self._actors.get(match_id)
        if actor is not None and actor.match is not None:
            actor._schedule_timer(actor.match)
        elif not self.draining:
            self.submit(match_id, lambda match: None, writes=False).add_done_callback(_log_failure)

    def check_open(self) -> None:
        """Refuse a command that needs no actor (a creation) once shutting down."""
        if self.draining:
            raise shutting_down(NOT_APPLIED)

    def submit(
        self,
        match_id: UUID,
        work: Work[T],
        writes: bool = True,
        current: bool = False,
        intake: Intake | None = None,
    ) -> asyncio.Future[Outcome[T]]:
        """Queue work for a match, in receive order (call before any await); see
        :meth:`run` for ``current``, :meth:`MatchActor.submit` for ``intake``."""
        if writes:
            self.check_open()
        actor = self.actor(match_id)
        if current and self.shared:
            actor.look_again = True
        return actor.submit(work, writes, intake)

    async def run(
        self, match_id: UUID, work: Work[T], writes: bool = True, current: bool = False
    ) -> Outcome[T]:
        """Run work in the match's actor and wait for it. Work that only reads (a view,
        a subscription) is still taken while the server drains. ``current``: with other
        instances on the store, the work sees whatever the store holds when it runs,
        not only what their notifications have brought so far (a client that acted
        through one instance and reads through another sees its own command)."""
        future = self.submit(match_id, work, writes, current)
        return await self.settled(match_id, future)

    async def settled(self, match_id: UUID, future: asyncio.Future[Outcome[T]]) -> Outcome[T]:
        """What work submitted to the match's actor (:meth:`submit`) came to; an actor
        whose match does not exist is let go."""
        try:
            return await future
        except MatchNotFound:
            actor = self._actors.pop(match_id, None)
            if actor is not None:
                await actor.stop()
            raise

    async def recover(self) -> None:
        """Make sure every live match's timers (its turn timer, its abandonment) run
        again, without loading a match: which matches are live, and when each is next
        due, is read from the projection of match summaries (:mod:`server.due`), caught
        up first (a store written before it existed, or whose table was dropped, or
        whose rows lack their deadlines). A match is loaded when first touched, or when
        its deadline comes."""
        await self.threads.call(self.app.catch_up_summaries)
        filled = await self.threads.call(self.app.fill_deadlines)
        if filled:
            log.info("deadlines of %d live matches written to their summaries", filled)
        offsets = (0, self.waiting_expiry_ms, self.presence.started_ms)

        def read(
            after: tuple[int, UUID], until_ms: int, limit: int
        ) -> Awaitable[list[tuple[int, UUID]]]:
            return self.threads.call(self.app.due_matches, after, until_ms, offsets, limit)

        self.due = DueMatches(read, self._wake_untouched)

    def _wake_untouched(self, match_id: UUID) -> asyncio.Future[Outcome[None]] | None:
        """Fire the timer of a match nobody has touched since the start (it has no
        actor here, nor a wake-up of its own): its deadline, read from the store, came."""
        if self.draining or match_id in self._actors or match_id in self._wakeups:
            return None
        return self.actor(match_id)._timer_fired()

    async def drain(self, window: float) -> int:
        """Begin to shut down: refuse new commands and stop the timers at once, let the
        commands already waiting run for ``window`` seconds, then refuse those still
        waiting (never applied, and their clients are told so). The work running at that
        moment, its save included, is let finish. Returns how many were refused."""
        self.draining = True
        if self.due is not None:
            await self.due.close()
        actors = list(self._actors.values())
        for actor in actors:
            actor.cancel_timer()
        for wakeup in self._wakeups.values():
            wakeup.cancel()
        self._wakeups.clear()
        # A timeout in this task, not ``wait_for``, which on Python 3.11 can lose a
        # cancellation that comes as the wait ends (gh-86296).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(window):
                await self._hurry.wait()
        refused = sum(actor.refuse_waiting() for actor in actors)
        await self._finish_running()
        return refused

    def hurry(self) -> None:
        """End the drain window now."""
        self._hurry.set()

    async def _finish_running(self) -> None:
        for actor in list(self._actors.values()):
            if actor.busy:
                with contextlib.suppress(asyncio.CancelledError):
                    await actor.queue.join()

    async def close(self) -> None:
        """Stop every actor and the publisher. Waiting work is refused and running work
        is let finish first, drained or not."""
        self.draining = True
        if self.due is not None:
            await self.due.close()
        for wakeup in self._wakeups.values():
            wakeup.cancel()
        self._wakeups.clear()
        for actor in self._actors.values():
            actor.cancel_timer()
            actor.refuse_waiting()
        await self._finish_running()
        actors, self._actors = list(self._actors.values()), {}
        for actor in actors:
            actor._save_refusals()
            await actor.stop()
        for task in list(self._refusal_saves):
            with contextlib.suppress(Exception):
                await task
        await self.committer.close()
        await self.publisher.close()
