"""Fan-out of saved events to the open Watch streams of each match.

Each stream has a bounded queue. A stream that falls behind is closed rather than
allowed to slow the match: its owner resumes with ``after_version``.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any
from uuid import UUID

DEFAULT_QUEUE_SIZE = 256


class Subscription:
    """One stream's view of a match's saved events, in order, as batches."""

    def __init__(self, hub: EventHub, match_id: UUID, maxsize: int) -> None:
        self.hub = hub
        self.match_id = match_id
        self.queue: asyncio.Queue[list[Any]] = asyncio.Queue(maxsize)
        self.overflowed = False

    def offer(self, events: list[Any]) -> None:
        if self.overflowed:
            return
        try:
            self.queue.put_nowait(events)
        except asyncio.QueueFull:
            self.overflowed = True

    async def get(self) -> list[Any]:
        return await self.queue.get()

    def close(self) -> None:
        self.hub.unsubscribe(self)


class EventHub:
    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self.queue_size = queue_size
        self._subs: dict[UUID, set[Subscription]] = defaultdict(set)

    def subscribe(self, match_id: UUID) -> Subscription:
        sub = Subscription(self, match_id, self.queue_size)
        self._subs[match_id].add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.match_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.match_id]

    def publish(self, match_id: UUID, events: list[Any]) -> None:
        if events:
            for sub in list(self._subs.get(match_id, ())):
                sub.offer(events)

    def watchers(self, match_id: UUID) -> int:
        return len(self._subs.get(match_id, ()))
