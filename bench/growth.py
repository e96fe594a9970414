"""Benchmarks: what the server's start-up, memory and reads cost as ended matches pile up.

Run ``python bench/growth.py [--sizes 0 10000 100000] [--store sqlite|postgres ...]``.
For each store (a temporary SQLite file, or a fresh schema of a PostgreSQL database), the
store grows in steps to each size of ``--sizes``: ended Jungle Speed matches of 2 seats
(the scripted deal of bench/listing.py played to its end, 75 events each), saved through
the application ``--per-transaction`` matches a transaction, by ``--fill-processes``
processes at once (each with its own range of log positions). The fill is timed and its
time printed; it is not a figure of the server. With PostgreSQL, the schema's tables are
then analysed (``ANALYZE``), as autovacuum does in a database where it runs: without
statistics the planner takes a match's events for tens of thousands of rows, and reads
them with a bitmap scan, a sort and JIT compilation (1.3 ms a read at 100,000 matches,
0.1 ms analysed; the PostgreSQL these benchmarks ran on has autovacuum off).

At each size, ``totem serve`` starts in a process of its own on that store, and:

- start-up: seconds from starting the process until it prints that it serves (the
  interpreter's start and imports included: the row of the empty store is the baseline);
- memory: the server's resident set (``VmRSS``) once serving, and again after the reads;
- ListMatches: ``status=PLAYING`` and ``status=ENDED``, 20 a page (median and p99 of
  ``--calls`` calls, one after the other);
- GetMatch of an ended match: the first call for each of ``--calls`` different ended
  matches (``cold``: the server loads it from the store), and ``--calls`` calls for one
  of them (``warm``);
- GetMatch of a live match (created and joined by the benchmark, so playing).

The target is flat: none of these should grow with the number of ended matches. Ratios
are against the empty store, measured in the same run. Every loop is bounded in count;
tests never assert a duration, the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
from listing import DEFAULT_POSTGRES, fill, store

from bench.harness import ORGANISER, ORGANISER_TOKEN, ROOT, machine_line
from storage.arena import Arena
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

#: The most matches one PostgreSQL transaction of the fill holds (see ``grow``).
POSTGRES_PER_TRANSACTION = 100
#: Seconds the server may take to start on the largest store before the run stops.
START_TIMEOUT = 600.0


def rss_kib(pid: int) -> int:
    """The resident set of a process, in KiB (Linux ``/proc``; 0 elsewhere)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmRSS:\s+(\d+) kB", text, re.MULTILINE)
    return int(found.group(1)) if found else 0


@contextlib.contextmanager
def serving(env: dict[str, str], workdir: Path) -> Iterator[tuple[int, int, float]]:
    """``totem serve`` on this store, in a process of its own: (pid, port, seconds from
    the start of the process until it printed that it serves)."""
    child = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("POSTGRES_", "SQLITE_")) and k != "PERSISTENCE_MODULE"
    }
    child |= env
    child["TOTEM_ORGANISER_TOKEN"] = ORGANISER_TOKEN
    log_path = workdir / "server.log"
    with log_path.open("w+b") as log:
        began = time.perf_counter()
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "server", "serve", "--address", "127.0.0.1:0"),
                *("--db", env.get("SQLITE_DBNAME", str(workdir / "unused.db"))),
                *("--key-file", str(workdir / "server.key")),
                *("--organisers", str(workdir / "organisers")),
                *("--log-level", "WARNING"),
            ],
            cwd=ROOT,
            env=child,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            port = 0
            while not port:
                found = re.search(
                    r"totem serving on [^\s:]+:(\d+)", log_path.read_text(errors="replace")
                )
                if found:
                    port = int(found.group(1))
                elif process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start:\n{log_path.read_text()}")
                else:
                    time.sleep(0.01)
            yield process.pid, port, time.perf_counter() - began
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)


@dataclass
class Row:
    size: int
    fill_s: float
    startup_s: float
    rss_start_kib: int
    rss_after_kib: int
    times: dict[str, list[float]]


async def timed(call: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        began = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - began)
    return samples


async def reads(port: int, calls: int) -> dict[str, list[float]]:
    """The reads of the module's docstring, each ``calls`` times."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        created = await stub.CreateMatch(
            ms.CreateMatchRequest(
                game=common_pb2.GAME_JUNGLE_SPEED,
                jungle_speed=js.JungleSpeedOptions(max_players=2, turn_timeout_ms=0),
            ),
            metadata=ORGANISER,
        )
        live = created.match_id
        for seat in range(2):
            await stub.JoinMatch(ms.JoinMatchRequest(match_id=live, name=f"p{seat}", seat=seat))
        out: dict[str, list[float]] = {}
        for name, status in (
            ("ListMatches PLAYING", common_pb2.MATCH_STATUS_PLAYING),
            ("ListMatches ENDED", common_pb2.MATCH_STATUS_ENDED),
        ):
            request = ms.ListMatchesRequest(status=status, page_size=20)
            await stub.ListMatches(request)  # warm up, untimed
            out[name] = await timed(lambda r=request: stub.ListMatches(r), calls)  # type: ignore[misc]
        ended: list[str] = []
        token = ""
        while len(ended) < calls:
            page = await stub.ListMatches(
                ms.ListMatchesRequest(
                    status=common_pb2.MATCH_STATUS_ENDED, page_size=20, page_token=token
                )
            )
            ended += [m.match_id for m in page.matches]
            token = page.next_page_token
            if not token:
                break
        if ended:
            cold = iter(ended[:calls])
            out["GetMatch ended, cold"] = await timed(
                lambda: stub.GetMatch(ms.GetMatchRequest(match_id=next(cold))),
                len(ended[:calls]),
            )
            one = ms.GetMatchRequest(match_id=ended[0])
            out["GetMatch ended, warm"] = await timed(lambda: stub.GetMatch(one), calls)
        get_live = ms.GetMatchRequest(match_id=live)
        out["GetMatch live"] = await timed(lambda: stub.GetMatch(get_live), calls)
        return out


def _fill_part(
    env: dict[str, str], matches: int, per_transaction: int, first: int, index: int
) -> float:
    # Opening the application creates the store's tables if missing; PostgreSQL refuses
    # two processes doing it at the same moment ("tuple concurrently updated").
    time.sleep(2.0 * index)
    took, _ = fill(env, matches, 0, per_transaction, first)
    return took


def analyse(env: dict[str, str], dsn: str) -> None:
    """``ANALYZE`` the tables of the PostgreSQL schema of ``env``."""
    import psycopg
    from psycopg import sql

    schema = env["POSTGRES_SCHEMA"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        ).fetchall()
        for (table,) in tables:
            conn.execute(
                sql.SQL("ANALYZE {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            )


def grow(env: dict[str, str], have: int, want: int, args: argparse.Namespace) -> float:
    """Add ``want - have`` ended matches, split between the fill processes; wall seconds."""
    adding = want - have
    if adding <= 0:
        return 0.0
    per_transaction = args.per_transaction
    if "POSTGRES_DBNAME" in env:
        # With 1,000 matches (75,000 events) a transaction, the insert never ended: the
        # server waited for the rest of the query (ClientRead), the client process polled
        # its socket with no CPU used, for minutes (with one filling process or two).
        per_transaction = min(per_transaction, POSTGRES_PER_TRANSACTION)
    workers = max(1, min(args.fill_processes, adding // per_transaction or 1))
    shares = [adding // workers + (1 if i < adding % workers else 0) for i in range(workers)]
    app = Arena(env)
    try:
        last = app.match_log.get_last()
    finally:
        app.close()
    # After the log's last position: each measurement also logs the live match it makes.
    start = 1 if last is None else last.originator_version + 1
    firsts = [start + sum(shares[:i]) for i in range(workers)]
    began = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        pool.starmap(
            _fill_part,
            [
                (env, share, per_transaction, first, index)
                for index, (share, first) in enumerate(zip(shares, firsts, strict=True))
            ],
        )
    return time.perf_counter() - began


def measure(env: dict[str, str], size: int, fill_s: float, args: argparse.Namespace) -> Row:
    with tempfile.TemporaryDirectory() as tmp, serving(env, Path(tmp)) as (pid, port, took):
        rss_start = rss_kib(pid)
        times = asyncio.run(reads(port, args.calls))
        return Row(size, fill_s, took, rss_start, rss_kib(pid), times)


def ms_cell(samples: list[float], base: list[float] | None) -> str:
    if not samples:
        return "-"
    median = statistics.median(samples)
    p99 = sorted(samples)[max(0, int(len(samples) * 0.99) - 1)]
    ratio = f" ({median / statistics.median(base):.2f}×)" if base else ""
    return f"{median * 1e3:.2f} / {p99 * 1e3:.2f}{ratio}"


def report(where: str, rows: list[Row]) -> None:
    base = rows[0]
    names = list(dict.fromkeys(name for row in rows for name in row.times))
    print(f"\n{where}: median / p99 ms (× the median of the first row that has it)")
    print(
        "| ended matches | fill, s | start-up, s | RSS serving, MiB | RSS after reads, MiB | "
        + " | ".join(names)
        + " |"
    )
    print("|---" * (5 + len(names)) + "|")
    for row in rows:
        cells = []
        for name in names:
            first = next(r for r in rows if name in r.times)
            cells.append(
                ms_cell(row.times.get(name, []), first.times[name] if row is not first else None)
            )
        print(
            f"| {row.size:,} | {row.fill_s:.0f} | {row.startup_s:.2f} "
            f"({row.startup_s / base.startup_s:.2f}×) | {row.rss_start_kib / 1024:.1f} "
            f"| {row.rss_after_kib / 1024:.1f} | " + " | ".join(cells) + " |",
            flush=True,
        )


def main(args: argparse.Namespace) -> None:
    print(machine_line(), flush=True)
    for kind in args.store:
        with store(args.postgres if kind == "postgres" else None) as (env, where):
            rows: list[Row] = []
            have = 0
            for size in sorted(args.sizes):
                took = grow(env, have, size, args)
                have = size
                if kind == "postgres":
                    analyse(env, args.postgres)
                print(
                    f"{where}: {size:,} ended matches stored, the step took {took:.0f} s",
                    flush=True,
                )
                rows.append(measure(env, size, took, args))
                report(where, rows)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 10_000, 100_000])
    parser.add_argument(
        "--store", nargs="+", choices=("sqlite", "postgres"), default=["sqlite", "postgres"]
    )
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, metavar="DSN")
    parser.add_argument("--calls", type=int, default=50, help="calls per read (default: 50)")
    parser.add_argument(
        "--per-transaction", type=int, default=500, help="matches saved per transaction"
    )
    parser.add_argument(
        "--fill-processes", type=int, default=2, help="processes filling the store at once"
    )
    args = parser.parse_args(argv)
    if args.calls < 1 or args.per_transaction < 1 or args.fill_processes < 1:
        parser.error("--calls, --per-transaction and --fill-processes must be at least 1")
    if any(size < 0 for size in args.sizes):
        parser.error("--sizes must not be negative")
    return args


if __name__ == "__main__":
    main(parse(sys.argv[1:]))
