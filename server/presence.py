"""Who is at the table: the server's view of which seats are present, for abandonment.

A seat is present while it has an open Watch stream, and for a moment after each of its
commands; it is away from the moment its last stream closed or its last command was
answered, whichever is later. Nothing of this is an event: streams and connections are
not facts of the match. When every seat still in play has been away for the match's
``abandon_after_ms`` (JS-8.3), the server ends the match as abandoned and states what it
observed in the recorded end.

After a restart nobody is present until they reconnect: the absence counts from the
server's start, so a match whose players come back in time carries on.

With several server instances on one store (server/cluster.py) a player may be at the
table through any of them. Each instance announces its streams opened and closed and
its players' commands (:attr:`Presence.announce`), and a heartbeat; the others keep
that share (:meth:`Presence.heard`). An instance silent for :data:`DEAD_AFTER_MS` is
taken for gone: its streams count as closed at its last heartbeat.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from uuid import UUID


def now_ms() -> int:
    return int(time.time() * 1000)


#: How often an instance says it is still there.
HEARTBEAT_MS = 2_000
#: An instance not heard from for this long is gone, its streams with it.
DEAD_AFTER_MS = 3 * HEARTBEAT_MS
#: A seat's commands are announced at most this often: absence is counted in minutes.
ACTED_EVERY_MS = 1_000


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
        #: Tells the other instances what happened here (one line; None: alone).
        self.announce: Callable[[str], None] | None = None
        self._announced_ms: dict[tuple[UUID, int], int] = {}
        #: The other instances' open streams, and when each was last heard from.
        self._remote: dict[str, dict[UUID, Counter[int]]] = defaultdict(
            lambda: defaultdict(Counter)
        )
        self._beats: dict[str, int] = {}

    def stream_opened(self, match_id: UUID, seat: int) -> None:
        self._streams[match_id][seat] += 1
        self._tell(f"open {match_id} {seat}")
        self._changed(match_id)

    def stream_closed(self, match_id: UUID, seat: int) -> None:
        streams = self._streams.get(match_id)
        if streams is not None:
            streams[seat] -= 1
            if streams[seat] <= 0:
                del streams[seat]
            if not streams:
                del self._streams[match_id]
        now = self._seen_ms[match_id][seat] = self._clock()
        self._tell(f"close {match_id} {seat} {now}")
        self._changed(match_id)

    def acted(self, match_id: UUID, seat: int) -> None:
        """A command from ``seat`` is running in the match's actor: it is here now. (The
        actor sets the match's timer again once the command is done: no call back.)"""
        now = self._seen_ms[match_id][seat] = self._clock()
        key = (match_id, seat)
        if now - self._announced_ms.get(key, 0) >= ACTED_EVERY_MS:
            self._announced_ms[key] = now
            self._tell(f"acted {match_id} {seat} {now}")

    # ---- the other instances ---------------------------------------------------------

    def heard(self, instance: str, message: str) -> None:
        """What another instance announced (see :meth:`_tell` and :meth:`beat`)."""
        kind, *args = message.split(" ")
        self._beats[instance] = self._clock()
        if kind == "hello":  # a new instance: it learns our streams
            for match_id, streams in self._streams.items():
                for seat, count in streams.items():
                    for _ in range(count):
                        self._tell(f"open {match_id} {seat}")
        elif kind == "bye":
            self._gone(instance, self._clock())
        elif kind in ("open", "close", "acted"):
            match_id, seat = UUID(args[0]), int(args[1])
            streams = self._remote[instance][match_id]
            if kind == "open":
                streams[seat] += 1
            else:
                if kind == "close":
                    streams[seat] = max(0, streams[seat] - 1)
                seen = self._seen_ms[match_id]
                seen[seat] = max(seen.get(seat, 0), int(args[2]))
            self._changed(match_id)

    def beat(self) -> None:
        """Say this instance is still here, and take for gone those long silent."""
        self._tell("beat")
        now = self._clock()
        for instance, last in list(self._beats.items()):
            if now - last > DEAD_AFTER_MS:
                self._gone(instance, last)

    def hello(self) -> None:
        """A new instance: ask the others for their open streams."""
        self._tell("hello")

    def bye(self) -> None:
        self._tell("bye")

    def _gone(self, instance: str, last_ms: int) -> None:
        """Its streams closed when it was last heard from."""
        self._beats.pop(instance, None)
        for match_id, streams in self._remote.pop(instance, {}).items():
            seen = self._seen_ms[match_id]
            for seat, count in streams.items():
                if count > 0:
                    seen[seat] = max(seen.get(seat, 0), last_ms)
            self._changed(match_id)

    def _tell(self, message: str) -> None:
        if self.announce is not None:
            self.announce(message)

    def _remote_streams(self, match_id: UUID, seat: int) -> int:
        return sum(m[match_id][seat] for m in self._remote.values() if match_id in m)

    def away_since_ms(self, match_id: UUID, seats: Iterable[int]) -> int | None:
        """Since when every one of ``seats`` has been away (wall ms), or None if one of
        them is present now."""
        streams = self._streams.get(match_id, Counter())
        seen = self._seen_ms.get(match_id, {})
        since = self.started_ms
        for seat in seats:
            if streams[seat] > 0 or self._remote_streams(match_id, seat) > 0:
                return None
            since = max(since, seen.get(seat, self.started_ms))
        return since

    def forget(self, match_id: UUID) -> None:
        """The match has ended: nothing more to watch."""
        self._streams.pop(match_id, None)
        self._seen_ms.pop(match_id, None)
        for streams in self._remote.values():
            streams.pop(match_id, None)
        for key in [k for k in self._announced_ms if k[0] == match_id]:
            del self._announced_ms[key]

    def _changed(self, match_id: UUID) -> None:
        if self._on_change is not None:
            self._on_change(match_id)
