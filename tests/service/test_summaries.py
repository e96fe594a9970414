"""The projection of match summaries: ListMatches and start-up read it, never a match.

Every test runs on SQLite and on PostgreSQL (the ``store_env`` fixture).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import grpc
import pytest
from click.testing import CliRunner

from domain.jungle_speed import JungleSpeed
from entrypoints.totem import main
from server import codec
from server.serve import RunningServer, start
from storage.arena import Arena
from storage.summaries import TABLE, Summary
from tests.service.helpers import (
    NO_SPECIALS,
    act,
    create_and_join,
    grab,
    js_options,
    organiser,
    reveal,
    stub,
)
from tests.service.test_match_end import scripted_deck
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms

WAITING = common_pb2.MATCH_STATUS_WAITING
PLAYING = common_pb2.MATCH_STATUS_PLAYING
ENDED = common_pb2.MATCH_STATUS_ENDED
GAMES = [common_pb2.GAME_UNSPECIFIED, common_pb2.GAME_JUNGLE_SPEED, common_pb2.GAME_TRIBES]
STATUSES = [common_pb2.MATCH_STATUS_UNSPECIFIED, WAITING, PLAYING, ENDED]


def create_in_process(app: Arena, count: int) -> list[str]:
    """Create ``count`` waiting Jungle Speed matches of 2 seats through the application."""
    game_codec = codec.codec_for("jungle_speed")
    request = ms.CreateMatchRequest(
        game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=js_options(max_players=2)
    )
    options = game_codec.options_from_request(request)
    return [
        str(app.create_match(lambda seed: JungleSpeed.create(options, seed, b"", "0" * 64)).id)
        for _ in range(count)
    ]


async def join_all(client: match_service_pb2_grpc.MatchServiceStub, match_id: str) -> list[str]:
    tokens = []
    for seat in range(2):
        joined = await client.JoinMatch(
            ms.JoinMatchRequest(match_id=match_id, name=f"p{seat}", any_seat=True)
        )
        tokens.append(joined.player_token)
    return tokens


async def play_to_the_end(
    client: match_service_pb2_grpc.MatchServiceStub,
    match_id: str,
    tokens: list[str],
    rounds: int = 36,
) -> None:
    """The match of ``scripted_deck`` to its end (JS-4.3, JS-8.1): the last ``rounds``
    of its 36 rounds of reveals, then the grab that wins the last duel."""
    for _ in range(rounds):
        for seat in (0, 1):
            await act(client, match_id, tokens[seat], reveal())
    await act(client, match_id, tokens[0], grab())


async def ended_match(client: match_service_pb2_grpc.MatchServiceStub) -> str:
    match_id, _, tokens = await create_and_join(
        client, 2, prearranged_deal=scripted_deck(), specials=NO_SPECIALS, turn_timeout_ms=0
    )
    await play_to_the_end(client, match_id, tokens)
    return match_id


async def mixed_matches(client: match_service_pb2_grpc.MatchServiceStub) -> dict[str, list[str]]:
    """Matches of two games in every status; their ids by status, in creation order."""
    by_status: dict[str, list[str]] = {"waiting": [], "playing": [], "ended": [], "tribes": []}
    by_status["ended"].append(await ended_match(client))
    for _ in range(2):
        by_status["playing"].append((await create_and_join(client, 2, turn_timeout_ms=0))[0])
        created = await client.CreateMatch(
            ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED), metadata=organiser()
        )
        by_status["waiting"].append(created.match_id)
        tribes = await client.CreateMatch(
            ms.CreateMatchRequest(game=common_pb2.GAME_TRIBES), metadata=organiser()
        )
        by_status["tribes"].append(tribes.match_id)
    return by_status


async def list_all(
    client: match_service_pb2_grpc.MatchServiceStub,
    size: int = 100,
    token: str = "",
    **filters: Any,
) -> list[common_pb2.MatchSummary]:
    """Every page of a listing from ``token`` on, following the page tokens."""
    found: list[common_pb2.MatchSummary] = []
    while True:
        page = await client.ListMatches(
            ms.ListMatchesRequest(page_size=size, page_token=token, **filters)
        )
        assert len(page.matches) <= size
        found.extend(page.matches)
        token = page.next_page_token
        if not token:
            return found


def forbid_loading(app: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a match was loaded")

    monkeypatch.setattr(app, "load", refused)
    monkeypatch.setattr(app, "load_at", refused)
    monkeypatch.setattr(app.repository, "get", refused)


async def test_listing_loads_no_match_whatever_the_filters(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel, client = stub(server.port)
    async with channel:
        ids = await mixed_matches(client)
        forbid_loading(server.app, monkeypatch)
        for game in GAMES:
            for status in STATUSES:
                for size in (1, 100):
                    await list_all(client, size, game=game, status=status)
        playing = await list_all(client, status=PLAYING)
        ended = await list_all(client, status=ENDED, game=common_pb2.GAME_JUNGLE_SPEED)
        waiting_tribes = await list_all(client, status=WAITING, game=common_pb2.GAME_TRIBES)
        every = await list_all(client, 2)
    assert [m.match_id for m in playing] == ids["playing"]
    assert [m.match_id for m in ended] == ids["ended"]
    assert [m.match_id for m in waiting_tribes] == ids["tribes"]
    assert len(every) == 7


async def test_listing_shows_each_acknowledged_change_at_once(server: RunningServer) -> None:
    """Read-your-writes: after each answer, the next listing has that status and
    version, the same summary GetMatch gives."""
    channel, client = stub(server.port)
    async with channel:

        async def listed(match_id: str) -> common_pb2.MatchSummary:
            (found,) = [m for m in await list_all(client) if m.match_id == match_id]
            got = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
            assert found == got.summary
            return found

        created = await client.CreateMatch(
            ms.CreateMatchRequest(
                game=common_pb2.GAME_JUNGLE_SPEED,
                jungle_speed=js_options(
                    max_players=2,
                    prearranged_deal=scripted_deck(),
                    specials=NO_SPECIALS,
                    turn_timeout_ms=0,
                ),
            ),
            metadata=organiser(),
        )
        match_id = created.match_id
        first = await listed(match_id)
        assert (first.status, first.version, list(first.players)) == (WAITING, 1, [])
        joined = await client.JoinMatch(
            ms.JoinMatchRequest(match_id=match_id, name="p0", any_seat=True)
        )
        one = await listed(match_id)
        assert (one.status, one.version, [p.name for p in one.players]) == (
            WAITING,
            joined.version,
            ["p0"],
        )
        second = await client.JoinMatch(
            ms.JoinMatchRequest(match_id=match_id, name="p1", any_seat=True)
        )
        started = await listed(match_id)
        assert (started.status, started.version) == (PLAYING, second.version)
        tokens = [joined.player_token, second.player_token]
        for token in tokens:
            answer = await act(client, match_id, token, reveal())
            assert (await listed(match_id)).version == answer.version
        await play_to_the_end(client, match_id, tokens, rounds=35)
        ended = await listed(match_id)
    assert ended.status == ENDED
    assert ended.end_reason == common_pb2.END_REASON_COMPLETED
    assert sorted(p.place for p in ended.result) == [1, 2]


async def test_paging_returns_every_match_exactly_once(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        ids = await asyncio.to_thread(create_in_process, server.app, 120)
        playing = ids[::5]
        for match_id in playing:
            await join_all(client, match_id)
        for size in (1, 7, 100):
            every = [m.match_id for m in await list_all(client, size)]
            assert every == ids
            started = [m.match_id for m in await list_all(client, size, status=PLAYING)]
            assert started == playing
            waiting = await list_all(
                client, size, status=WAITING, game=common_pb2.GAME_JUNGLE_SPEED
            )
            assert [m.match_id for m in waiting] == [i for i in ids if i not in playing]
        # A page that ends exactly at the last match has no next page.
        last = await client.ListMatches(ms.ListMatchesRequest(page_size=24, status=PLAYING))
        assert len(last.matches) == 24 and not last.next_page_token
        # Matches created after a page was read are on the pages after it.
        page = await client.ListMatches(ms.ListMatchesRequest(page_size=100))
        more = await asyncio.to_thread(create_in_process, server.app, 30)
        rest = await list_all(client, 100, page.next_page_token)
    assert [m.match_id for m in page.matches] + [m.match_id for m in rest] == ids + more


@pytest.mark.parametrize(
    "token", ["abc", "-5", "1e3", "+1", "0x10", "1.5", "٣", "9" * 19, "1" * 100, " 7"]
)
async def test_bad_page_tokens_are_invalid_argument(server: RunningServer, token: str) -> None:
    channel, client = stub(server.port)
    async with channel:
        await asyncio.to_thread(create_in_process, server.app, 3)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.ListMatches(
                ms.ListMatchesRequest(page_token=token, status=WAITING, page_size=1)
            )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "page_token" in (caught.value.details() or "")


async def test_a_token_past_the_end_is_an_empty_last_page(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        await asyncio.to_thread(create_in_process, server.app, 3)
        page = await client.ListMatches(ms.ListMatchesRequest(page_token="9" * 18))
    assert list(page.matches) == [] and not page.next_page_token


async def test_start_up_loads_no_match(
    store_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        async with channel:
            ids = await mixed_matches(client)
            ids["ended"].append(await ended_match(client))
    finally:
        await first.stop(grace=None)
    loaded: list[UUID] = []
    load = Arena.load

    def counting(self: Arena, match_id: UUID) -> Any:
        loaded.append(match_id)
        return load(self, match_id)

    monkeypatch.setattr(Arena, "load", counting)
    second = await start("127.0.0.1:0", store_env)
    try:
        # Live matches are loaded when touched or due (tests/service/test_start_up.py).
        assert loaded == [] and second.actors.live() == 0
    finally:
        await second.stop(grace=None)


def drop_table(env: dict[str, str]) -> None:
    if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        with sqlite3.connect(env["SQLITE_DBNAME"]) as conn:
            conn.execute(f"DROP TABLE {TABLE}")
        return
    import psycopg

    from tests.conftest import POSTGRES_DSN

    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{env["POSTGRES_SCHEMA"]}".{TABLE}')


def every_row(env: dict[str, str]) -> list[Summary]:
    arena = Arena(env)
    try:
        return arena.list_summaries(0, 10_000)
    finally:
        arena.close()


async def test_the_rebuild_command_reproduces_the_dropped_projection(
    store_env: dict[str, str],
) -> None:
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        async with channel:
            await mixed_matches(client)
            listed = await list_all(client)
    finally:
        await first.stop(grace=None)
    before = every_row(store_env)
    assert len(before) == 7
    drop_table(store_env)
    env = {"TOTEM_DB": store_env.get("SQLITE_DBNAME", ""), **store_env}
    result = CliRunner().invoke(main, ["rebuild-summaries"], env=env)
    assert result.exit_code == 0, result.output
    assert "7 match summaries written" in result.output
    assert every_row(store_env) == before
    # Without the command, start-up catches a dropped table up by itself.
    drop_table(store_env)
    second = await start("127.0.0.1:0", store_env)
    channel, client = stub(second.port)
    try:
        async with channel:
            assert await list_all(client) == listed
    finally:
        await second.stop(grace=None)


async def test_64_concurrent_creates_all_succeed(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:

        async def create() -> str:
            made = await client.CreateMatch(
                ms.CreateMatchRequest(game=common_pb2.GAME_TRIBES), metadata=organiser()
            )
            return made.match_id

        created: list[str] = []
        for _ in range(3):
            created += await asyncio.gather(*(create() for _ in range(64)))
        listed = await list_all(client, status=WAITING, game=common_pb2.GAME_TRIBES)
    assert len(set(created)) == 192
    assert sorted(m.match_id for m in listed) == sorted(created)
    positions = [e.originator_version for e in server.app.logged_matches()]
    assert positions == list(range(1, 193))


@pytest.fixture
def two_processes(store_env: dict[str, str]) -> Iterator[tuple[Arena, Arena]]:
    """Two applications on one store, as two server processes would be (several
    instances share a PostgreSQL store; on SQLite, a server and `totem rebuild-summaries`
    may open one file at once)."""
    one, two = Arena(store_env), Arena(store_env)
    try:
        yield one, two
    finally:
        one.close()
        two.close()


def test_creates_of_two_processes_at_once_all_succeed(two_processes: tuple[Arena, Arena]) -> None:
    """Each process takes log positions one at a time; when the other took one first,
    the creation is made again (no IntegrityError leaks)."""
    failures: list[BaseException] = []
    made: list[str] = []

    def creating(app: Arena) -> None:
        try:
            made.extend(create_in_process(app, 25))
        except BaseException as error:  # counted, then asserted
            failures.append(error)

    threads = [threading.Thread(target=creating, args=(app,)) for app in two_processes * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    rows = two_processes[0].list_summaries(0, 1000)
    assert sorted(str(r.match_id) for r in rows) == sorted(made)
    assert [r.position for r in rows] == list(range(1, 201))


def test_a_stale_write_never_moves_a_summary_back(store_env: dict[str, str]) -> None:
    """Whatever commits last, a row keeps the higher version (two processes, or a
    rebuild racing with a server)."""
    app = Arena(store_env)
    try:
        (match_id,) = create_in_process(app, 1)
        (row,) = app.list_summaries(0, 10)
        newer = Summary(**{**row.__dict__, "version": 5, "status": "playing"})
        app.summaries.write_summaries([newer])
        app.summaries.write_summaries([row])  # version 1, written late
        assert app.list_summaries(0, 10) == [newer]
        assert app.live_match_ids() == [UUID(match_id)]
    finally:
        app.close()
