"""What start-up, memory and reads cost as ended matches pile up in the store.

The store grows in steps to each of ``--sizes``: ended 2-seat matches of the scripted deal
(75 events each), saved through the application ``--per-transaction`` a transaction by
``--fill-processes`` processes (PostgreSQL's tables then analysed, as autovacuum does). At
each size ``totem serve`` starts on it: seconds until it serves, its resident memory, and
``--calls`` calls of ListMatches (PLAYING, ENDED), GetMatch of a live match, and GetMatch of
an ended one (cold: a different match each call; warm: one). Target: flat from 10,000.

``--waiting N [N ...]`` measures start-up with waiting matches instead (created, nobody
seated: each stays live for an hour): at each count, the seconds from launch until the
health check answers SERVING (the median of ``--starts`` starts), the resident memory
then and 3 s later (the last start's: anything loaded after the port opens shows there).
Target: 20,000 within 2 s and 1.5 times the memory of the empty store.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import statistics
import time
from collections.abc import Sequence
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench import harness
from domain.jungle_speed import JungleSpeed
from server import codec
from server.stamps import Stamper
from storage.arena import Arena
from totem.v1 import common_pb2
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

PLAYING, ENDED = common_pb2.MATCH_STATUS_PLAYING, common_pb2.MATCH_STATUS_ENDED


def fill(
    env: dict[str, str],
    matches: int,
    per_transaction: int,
    first: int,
    index: int,
    waiting: bool = False,
) -> None:
    """``matches`` ended matches (or, ``waiting``, matches nobody has joined), logged at
    positions from ``first`` on."""
    time.sleep(2.0 * index)  # PostgreSQL refuses two processes creating its tables at once
    game, stamper = codec.codec_for("jungle_speed"), Stamper()
    options = game.options_from_request(harness.scripted_create())
    reveal, grab = (
        game.command(ms.ActRequest(jungle_speed=c)) for c in (harness.REVEAL, harness.GRAB)
    )
    app = Arena(env)
    batch: list[Any] = []
    for position in range(first, first + matches):
        match = JungleSpeed.create(options, app.seed_source(), b"", "0" * 64)
        for seat in range(0 if waiting else 2):
            match.join(f"p{seat}", b"", "1" * 64, stamper.stamp(), seat)
        for turn in range(0 if waiting else 72):
            match.execute(reveal, turn % 2, stamper.stamp(match.version))
        if not waiting:
            match.execute(grab, 0, stamper.stamp(match.version))
        logged = app.match_log.trigger_event(position, match_id=match.id, game="jungle_speed")
        batch += [match, logged]
        if len(batch) == 2 * per_transaction or position == first + matches - 1:
            app.save(*batch)
            batch = []
    app.close()


def grow(
    env: dict[str, str], adding: int, args: argparse.Namespace, waiting: bool = False
) -> float:
    """Add ``adding`` ended (or waiting) matches after the log's last position: wall
    seconds."""
    # On PostgreSQL a transaction of 1,000 matches never completed: 100 at most.
    per = min(args.per_transaction, 100) if "POSTGRES_DBNAME" in env else args.per_transaction
    # Creations append to the transparency log: processes that make matches at once
    # would take the same positions in it.
    workers = 1 if waiting else max(1, min(args.fill_processes, adding // per))
    shares = [adding // workers + (i < adding % workers) for i in range(workers)]
    app = Arena(env)
    last = app.match_log.get_last()
    app.close()
    start = 1 if last is None else last.originator_version + 1
    began = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parts = [(env, n, per, start + sum(shares[:i]), i, waiting) for i, n in enumerate(shares)]
        pool.starmap(fill, parts)
    return time.perf_counter() - began


def analyse(env: dict[str, str], dsn: str) -> None:
    import psycopg

    schema = env["POSTGRES_SCHEMA"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
        for (table,) in tables.fetchall():
            conn.execute(f'ANALYZE "{schema}"."{table}"')


async def reads(address: str, calls: int) -> dict[str, list[float]]:
    """``calls`` calls of each read, timed in turn (s); a page's first call is not
    counted, it warms that query up."""
    channel, stub = harness.match_stub(address)
    async with channel:
        options = js.JungleSpeedOptions(max_players=2, turn_timeout_ms=0)
        live, _ = await harness.seated_match(stub, options)
        ended: list[str] = []
        token = ""
        while len(ended) < calls:
            request = ms.ListMatchesRequest(status=ENDED, page_size=20, page_token=token)
            page = await stub.ListMatches(request)
            ended += [m.match_id for m in page.matches]
            if not (token := page.next_page_token):
                break
        playing, ended_page = (
            ms.ListMatchesRequest(status=s, page_size=20) for s in (PLAYING, ENDED)
        )
        requests: dict[str, list[Any]] = {
            "ListMatches PLAYING": [playing] * (calls + 1),
            "ListMatches ENDED": [ended_page] * (calls + 1),
            "GetMatch live": [ms.GetMatchRequest(match_id=live)] * calls,
            "GetMatch ended, cold": [ms.GetMatchRequest(match_id=m) for m in ended[:calls]],
            "GetMatch ended, warm": [ms.GetMatchRequest(match_id=m) for m in ended[:1]] * calls,
        }
        times: dict[str, list[float]] = {name: [] for name in requests}
        for name, batch in requests.items():
            listing = name.startswith("List")
            for index, request in enumerate(batch):
                began = time.perf_counter()
                await (stub.ListMatches if listing else stub.GetMatch)(request)
                if not (listing and index == 0):
                    times[name].append(time.perf_counter() - began)
        return times


def versus(base: dict[str, float], read: str, values: list[float]) -> str:
    """`` (Rx)``: the median of ``values`` over the first size's median of ``read``."""
    median = statistics.median(values)
    return f" ({median / base.setdefault(read, median):.2f}x)"


def healthy(server: harness.Server, timeout: float = 600) -> float:
    """Start ``server`` and wait until its health check answers SERVING: the seconds from
    launch."""
    began = time.perf_counter()
    server.start(timeout=timeout)
    with grpc.insecure_channel(server.address) as channel:
        check = health_pb2_grpc.HealthStub(channel).Check
        while True:
            with contextlib.suppress(grpc.RpcError):
                answer = check(health_pb2.HealthCheckRequest(), timeout=timeout)
                if answer.status == health_pb2.HealthCheckResponse.SERVING:
                    return time.perf_counter() - began
            time.sleep(0.01)


def waiting_startup(args: argparse.Namespace) -> None:
    """Start-up on a store of ``args.waiting`` waiting matches (each count in turn)."""
    rows: list[list[Any]] = []
    with harness.fresh_store(args.store, args.dsn) as (env, name, folder):
        have = 0
        base: dict[str, float] = {}
        for count in sorted(args.waiting):
            took = grow(env, count - have, args, waiting=True) if count > have else 0.0
            have = count
            if args.store == "postgres":
                analyse(env, args.dsn)
            times: list[float] = []
            for _ in range(args.starts):
                server = harness.Server(env, folder, args.root.resolve(), args=args.extra)
                try:
                    times.append(healthy(server))
                    rss = harness.rss_mib(server.pid)
                    time.sleep(3)
                    later = harness.rss_mib(server.pid)
                finally:
                    server.stop()
            startup = statistics.median(times)
            rows.append(
                [
                    f"{count:,}",
                    f"{took:.0f}",
                    f"{startup:.2f}{versus(base, 'start-up', [startup])}",
                    f"{rss:.1f}{versus(base, 'rss', [rss])} / {later:.1f}",
                ]
            )
            header = ["waiting matches", "fill step, s", "start-up to SERVING, s", "RSS, MiB"]
            print(f"\nstarts, s: {' '.join(f'{t:.2f}' for t in times)}", flush=True)
            print(f"\n{name} (x the empty store's)", flush=True)
            print(harness.markdown_table(header, rows), flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 10_000, 100_000])
    parser.add_argument("--calls", type=int, default=50, help="calls per read")
    parser.add_argument("--per-transaction", type=int, default=500)
    parser.add_argument("--fill-processes", type=int, default=2)
    parser.add_argument("--waiting", type=int, nargs="+", help="start-up with waiting matches")
    parser.add_argument("--starts", type=int, default=3, help="with --waiting: starts per count")
    args = parser.parse_args(argv)
    print(harness.machine_line())
    if args.waiting:
        waiting_startup(args)
        return
    rows: list[list[Any]] = []
    base: dict[str, float] = {}
    with harness.fresh_store(args.store, args.dsn) as (env, name, folder):
        have = 0
        for size in sorted(args.sizes):
            took = grow(env, size - have, args) if size > have else 0.0
            have = size
            if args.store == "postgres":
                analyse(env, args.dsn)
            server = harness.Server(env, folder, args.root.resolve(), args=args.extra)
            try:
                startup = server.start(timeout=600)
                rss = harness.rss_mib(server.pid)
                times = asyncio.run(reads(server.address, args.calls))
                rss_after = harness.rss_mib(server.pid)
            finally:
                server.stop()
            startup_cell = f"{startup:.2f}{versus(base, 'start-up', [startup])}"
            cells = [f"{size:,}", f"{took:.0f}", startup_cell, f"{rss:.1f} / {rss_after:.1f}"]
            for read, values in times.items():
                cells.append(
                    f"{harness.p50_p99(values, 1e3, 2)}{versus(base, read, values)}"
                    if values
                    else "-"
                )
            rows.append(cells)
            header = ["ended matches", "fill step, s", "start-up, s", "RSS serving / after, MiB"]
            print(f"\n{name}, ms median / p99 (x the first size's median)", flush=True)
            print(harness.markdown_table([*header, *times], rows), flush=True)


if __name__ == "__main__":
    main()
