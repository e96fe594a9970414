"""Who is at the table: the server's view of which seats are present, for abandonment.

A seat is present while it has an open Watch stream, and for a moment after each of its
commands; it is away from the moment its last stream closed or its last command was
answered, whichever is later. Nothing of this is an event: streams and connections are
not facts of the match. When every seat still in play has been away for the match's
``abandon_after_ms`` (JS-8.3), the server ends the match as abandoned and states what it
observed in the recorded end.

After a restart nobody is present until they reconnect: the absence counts from the
server's start, so a match whose players come back in time carries on.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from uuid import UUID


def now_ms() -> int:
    return int(time.time() * 1000)


class Presence:
    def __init__(
        self,
        on_change: Callable[[UUID], None] | None = None,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self._clock = clock
        self._on_change = on_change
        self.started_ms = clock()
        self._streams: dict[UUID, Counter[int]] = defaultdict(Counter)
        self._seen_ms: dict[UUID, dict[int, int]] = defaultdict(dict)

    def stream_opened(self, match_id: UUID, seat: int) -> None:
        self._streams[match_id][seat] += 1
        self._changed(match_id)

    def stream_closed(self, match_id: UUID, seat: int) -> None:
        streams = self._streams.get(match_id)
        if streams is not None:
            streams[seat] -= 1
            if streams[seat] <= 0:
                del streams[seat]
            if not streams:
                del self._streams[match_id]
        self._seen_ms[match_id][seat] = self._clock()
        self._changed(match_id)

    def acted(self, match_id: UUID, seat: int) -> None:
        """A command from ``seat`` is running in the match's actor: it is here now. (The
        actor sets the match's timer again once the command is done: no call back.)"""
        self._seen_ms[match_id][seat] = self._clock()

    def away_since_ms(self, match_id: UUID, seats: Iterable[int]) -> int | None:
        """Since when every one of ``seats`` has been away (wall ms), or None if one of
        them is present now."""
        streams = self._streams.get(match_id, Counter())
        seen = self._seen_ms.get(match_id, {})
        since = self.started_ms
        for seat in seats:
            if streams[seat] > 0:
                return None
            since = max(since, seen.get(seat, self.started_ms))
        return since

    def forget(self, match_id: UUID) -> None:
        """The match has ended: nothing more to watch."""
        self._streams.pop(match_id, None)
        self._seen_ms.pop(match_id, None)

    def _changed(self, match_id: UUID) -> None:
        if self._on_change is not None:
            self._on_change(match_id)
