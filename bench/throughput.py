"""Committed commands per second with many concurrent matches, each watched by 4.

``--clients`` processes share ``--matches`` loops. The game: each loop creates a 2-seat
Jungle Speed match, opens 4 spectator Watch streams on it, seats both players and sends
command after command as answered (a grab offered, else a reveal), by Act calls or
(``--via play``) on a Play stream per seat opened before the first; a new match when one
ends. The floors, on the bare server with the same loops and 4 ``Listen`` streams a key:
the echo (its target: the game at 60% of it at 100 matches), the stream echo (a Play
command's floor) and the stored echo (an event saved through the server's group commit
first: the floor under a committed command). Each round drives every server in turn, one
``--seconds`` window each; ratios are taken within a round and their medians given.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.harness import (
    ECHO,
    ECHO_STREAM,
    LISTEN,
    REVEAL,
    STORED_ECHO,
    EchoServer,
    Table,
    arguments,
    close_play,
    fresh_store,
    machine_line,
    markdown_table,
    open_play,
    p50_p99,
    process_ticks,
    round_trip,
    serve,
)
from totem.v1 import match_service_pb2 as ms

ECHOES = {"echo": ECHO, "stored echo": STORED_ECHO, "stream echo": ECHO_STREAM}
#: What 1,000 matches of 4 watchers and 2 players from one host need of the server.
SERVER_ENV = {
    "TOTEM_STREAMS_PER_CONNECTION": "1000000",
    "TOTEM_STREAMS_PER_ADDRESS": "1000000",
    "TOTEM_MAX_CONCURRENT_CALLS": "1000000",
    "TOTEM_PENDING_CALLS": "1000000",
    "TOTEM_ORGANISER_CREATIONS_PER_MINUTE": "100000000",
}
CALL_TIMEOUT = 60.0


async def drain(call: Any) -> None:
    try:
        async for _ in call:
            pass
    except Exception:  # a stream ended by the round
        pass


async def game_round(stub: Any, watch: Any, via: str, stop: float, answered: list[Any]) -> None:
    """One match, watched by 4, played until it ends or the window closes."""
    watchers: list[Any] = []

    async def watched(match_id: str) -> None:
        request = ms.WatchRequest(match_id=match_id)
        watchers.extend(asyncio.ensure_future(drain(watch(request))) for _ in range(4))

    plays: list[Any] = []
    try:
        table = await Table.seated(stub, 2, watched)
        if via == "play":
            plays = [await open_play(stub.Play, seat) for seat in table.seats]
        while not table.done and time.perf_counter() < stop:
            began = time.perf_counter()
            if await table.act(stub, plays):
                answered.append((time.perf_counter(), time.perf_counter() - began))
        while plays:
            await close_play(plays.pop())
    finally:
        for stream in plays:
            stream.cancel()
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)


async def echo_round(channel: Any, kind: str, stop: float, answered: list[Any]) -> None:
    """A key with 4 listeners, then 100 echoes to it (about a match's commands)."""
    key = uuid.uuid4().bytes
    payload = (
        key
        + ms.ActRequest(
            match_id=str(uuid.uuid4()), seen_version=42, jungle_speed=REVEAL
        ).SerializeToString()
    )
    listeners = [asyncio.ensure_future(drain(channel.unary_stream(LISTEN)(key))) for _ in range(4)]
    stream = channel.stream_stream(ECHO_STREAM)() if kind == "stream echo" else None
    try:
        for _ in range(100):
            if time.perf_counter() >= stop:
                return
            began = time.perf_counter()
            async with asyncio.timeout(CALL_TIMEOUT):
                if stream is None:
                    await channel.unary_unary(ECHOES[kind])(payload)
                else:
                    await round_trip(stream, payload)
            answered.append((time.perf_counter(), time.perf_counter() - began))
    finally:
        if stream is not None:
            stream.cancel()
        for task in listeners:
            task.cancel()
        await asyncio.gather(*listeners, return_exceptions=True)


async def client(address: str, kind: str, loops: int, conn: Any) -> None:
    """``loops`` loops of ``kind`` on up to 8 channels (TCP connections); once each has
    been answered, the window comes down ``conn`` and its counts go back up."""
    import grpc

    from totem.v1 import match_service_pb2_grpc

    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(address, options=options) for _ in range(min(loops, 8))]
    answered: list[tuple[float, float]] = []
    failures: list[str] = []
    first: set[int] = set()
    window = [0.0, float("inf")]

    async def loop(index: int) -> None:
        channel = channels[index % len(channels)]
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        watch = channel.unary_stream(
            "/totem.v1.MatchService/Watch", ms.WatchRequest.SerializeToString
        )
        while time.perf_counter() < window[1]:
            mine: list[tuple[float, float]] = []
            try:
                if kind in ("act", "play"):
                    await game_round(stub, watch, kind, window[1], mine)
                else:
                    await echo_round(channel, kind, window[1], mine)
            except (grpc.aio.AioRpcError, RuntimeError, TimeoutError) as error:
                failures.append(repr(error)[:200])
                await asyncio.sleep(0.1)
            answered.extend(mine)
            if mine:
                first.add(index)

    tasks = [asyncio.ensure_future(loop(i)) for i in range(loops)]
    deadline = time.monotonic() + 300
    while len(first) < loops and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    conn.send((len(first), failures[:1]))
    window[:] = await asyncio.to_thread(conn.recv)
    await asyncio.gather(*tasks)
    conn.send(
        ([s for t, s in answered if window[0] <= t <= window[1]], len(failures), failures[:1])
    )
    for channel in channels:
        await channel.close()


def client_main(address: str, kind: str, loops: int, conn: Any) -> None:
    asyncio.run(client(address, kind, loops, conn))


@dataclass
class Result:
    latencies: list[float]
    seconds: float
    failed: int
    server_ticks: int

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds


def drive(address: str, pid: int, kind: str, matches: int, args: argparse.Namespace) -> Result:
    """``matches`` loops of ``kind`` over the client processes; one window counted."""
    context = multiprocessing.get_context("spawn")
    shares = [matches // args.clients + (i < matches % args.clients) for i in range(args.clients)]
    children = []
    for share in filter(None, shares):
        mine, theirs = context.Pipe()
        process = context.Process(
            target=client_main, args=(address, kind, share, theirs), daemon=True
        )
        process.start()
        children.append((process, mine))
    try:
        for _, conn in children:
            ready, failures = conn.recv() if conn.poll(330) else (0, ["no answer"])
            if not ready:
                raise RuntimeError(f"a client process got no answer at all: {failures}")
        begin = time.perf_counter() + 1.0  # CLOCK_MONOTONIC: the same in every process
        for _, conn in children:
            conn.send((begin, begin + args.seconds))
        time.sleep(begin - time.perf_counter())
        ticks = process_ticks([pid])
        time.sleep(args.seconds)
        ticks = process_ticks([pid]) - ticks
        reports = [conn.recv() for _, conn in children if conn.poll(CALL_TIMEOUT + 30)]
    finally:
        for process, _ in children:
            process.join(30)
            if process.is_alive():
                process.kill()
    failed = sum(r[1] for r in reports)
    if failed:
        print(f"  {kind}: {failed} failed, first {[r[2] for r in reports if r[2]][:1]}")
    return Result([s for r in reports for s in r[0]], args.seconds, failed, ticks)


def row(name: str, result: Result, echo: Result | None = None) -> list[str]:
    per = os.sysconf("SC_CLK_TCK") * max(1, len(result.latencies))
    return [
        name,
        f"{result.rate:,.0f}",
        f"{result.rate / echo.rate:.0%}" if echo and echo.rate else "-",
        p50_p99(result.latencies, 1e3, 1),
        f"{result.server_ticks / per * 1e6:,.0f}",
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = arguments(__doc__)
    parser.add_argument("--matches", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--seconds", type=float, default=20.0, help="the counted window")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--via", choices=("act", "play"), default="act")
    args = parser.parse_args(argv)
    print(f"{machine_line()}\n{args.clients} client processes, store {args.store}, via {args.via}")
    header = ["matches, round, what", "commands/s", "of the echo", "latency p50 / p99 ms"]
    header += ["server CPU µs/command"]
    echo = EchoServer()
    try:
        with fresh_store(args.store, args.dsn) as (env, _):
            stored = EchoServer(env)
            try:
                for matches in args.matches:
                    measure(matches, args, echo, stored, header)
            finally:
                stored.stop()
    finally:
        echo.stop()


def measure(
    matches: int, args: argparse.Namespace, echo: EchoServer, stored: EchoServer, header: list[str]
) -> None:
    """``--rounds`` rounds at one concurrency, on game servers fresh for it."""
    with serve(args, SERVER_ENV) as game:
        rounds, rows = [], []
        for index in range(args.rounds):
            result = {"echo": drive(echo.address, echo.pid, "echo", matches, args)}
            result["game"] = drive(game.address, game.pid, args.via, matches, args)
            for kind, server in (("stored echo", stored), ("stream echo", echo)):
                result[kind] = drive(server.address, server.pid, kind, matches, args)
            rows += [
                row(f"{matches}, {index + 1}, {n}", r, result["echo"]) for n, r in result.items()
            ]
            rounds.append(result)
    print(f"\n{markdown_table(header, rows)}\n")

    def median(top: str, bottom: str) -> str:
        ratios = [r[top].rate / r[bottom].rate for r in rounds if r[bottom].rate]
        return f"{statistics.median(ratios):.2f}" if ratios else "-"

    print(
        f"{matches} matches, medians of the rounds' ratios: game / echo {median('game', 'echo')}, "
        f"stored echo / echo {median('stored echo', 'echo')}, game / stored echo "
        f"{median('game', 'stored echo')}, game / stream echo {median('game', 'stream echo')}"
        + ("; target: game / echo ≥ 0.60 at 100 matches" if matches == 100 else "")
    )


if __name__ == "__main__":
    main()
