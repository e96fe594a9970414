"""Benchmarks: thousands of open Watch streams on one server process: delivery latency and
memory, against a bare gRPC fan-out.

Run ``python bench/streams.py [--streams 2000] [--matches 100] [--idle 1000] [--rate 50]
[--clients 4] [--store sqlite|postgres]``. ``totem serve`` runs in a process of its own
(bench/race.py's ``Server``, with the stream, call and creation caps of
bench/throughput.py raised, and idle matches kept in memory). In order:

1. its resident set (``VmRSS``) once serving, with no match and no stream;
2. ``--idle`` matches created and left waiting for players (each an actor in memory):
   RSS again, the difference per idle match;
3. ``--matches`` matches created and both seats of each taken (playing); RSS again;
4. ``--streams`` spectator ``Watch`` streams opened on those matches (spread evenly), by
   ``--clients`` client processes, each over several channels (TCP connections); once
   every stream has received its match's first events, RSS again: the difference per
   stream;
5. for ``--seconds``, this process sends ``--rate`` commands per second in all, round
   robin over the matches (each a legal command from bench/stream.py's ``next_move``,
   one in flight per match): a steady event rate. Every watcher notes when each event
   arrived. Delivery latency: from the event's ``recorded_at`` (the server's clock when
   it made the event, before it was committed) to its arrival, and from the moment the
   command was sent (this process's clock: the same machine) to its arrival.

The baseline, in the same run: a bare ``grpc.aio`` server (bench/throughput.py's echo
server) in a process of its own with the same number of listening streams over the same
number of keys, opened by the same client processes, and ``Echo`` calls at the same rate
carrying their send time: send → arrival latency, and the RSS per stream.

Every wait is bounded in time; tests never assert a duration, the figures go to
docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import os
import statistics
import struct
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from growth import rss_kib
from stream import next_move
from throughput import (
    CHANNEL_OPTIONS,
    ECHO_SERVICE,
    SERVER_ENV,
    EchoServer,
    bearer,
    percentile,
)

from bench.harness import DEFAULT_DSN, ORGANISER_TOKEN, Server, machine_line
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

#: Streams one client channel (one TCP connection) carries.
STREAMS_PER_CHANNEL = 100
#: Seconds opening every stream may take before the run stops.
OPEN_TIMEOUT = 300.0
#: Seconds after the last command the watchers wait for the last events.
SETTLE_SECONDS = 3.0


# ---- the watchers' processes ------------------------------------------------------------


@dataclass
class Seen:
    """What one watcher process received: (key, version, arrival, latency) per event."""

    arrivals: list[tuple[str, int, float, float]] = field(default_factory=list)
    opened: int = 0
    failures: list[str] = field(default_factory=list)


async def _watch(call: Any, key: str, kind: str, seen: Seen, first: asyncio.Event) -> None:
    counted = False
    try:
        async for data in call:
            now = time.time()
            if kind == "game":
                event = ms.MatchEvent.FromString(data)
                recorded = event.recorded_at.seconds + event.recorded_at.nanos / 1e9
                seen.arrivals.append((key, event.version, now, now - recorded))
            else:
                (sent,) = struct.unpack("!d", data[16:24])
                seen.arrivals.append((key, 0, now, now - sent))
            if not counted:
                counted = True
                seen.opened += 1
                first.set()
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.CANCELLED:
            seen.failures.append(f"{error.code().name}: {error.details()}")
    except asyncio.CancelledError:
        pass


async def _watchers(
    address: str, kind: str, keys: list[str], conn: multiprocessing.connection.Connection
) -> None:
    count = max(1, -(-len(keys) // STREAMS_PER_CHANNEL))
    channels = [grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) for _ in range(count)]
    seen = Seen()
    tasks = []
    for index, key in enumerate(keys):
        channel = channels[index % count]
        if kind == "game":
            method = channel.unary_stream(
                "/totem.v1.MatchService/Watch",
                request_serializer=ms.WatchRequest.SerializeToString,
                response_deserializer=bytes,
            )
            call = method(ms.WatchRequest(match_id=key))
        else:
            method = channel.unary_stream(
                f"/{ECHO_SERVICE}/Listen", request_serializer=bytes, response_deserializer=bytes
            )
            call = method(bytes.fromhex(key))
        tasks.append(asyncio.create_task(_watch(call, key, kind, seen, asyncio.Event())))
    loop = asyncio.get_running_loop()
    if kind == "echo":
        # A listener hears nothing until the first echo: wait a moment for the streams
        # to be open on the server, then let the coordinator check the echo server's count.
        await asyncio.sleep(2.0)
        seen.opened = sum(1 for t in tasks if not t.done())
    else:
        deadline = time.monotonic() + OPEN_TIMEOUT
        while seen.opened < len(keys) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.1)  # polls a counter the streams fill; bounded in time
    conn.send(("open", seen.opened, seen.failures[:3]))
    await loop.run_in_executor(None, conn.recv)  # the run is over
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    conn.send((seen.arrivals, seen.failures[:5], len(seen.failures)))
    for channel in channels:
        await channel.close()


def watchers_main(
    address: str, kind: str, keys: list[str], conn: multiprocessing.connection.Connection
) -> None:
    asyncio.run(_watchers(address, kind, keys, conn))


class Watchers:
    """The client processes, each watching its share of ``keys`` (one stream per entry)."""

    def __init__(self, address: str, kind: str, keys: list[str], processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.children = []
        for index in range(processes):
            mine, theirs = context.Pipe()
            share = keys[index::processes]
            if not share:
                continue
            process = context.Process(
                target=watchers_main, args=(address, kind, share, theirs), daemon=True
            )
            process.start()
            self.children.append((process, mine))

    def opened(self) -> tuple[int, list[str]]:
        total, failures = 0, []
        for _, conn in self.children:
            if not conn.poll(OPEN_TIMEOUT + 30):
                raise RuntimeError("a watcher process did not open its streams")
            _, opened, failed = conn.recv()
            total += opened
            failures += failed
        return total, failures

    def finish(self) -> tuple[list[tuple[str, int, float, float]], list[str], int]:
        for _, conn in self.children:
            conn.send("done")
        arrivals: list[tuple[str, int, float, float]] = []
        failures: list[str] = []
        failed = 0
        for process, conn in self.children:
            if conn.poll(120):
                got, first, count = conn.recv()
                arrivals += got
                failures += first
                failed += count
            process.join(30)
            if process.is_alive():
                process.kill()
        return arrivals, failures, failed


# ---- the driver ---------------------------------------------------------------------------


@dataclass
class Table:
    match_id: str
    tokens: list[str]
    state: Any
    version: int
    me: int = 0
    busy: bool = False
    over: bool = False


async def make_matches(stub: Any, count: int, players: int) -> list[Table]:
    """``count`` matches of 2 seats; with ``players`` 0 they are left waiting (idle)."""
    organiser = bearer(ORGANISER_TOKEN)
    tables = []
    for _ in range(count):
        created = await stub.CreateMatch(
            ms.CreateMatchRequest(
                game=common_pb2.GAME_JUNGLE_SPEED,
                jungle_speed=js.JungleSpeedOptions(max_players=2, turn_timeout_ms=0),
            ),
            metadata=organiser,
        )
        if players == 0:
            continue
        tokens = []
        for seat in range(players):
            joined = await stub.JoinMatch(
                ms.JoinMatchRequest(match_id=created.match_id, name=f"p{seat}", seat=seat)
            )
            tokens.append(joined.player_token)
        view = await stub.GetMatch(
            ms.GetMatchRequest(match_id=created.match_id), metadata=bearer(tokens[0])
        )
        tables.append(Table(created.match_id, tokens, view.jungle_speed, view.summary.version))
    return tables


async def drive_games(
    stub: Any, tables: list[Table], rate: float, seconds: float
) -> dict[tuple[str, int], float]:
    """Commands at ``rate`` a second, round robin: (match, version) → wall time sent."""
    sent: dict[tuple[str, int], float] = {}
    pending: set[asyncio.Task[None]] = set()

    async def act(table: Table) -> None:
        move = next_move(table.state, table.me)
        if move is None:
            table.over = True
            return
        table.me, command = move
        when = time.time()
        try:
            acted = await stub.Act(
                ms.ActRequest(
                    match_id=table.match_id, seen_version=table.version, jungle_speed=command
                ),
                metadata=bearer(table.tokens[table.me]),
                timeout=30,
            )
        except grpc.aio.AioRpcError:
            table.over = True
            return
        finally:
            table.busy = False
        for event in acted.events:
            sent[(table.match_id, event.version)] = when
        table.state, table.version = acted.state.jungle_speed, acted.state.summary.version
        if acted.state.summary.status == common_pb2.MATCH_STATUS_ENDED:
            table.over = True

    began = time.perf_counter()
    for tick in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, began + tick / rate - time.perf_counter()))
        for offset in range(len(tables)):
            table = tables[(tick + offset) % len(tables)]
            if not table.busy and not table.over:
                table.busy = True
                task = asyncio.create_task(act(table))
                pending.add(task)
                task.add_done_callback(pending.discard)
                break
    await asyncio.gather(*pending)
    return sent


async def drive_echo(address: str, keys: list[str], rate: float, seconds: float) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        echo = channel.unary_unary(
            f"/{ECHO_SERVICE}/Echo", request_serializer=bytes, response_deserializer=bytes
        )
        pending: set[asyncio.Task[Any]] = set()
        began = time.perf_counter()
        count = int(rate * seconds)
        for tick in range(count):
            await asyncio.sleep(max(0.0, began + tick / rate - time.perf_counter()))
            key = bytes.fromhex(keys[tick % len(keys)])
            task = asyncio.ensure_future(echo(key + struct.pack("!d", time.time()), timeout=30))
            pending.add(task)
            task.add_done_callback(pending.discard)
        await asyncio.gather(*pending)
        return count


# ---- the run ------------------------------------------------------------------------------


def ms_pair(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values) * 1e3:.1f} / {percentile(values, 0.99) * 1e3:.1f}"


def game_run(args: argparse.Namespace) -> dict[str, Any]:
    env = SERVER_ENV | {"TOTEM_IDLE_ACTOR_SECONDS": "1000000"}
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(args.store, args.postgres, Path(tmp), extra_env=env)
        pid = server.process.pid
        try:
            return asyncio.run(_game_run(server.port, pid, args))
        finally:
            server.stop()


async def _game_run(port: int, pid: int, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        await stub.ListMatches(ms.ListMatchesRequest(page_size=1))
        await asyncio.sleep(1.0)
        out["rss empty"] = rss_kib(pid)
        await make_matches(stub, args.idle, 0)
        await asyncio.sleep(1.0)
        out["rss idle"] = rss_kib(pid)
        tables = await make_matches(stub, args.matches, 2)
        await asyncio.sleep(1.0)
        out["rss playing"] = rss_kib(pid)
        keys = [tables[i % len(tables)].match_id for i in range(args.streams)]
        watchers = Watchers(f"127.0.0.1:{port}", "game", keys, args.clients)
        try:
            opened, failures = await asyncio.get_running_loop().run_in_executor(
                None, watchers.opened
            )
            out["opened"], out["open failures"] = opened, failures
            await asyncio.sleep(1.0)
            out["rss streams"] = rss_kib(pid)
            sent = await drive_games(stub, tables, args.rate, args.seconds)
            await asyncio.sleep(SETTLE_SECONDS)
            out["rss end"] = rss_kib(pid)
        finally:
            arrivals, failed_first, failed = watchers.finish()
    out["failed"], out["failures"] = failed, failed_first
    measured = [(k, v, at, lat) for k, v, at, lat in arrivals if (k, v) in sent]
    out["events"] = len(sent)
    out["deliveries"] = len(measured)
    watching = Counter(keys)
    out["expected"] = sum(watching[k] for k, _ in sent)
    out["recorded latency"] = [lat for *_, lat in measured]
    out["sent latency"] = [at - sent[(k, v)] for k, v, at, _ in measured]
    return out


def echo_run(args: argparse.Namespace) -> dict[str, Any]:
    echo = EchoServer()
    try:
        time.sleep(1.0)
        out: dict[str, Any] = {"rss empty": rss_kib(echo.pid)}
        key_list = [uuid.uuid4().bytes.hex() for _ in range(args.matches)]
        keys = [key_list[i % len(key_list)] for i in range(args.streams)]
        address = f"127.0.0.1:{echo.port}"
        watchers = Watchers(address, "echo", keys, args.clients)
        try:
            out["opened"], out["open failures"] = watchers.opened()
            time.sleep(1.0)
            out["rss streams"] = rss_kib(echo.pid)
            out["events"] = asyncio.run(drive_echo(address, key_list, args.rate, args.seconds))
            time.sleep(SETTLE_SECONDS)
        finally:
            arrivals, failed_first, failed = watchers.finish()
        out["failed"], out["failures"] = failed, failed_first
        out["deliveries"] = len(arrivals)
        out["sent latency"] = [lat for *_, lat in arrivals]
        return out
    finally:
        echo.stop()


def main(args: argparse.Namespace) -> None:
    print(machine_line(), flush=True)
    print(
        f"{args.streams} streams over {args.matches} matches (keys), {args.clients} client "
        f"processes, {STREAMS_PER_CHANNEL} streams a channel; {args.idle} idle matches; "
        f"{args.rate} commands/s for {args.seconds} s; store {args.store}",
        flush=True,
    )
    echo = echo_run(args)
    print(f"echo: {echo['opened']} streams open, {echo['deliveries']} deliveries", flush=True)
    game = game_run(args)
    print(f"game: {game['opened']} streams open, {game['deliveries']} deliveries", flush=True)
    mib = 1024.0
    print("\n| | bare gRPC fan-out (baseline) | totem serve |")
    print("|---|---|---|")
    print(f"| streams open (asked {args.streams}) | {echo['opened']} | {game['opened']} |")
    print(
        f"| events sent; deliveries to watchers (expected) | {echo['events']}; "
        f"{echo['deliveries']} ({echo['events'] * args.streams // args.matches}) "
        f"| {game['events']}; {game['deliveries']} ({game['expected']}) |"
    )
    print(f"| failed streams | {echo['failed']} | {game['failed']} |")
    print(
        f"| delivery latency from send, p50 / p99 ms | {ms_pair(echo['sent latency'])} "
        f"| {ms_pair(game['sent latency'])} |"
    )
    print(f"| from `recorded_at`, p50 / p99 ms | - | {ms_pair(game['recorded latency'])} |")
    print(f"| RSS empty, MiB | {echo['rss empty'] / mib:.1f} | {game['rss empty'] / mib:.1f} |")
    per_idle = (game["rss idle"] - game["rss empty"]) / max(1, args.idle)
    print(
        f"| RSS with {args.idle} idle matches, MiB (KiB each) | - "
        f"| {game['rss idle'] / mib:.1f} ({per_idle:.1f}) |"
    )
    print(f"| RSS with {args.matches} matches playing, MiB | - | {game['rss playing'] / mib:.1f} |")
    echo_each = (echo["rss streams"] - echo["rss empty"]) / max(1, echo["opened"])
    game_each = (game["rss streams"] - game["rss playing"]) / max(1, game["opened"])
    print(
        f"| RSS with the streams, MiB (KiB a stream) | {echo['rss streams'] / mib:.1f} "
        f"({echo_each:.1f}) | {game['rss streams'] / mib:.1f} ({game_each:.1f}) |"
    )
    print(f"| RSS after the events, MiB | - | {game['rss end'] / mib:.1f} |")
    for name, run in (("echo", echo), ("game", game)):
        if run["failures"] or run["open failures"]:
            print(f"{name} failures: {run['failures'] or run['open failures']}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--matches", type=int, default=100, help="matches the streams watch")
    parser.add_argument("--idle", type=int, default=1000, help="idle matches to load")
    parser.add_argument("--rate", type=float, default=50.0, help="commands per second in all")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4, help="watcher processes")
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--postgres", default=DEFAULT_DSN, metavar="DSN")
    args = parser.parse_args(argv)
    if min(args.streams, args.matches, args.clients) < 1 or args.rate <= 0 or args.idle < 0:
        parser.error("--streams, --matches, --clients and --rate must be positive")
    return args


if __name__ == "__main__":
    main(parse(sys.argv[1:]))
