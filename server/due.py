"""The timers of live matches that have no actor in this process, read from the store.

A server starts without loading a match: a live match gets its actor when first touched
(a command, a Watch, a GetMatch) or when its next deadline comes (its turn timer, a
decision's default, its abandonment, JS-8.3). Those deadlines are read from the index
kept with the match summaries (:meth:`storage.summaries.SummaryRecorder.due_matches`),
not from the matches: one timer, for the nearest, over the index read a page at a time
in deadline order, so that what start-up holds in memory does not grow with the live
matches. A deadline that passed while the server was down is due at once.

Only matches nobody has touched since the start need this: a match with an actor sets
its own timer, and one whose actor left for being idle leaves a wake-up behind
(:meth:`server.actors.Actors.wake_at`). A match created after the start (here, or by
another instance, whose write brings an actor here, :mod:`server.cluster`) has an
actor. So once the reading is past a match's deadline it never needs to look back, and
once no deadline is left it stops.

A deadline read here may come before the match's real one (the abandonment of a match
in play counts from the server's start, unless a player came back meanwhile): the match
is then loaded, nothing fires, and its actor sets its timer for the real deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import UUID

from server.presence import now_ms
from storage.summaries import NEVER_MS

log = logging.getLogger(__name__)

#: Deadlines read, and matches woken together, at a time.
PAGE = 100

#: ``read(after, until_ms, limit)``: deadlines after ``after`` (a deadline and a match id)
#: up to ``until_ms``, in order (:meth:`storage.arena.Arena.due_matches`).
Read = Callable[[tuple[int, UUID], int, int], Awaitable[list[tuple[int, UUID]]]]
#: ``wake(match_id)``: fire the match's timer; what to wait for, or None if the match
#: needs nothing from here (it has an actor, or a wake-up of its own).
Wake = Callable[[UUID], "asyncio.Future[Any] | None"]


class DueMatches:
    def __init__(self, read: Read, wake: Wake, clock: Callable[[], int] = now_ms) -> None:
        self._read = read
        self._wake = wake
        self._clock = clock
        #: The last deadline and match handled: the reading goes on after it.
        self._after = (-1, UUID(int=0))
        #: The deadline the reading sleeps until (None: reading, or done).
        self.sleeping_until: int | None = None
        self._task = asyncio.get_running_loop().create_task(self._run(), name="due matches")

    async def _run(self) -> None:
        while True:
            try:
                if not await self._step():
                    return
            except asyncio.CancelledError:
                raise
            except Exception:
                # The store failed to answer: try again a little later, from where it was.
                log.exception("reading the matches' deadlines failed")
                await asyncio.sleep(1.0)

    async def _step(self) -> bool:
        """Wake the matches due now, a page of them; else sleep until the next deadline.
        False once no deadline is left."""
        page = await self._read(self._after, self._clock(), PAGE)
        if page:
            woken = [f for _, match_id in page if (f := self._wake(match_id)) is not None]
            if woken:
                # Not gathered: closing this reading must not cancel the matches' work.
                # Each match's timer is logged if it fails (MatchActor._timer_done).
                await asyncio.wait(woken)
            self._after = page[-1]
            return True
        ahead = await self._read(self._after, NEVER_MS, 1)
        if not ahead:
            return False
        self.sleeping_until = ahead[0][0]
        try:
            await asyncio.sleep(max(0.0, (ahead[0][0] - self._clock()) / 1000))
        finally:
            self.sleeping_until = None
        return True

    def done(self) -> bool:
        """Whether no deadline is left to read."""
        return self._task.done()

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
