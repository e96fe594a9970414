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
``--instances 1 2`` serves the game from 1, then 2 processes on one fresh PostgreSQL
schema, both in each round: a loop creates its matches through one instance (the loops
spread over them in turn) and plays each through the instance its players would pick
(``totem_client.routing.instance_for``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench import harness
from totem.v1 import match_service_pb2 as ms
from totem_client.routing import instance_for

# isort: split
import grpc  # after the harness, which sets totem serve's gRPC listener first

ECHOES = {
    "echo": harness.ECHO,
    "stored echo": harness.STORED_ECHO,
    "stream echo": harness.ECHO_STREAM,
}
#: What 1,000 matches of 4 watchers and 2 players from one host need of the server.
SERVER_ENV = harness.MANY_CLIENTS_ENV | {"TOTEM_PENDING_CALLS": "1000000"}
CALL_TIMEOUT = 60.0
#: How long the client processes may take to have every loop answered once.
START_TIMEOUT = 330.0


class Routed:
    """A MatchService stub over the instances (``pick(address)`` gives a channel and a
    stub there): matches are created through ``home``, and every other call goes to the
    instance the match's players pick."""

    def __init__(self, pick: Any, addresses: list[str], home: str) -> None:
        self.pick, self.addresses, self.home = pick, addresses, home

    def at(self, match_id: str) -> tuple[Any, Any]:
        return self.pick(instance_for(match_id, self.addresses))  # type: ignore[no-any-return]

    def CreateMatch(self, *args: Any, **kwargs: Any) -> Any:
        return self.pick(self.home)[1].CreateMatch(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return lambda request, **kw: getattr(self.at(request.match_id)[1], name)(request, **kw)


async def game_round(routed: Routed, via: str, stop: float, answered: list[Any]) -> None:
    """One match, watched by 4 (undecoded, as a client that only forwards the events
    would), played until it ends or the window closes."""
    watchers: list[Any] = []

    async def watched(match_id: str) -> None:
        request = ms.WatchRequest(match_id=match_id)
        watch = routed.at(match_id)[0].unary_stream(
            harness.WATCH, ms.WatchRequest.SerializeToString
        )
        watchers.extend(asyncio.ensure_future(harness.read(watch(request))) for _ in range(4))

    plays: list[Any] = []
    try:
        table = await harness.Table.seated(routed, 2, watched)
        stub = routed.at(table.id)[1]
        if via == "play":
            plays = [await harness.open_play(stub.Play, seat) for seat in table.seats]
        while not table.done and time.perf_counter() < stop:
            began = time.perf_counter()
            if await table.act(stub, plays):
                answered.append((time.perf_counter(), time.perf_counter() - began))
        while plays:
            await harness.close_play(plays.pop())
    finally:
        for stream in plays:
            stream.cancel()
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)


async def echo_round(channel: Any, kind: str, stop: float, answered: list[Any]) -> None:
    """A key with 4 listeners, then 100 echoes to it (about a match's commands) of a
    reveal's size."""
    key = uuid.uuid4().bytes
    act = ms.ActRequest(match_id=str(uuid.uuid4()), seen_version=42, jungle_speed=harness.REVEAL)
    payload = key + act.SerializeToString()
    listeners = [
        asyncio.ensure_future(harness.read(channel.unary_stream(harness.LISTEN)(key)))
        for _ in range(4)
    ]
    stream = channel.stream_stream(harness.ECHO_STREAM)() if kind == "stream echo" else None
    try:
        for _ in range(100):
            if time.perf_counter() >= stop:
                return
            began = time.perf_counter()
            async with asyncio.timeout(CALL_TIMEOUT):
                if stream is None:
                    await channel.unary_unary(ECHOES[kind])(payload)
                else:
                    await harness.round_trip(stream, payload)
            answered.append((time.perf_counter(), time.perf_counter() - began))
    finally:
        if stream is not None:
            stream.cancel()
        for task in listeners:
            task.cancel()
        await asyncio.gather(*listeners, return_exceptions=True)


async def client(conn: Any, addresses: list[str], kind: str, loops: int) -> None:
    """``loops`` loops of ``kind`` on up to 8 channels (TCP connections) to each address;
    once each has been answered, the window comes down ``conn`` and what was answered in
    it goes back."""
    channels = {
        address: [harness.match_stub(address, harness.OWN_CONNECTION) for _ in range(min(loops, 8))]
        for address in addresses
    }
    answered: list[tuple[float, float]] = []
    failures: list[str] = []
    first: set[int] = set()
    window = [0.0, float("inf")]

    async def loop(index: int) -> None:
        def pick(address: str) -> tuple[Any, Any]:
            return channels[address][index % len(channels[address])]

        routed = Routed(pick, addresses, addresses[index % len(addresses)])
        while time.perf_counter() < window[1]:
            mine: list[tuple[float, float]] = []
            try:
                if kind in ("act", "play"):
                    await game_round(routed, kind, window[1], mine)
                else:
                    await echo_round(pick(addresses[0])[0], kind, window[1], mine)
            except (grpc.aio.AioRpcError, RuntimeError, TimeoutError) as error:
                failures.append(repr(error)[:200])
                await asyncio.sleep(0.1)
            answered.extend(mine)
            if mine:
                first.add(index)

    tasks = [asyncio.ensure_future(loop(i)) for i in range(loops)]
    deadline = time.monotonic() + START_TIMEOUT - 30
    while len(first) < loops and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    conn.send(("ready", None) if first else ("error", f"{kind}: nothing answered {failures[:1]}"))
    window[:] = (await asyncio.to_thread(conn.recv))[1:]
    await asyncio.gather(*tasks)
    kept = [s for t, s in answered if window[0] <= t <= window[1]]
    conn.send(("answered", (kept, len(failures), failures[:1])))
    for channel, _ in (pair for pairs in channels.values() for pair in pairs):
        await channel.close()


@dataclass
class Result:
    latencies: list[float]
    seconds: float
    server_ticks: int
    busy_ticks: int  # the whole machine's

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds


def busy_ticks() -> int:
    """CPU time the machine spent on anything, in clock ticks (Linux: /proc/stat)."""
    with open("/proc/stat") as stat:
        user, nice, system, _, _, irq, softirq = map(int, stat.readline().split()[1:8])
    return user + nice + system + irq + softirq


def drive(servers: list[Any], kind: str, matches: int, args: argparse.Namespace) -> Result:
    """``matches`` loops of ``kind`` over the client processes; one window counted, the
    servers' CPU time in it too, and the machine's."""
    shares = [matches // args.clients + (i < matches % args.clients) for i in range(args.clients)]
    with harness.Children(client) as children:
        for index, share in enumerate(filter(None, shares)):
            children.start(index, [s.address for s in servers], kind, share)
        children.gather(children.pipes, START_TIMEOUT)
        begin = time.perf_counter() + 1.0  # CLOCK_MONOTONIC: the same in every process
        children.send(children.pipes, "window", begin, begin + args.seconds)
        time.sleep(begin - time.perf_counter())
        pids = [s.pid for s in servers]
        ticks, busy = harness.process_ticks(pids), busy_ticks()
        time.sleep(args.seconds)
        ticks, busy = harness.process_ticks(pids) - ticks, busy_ticks() - busy
        reports = children.gather(children.pipes, CALL_TIMEOUT + 30).values()
    if failed := sum(r[1] for r in reports):
        print(f"  {kind}: {failed} failed, first {[r[2] for r in reports if r[2]][:1]}")
    return Result([s for r in reports for s in r[0]], args.seconds, ticks, busy)


def report(matches: int, rounds: list[dict[str, Result]]) -> None:
    """Each round's figures, then the medians of the rounds' ratios."""
    per = os.sysconf("SC_CLK_TCK")
    rows = [
        [
            f"{matches}, {index + 1}, {name}",
            f"{r.rate:,.0f}",
            f"{r.rate / results['echo'].rate:.0%}" if results["echo"].rate else "-",
            harness.p50_p99(r.latencies, 1e3, 1),
            f"{r.server_ticks / per / max(1, len(r.latencies)) * 1e6:,.0f}",
            f"{r.server_ticks / per / r.seconds:.2f} / {r.busy_ticks / per / r.seconds:.2f}",
        ]
        for index, results in enumerate(rounds)
        for name, r in results.items()
    ]
    header = ["matches, round, what", "commands/s", "of the echo", "latency p50 / p99 ms"]
    header += ["server CPU µs/command", "cores: servers / machine"]
    print(f"\n{harness.markdown_table(header, rows)}\n")

    def median(top: str, bottom: str) -> str:
        ratios = [r[top].rate / r[bottom].rate for r in rounds if r[bottom].rate]
        return f"{statistics.median(ratios):.2f}" if ratios else "-"

    games = [name for name in rounds[0] if name.startswith("game")]
    pairs = [(g, floor) for g in games for floor in ("echo", "stored echo", "stream echo")]
    pairs += [("stored echo", "echo"), *((g, games[0]) for g in games[1:])]
    print(
        f"{matches} matches, medians of the rounds' ratios: "
        + ", ".join(f"{a} / {b} {median(a, b)}" for a, b in pairs)
        + ("; target: game / echo ≥ 0.60 at 100 matches" if matches == 100 else "")
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--matches", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--seconds", type=float, default=20.0, help="the counted window")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--via", choices=("act", "play"), default="act")
    parser.add_argument(
        "--instances", type=int, nargs="+", default=[1], help="server processes on one store"
    )
    args = parser.parse_args(argv)
    if max(args.instances) > 1 and args.store != "postgres":
        parser.error("several instances need --store postgres")
    print(harness.machine_line())
    print(f"{args.clients} client processes, store {args.store}, via {args.via}")
    with contextlib.ExitStack() as stack:
        echo = [stack.enter_context(harness.EchoServer())]
        stored_env = stack.enter_context(harness.fresh_store(args.store, args.dsn))[0]
        stored = [stack.enter_context(harness.EchoServer(stored_env))]
        for matches in args.matches:
            with contextlib.ExitStack() as games:  # fresh for each count of matches
                servers: dict[str, list[Any]] = {"echo": echo}
                for n in args.instances:
                    group = games.enter_context(harness.serve_instances(args, n, SERVER_ENV))
                    servers["game" if n == args.instances[0] else f"game on {n}"] = group
                servers |= {"stored echo": stored, "stream echo": echo}
                kinds = {name: args.via if name.startswith("game") else name for name in servers}
                rounds = [
                    {name: drive(s, kinds[name], matches, args) for name, s in servers.items()}
                    for _ in range(args.rounds)
                ]
            report(matches, rounds)


if __name__ == "__main__":
    main()
