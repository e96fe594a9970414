"""Several server instances on one PostgreSQL store (server/cluster.py, docs/operations.md).

Two real servers share a fresh schema; clients move between them. What every instance
must show: the events saved through the other (on its streams, through one listening
connection per process), commands serialised by the store (no fork, no lost event),
timers that record one event wherever they fire, and stamps that name the instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from click.testing import CliRunner

from server import cli
from server.serve import RunningServer, start
from storage.arena import Arena
from storage.summaries_postgres import creating_key
from tests.conftest import POSTGRES_DSN, postgres_store
from tests.service.helpers import (
    INWARD,
    act,
    bearer,
    check_race,
    create_and_join,
    deal_for,
    grab,
    race_verdict,
    reveal,
    stub,
    watch_until,
)
from tests.service.limits_helpers import LOOSE, until
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc
from totem_client.routing import instance_for

pytestmark = pytest.mark.postgres


@pytest.fixture
async def pair() -> AsyncIterator[tuple[RunningServer, RunningServer]]:
    """Instances "a" and "b" on one fresh schema."""
    with postgres_store() as env:
        a = await start("127.0.0.1:0", env, instance="a")
        b = await start("127.0.0.1:0", env, instance="b")
        try:
            yield a, b
        finally:
            await b.stop(grace=None)
            await a.stop(grace=None)


@contextlib.asynccontextmanager
async def clients(
    *servers: RunningServer,
) -> AsyncIterator[list[match_service_pb2_grpc.MatchServiceStub]]:
    """A client of each server, each on a channel of its own, closed afterwards."""
    stubs = [stub(server.port) for server in servers]
    try:
        yield [client for _, client in stubs]
    finally:
        for channel, _ in stubs:
            await channel.close()


async def two_seats(client: match_service_pb2_grpc.MatchServiceStub) -> tuple[str, list[str]]:
    """A 2-seat match made and filled through ``client``: no turn timer, and a deal on
    which reveals open no duel. Its id and the seats' tokens."""
    match_id, _, tokens = await create_and_join(
        client, 2, turn_timeout_ms=0, prearranged_deal=deal_for(2, {})
    )
    return match_id, tokens


async def seat_1_watching(
    client_a: match_service_pb2_grpc.MatchServiceStub,
    client_b: match_service_pb2_grpc.MatchServiceStub,
) -> tuple[str, list[str], ms.WatchRequest, Any, list[int]]:
    """:func:`two_seats` through a, and seat 1's stream of it through b, its first event
    read: the match, the tokens, the request, the stream and the versions seen."""
    match_id, tokens = await two_seats(client_a)
    request = ms.WatchRequest(match_id=match_id)
    watch = client_b.Watch(request, metadata=bearer(tokens[1]))
    return match_id, tokens, request, watch, [(await watch.read()).version]


def revealed(event: ms.MatchEvent) -> js.Revealed | None:
    kind = event.jungle_speed.WhichOneof("event") if event.HasField("jungle_speed") else None
    return event.jungle_speed.revealed if kind == "revealed" else None


def timer_reveals(events: list[ms.MatchEvent], timeout_ms: int) -> list[js.Revealed]:
    """The turn timer's reveals (JS-3.4), checked to be one per deadline: two instances
    firing for one deadline would record two reveals less than a turn apart."""
    timed = [
        r for e in events if (r := revealed(e)) is not None and r.cause == js.REVEAL_CAUSE_TIMEOUT
    ]
    for earlier, later in itertools.pairwise(timed):
        gap_ns = later.stamp.received_at.ToNanoseconds() - earlier.stamp.received_at.ToNanoseconds()
        assert gap_ns >= (timeout_ms - 1) * 1_000_000, (earlier.stamp, later.stamp)
    return timed


async def test_a_stream_on_one_instance_gets_what_the_other_saved(
    pair: tuple[RunningServer, RunningServer],
) -> None:
    a, b = pair
    async with clients(a, b) as (client_a, client_b):
        match_id, tokens = await two_seats(client_a)
        start = (await client_a.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        # Player 1 watches through b, from before the game goes on through a.
        watching = asyncio.ensure_future(
            watch_until(client_b, match_id, start + 4, token=tokens[1])
        )
        await asyncio.sleep(0.2)
        version = 0
        for turn in range(4):
            version = (await act(client_a, match_id, tokens[turn % 2], reveal())).version
        assert version == start + 4
        through_b = await asyncio.wait_for(watching, 10)
        through_a = await watch_until(client_a, match_id, version, token=tokens[1])
        assert [e.version for e in through_b] == list(range(1, version + 1))
        # The very bytes a stream of a gives the same player: events and states alike.
        assert [e.SerializeToString() for e in through_b] == [
            e.SerializeToString() for e in through_a
        ]


async def test_commands_through_both_instances_are_serialised_and_stamped_by_each(
    pair: tuple[RunningServer, RunningServer],
) -> None:
    a, b = pair
    async with clients(a, b) as both:
        match_id, tokens = await two_seats(both[0])
        version = 0
        for turn in range(6):  # each reveal through the other instance
            version = (await act(both[turn % 2], match_id, tokens[turn % 2], reveal())).version
        events = await watch_until(both[1], match_id, version)
        assert [e.version for e in events] == list(range(1, version + 1))
        stamps = [r.stamp.instance for e in events if (r := revealed(e)) is not None]
        assert stamps == ["a", "b"] * 3


async def test_one_command_sent_through_both_instances_at_once_is_applied_once(
    pair: tuple[RunningServer, RunningServer],
) -> None:
    """The same reveal through a and b at once: the store takes one save of the next
    version; the other instance reloads, decides again and refuses (JS-3.2: it is no
    longer that seat's turn). No fork, nothing lost."""
    a, b = pair
    async with clients(a, b) as (client_a, client_b):
        for _ in range(5):
            match_id, _, tokens = await create_and_join(client_a, 2, turn_timeout_ms=0)
            # Both instances hold the match before the race.
            await client_b.GetMatch(ms.GetMatchRequest(match_id=match_id))
            outcomes = await asyncio.gather(
                act(client_a, match_id, tokens[0], reveal()),
                act(client_b, match_id, tokens[0], reveal()),
                return_exceptions=True,
            )
            applied = [o for o in outcomes if isinstance(o, ms.ActResponse)]
            refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
            assert len(applied) == 1 and len(refused) == 1, outcomes
            assert refused[0].code() == grpc.StatusCode.FAILED_PRECONDITION
            state = await client_b.GetMatch(ms.GetMatchRequest(match_id=match_id))
            version = applied[0].version
            assert state.summary.version == version
            events = await watch_until(client_a, match_id, version)
            assert [e.version for e in events] == list(range(1, version + 1))
            assert sum(revealed(e) is not None for e in events) == 1


async def test_a_grab_race_across_instances_is_decided_by_commit_order(
    pair: tuple[RunningServer, RunningServer],
) -> None:
    """Both seats grab at once, one through each instance (JS-6.1): one wins, the other
    is late, and each grab's stamp names the instance that received it."""
    a, b = pair
    async with clients(a, b) as (client_a, client_b):
        match_id, _, tokens = await create_and_join(
            client_a, 2, turn_timeout_ms=0, prearranged_deal=deal_for(2, {0: [INWARD]})
        )
        await client_b.GetMatch(ms.GetMatchRequest(match_id=match_id))
        await act(client_a, match_id, tokens[0], reveal())
        answers = await asyncio.gather(
            act(client_a, match_id, tokens[0], grab()),
            act(client_b, match_id, tokens[1], grab()),
        )
        kinds = {}
        for seat, (answer, instance) in enumerate(zip(answers, "ab", strict=True)):
            for event in answer.events:
                inner = event.jungle_speed
                kind = inner.WhichOneof("event")
                if kind == "arrows_won" and inner.arrows_won.winner == seat:
                    kinds[seat] = "won"
                    assert inner.arrows_won.stamp.instance == instance
                elif kind == "late_grab" and inner.late_grab.seat == seat:
                    kinds[seat] = "late"
                    assert inner.late_grab.stamp.instance == instance
        assert sorted(kinds.values()) == ["late", "won"], kinds


async def test_a_turn_timer_held_by_both_instances_records_one_reveal_per_deadline(
    pair: tuple[RunningServer, RunningServer],
) -> None:
    """Both instances hold the match and its timer (JS-3.4); each deadline gives one
    timer reveal, wherever it fired: consecutive timer reveals are a whole turn apart,
    never two for one deadline. Then a stops and b carries on alone."""
    a, b = pair
    timeout_ms = 300
    async with clients(a, b) as (client_a, client_b):
        match_id, _, tokens = await create_and_join(
            client_a, 2, turn_timeout_ms=timeout_ms, prearranged_deal=deal_for(2, {})
        )
        await client_b.GetMatch(ms.GetMatchRequest(match_id=match_id))
        first = await watch_until(client_b, match_id, 10, token=tokens[0])
        await a.stop(grace=None)
        after = await watch_until(client_b, match_id, 16, token=tokens[0], after_version=10)
    events = first + after
    assert [e.version for e in events] == list(range(1, 17))
    reveals = timer_reveals(events, timeout_ms)
    assert len(reveals) == sum(revealed(e) is not None for e in events)  # nobody else
    assert {r.stamp.instance for r in reveals[-3:]} == {"b"}


async def test_instances_on_other_schemas_do_not_hear_each_other() -> None:
    with postgres_store() as env_1, postgres_store() as env_2:
        a = await start("127.0.0.1:0", env_1, instance="a")
        b = await start("127.0.0.1:0", env_2, instance="b")
        try:
            assert a.cluster is not None and b.cluster is not None
            assert a.cluster.events_channel != b.cluster.events_channel
        finally:
            await b.stop(grace=None)
            await a.stop(grace=None)


async def test_a_sqlite_server_is_alone_and_names_no_instance(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        answer = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
        )
    stamps = [r.stamp for e in answer.events if (r := revealed(e)) is not None]
    if server.cluster is None:
        assert [s.instance for s in stamps] == [""]
    else:  # the PostgreSQL run of the fixture: named by host and process
        assert all("/" in s.instance for s in stamps)


async def test_players_routed_to_one_instance_race_by_its_receive_order(
    pair: tuple[RunningServer, RunningServer],
) -> None:
    """With every player choosing the match's instance by its id (totem_client.routing),
    a 4-way grab race (JS-6.1) is received by one instance: one sequence orders every
    grab, and the first received wins."""
    a, b = pair
    addresses = [f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"]
    names = {addresses[0]: "a", addresses[1]: "b"}
    setup_channel, setup = stub(a.port)
    async with setup_channel:
        match_id, _, tokens = await create_and_join(
            setup, 4, turn_timeout_ms=0, prearranged_deal=deal_for(4, {0: [INWARD]})
        )
    home = instance_for(match_id, addresses)
    # Each player lists the instances in its own order, and still lands on the same one.
    routes = [instance_for(match_id, addresses[:: 1 if s % 2 else -1]) for s in range(4)]
    assert routes == [home] * 4
    channels = [grpc.aio.insecure_channel(route) for route in routes]
    clients = [match_service_pb2_grpc.MatchServiceStub(c) for c in channels]
    try:
        await act(clients[0], match_id, tokens[0], reveal())
        answers = await asyncio.gather(
            *(act(clients[s], match_id, tokens[s], grab()) for s in range(4))
        )
    finally:
        for channel in channels:
            await channel.close()
    # Every grab's answer holds the event that decided it: the race's, or its LateGrab.
    events = list({e.version: e for answer in answers for e in answer.events}.values())
    won, contenders, lates = race_verdict(events, "arrows_won")
    check_race(won, contenders, lates)
    stamps = [c.stamp for c in contenders] or [won.stamp]
    stamps += [g.stamp for g in lates]
    assert len(stamps) == 4 and {stamp.instance for stamp in stamps} == {names[home]}
    assert len({stamp.sequence for stamp in stamps}) == 4  # one sequence orders them all


def test_an_instance_name_with_a_space_is_refused_before_serving(tmp_path: Path) -> None:
    files = ["--organisers", str(tmp_path / "organisers"), "--key-file", str(tmp_path / "key")]
    with postgres_store() as env:
        result = CliRunner().invoke(
            cli.main,
            ["serve", "--address", "127.0.0.1:0", "--instance", "a b", *files],
            env=env,
        )
    assert result.exit_code == 1
    assert "an instance name is 1 to 100 characters without spaces: 'a b'" in result.output


async def test_a_stream_outlives_its_idle_actor_and_misses_nothing_saved_elsewhere() -> None:
    """On b the match's actor leaves for being idle while a player's stream stays open
    there; meanwhile a saves more. b's stream gets every event, in order, none twice."""
    with postgres_store() as env:
        a = await start("127.0.0.1:0", env, instance="a")
        idle = dataclasses.replace(LOOSE, idle_actor_s=0.2)
        b = await start("127.0.0.1:0", env, instance="b", limits=idle)
        retired: set[str] = set()
        b.actors.when_retired(lambda match_id: retired.add(str(match_id)))
        try:
            async with clients(a, b) as (client_a, client_b):
                match_id, tokens, _, watch, seen = await seat_1_watching(client_a, client_b)
                first = await act(client_a, match_id, tokens[0], reveal())
                while seen[-1] < first.version:
                    seen.append((await watch.read()).version)
                await until(lambda: match_id in retired, "b's actor left")
                # The next write heard brings an actor back on b, which loads the match
                # as stored now: past the version b's stream stopped at.
                second = await act(client_a, match_id, tokens[1], reveal())
                third = await act(client_a, match_id, tokens[0], reveal())
                while seen[-1] < third.version:
                    seen.append((await watch.read()).version)
                watch.cancel()
        finally:
            await b.stop(grace=None)
            await a.stop(grace=None)
    assert second.version < third.version
    assert seen == list(range(1, third.version + 1))


@pytest.fixture
async def named_pair() -> AsyncIterator[tuple[RunningServer, RunningServer, str]]:
    """Instances "a" and one of a name no other test's server has (its listening
    connection is cut by name, whatever other tests run at the same time), on one fresh
    schema; and that name."""
    name = f"b-{uuid.uuid4().hex[:12]}"
    with postgres_store() as env:
        a = await start("127.0.0.1:0", env, instance="a")
        b = await start("127.0.0.1:0", env, instance=name)
        try:
            yield a, b, name
        finally:
            await b.stop(grace=None)
            await a.stop(grace=None)


async def test_a_listener_cut_off_connects_again_and_its_streams_catch_up(
    named_pair: tuple[RunningServer, RunningServer, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """b holds one listening connection whatever its streams; the database kills it, and
    b cannot connect again until a has saved more: b reads the store for what it missed,
    and its stream gets every event."""
    import threading

    import psycopg

    from server import cluster
    from tests.conftest import POSTGRES_DSN

    gate = threading.Event()
    connect = psycopg.connect

    def gated(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("application_name") == f"totem listener {name}":
            gate.wait(30)
        return connect(*args, **kwargs)

    monkeypatch.setattr(cluster.psycopg, "connect", gated)
    a, b, name = named_pair
    async with clients(a, b) as (client_a, client_b):
        match_id, tokens, request, watch, seen = await seat_1_watching(client_a, client_b)
        # More streams on b, of two kinds: still one listening connection for b.
        others = [client_b.Watch(request, metadata=bearer(tokens[0])) for _ in range(3)]
        others += [client_b.Watch(request) for _ in range(3)]
        for other in others:
            await other.read()
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
            cut = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (f"totem listener {name}",),
            ).fetchall()
        assert cut == [(True,)]
        version = 0
        for turn in range(4):  # saved while b hears nothing
            version = (await act(client_a, match_id, tokens[turn % 2], reveal())).version
        gate.set()
        while seen[-1] < version:
            seen.append((await asyncio.wait_for(watch.read(), 30)).version)
        for stream in (watch, *others):
            stream.cancel()
    assert seen == list(range(1, version + 1))


def _tables(schema: str) -> set[str]:
    with psycopg.connect(POSTGRES_DSN) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
    return {name for (name,) in rows}


async def test_instances_started_together_on_a_new_store_all_start() -> None:
    """Several instances started at once on a new schema each create its tables: none
    fails for another making the same table at the same moment (which stopped one of
    two ``totem serve`` processes started together)."""
    for _ in range(4):
        with postgres_store() as env:
            apps = await asyncio.gather(*(asyncio.to_thread(Arena, env) for _ in range(3)))
            for app in apps:
                app.close()
            tables = _tables(env["POSTGRES_SCHEMA"])
            assert {"arena_events", "arena_snapshots", "match_summaries"} <= tables


async def test_tables_are_created_one_process_at_a_time() -> None:
    """While another holds the schema's creating lock, a new store's tables wait: the
    instance starting meanwhile creates them once the lock is let go."""
    with postgres_store() as env:
        schema = env["POSTGRES_SCHEMA"]
        with psycopg.connect(POSTGRES_DSN) as holder:
            lock = "SELECT pg_advisory_xact_lock(hashtext(%s))"
            holder.execute(lock, (creating_key(schema),))
            starting = asyncio.ensure_future(asyncio.to_thread(Arena, env))

            def waiting() -> bool:
                with psycopg.connect(POSTGRES_DSN) as conn:
                    found = conn.execute(
                        "SELECT count(*) FROM pg_stat_activity "
                        "WHERE %s = ANY(pg_blocking_pids(pid))",
                        (holder.info.backend_pid,),
                    ).fetchone()
                return bool(found and found[0])

            await until(waiting, "the instance waits for the creating lock")
            assert not starting.done()
            assert "arena_events" not in _tables(schema)
            holder.rollback()  # lets the lock go
            app = await asyncio.wait_for(starting, 30)
        app.close()
        assert {"arena_events", "arena_snapshots", "match_summaries"} <= _tables(schema)
