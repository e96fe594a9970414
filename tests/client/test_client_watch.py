"""Watch through the library: every event once, in order, across broken streams."""

from __future__ import annotations

import asyncio
import socket
import uuid
from pathlib import Path
from uuid import UUID

import grpc
import pytest

from server.serve import RunningServer, start
from tests.client.support import BOUND, kind, sqlite_store
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import Client, EventStream, MatchEvent, Session, TotemError, connect


async def collect_until(stream: EventStream, version: int) -> list[MatchEvent]:
    """Read ``stream`` until it yields ``version``."""
    events: list[MatchEvent] = []
    async for event in stream:
        events.append(event)
        if event.version >= version:
            break
    return events


async def reveal_times(sessions: list[Session], count: int) -> int:
    """Reveal ``count`` times, each by the seat whose turn it is; return the last version."""
    version = 0
    for _ in range(count):
        turn = (await sessions[0].get()).jungle_speed.turn
        version = (await sessions[turn].reveal()).version
    return version


def versions(events: list[MatchEvent]) -> list[int]:
    return [e.version for e in events]


async def test_watch_replays_then_follows_live_events(client: Client) -> None:
    created = await client.create_match(max_players=2, turn_timeout_ms=0)
    seats = [await client.join(created.match_id, n) for n in ("alice", "bob")]
    first = await reveal_times(seats, 2)
    watcher = client.spectate(created.match_id)
    async with watcher.watch() as stream:
        before = await asyncio.wait_for(collect_until(stream, first), BOUND)
        last = await reveal_times(seats, 3)
        after = await asyncio.wait_for(collect_until(stream, last), BOUND)
    assert versions(before + after) == list(range(1, last + 1))
    assert [kind(e) for e in before[:4]] == ["created", "player_joined", "player_joined", "dealt"]
    assert watcher.seen_version == last
    assert stream.resumes == 0


async def test_watch_resumes_when_the_stream_falls_behind(
    arena: RunningServer, client: Client
) -> None:
    arena.actors.hub.queue_size = 1
    created = await client.create_match(max_players=2, turn_timeout_ms=0)
    seats = [await client.join(created.match_id, n) for n in ("alice", "bob")]
    first = await reveal_times(seats, 3)
    async with client.watch(created.match_id) as stream:
        seen = await asyncio.wait_for(collect_until(stream, first), BOUND)
        # Two events at once overflow the stream's queue of one: the server closes the
        # stream with RESOURCE_EXHAUSTED. Events stored meanwhile must not be lost.
        match_id = UUID(created.match_id)
        match = arena.app.load(match_id)
        (stored,) = arena.app.events_after(match_id, first - 1)
        arena.actors.hub.publish(match, stored)
        arena.actors.hub.publish(match, stored)
        last = await reveal_times(seats, 4)
        seen += await asyncio.wait_for(collect_until(stream, last), BOUND)
    assert versions(seen) == list(range(1, last + 1))
    assert stream.resumes == 1
    assert stream.last_version == last


async def test_watch_resumes_across_a_server_restart(tmp_path: Path) -> None:
    store = sqlite_store(tmp_path / "restart.db")
    first: RunningServer | None = await start("127.0.0.1:0", store)
    assert first is not None
    port = first.port
    second: RunningServer | None = None
    try:
        async with connect(f"127.0.0.1:{port}", organiser_token=ORGANISER_TOKEN) as client:
            # Nobody plays: the turn timer reveals for the players, so events keep coming.
            created = await client.create_match(max_players=2, turn_timeout_ms=50)
            for name in ("alice", "bob"):
                await client.join(created.match_id, name)
            async with client.watch(created.match_id) as stream:
                seen = await asyncio.wait_for(collect_until(stream, 8), BOUND)
                await first.stop(grace=None)
                first = None
                second = await start(f"127.0.0.1:{port}", store)
                seen += await asyncio.wait_for(collect_until(stream, 20), BOUND)
            assert stream.resumes >= 1
            # The same events as a fresh reading of the store, each once, in order.
            async with client.watch(created.match_id) as again:
                fresh = await asyncio.wait_for(collect_until(again, seen[-1].version), BOUND)
    finally:
        if first is not None:
            await first.stop(grace=None)
        if second is not None:
            await second.stop(grace=None)
    assert versions(seen) == list(range(1, seen[-1].version + 1))
    assert [e.SerializeToString() for e in seen] == [e.SerializeToString() for e in fresh]
    assert {kind(e) for e in seen[4:]} <= {"revealed", "outward_reveal", "piles_recycled"}


async def test_watch_gives_up_after_max_failures() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with connect(f"127.0.0.1:{port}", organiser_token=ORGANISER_TOKEN) as client:
        stream = client.watch(str(uuid.uuid4()), max_failures=2)
        with pytest.raises(TotemError) as failed:
            await asyncio.wait_for(anext(stream), BOUND)
    assert failed.value.code == grpc.StatusCode.UNAVAILABLE
    assert stream.resumes == 2


async def test_watch_does_not_retry_a_refusal(client: Client) -> None:
    stream = client.watch(str(uuid.uuid4()))
    with pytest.raises(TotemError) as missing:
        await asyncio.wait_for(anext(stream), BOUND)
    assert missing.value.code == grpc.StatusCode.NOT_FOUND
    assert stream.resumes == 0


async def test_closing_the_client_ends_a_watch_with_an_error(arena: RunningServer) -> None:
    client = connect(f"127.0.0.1:{arena.port}", organiser_token=ORGANISER_TOKEN)
    created = await client.create_match(max_players=2)
    stream = client.watch(created.match_id)
    assert kind(await asyncio.wait_for(anext(stream), BOUND)) == "created"
    waiting = asyncio.create_task(anext(stream))
    await asyncio.sleep(0)
    await client.close()
    with pytest.raises(TotemError) as closed:
        await asyncio.wait_for(waiting, BOUND)
    assert closed.value.code == grpc.StatusCode.CANCELLED
