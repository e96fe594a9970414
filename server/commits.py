"""Group commit: the saves of several matches that wait at the same time go in one
transaction.

Every match actor saves its command's events before it answers (nothing acknowledged is
lost), one transaction per command, and the commit is a large share of a command's cost:
a quarter of the elapsed time on SQLite under load. Neither store writes two
transactions at once anyway (SQLite has one writer; the library's PostgreSQL recorder
locks the events table for every insert), so saves made side by side in threads only
queue for the store.

The committer makes one save at a time instead. When nothing is being saved, a match's
save starts at once: a lone command never waits for company. While a save runs, the
saves that arrive wait, and all of them go together in the next transaction. There is no
timer: a batch is whatever arrived during the previous save, so it grows with the load
and is a single match when the server is quiet.

A match's save may carry events of other aggregates with it (its refusal log's,
:mod:`server.refusals`), in the same transaction; a refusal log's events may also be
saved alone, as a caller of their own.

A batch that fails is saved again one match at a time, so that a match whose version
another server instance wrote first (``IntegrityError``, which its actor answers by
loading the match again and deciding again) costs the other matches nothing, and only
the failing match is told. Each caller gets the recordings of its own match only, in
order; its future is resolved only once the transaction that holds them committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.persistence import Recording

from domain.kernel.match import MatchAggregate
from storage.threads import StoreThreads

if TYPE_CHECKING:
    from storage.arena import Arena

log = logging.getLogger(__name__)

#: Matches saved in one transaction at most: the rest wait for the next. A transaction
#: of a thousand matches' inserts never completed on PostgreSQL (bench/growth.py saw the
#: server wait for the client for good); a hundred did, every time.
MAX_BATCH = 100

#: What one match's save came to: its recordings, or the error it alone raised.
Result = list[Recording[UUID]] | Exception


@dataclass
class _Waiting:
    #: The match whose pending events to save (None: only ``also``).
    match: MatchAggregate | None
    #: Events of other aggregates saved with it (a match's refusal log's).
    also: tuple[Any, ...]
    future: asyncio.Future[list[Recording[UUID]]]

    def objects(self) -> list[Any]:
        return ([self.match] if self.match is not None else []) + list(self.also)


def _is_aggregate(obj: Any) -> bool:
    """An aggregate, with pending events, rather than an event saved as it is."""
    return hasattr(obj, "collect_events")


class Committer:
    """Saves matches for their actors, several in one transaction when they wait at the
    same time. ``together=False`` saves each alone in a store thread, as the server did
    before (for comparing the two in benchmarks).

    A save is handed to a store thread from :meth:`save` itself, and the next batch from
    the callback of the one before: no task of its own, so a lone command's save reaches
    a store thread at once, not one or two turns of the event loop later.
    """

    def __init__(self, app: Arena, threads: StoreThreads, together: bool = True) -> None:
        self.app = app
        self.threads = threads
        self.together = together
        self._waiting: list[_Waiting] = []
        #: The transaction under way, if any.
        self._saving: asyncio.Future[list[Result]] | None = None
        #: Transactions begun and matches saved in them, for benchmarks.
        self.transactions = 0
        self.saved = 0

    @property
    def idle(self) -> bool:
        """Nothing is being saved and nothing waits."""
        return self._saving is None

    def waiting(self) -> int:
        """How many saves wait for the next transaction (one is under way)."""
        return len(self._waiting)

    def save(
        self, match: MatchAggregate | None, *also: Any
    ) -> asyncio.Future[list[Recording[UUID]]]:
        """Save ``match``'s pending events, and the events ``also`` (of other aggregates,
        in the same transaction), begun now if nothing else is being saved; the future
        has their recordings once committed, or what saving them alone raised
        (``IntegrityError`` on a conflict). A caller must not save the same match again
        before it is done."""
        if not self.together:
            self.transactions += 1
            self.saved += 1
            objects = ([match] if match is not None else []) + list(also)
            return self.threads.submit(self.app.save, *objects)
        future: asyncio.Future[list[Recording[UUID]]] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting(match, also, future))
        if self._saving is None:
            self._begin()
        return future

    def _begin(self) -> None:
        """Hand what waits (up to :data:`MAX_BATCH` matches) to a store thread as one
        transaction."""
        # A caller cancelled before its save began is not saved: never answered.
        live = [w for w in self._waiting if not w.future.done()]
        batch, self._waiting = live[:MAX_BATCH], live[MAX_BATCH:]
        if not batch:
            return
        self.transactions += 1
        self.saved += len(batch)
        try:
            saving = self.threads.submit(self._save_together, [w.objects() for w in batch])
        except Exception as error:  # no store thread takes it (they were closed)
            self._answer(batch, [error] * len(batch))
            self._begin()
            return
        self._saving = saving
        saving.add_done_callback(functools.partial(self._saved, batch))

    def _saved(self, batch: list[_Waiting], saving: asyncio.Future[list[Result]]) -> None:
        self._saving = None
        try:
            results = saving.result()
        except BaseException as error:  # no result: the callers must not wait for ever
            failure = (
                error if isinstance(error, Exception) else RuntimeError("the save was interrupted")
            )
            results = [failure] * len(batch)
        self._answer(batch, results)
        if self._waiting:
            self._begin()

    @staticmethod
    def _answer(batch: list[_Waiting], results: list[Result]) -> None:
        for waiting, result in zip(batch, results, strict=True):
            if waiting.future.done():
                continue  # its caller was cancelled while it was saved
            if isinstance(result, Exception):
                waiting.future.set_exception(result)
            else:
                waiting.future.set_result(result)

    def _save_together(self, batch: list[list[Any]]) -> list[Result]:
        """In a store thread: save the objects of every caller in ``batch`` (each a match
        and events saved with it) in one transaction and split the recordings per caller;
        if that fails, save each caller's alone."""
        if len(batch) == 1:
            return [self._save_alone(batch[0])]
        matches = [o for objects in batch for o in objects if _is_aggregate(o)]
        # The library collects (removes) the pending events before it writes them: keep
        # them, to give them back to their matches should the transaction fail.
        pending = [list(m.pending_events) for m in matches]
        try:
            recordings = self.app.save(*(o for objects in batch for o in objects))
        except Exception as error:
            log.debug("a save of %d callers failed (%r): each saved alone", len(batch), error)
            for match, events in zip(matches, pending, strict=True):
                match.pending_events[:] = events
            self.transactions += len(batch)
            return [self._save_alone(objects) for objects in batch]
        caller: dict[Any, int] = {}
        for index, objects in enumerate(batch):
            for o in objects:
                caller[o.id if _is_aggregate(o) else o.originator_id] = index
        own: list[list[Recording[UUID]]] = [[] for _ in batch]
        for recording in recordings:
            own[caller[recording.domain_event.originator_id]].append(recording)
        return list(own)

    def _save_alone(self, objects: list[Any]) -> Result:
        try:
            return self.app.save(*objects)
        except Exception as error:  # this caller's own error, handed to it
            return error

    async def close(self) -> None:
        """Wait until the saves under way and those waiting are done: their callers
        are answered only once they committed."""
        while self._saving is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._saving)
