"""Fan-out of saved events to the open Watch streams of each match.

Each stream subscribes as a kind of viewer (who it is, and whether it wants the state
after each event). An event is encoded once per kind of viewer among the match's
subscribers, and the same bytes go to every stream of that kind. Each stream has a
bounded queue: a stream that falls behind is closed rather than allowed to slow the
match, and its owner resumes with ``after_version``.
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.kernel.match import MatchAggregate, is_final

#: Events a stream may have waiting before it is closed as too slow.
DEFAULT_QUEUE_SIZE = 256

#: ``(match just after the event, event, kind of viewer) -> wire bytes``
Encoder = Callable[[MatchAggregate, Any, Any], bytes]


@dataclass(frozen=True)
class Frame:
    """One event as a kind of viewer receives it."""

    version: int
    data: bytes
    final: bool


class Subscription:
    """One stream's frames of a match's saved events, in order."""

    def __init__(self, hub: EventHub, match_id: UUID, key: Hashable, maxsize: int) -> None:
        self.hub = hub
        self.match_id = match_id
        self.key = key
        # One place more than the frames it may hold: the hub's closing mark always fits.
        self.queue: asyncio.Queue[Frame | None] = asyncio.Queue(maxsize + 1)
        self.maxsize = maxsize
        self.overflowed = False
        self.ended = False

    def offer(self, frame: Frame) -> None:
        if self.overflowed or self.ended:
            return
        if self.queue.qsize() >= self.maxsize:
            self.overflowed = True
            return
        self.queue.put_nowait(frame)

    async def get(self) -> Frame | None:
        """The next frame, or None once the hub has closed: the stream ends at once,
        with the frames still waiting dropped (a resumed stream reads them from the
        store)."""
        return await self.queue.get()

    def end(self) -> None:
        """Drop what waits and wake the stream with the closing mark."""
        self.ended = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)

    def close(self) -> None:
        self.hub.unsubscribe(self)


class EventHub:
    """The match's streams are handed each event in an order drawn afresh for every
    event: in a fixed order (a set's, as before, or the order they subscribed) the same
    seat would see every reveal first, and could answer first."""

    def __init__(
        self,
        encode: Encoder,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        order: random.Random | None = None,
    ) -> None:
        self.encode = encode
        self.queue_size = queue_size
        self._order = order or random.Random()
        self._subs: dict[UUID, set[Subscription]] = defaultdict(set)
        self.closed = False

    def subscribe(self, match_id: UUID, key: Hashable) -> Subscription:
        """Receive every event of the match published from now on, encoded for ``key``.
        Once the hub is closed, the subscription is born ended."""
        sub = Subscription(self, match_id, key, self.queue_size)
        if self.closed:
            sub.end()
            return sub
        self._subs[match_id].add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.match_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.match_id]

    def kinds(self, match_id: UUID) -> frozenset[Hashable]:
        """The kinds of viewer watching a match now: what an event must be encoded for."""
        return frozenset(sub.key for sub in self._subs.get(match_id, ()))

    def frames(
        self, match: MatchAggregate, evt: Any, kinds: frozenset[Hashable]
    ) -> dict[Hashable, Frame]:
        """``evt`` encoded once for each kind of viewer; ``match`` is the match just after
        it. Pure: the publisher runs it off the event loop."""
        final = is_final(evt)
        return {
            key: Frame(evt.originator_version, self.encode(match, evt, key), final) for key in kinds
        }

    def deliver(self, match_id: UUID, frames: dict[Hashable, Frame]) -> None:
        """Hand each stream of the match the frame of its kind of viewer, in a random
        order."""
        subs = list(self._subs.get(match_id, ()))
        self._order.shuffle(subs)
        for sub in subs:
            frame = frames.get(sub.key)
            if frame is not None:
                sub.offer(frame)

    def publish(self, match: MatchAggregate, evt: Any) -> None:
        """Encode and deliver one event at once, on the caller's thread."""
        self.deliver(match.id, self.frames(match, evt, self.kinds(match.id)))

    def close(self) -> None:
        """End every stream now (the server is shutting down): each is woken at once,
        whatever it had waiting, and tells its client where to resume."""
        self.closed = True
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.end()

    def watchers(self, match_id: UUID) -> int:
        return len(self._subs.get(match_id, ()))
