"""A restart loads no match: live matches are loaded when first touched, or when the
deadline their summary row holds comes (server/due.py).

Loads are counted on the application's ``load``; the deadlines are the tests' own (a
turn timer, an abandonment, a waiting expiry set short), waited for in the store.
Every test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from domain.kernel.match import MatchStatus
from domain.kernel.stamps import ReceiveStamp
from server import due
from server.actors import WAITING_EXPIRY_MS
from server.serve import RunningServer, start
from storage.arena import Arena
from storage.summaries import DUE_COLUMNS, TABLE
from tests.service.helpers import create_and_join, stub
from tests.service.test_abandonment import ABANDON_AFTER_MS, new_match
from tests.service.test_summaries import create_in_process
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms

BOUND_S = 30
WAITING = 40


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[UUID]]:
    """The ids of the matches loaded (from the store) from now on, in order."""
    ids: list[UUID] = []
    load = Arena.load

    def counting(self: Arena, match_id: UUID) -> Any:
        ids.append(match_id)
        return load(self, match_id)

    monkeypatch.setattr(Arena, "load", counting)
    yield ids


async def stored_after(app: Arena, match_id: UUID, version: int) -> list[Any]:
    """The match's events after ``version``, once there are any."""
    async with asyncio.timeout(BOUND_S):
        # The store, read again and again: no event to wait on in another process's terms.
        while not (events := await asyncio.to_thread(app.events_after, match_id, version)):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    return events


async def sleeping_until(running: RunningServer) -> int:
    """The deadline the server's reading of the stored deadlines sleeps until."""
    due = running.actors.due
    assert due is not None
    async with asyncio.timeout(BOUND_S):
        while due.sleeping_until is None:  # noqa: ASYNC110 (a state, not an event)
            await asyncio.sleep(0.01)
    return due.sleeping_until


def stored(env: dict[str, str], match_id: UUID) -> tuple[Any, dict[str, Any]]:
    """The match as stored, and its summary row's deadline columns."""
    app = Arena(env)
    try:
        row = app.summaries.select_summary(match_id)
        assert row is not None
        return app.load(match_id), {c: getattr(row, c) for c in DUE_COLUMNS}
    finally:
        app.close()


def until_past(deadline_ms: int) -> float:
    """Seconds until ``deadline_ms`` (wall) is past."""
    return max(0.0, deadline_ms / 1000 - time.time()) + 0.05


async def test_a_restart_loads_none_of_the_waiting_matches_until_touched(
    store_env: dict[str, str], loaded: list[UUID]
) -> None:
    first = await start("127.0.0.1:0", store_env)
    try:
        ids = [UUID(i) for i in await asyncio.to_thread(create_in_process, first.app, WAITING)]
    finally:
        await first.stop(grace=None)
    oldest, _ = stored(store_env, ids[0])
    loaded.clear()
    second = await start("127.0.0.1:0", store_env)
    channel, client = stub(second.port)
    try:
        async with channel:
            # Its timers are read from the summaries: the first expiry is the next due.
            expiry = int(oldest.modified_on.timestamp() * 1000) + WAITING_EXPIRY_MS
            assert abs(await sleeping_until(second) - expiry) <= 1
            assert loaded == [] and second.actors.live() == 0
            # A match is loaded when first touched, and behaves as before.
            got = await client.GetMatch(ms.GetMatchRequest(match_id=str(ids[0])))
            assert got.summary.status == common_pb2.MATCH_STATUS_WAITING
            assert loaded == [ids[0]]
            joined = await client.JoinMatch(
                ms.JoinMatchRequest(match_id=str(ids[1]), name="late", any_seat=True)
            )
            assert joined.version == 2
            watch = client.Watch(ms.WatchRequest(match_id=str(ids[2])))
            first_event = await asyncio.wait_for(watch.read(), BOUND_S)
            assert first_event.version == 1
            watch.cancel()
            assert loaded == ids[:3]
            assert second.actors.live() <= 3
    finally:
        await second.stop(grace=None)


async def test_a_turn_timer_due_while_the_server_was_down_fires_after_start(
    store_env: dict[str, str], loaded: list[UUID]
) -> None:
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        async with channel:
            match_id, _, _ = await create_and_join(client, 2, turn_timeout_ms=1_000)
    finally:
        await first.stop(grace=None)
    match, row = stored(store_env, UUID(match_id))
    deadline = match.timer_deadline_ms()
    assert row["timer_ms"] == deadline and deadline is not None
    await asyncio.sleep(until_past(deadline))  # down past the deadline
    loaded.clear()
    second = await start("127.0.0.1:0", store_env)
    try:
        (timed_out, *_) = await stored_after(second.app, UUID(match_id), match.version)
        # Fired by the new server, untouched, stamped when it fired.
        assert type(timed_out).__name__ == "Revealed" and timed_out.cause == "timeout"
        fired = ReceiveStamp.from_dict(timed_out.stamp).wall_ms
        assert fired >= deadline and fired >= second.actors.presence.started_ms
        assert loaded == [UUID(match_id)]
    finally:
        await second.stop(grace=None)


@pytest.mark.parametrize("waiting", [True, False])
async def test_an_abandonment_due_after_a_restart_fires_untouched(
    store_env: dict[str, str], loaded: list[UUID], waiting: bool
) -> None:
    """A waiting match whose expiry passed while the server was down ends right after
    start-up; a match in play nobody comes back to ends its ``abandon_after_ms`` after
    the start (JS-8.3). Neither is touched."""
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        async with channel:
            match_id, _, _ = await new_match(client, 2, 0 if waiting else 2)
    finally:
        await first.stop(grace=None)
    match, row = stored(store_env, UUID(match_id))
    changed = int(match.modified_on.timestamp() * 1000)
    if waiting:
        assert row == {"timer_ms": None, "waiting_since_ms": changed, "abandon_after_ms": None}
        await asyncio.sleep(until_past(changed + 500))
    else:
        assert match.status is MatchStatus.PLAYING
        assert row == {"timer_ms": None, "waiting_since_ms": None, "abandon_after_ms": 1_000}
    loaded.clear()
    second = await start("127.0.0.1:0", store_env, waiting_expiry_ms=500)
    try:
        (end,) = await stored_after(second.app, UUID(match_id), match.version)
        assert type(end).__name__ == "MatchEnded" and end.reason == "abandoned"
        ended_ms = int(end.timestamp.timestamp() * 1000)
        if waiting:
            assert ended_ms >= changed + 500 and "nobody joined" in end.statement
        else:
            assert ended_ms >= second.actors.presence.started_ms + ABANDON_AFTER_MS
        assert loaded == [UUID(match_id)]
    finally:
        await second.stop(grace=None)


def drop_deadline_columns(env: dict[str, str]) -> None:
    """Make the store one written before the summaries held deadlines."""
    if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        with sqlite3.connect(env["SQLITE_DBNAME"]) as conn:
            for index in (*DUE_COLUMNS, "unfilled"):
                conn.execute(f"DROP INDEX {TABLE}_{index}")
            for column in DUE_COLUMNS:
                conn.execute(f"ALTER TABLE {TABLE} DROP COLUMN {column}")
        return
    import psycopg

    from tests.conftest import POSTGRES_DSN

    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        for column in DUE_COLUMNS:
            conn.execute(f'ALTER TABLE "{env["POSTGRES_SCHEMA"]}".{TABLE} DROP COLUMN {column}')


async def test_a_store_without_deadlines_gets_them_once(
    store_env: dict[str, str], loaded: list[UUID]
) -> None:
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        async with channel:
            playing, _, _ = await create_and_join(client, 2, turn_timeout_ms=0)
        (waiting,) = await asyncio.to_thread(create_in_process, first.app, 1)
    finally:
        await first.stop(grace=None)
    ids = [UUID(playing), UUID(waiting)]
    _, rows = zip(*(stored(store_env, i) for i in ids), strict=True)
    drop_deadline_columns(store_env)
    loaded.clear()
    # The first start fills the deadlines in (loading each live match once) ...
    second = await start("127.0.0.1:0", store_env)
    try:
        assert sorted(loaded) == sorted(ids)
        assert [stored(store_env, i)[1] for i in ids] == list(rows)
    finally:
        await second.stop(grace=None)
    # ... and the next finds nothing to fill; expiries are due as before.
    match, _ = stored(store_env, UUID(waiting))
    await asyncio.sleep(until_past(int(match.modified_on.timestamp() * 1000) + 500))
    loaded.clear()
    third = await start("127.0.0.1:0", store_env, waiting_expiry_ms=500)
    try:
        (end,) = await stored_after(third.app, UUID(waiting), match.version)
        assert type(end).__name__ == "MatchEnded"
        assert loaded == [UUID(waiting)]
    finally:
        await third.stop(grace=None)


async def test_overdue_matches_all_fire_a_page_at_a_time(
    store_env: dict[str, str], loaded: list[UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(due, "PAGE", 3)
    first = await start("127.0.0.1:0", store_env)
    try:
        ids = [UUID(i) for i in await asyncio.to_thread(create_in_process, first.app, 8)]
    finally:
        await first.stop(grace=None)
    last, _ = stored(store_env, ids[-1])
    await asyncio.sleep(until_past(int(last.modified_on.timestamp() * 1000) + 500))
    loaded.clear()
    second = await start("127.0.0.1:0", store_env, waiting_expiry_ms=500)
    try:
        for match_id in ids:
            (end,) = await stored_after(second.app, match_id, 1)
            assert type(end).__name__ == "MatchEnded"
        assert sorted(loaded) == sorted(ids)  # each once
    finally:
        await second.stop(grace=None)
