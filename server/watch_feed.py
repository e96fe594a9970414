"""The events a Watch stream sends: the stored ones after the version asked for, then the
live ones, with no gap and no duplicate, each encoded once per kind of viewer.

Shared by the adapters that serve Watch (gRPC in :mod:`server.service`, Connect in
:mod:`server.web`): they only write what :meth:`WatchFeed.events` yields, each within their
own write deadline, so a stream behaves the same whatever protocol carries it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any
from uuid import UUID

import grpc

from domain.kernel.views import Viewer
from server import codec
from server.actors import Actors
from server.application import Matches
from server.errors import ServiceError, shutting_down
from server.hub import Subscription
from server.stamps import Stamper
from storage.arena import Arena


def fell_behind(last: int) -> ServiceError:
    """A Watch stream whose client does not take its events fast enough."""
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"this stream fell behind; watch again with after_version={last}",
    )


class WatchFeed:
    """The events of each Watch stream, over the use case that subscribes to them."""

    def __init__(self, app: Arena, actors: Actors, matches: Matches, stamper: Stamper) -> None:
        self.app = app
        self.actors = actors
        self.matches = matches
        self.stamper = stamper

    async def events(
        self, match_id: UUID, token: str | None, after_version: int, with_state: bool
    ) -> AsyncGenerator[tuple[bytes, int]]:
        """Each event's wire bytes (a ``MatchEvent``), with the version of the last event
        the client surely took before it: what to watch again after, should this one
        not be written in time. The caller asks for the next only once it has written
        one (a player's seat then counts it as seen); it closes the iterator when the
        stream ends, which gives back the subscription and the player's presence."""
        sub: Subscription | None = None
        present: int | None = None  # the seat this stream keeps at the table
        try:
            watching = await self.matches.watch(match_id, token, after_version, with_state)
            viewer, sub, version = watching.viewer, watching.subscription, watching.version
            seat = viewer.seat  # a player's; spectators and the referee have none
            if seat is not None:
                self.actors.presence.stream_opened(match_id, seat)
                present = seat
            last = after_version
            sent_stored = last < version
            if sent_stored:
                for data in await self.actors.threads.call(
                    self._stored, match_id, last, version, (viewer, with_state)
                ):
                    yield data, last
                    last += 1  # the stored events follow one another from ``last``
                last = version
            if watching.ended:
                return
            if seat is not None and sent_stored:
                self.stamper.written(match_id, seat, last)
            while True:
                if sub.overflowed:
                    raise fell_behind(last)
                frame = await sub.get()
                if frame is None:
                    raise shutting_down(f"watch again with after_version={last}")
                if frame.version > last:
                    yield frame.data, last
                    last = frame.version
                    if frame.final:
                        self.stamper.forget(match_id)  # no grab will name a version again
                        return
                    if seat is not None:
                        self.stamper.written(match_id, seat, last)
        finally:
            if sub is not None:
                sub.close()  # before the stream's status, which may wait for the client
            if present is not None:
                self.actors.presence.stream_closed(match_id, present)

    def _stored(
        self, match_id: UUID, after: int, upto: int, key: tuple[Viewer, bool]
    ) -> list[bytes]:
        """The stored events ``after < version <= upto`` encoded for a kind of viewer, each
        with the state just after it: one event at a time is applied to the match as it
        was at ``after``, never a reload per event."""
        match: Any = self.app.load_at(match_id, after) if after else None
        encoded = []
        for evt in self.app.events_after(match_id, after):
            if evt.originator_version > upto:
                break
            match = evt.mutate(match)
            encoded.append(codec.encoded_event(match, evt, key))
        return encoded
