"""Our server's Act beside two peers, boardgame.io and Colyseus, in one run on this machine.

Run ``python bench/peers.py`` (``--help`` for the options). It needs Node.js and npm: the
peers and their clients are the Node project in bench/peers/ (exact versions, in its
package-lock.json), installed with ``npm ci`` there when node_modules is missing. Every
server runs in a process of its own and listens on loopback:

- our server (``python -m server serve``) on a temporary SQLite store: every command is
  stored before it is answered;
- a bare ``grpc.aio`` echo server (bench/latency.py's), the baseline of our transport: a
  generic unary handler that answers with the request's bytes, no work at all;
- boardgame.io (bench/peers/bgio-server.js), in memory, no storage: a one-player game
  whose one move only the server runs (``client: false``) and adds 1 to a counter;
- Colyseus (bench/peers/colyseus-server.js): a room that answers every "ping" message
  with a "pong" carrying the same payload.

The operation, per server: our Act is a reveal in a 2-seat Jungle Speed match with the turn
timer off, whose prearranged deal gives each seat the cards of nine shapes the other seat
does not have, so that no reveal opens a duel and the 72 reveals of a match follow one
another, the seats in turn (a fresh match is made, untimed, when one runs out); its
client is a Python ``grpc.aio`` channel, as bench/run.py's. The echo gets a request as
large as a reveal's, from the same Python client. A boardgame.io move is timed until the
client's one subscriber gets the state update that shows it; a Colyseus message until its
answer arrives; both from Node clients (bench/peers/client.js), one process per
measurement. Every client connects and warms up before its clock starts.

Measured, per server: (a) sequential round trip, one client, one operation at a time,
p50/p99; (b) concurrent throughput, 10 and 100 clients each in a match or room of its own,
flat out (one operation at a time per client), operations per second from the first send
to the last answer. On this 2-core machine clients and server share the CPU, so (b) is a
figure of the pair, client included.

Target (from the issue): Act with persistence within 2x boardgame.io's in-memory move
(p50 of (a)). Beside it, the floor a persisted move cannot go below on this disk: one
small row committed in SQLite as the server's store commits (write-ahead log flushed to
the disk, ``synchronous=FULL``), 500 times, after the servers have stopped; the echo's
round trip plus that commit, against boardgame.io's move. Figures go to
docs/performance.md; tests never assert a duration.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
from latency import ECHO, bare_server_main

from bench.harness import ORGANISER, STEP_TIMEOUT, Server, add_server_root, percentile, server_root

PEERS = Path(__file__).resolve().parent / "peers"
#: Reveals in a match before its face-down piles run out: 72 symbol cards, no specials.
REVEALS_PER_MATCH = 72
#: Seat 0 is dealt deck[0::2], seat 1 deck[1::2] (JS-2.2); card id = 4 * shape + colour.
#: Seat 0 gets shapes 0 to 8, seat 1 shapes 9 to 17: no two face-up cards ever match.
NO_DUEL_DEAL = [card for pair in zip(range(36), range(36, 72), strict=True) for card in pair]
#: Seconds a Node client may take for one measurement.
NODE_TIMEOUT = 600


# ---- the Node side -------------------------------------------------------------------------


def npm_ci() -> None:
    """Install the Node project's exact versions when they are not there yet."""
    if (PEERS / "node_modules").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on the PATH: the peers need Node.js and npm")
    print("installing the peers: npm ci (bench/peers)", file=sys.stderr)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=PEERS, check=True, stdout=sys.stderr)


class NodeServer:
    """One of bench/peers' servers in a Node process of its own."""

    def __init__(self, script: str) -> None:
        self.process = subprocess.Popen(
            ["node", script, "0"],
            cwd=PEERS,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + STEP_TIMEOUT
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            found = re.match(r"listening (\d+)", line)
            if found:
                self.port = int(found.group(1))
                return
        self.stop()
        raise RuntimeError(f"node {script} did not start")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def node_client(kind: str, port: int, mode: str, *numbers: int) -> Result:
    """One measurement by bench/peers/client.js, in a Node process of its own."""
    done = subprocess.run(
        ["node", "client.js", kind, str(port), mode, *map(str, numbers)],
        cwd=PEERS,
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"node client.js {kind} {mode} failed:\n{done.stderr}")
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return Result([float(s) for s in raw["samples"]], float(raw["wall_ms"]))


# ---- the Python side -------------------------------------------------------------------------


class Result:
    """Round trips of one measurement (ms), and its wall time (ms)."""

    def __init__(self, samples: list[float], wall_ms: float) -> None:
        self.samples = samples
        self.wall_ms = wall_ms

    @property
    def p50(self) -> float:
        return statistics.median(self.samples)

    @property
    def p99(self) -> float:
        return percentile(self.samples, 0.99)

    @property
    def per_second(self) -> float:
        return len(self.samples) / (self.wall_ms / 1000)


class Operator:
    """One client with a channel of its own: ``op`` is one timed operation."""

    async def prepare(self, ops: int) -> None:
        """Untimed: whatever ``ops`` operations will need."""

    async def op(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class Echo(Operator):
    """The bare gRPC echo, with a request as large as a reveal's."""

    def __init__(self, address: str, size: int) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.call = self.channel.unary_unary(ECHO)
        self.payload = b"x" * size

    async def op(self) -> None:
        await self.call(self.payload, timeout=STEP_TIMEOUT)

    async def close(self) -> None:
        await self.channel.close()


class Revealer(Operator):
    """Reveals in 2-seat matches of its own, the seats in turn; the matches are made in
    :meth:`prepare`, so that making one is never timed."""

    def __init__(self, address: str) -> None:
        from totem.v1 import jungle_speed_pb2 as js
        from totem.v1 import match_service_pb2_grpc

        self.channel = grpc.aio.insecure_channel(address)
        self.stub = match_service_pb2_grpc.MatchServiceStub(self.channel)
        self.options = js.JungleSpeedOptions(
            max_players=2,
            turn_timeout_ms=0,
            specials=js.JungleSpeedSpecials(),
            prearranged_deal=NO_DUEL_DEAL,
        )
        self.reveal = js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())
        #: Matches ready to play: their id and each seat's metadata.
        self.matches: list[tuple[str, list[tuple[tuple[str, str], ...]]]] = []
        self.done = 0

    async def prepare(self, ops: int) -> None:
        from totem.v1 import common_pb2
        from totem.v1 import match_service_pb2 as ms

        # matches[0] is the one being played, ``done % 72`` reveals into it.
        while len(self.matches) * REVEALS_PER_MATCH - self.done % REVEALS_PER_MATCH < ops:
            created = await self.stub.CreateMatch(
                ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=self.options),
                metadata=ORGANISER,
                timeout=STEP_TIMEOUT,
            )
            seats: list[tuple[tuple[str, str], ...]] = []
            for seat in range(2):
                joined = await self.stub.JoinMatch(
                    ms.JoinMatchRequest(match_id=created.match_id, name=f"seat {seat}", seat=seat),
                    timeout=STEP_TIMEOUT,
                )
                seats.append((("authorization", f"Bearer {joined.player_token}"),))
            self.matches.append((created.match_id, seats))

    async def op(self) -> None:
        from totem.v1 import match_service_pb2 as ms

        turn = self.done % REVEALS_PER_MATCH
        match_id, seats = self.matches[0]
        await self.stub.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=self.reveal),
            metadata=seats[turn % 2],
            timeout=STEP_TIMEOUT,
        )
        self.done += 1
        if turn == REVEALS_PER_MATCH - 1:
            self.matches.pop(0)

    async def close(self) -> None:
        await self.channel.close()


async def _loop(operator: Operator, ops: int, samples: list[float] | None) -> None:
    for _ in range(ops):
        began = time.perf_counter()
        await operator.op()
        if samples is not None:
            samples.append((time.perf_counter() - began) * 1e3)


async def python_sequential(make: Callable[[], Operator], ops: int, warmup: int) -> Result:
    operator = make()
    try:
        await operator.prepare(warmup + ops)
        await _loop(operator, warmup, None)
        samples: list[float] = []
        began = time.perf_counter()
        await _loop(operator, ops, samples)
        return Result(samples, (time.perf_counter() - began) * 1e3)
    finally:
        await operator.close()


async def python_concurrent(
    make: Callable[[], Operator], clients: int, ops_each: int, warmup_each: int
) -> Result:
    operators = [make() for _ in range(clients)]
    try:
        for operator in operators:
            await operator.prepare(warmup_each + ops_each)
        await asyncio.gather(*(_loop(o, warmup_each, None) for o in operators))
        samples: list[float] = []
        began = time.perf_counter()
        await asyncio.gather(*(_loop(o, ops_each, samples) for o in operators))
        return Result(samples, (time.perf_counter() - began) * 1e3)
    finally:
        for operator in operators:
            await operator.close()


# ---- the run ---------------------------------------------------------------------------------

#: The servers, in the table's order.
ECHO_NAME, ACT, BGIO, COLYSEUS = "gRPC echo", "Act", "boardgame.io", "Colyseus"
NAMES = (ECHO_NAME, ACT, BGIO, COLYSEUS)


async def run(
    args: argparse.Namespace, node_version: str
) -> tuple[dict[str, dict[str, Result]], dict[str, Any]]:
    from totem.v1 import jungle_speed_pb2 as js
    from totem.v1 import match_service_pb2 as ms

    reveal = js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())
    size = len(ms.ActRequest(match_id="0" * 36, jungle_speed=reveal).SerializeToString())
    results: dict[str, dict[str, Result]] = {name: {} for name in NAMES}
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    bare = context.Process(target=bare_server_main, args=(theirs,), daemon=True)
    bare.start()
    peers: list[NodeServer] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = Server("sqlite", "", Path(tmp), root=server_root(args))
        try:
            if not ours.poll(STEP_TIMEOUT):
                raise RuntimeError("the bare gRPC server did not start")
            echo_address = f"127.0.0.1:{ours.recv()}"
            address = f"127.0.0.1:{server.port}"
            bgio = NodeServer("bgio-server.js")
            peers.append(bgio)
            colyseus = NodeServer("colyseus-server.js")
            peers.append(colyseus)
            load_before = os.getloadavg()
            began = time.monotonic()

            def echo() -> Operator:
                return Echo(echo_address, size)

            def revealer() -> Operator:
                return Revealer(address)

            makers = {ECHO_NAME: echo, ACT: revealer}
            ports = {BGIO: bgio.port, COLYSEUS: colyseus.port}
            kinds = {BGIO: "bgio", COLYSEUS: "colyseus"}
            seq = "sequential"
            for name in NAMES:
                _progress(args, f"{name}: sequential")
                if name in makers:
                    results[name][seq] = await python_sequential(
                        makers[name], args.ops, args.warmup
                    )
                else:
                    results[name][seq] = await asyncio.to_thread(
                        node_client, kinds[name], ports[name], seq, args.ops, args.warmup
                    )
            for clients in args.clients:
                each = max(1, args.concurrent_ops // clients)
                warm = max(1, args.warmup // clients)
                key = f"{clients} clients"
                for name in NAMES:
                    _progress(args, f"{name}: {key}")
                    if name in makers:
                        results[name][key] = await python_concurrent(
                            makers[name], clients, each, warm
                        )
                    else:
                        results[name][key] = await asyncio.to_thread(
                            node_client, kinds[name], ports[name], "concurrent", clients, each, warm
                        )
            elapsed = time.monotonic() - began
            load_after = os.getloadavg()
        finally:
            for peer in peers:
                peer.stop()
            ours.send("stop")
            bare.join(10)
            if bare.is_alive():
                bare.terminate()
            server.stop()
        commit = durable_commit_ms(Path(tmp))
    config = {
        "ops": args.ops,
        "warmup": args.warmup,
        "concurrent_ops": args.concurrent_ops,
        "clients": args.clients,
        "request_bytes": size,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "node": node_version,
        "peers": _installed_versions(),
        "elapsed_s": round(elapsed, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "durable_commit_ms": commit,
    }
    return results, config


def durable_commit_ms(directory: Path, commits: int = 500) -> dict[str, float]:
    """The floor under a persisted move on this disk: one small row inserted and committed
    in SQLite as the server's store does (write-ahead log, ``synchronous=FULL``: the log
    is flushed to the disk before the commit returns), median and p99 ms. Neither peer
    writes anything."""
    import sqlite3

    db = sqlite3.connect(directory / "floor.db", isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, data BLOB)")
        times = []
        for _ in range(commits):
            began = time.perf_counter()
            db.execute("BEGIN")
            db.execute("INSERT INTO rows (data) VALUES (?)", (bytes(300),))
            db.execute("COMMIT")
            times.append((time.perf_counter() - began) * 1000)
    finally:
        db.close()
    return {"p50": percentile(times, 0.5), "p99": percentile(times, 0.99)}


def _progress(args: argparse.Namespace, text: str) -> None:
    if args.progress:
        print(f"  {text}", file=sys.stderr)


def _installed_versions() -> dict[str, str]:
    """The peers' versions as installed (package-lock.json pins them)."""
    lock = json.loads((PEERS / "package-lock.json").read_text())
    wanted = ("boardgame.io", "@colyseus/core", "@colyseus/ws-transport", "colyseus.js")
    packages = lock.get("packages", {})
    return {name: packages.get(f"node_modules/{name}", {}).get("version", "?") for name in wanted}


# ---- report ------------------------------------------------------------------------------------


def report(results: dict[str, dict[str, Result]], config: dict[str, Any]) -> str:
    c = config
    versions = ", ".join(f"{k} {v}" for k, v in c["peers"].items())
    lines = [
        f"{c['cpus']} CPUs, Python {c['python']}, grpcio {c['grpcio']}, Node {c['node']}; "
        f"{versions}; sequential: {c['ops']} operations after {c['warmup']} warm-up; "
        f"concurrent: about {c['concurrent_ops']} operations per run; {c['elapsed_s']} s; "
        f"load average (1 min) {c['load_average_before'][0]:.2f} before, "
        f"{c['load_average_after'][0]:.2f} after",
        "",
        f"| | {' | '.join(NAMES)} | Act / boardgame.io | Act / Colyseus |",
        "|---|---|---|---|---|---|---|",
    ]

    def row(label: str, values: dict[str, float], digits: int) -> None:
        cells = " | ".join(f"{values[n]:,.{digits}f}" for n in NAMES)
        lines.append(
            f"| {label} | {cells} | {values[ACT] / values[BGIO]:.2f} "
            f"| {values[ACT] / values[COLYSEUS]:.2f} |"
        )

    seq = {n: results[n]["sequential"] for n in NAMES}
    row("sequential round trip p50, ms", {n: r.p50 for n, r in seq.items()}, 3)
    row("sequential round trip p99, ms", {n: r.p99 for n, r in seq.items()}, 3)
    for clients in c["clients"]:
        key = f"{clients} clients"
        runs = {n: results[n][key] for n in NAMES}
        row(f"{key}, operations/s", {n: r.per_second for n, r in runs.items()}, 0)
        row(f"{key}, round trip p50, ms", {n: r.p50 for n, r in runs.items()}, 2)
    ratio = seq[ACT].p50 / seq[BGIO].p50
    ratio99 = seq[ACT].p99 / seq[BGIO].p99
    lines += [
        "",
        "Ratios of round trips: above 1, Act is slower; of operations/s: above 1, Act does more.",
        "",
        f"Target: Act with persistence within 2x boardgame.io's in-memory move, sequential "
        f"p50: {ratio:.2f}x, {'met' if ratio <= 2 else 'NOT met'} (p99: {ratio99:.2f}x)",
        "",
        f"Durable commit on this disk (SQLite, WAL, synchronous=FULL, one small row), the "
        f"floor under every persisted Act: p50 {c['durable_commit_ms']['p50']:.3f} ms, "
        f"p99 {c['durable_commit_ms']['p99']:.3f} ms; gRPC echo + that commit = "
        f"{(seq[ECHO_NAME].p50 + c['durable_commit_ms']['p50']) / seq[BGIO].p50:.2f}x "
        f"boardgame.io's move",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Act beside boardgame.io's move and Colyseus's message. The module "
        "docstring (bench/peers.py) says what is measured.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--ops", type=int, default=2000, help="sequential operations timed")
    parser.add_argument("--warmup", type=int, default=200, help="operations before the clock")
    parser.add_argument(
        "--concurrent-ops",
        type=int,
        default=4000,
        help="operations per concurrent run, shared out between its clients",
    )
    parser.add_argument(
        "--clients", default="10,100", help="concurrent clients, comma-separated levels"
    )
    parser.add_argument("--progress", action="store_true", help="say what runs")
    add_server_root(parser)
    args = parser.parse_args(argv)
    args.clients = [int(c) for c in args.clients.split(",")]
    if args.ops < 1 or args.warmup < 1 or min(args.clients) < 1:
        parser.error("--ops, --warmup and --clients must be at least 1")
    npm_ci()
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    results, config = asyncio.run(run(args, node.stdout.strip()))
    print(report(results, config))


if __name__ == "__main__":
    main()
