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

A batch that fails is saved again one match at a time, so that a match whose version
another server instance wrote first (``IntegrityError``, which its actor answers by
loading the match again and deciding again) costs the other matches nothing, and only
the failing match is told. Each caller gets the recordings of its own match only, in
order; its future is resolved only once the transaction that holds them committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.persistence import Recording

from domain.kernel.match import MatchAggregate
from server.threads import StoreThreads

if TYPE_CHECKING:
    from server.application import Arena

log = logging.getLogger(__name__)

#: Matches saved in one transaction at most: the rest wait for the next. A transaction
#: of a thousand matches' inserts never completed on PostgreSQL (bench/growth.py saw the
#: server wait for the client for good); a hundred did, every time.
MAX_BATCH = 100

#: What one match's save came to: its recordings, or the error it alone raised.
Result = list[Recording[UUID]] | Exception


@dataclass
class _Waiting:
    match: MatchAggregate
    future: asyncio.Future[list[Recording[UUID]]]


class Committer:
    """Saves matches for their actors, several in one transaction when they wait at the
    same time. ``together=False`` saves each alone in a store thread, as the server did
    before (for comparing the two in benchmarks)."""

    def __init__(self, app: Arena, threads: StoreThreads, together: bool = True) -> None:
        self.app = app
        self.threads = threads
        self.together = together
        self._waiting: list[_Waiting] = []
        self._task: asyncio.Task[None] | None = None
        #: Transactions begun and matches saved in them, for benchmarks.
        self.transactions = 0
        self.saved = 0

    @property
    def idle(self) -> bool:
        """Nothing is being saved and nothing waits."""
        return self._task is None

    def waiting(self) -> int:
        """How many saves wait for the next transaction (one is under way)."""
        return len(self._waiting)

    async def save(self, match: MatchAggregate) -> list[Recording[UUID]]:
        """Save ``match``'s pending events; return their recordings once committed.
        Raises what saving this match alone raised (``IntegrityError`` on a conflict).
        A caller must not save the same match again before this returns."""
        if not self.together:
            self.transactions += 1
            self.saved += 1
            return await self.threads.call(self.app.save, match)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Recording[UUID]]] = loop.create_future()
        self._waiting.append(_Waiting(match, future))
        if self._task is None:
            self._task = loop.create_task(self._run(), name="committer")
        return await future

    async def _run(self) -> None:
        """Save what waits, one transaction at a time, until nothing waits."""
        batch: list[_Waiting] = []
        try:
            while self._waiting:
                # A caller cancelled before its save began is not saved: never answered.
                live = [w for w in self._waiting if not w.future.done()]
                batch, self._waiting = live[:MAX_BATCH], live[MAX_BATCH:]
                if not batch:
                    continue
                matches = [w.match for w in batch]
                self.transactions += 1
                self.saved += len(matches)
                try:
                    results = await self.threads.call(self._save_together, matches)
                except Exception as error:  # no store thread took it (they were closed)
                    results = [error] * len(batch)
                for waiting, result in zip(batch, results, strict=True):
                    if waiting.future.done():
                        continue  # its caller was cancelled while it was saved
                    if isinstance(result, Exception):
                        waiting.future.set_exception(result)
                    else:
                        waiting.future.set_result(result)
                batch = []
        finally:
            self._task = None
            # Only reached with callers left when this task itself is cancelled: they
            # must not wait for ever.
            for waiting in [*batch, *self._waiting]:
                if not waiting.future.done():
                    waiting.future.set_exception(RuntimeError("the save was interrupted"))
            self._waiting = []

    def _save_together(self, matches: list[MatchAggregate]) -> list[Result]:
        """In a store thread: save ``matches`` in one transaction and split the
        recordings per match; if that fails, save each alone."""
        if len(matches) == 1:
            return [self._save_alone(matches[0])]
        # The library collects (removes) the pending events before it writes them: keep
        # them, to give them back to their matches should the transaction fail.
        pending = [list(m.pending_events) for m in matches]
        try:
            recordings = self.app.save(*matches)
        except Exception as error:
            log.debug("a save of %d matches failed (%r): each saved alone", len(matches), error)
            for match, events in zip(matches, pending, strict=True):
                match.pending_events[:] = events
            self.transactions += len(matches)
            return [self._save_alone(m) for m in matches]
        own: dict[Any, list[Recording[UUID]]] = {m.id: [] for m in matches}
        for recording in recordings:
            own[recording.domain_event.originator_id].append(recording)
        return [own[m.id] for m in matches]

    def _save_alone(self, match: MatchAggregate) -> Result:
        try:
            return self.app.save(match)
        except Exception as error:  # this match's own error, handed to its actor
            return error

    async def close(self) -> None:
        """Wait until the saves under way and those waiting are done: their callers
        are answered only once they committed."""
        while self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)
