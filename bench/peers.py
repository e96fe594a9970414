"""Act beside boardgame.io's move and a Colyseus message, in one run on this machine.

Act is a reveal in a 2-seat Jungle Speed match, stamped, decided and committed durably
before it is answered, on SQLite and on PostgreSQL; the gRPC echo is the bare server's,
with a request of the same size; boardgame.io runs a one-counter move on its server, in
memory and on PostgreSQL (bgio-postgres), and the client waits for the state update;
Colyseus answers "ping" with "pong". The peers and their Node clients are bench/peers/
(``npm ci`` there, run when node_modules is missing). Measured: sequential round trips
(one client), and operations per second with 10 and 100 clients, each in a match or room
of its own. Beside them, the floor of any persisted move: one small row committed in
SQLite as the store commits (WAL, ``synchronous=FULL``). What each stores before it
answers: Act, its events (one commit); boardgame.io, nothing (it sends the update, then
writes state and metadata, two commits on PostgreSQL); Colyseus, nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench import harness
from totem.v1 import match_service_pb2 as ms

PEERS = Path(__file__).resolve().parent / "peers"
NAMES = (
    "gRPC echo",
    "Act, SQLite",
    "Act, PostgreSQL",
    "boardgame.io, memory",
    "boardgame.io, PostgreSQL",
    "Colyseus",
)
#: Each Node peer: the server script, the client's kind, and whether it stores in PostgreSQL.
NODE_PEERS = {
    "boardgame.io, memory": ("bgio", "bgio", False),
    "boardgame.io, PostgreSQL": ("bgio", "bgio", True),
    "Colyseus": ("colyseus", "colyseus", False),
}


class Echo:
    """A client of the bare echo, with :class:`Revealer`'s interface."""

    def __init__(self, address: str, size: int) -> None:
        self.channel = harness.match_stub(address)[0]
        self.call, self.payload = self.channel.unary_unary(harness.ECHO), b"x" * size

    async def prepare(self, ops: int) -> None:
        pass

    async def op(self) -> None:
        await self.call(self.payload, timeout=harness.STEP_TIMEOUT)

    async def close(self) -> None:
        await self.channel.close()


async def python_run(
    make: Callable[[], Any], clients: int, ops: int, warmup: int
) -> tuple[list[float], float]:
    """``clients`` operators, ``ops`` timed operations each after ``warmup``: round trips
    (ms) and the wall time of the timed part (s)."""
    operators = [make() for _ in range(clients)]
    samples: list[float] = []

    async def loop(operator: Any, count: int, keep: bool) -> None:
        for _ in range(count):
            began = time.perf_counter()
            await operator.op()
            if keep:
                samples.append((time.perf_counter() - began) * 1e3)

    try:
        for operator in operators:
            await operator.prepare(warmup + ops)
        await asyncio.gather(*(loop(o, warmup, False) for o in operators))
        began = time.perf_counter()
        await asyncio.gather(*(loop(o, ops, True) for o in operators))
        return samples, time.perf_counter() - began
    finally:
        for operator in operators:
            await operator.close()


def node_run(kind: str, port: int, *numbers: int) -> tuple[list[float], float]:
    """One measurement by bench/peers/client.js, of ``CLIENTS OPS WARMUP`` (each), as
    :func:`python_run`'s."""
    argv = ["node", "client.js", kind, str(port), *map(str, numbers)]
    done = subprocess.run(argv, cwd=PEERS, capture_output=True, text=True, timeout=600, check=True)
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return [float(s) for s in raw["samples"]], float(raw["wall_ms"]) / 1000


def durable_commit_ms(directory: Path, commits: int = 500) -> list[float]:
    """Round trips (ms) of one small row committed in SQLite as the store commits."""
    db = sqlite3.connect(directory / "floor.db", isolation_level=None)
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
    db.close()
    return times


@contextlib.contextmanager
def bgio_database(dsn: str) -> Iterator[str]:
    """A fresh PostgreSQL database for bgio-postgres (it makes its table in ``public``),
    as a URI, dropped after."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"totem_bench_bgio_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(dsn)
    user = f"{params.get('user', 'postgres')}" + (
        f":{params['password']}" if params.get("password") else ""
    )
    where = f"{params.get('host', '127.0.0.1')}:{params.get('port', 5432)}"
    try:
        yield f"postgres://{user}@{where}/{name}"
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def node_peer(stack: contextlib.ExitStack, script: str, *argv: str) -> int:
    """``node SCRIPT-server.js 0 ARGV...`` until the run ends: the port it listens on."""
    peer = subprocess.Popen(
        ["node", f"{script}-server.js", "0", *argv], cwd=PEERS, stdout=subprocess.PIPE, text=True
    )
    stack.callback(peer.wait, 10)
    stack.callback(peer.terminate)
    assert peer.stdout is not None
    lines = iter(peer.stdout.readline, "")  # until it says it listens
    found = next(filter(None, (re.match(r"listening (\d+)", x) for x in lines)), None)
    if found is None:
        raise RuntimeError(f"node {script}-server.js did not start")
    return int(found.group(1))


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__, store=False)
    parser.add_argument("--dsn", default=harness.DEFAULT_DSN, help="PostgreSQL (fresh per run)")
    parser.add_argument("--ops", type=int, default=2000, help="sequential operations timed")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--concurrent-ops", type=int, default=4000, help="shared by the clients")
    parser.add_argument("--clients", type=int, nargs="+", default=[10, 100])
    args = parser.parse_args(argv)
    if not (PEERS / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PEERS, check=True)
    print(harness.machine_line())
    size = len(ms.ActRequest(match_id="0" * 36, jungle_speed=harness.REVEAL).SerializeToString())
    results: dict[str, dict[int, tuple[list[float], float]]] = {name: {} for name in NAMES}
    with contextlib.ExitStack() as stack:
        echo = stack.enter_context(harness.EchoServer())
        sqlite = stack.enter_context(harness.serve(args, store="sqlite"))
        postgres = stack.enter_context(harness.serve(args, store="postgres"))
        uri = stack.enter_context(bgio_database(args.dsn))
        ports = {
            name: (kind, node_peer(stack, script, *([uri] if stored else [])))
            for name, (script, kind, stored) in NODE_PEERS.items()
        }
        makers: dict[str, Callable[[], Any]] = {
            "gRPC echo": lambda: Echo(echo.address, size),
            "Act, SQLite": lambda: harness.Revealer(sqlite.address),
            "Act, PostgreSQL": lambda: harness.Revealer(postgres.address),
        }
        for clients in [1, *args.clients]:
            each = args.ops if clients == 1 else max(1, args.concurrent_ops // clients)
            numbers = (clients, each, max(1, args.warmup // clients))
            for name in NAMES:
                if name in makers:
                    results[name][clients] = asyncio.run(python_run(makers[name], *numbers))
                else:
                    results[name][clients] = node_run(*ports[name], *numbers)
    with tempfile.TemporaryDirectory() as tmp:
        commit = durable_commit_ms(Path(tmp))
    rows = [
        [f"sequential {label}, ms", *(f"{f(results[n][1][0]):.3f}" for n in NAMES)]
        for label, f in (("p50", statistics.median), ("p99", harness.p99))
    ]
    for clients in args.clients:
        rates = [len(results[n][clients][0]) / results[n][clients][1] for n in NAMES]
        rows.append([f"{clients} clients, operations/s", *(f"{r:,.0f}" for r in rates)])
    print(harness.markdown_table(["", *NAMES], rows))
    p50 = {n: statistics.median(results[n][1][0]) for n in NAMES}
    floor = p50["gRPC echo"] + statistics.median(commit)
    print(
        f"\nAt p50: Act on SQLite / boardgame.io on PostgreSQL "
        f"{p50['Act, SQLite'] / p50['boardgame.io, PostgreSQL']:.2f}x, Act on PostgreSQL / "
        f"boardgame.io on PostgreSQL "
        f"{p50['Act, PostgreSQL'] / p50['boardgame.io, PostgreSQL']:.2f}x, Act on SQLite / "
        f"boardgame.io in memory {p50['Act, SQLite'] / p50['boardgame.io, memory']:.2f}x; "
        f"durable commit {statistics.median(commit):.3f} / {harness.p99(commit):.3f} ms "
        f"(p50 / p99); echo + commit = {floor / p50['boardgame.io, memory']:.2f}x "
        f"boardgame.io's move in memory"
    )


if __name__ == "__main__":
    main()
