"""The benchmarks' shared machinery: ``totem serve`` in a process of its own on a fresh
store (a temporary SQLite file or a PostgreSQL schema made for the run), the bare gRPC
echo server every baseline is measured on, client processes, Play streams, the Jungle
Speed deals and moves the benchmarks play, percentiles, chi-square, tables and the common
options.

Each script of this folder answers one question of docs/performance.md and imports what
it needs from here, never from another script. Importing this module first imports the
``server`` package, which sets ``totem serve``'s gRPC listener (``GRPC_EXPERIMENTS``)
before gRPC loads: the bare echo server runs with the same listener as the real one. A
script that imports ``grpc`` itself does so after this module.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import multiprocessing
import multiprocessing.connection
import os
import platform
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

import server  # noqa: F401  # sets GRPC_EXPERIMENTS before anything imports grpc

# isort: split
import grpc  # after server, as above
from eventsourcing.domain import Aggregate, event

from storage.arena import postgres_env
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

#: The benchmarks' organiser (only an organiser may create matches), in the environment
#: so that the processes a benchmark spawns share it.
ORGANISER_TOKEN = os.environ.setdefault("TOTEM_BENCH_ORGANISER", secrets.token_urlsafe(32))
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DSN = os.environ.get(
    "TOTEM_TEST_POSTGRES", "host=127.0.0.1 port=5432 user=postgres dbname=test"
)
#: Seconds any one step (a call, a reply from a process) may take before the run stops.
STEP_TIMEOUT = 30.0
#: Channel options of a client that must have a TCP connection of its own (gRPC shares
#: one between channels to the same address otherwise).
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]
#: What thousands of streams and matches from one host need of ``totem serve``.
MANY_CLIENTS_ENV = {
    "TOTEM_STREAMS_PER_CONNECTION": "1000000",
    "TOTEM_STREAMS_PER_ADDRESS": "1000000",
    "TOTEM_MAX_CONCURRENT_CALLS": "1000000",
    "TOTEM_ORGANISER_CREATIONS_PER_MINUTE": "100000000",
}
WATCH = "/totem.v1.MatchService/Watch"


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


ORGANISER = bearer(ORGANISER_TOKEN)


def match_stub(address: str, options: Sequence[tuple[str, Any]] = ()) -> tuple[Any, Any]:
    """An asyncio channel to ``address`` and a MatchService stub on it."""
    channel = grpc.aio.insecure_channel(address, options=list(options))
    return channel, match_service_pb2_grpc.MatchServiceStub(channel)


# ---- statistics and tables ----------------------------------------------------------------


def p99(values: Sequence[float]) -> float:
    """The 99th percentile, interpolated between order statistics."""
    if len(values) < 2:
        return float(values[0]) if values else math.nan
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def p50_p99(values: Sequence[float], scale: float = 1.0, digits: int = 3) -> str:
    """``median / p99`` of ``values`` times ``scale``, or ``-`` for none."""
    if not values:
        return "-"
    return f"{statistics.median(values) * scale:.{digits}f} / {p99(values) * scale:.{digits}f}"


def chi_square_p(counts: Sequence[int]) -> float:
    """Pearson's test of ``counts`` against equal shares: its p-value, P(X >= statistic)
    for a chi-square variable of ``len(counts) - 1`` degrees of freedom (the closed forms
    for whole degrees of freedom)."""
    dof = len(counts) - 1
    if dof < 1 or sum(counts) == 0:
        return 1.0
    expected = sum(counts) / len(counts)
    x = sum((c - expected) ** 2 / expected for c in counts)
    if dof % 2 == 0:
        term = total = math.exp(-x / 2)
        for i in range(1, dof // 2):
            term *= x / (2 * i)
            total += term
        return min(1.0, total)
    total = math.erfc(math.sqrt(x / 2))
    term = math.sqrt(2 * x / math.pi) * math.exp(-x / 2)
    for i in range(1, (dof + 1) // 2):
        total += term
        term *= x / (2 * i + 1)
    return min(1.0, total)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table, each cell as ``str`` gives it."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# ---- the machine --------------------------------------------------------------------------


def machine_line() -> str:
    """What a benchmark's figures were measured on, printed first by each of them."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, Python "
        f"{platform.python_version()}, grpcio {grpc.__version__}; load average {load}"
    )


def process_ticks(pids: Sequence[int]) -> int:
    """CPU time spent by these processes (all their threads), in clock ticks (Linux)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def rss_mib(pid: int) -> float:
    """A process's resident memory (Linux), in MiB."""
    with contextlib.suppress(OSError):
        found = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
        if found:
            return int(found.group(1)) / 1024
    return math.nan


# ---- stores and servers -------------------------------------------------------------------


@contextmanager
def fresh_store(store: str, dsn: str = DEFAULT_DSN) -> Iterator[tuple[dict[str, str], str, Path]]:
    """A fresh, empty store's environment and name, and a temporary folder for the run (a
    SQLite store's file is in it); a PostgreSQL store is a schema, dropped after."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if store == "sqlite":
            env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite"}
            yield env | {"SQLITE_DBNAME": str(folder / "bench.db")}, "SQLite", folder
            return
        import psycopg

        schema = f"totem_bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            name = f"PostgreSQL (psycopg {psycopg.pq.__impl__})"
            yield postgres_env(dsn, schema), name, folder
        finally:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


class Server:
    """``totem serve`` in a process of its own on the store of ``store_env``, from this
    tree or another (``root``): started, killed and started again at will, on one port.
    ``unlimited`` lifts the bound on a seat's commands; ``env`` and ``args`` add to the
    process's environment and options."""

    READY = re.compile(rb"serving on [^\s:]+:\d+")

    def __init__(
        self,
        store_env: Mapping[str, str],
        workdir: Path,
        root: Path = ROOT,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        unlimited: bool = False,
        instance: str | None = None,
    ) -> None:
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            self.port = int(free.getsockname()[1])
        self.root = root
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("POSTGRES_", "SQLITE_"))},
            **store_env,
            "TOTEM_ORGANISER_TOKEN": ORGANISER_TOKEN,
            "TOTEM_KEY_FILE": str(workdir / "server.key"),  # the run's own signing key
            "TOTEM_ORGANISERS": str(workdir / "organisers"),  # never a file beside the code
            **(env or {}),
        }
        if unlimited:
            self.env["TOTEM_COMMANDS_PER_SECOND"] = self.env["TOTEM_COMMAND_BURST"] = "1000000000"
        if root != ROOT:  # another tree's packages before the installed ones
            paths = [root, root / "protos", root / "clients" / "python"]
            self.env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
        db = store_env.get("SQLITE_DBNAME", str(workdir / "unused.db"))
        self.argv = [sys.executable, "-m", "server", "serve", "--address", self.address]
        self.argv += ["--db", db, "--log-level", "WARNING", *args]
        self.argv += ["--instance", instance] if instance else []
        self.log_path = workdir / f"server{'-' + instance if instance else ''}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = STEP_TIMEOUT) -> float:
        """Start the process and wait until it serves: the seconds that took."""
        began = time.perf_counter()
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.argv,
                cwd=self.root,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,  # a Ctrl-C of the benchmark is not the server's
            )
        while not self.READY.search(self.log_path.read_bytes()[offset:]):
            if self.process.poll() is not None or time.perf_counter() - began > timeout:
                self.stop()
                raise RuntimeError(f"the server did not start:\n{self.log_path.read_text()}")
            time.sleep(0.01)
        return time.perf_counter() - began

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()


def arguments(doc: str | None, store: bool = True, root: bool = True) -> argparse.ArgumentParser:
    """A script's options, described by its docstring's first paragraph, and the shared
    ones: ``--store`` and ``--dsn``; with ``root``, for ``totem serve`` in a process,
    ``--root`` (another tree's server) and ``--extra`` (an option of it, repeated)."""
    made = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    if store:
        made.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
        made.add_argument("--dsn", default=DEFAULT_DSN, help="PostgreSQL (a schema per run)")
    if root:
        made.add_argument(
            "--root", type=Path, default=ROOT, help="another tree (git archive C | tar -x -C DIR)"
        )
        made.add_argument("--extra", action="append", default=[], help="--extra=--OPTION=VALUE")
    return made


@contextmanager
def serve(
    args: argparse.Namespace,
    env: Mapping[str, str] | None = None,
    unlimited: bool = True,
    store: str | None = None,
) -> Iterator[Server]:
    """A :class:`Server` on a fresh store, by the shared options (``store`` in place of
    ``--store``): started, and stopped after."""
    with serve_instances(args, 1, env, unlimited, store) as (running,):
        yield running


@contextmanager
def serve_instances(
    args: argparse.Namespace,
    count: int,
    env: Mapping[str, str] | None = None,
    unlimited: bool = True,
    store: str | None = None,
) -> Iterator[list[Server]]:
    """``count`` servers as :func:`serve` makes one, all on one fresh store (PostgreSQL
    for more than one), with one signing key and organisers file, named ``i0``, ``i1``,
    ... when there are several: started one after the other, and stopped after."""
    with fresh_store(store or args.store, args.dsn) as (store_env, _, folder):
        servers = [
            Server(
                store_env,
                folder,
                args.root.resolve(),
                env,
                args.extra,
                unlimited,
                instance=f"i{index}" if count > 1 else None,
            )
            for index in range(count)
        ]
        try:
            for running in servers:
                running.start()
            yield servers
        finally:
            for running in servers:
                running.stop()


# ---- client processes ---------------------------------------------------------------------


def _run(target: Callable[..., Any], *args: Any) -> None:
    asyncio.run(target(*args))


class Children:
    """Processes running the coroutine function ``target``, spawned (no gRPC state
    inherited), each keyed and given a pipe as its first argument. A child answers each
    message with ``(kind, payload)``; ``("error", text)`` is raised here, so that a
    failure in a child stops the run. Stopped on leaving a ``with`` block."""

    def __init__(self, target: Callable[..., Any]) -> None:
        self.target = target
        self.pipes: dict[int, Any] = {}
        self.processes: list[Any] = []

    def start(self, key: int, *args: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes[key], theirs = context.Pipe()
        process = context.Process(target=_run, args=(self.target, theirs, *args), daemon=True)
        process.start()
        self.processes.append(process)

    def send(self, keys: Iterable[int], *message: Any) -> None:
        for key in keys:
            self.pipes[key].send(message)

    def gather(self, keys: Iterable[int], timeout: float = STEP_TIMEOUT * 2) -> dict[int, Any]:
        """The payload of each one's next answer; no answer within ``timeout`` s raises."""
        waiting = {self.pipes[key]: key for key in keys}
        replies: dict[int, Any] = {}
        while waiting:
            ready: list[Any] = multiprocessing.connection.wait(list(waiting), timeout)
            if not ready:
                raise TimeoutError(f"no answer from {sorted(waiting.values())}")
            for conn in ready:
                kind, payload = conn.recv()
                if kind == "error":
                    raise RuntimeError(payload)
                replies[waiting.pop(conn)] = payload
        return replies

    def ask(self, keys: Sequence[int], *message: Any) -> dict[int, Any]:
        self.send(keys, *message)
        return self.gather(keys)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Tell each to stop; those still running after 10 s are terminated."""
        for conn in self.pipes.values():
            with contextlib.suppress(OSError):
                conn.send(("stop",))
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.terminate()


# ---- the bare echo server -----------------------------------------------------------------

ECHO_SERVICE = "bench.Echo"
ECHO, STORED_ECHO, ECHO_STREAM, LISTEN = (
    f"/{ECHO_SERVICE}/{m}" for m in ("Echo", "StoredEcho", "EchoStream", "Listen")
)


class Echoes(Aggregate):
    """A key of the stored echo: an event per echo, as a match has one per command."""

    @event("Echoed")
    def echoed(self, size: int) -> None:
        self.size = size


async def echo_server(conn: multiprocessing.connection.Connection, store_env: Any = None) -> None:
    """Raw bytes, no work: ``Echo`` answers with the request after pushing it to the
    ``Listen`` streams of its key (its first 16 bytes), ``EchoStream`` does the same for
    each message of a stream, and ``Listen(key)`` yields an empty message once subscribed,
    then what is pushed. Given ``store_env``, ``StoredEcho`` first saves an event of the
    key's aggregate through the server's own group commit: the floor under a command."""
    from eventsourcing.application import Application

    from server.commits import Committer
    from server.limits import Limits
    from storage.threads import StoreThreads

    listeners: dict[bytes, list[asyncio.Queue[bytes]]] = {}
    keys: dict[bytes, Any] = {}
    committer = Committer(Application(env=store_env), StoreThreads()) if store_env else None  # type: ignore[arg-type]

    async def echo(request: bytes, _context: Any) -> bytes:
        for queue in listeners.get(request[:16], ()):
            queue.put_nowait(request)
        return request

    async def stored_echo(request: bytes, context: Any) -> bytes:
        assert committer is not None
        echoes = keys.get(request[:16]) or keys.setdefault(request[:16], Echoes())
        echoes.echoed(len(request))
        await committer.save(echoes)
        return await echo(request, context)

    async def echo_stream(requests: AsyncIterator[bytes], context: Any) -> None:
        async for request in requests:
            await context.write(await echo(request, context))

    async def listen(key: bytes, _context: Any) -> AsyncIterator[bytes]:
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        listeners.setdefault(key, []).append(queue)
        try:
            yield b""
            while True:
                yield await queue.get()
        finally:
            listeners[key].remove(queue)

    handlers = {
        "Echo": grpc.unary_unary_rpc_method_handler(echo),
        "StoredEcho": grpc.unary_unary_rpc_method_handler(stored_echo),
        "EchoStream": grpc.stream_stream_rpc_method_handler(echo_stream),
        "Listen": grpc.unary_stream_rpc_method_handler(listen),
    }
    # The queue of calls not yet taken as totem serve's, or the baseline drops calls.
    options = [("grpc.so_reuseport", 0), *Limits(pending_calls=10**6).grpc_options()]
    bare = grpc.aio.server(options=options)
    bare.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(ECHO_SERVICE, handlers),))
    conn.send(("port", bare.add_insecure_port("127.0.0.1:0")))
    await bare.start()
    await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # any message: stop
    await bare.stop(grace=None)


class EchoServer(Children):
    """The bare echo server in a process of its own; ``store_env`` for the stored echo."""

    def __init__(self, store_env: Mapping[str, str] | None = None) -> None:
        super().__init__(echo_server)
        self.start(0, store_env)
        self.address = f"127.0.0.1:{self.gather([0], STEP_TIMEOUT)[0]}"
        self.pid: int = self.processes[0].pid


# ---- streams ------------------------------------------------------------------------------


async def round_trip(stream: Any, request: Any) -> Any:
    """One message written on an open stream, and its answer; a stream that ends instead
    raises, as a failed call does."""
    await stream.write(request)
    answer = await stream.read()
    if answer is grpc.aio.EOF:
        raise RuntimeError(f"the stream ended: {await stream.code()} {await stream.details()}")
    return answer


async def open_play(play: Any, metadata: Any) -> Any:
    """A Play stream (``play`` is the stub's method, or a bare server's), connected, with
    the ready request answered that clients send first: no command is its first message,
    which gRPC hands over sooner."""
    stream = play(metadata=metadata, timeout=STEP_TIMEOUT * 10)
    try:
        await asyncio.wait_for(stream.wait_for_connection(), STEP_TIMEOUT)
        await round_trip(stream, ms.PlayRequest(ready=ms.PlayReady()))
    except BaseException:
        stream.cancel()
        raise
    return stream


def applied(response: Any) -> Any:
    """The ActResponse of an applied PlayResponse; a refusal raises, as Act's would."""
    if response.WhichOneof("outcome") != "applied":
        raise RuntimeError(f"not applied on the Play stream: {response}")
    return response.applied


async def close_play(stream: Any) -> None:
    """End a Play stream as a player does: no more requests, then its status."""
    await stream.done_writing()
    rest = await asyncio.wait_for(stream.read(), STEP_TIMEOUT)
    code = await asyncio.wait_for(stream.code(), STEP_TIMEOUT)
    if rest is not grpc.aio.EOF or code != grpc.StatusCode.OK:
        raise RuntimeError(f"the Play stream ended badly: {code} {await stream.details()}")


async def read(call: Any) -> None:
    """Read a server stream to its end, or until cancelled."""
    with contextlib.suppress(asyncio.CancelledError):
        async for _ in call:
            pass


class Follower:
    """A server stream read in a task: each message's key (``key(message)``, its version
    by default) and arrival (``perf_counter_ns``), recorded as it arrives so that
    :meth:`reach` may be awaited after the fact without moving the time."""

    def __init__(self, call: Any, key: Any = lambda message: message.version) -> None:
        self.call, self.key, self.error = call, key, ""
        self.arrivals: list[tuple[int, int]] = []
        self.changed = asyncio.Condition()
        self.task = asyncio.ensure_future(self._follow())

    @property
    def seen(self) -> int:
        return self.arrivals[-1][0] if self.arrivals else -1

    async def _follow(self) -> None:
        try:
            async for message in self.call:
                arrived = time.perf_counter_ns()
                async with self.changed:
                    self.arrivals.append((max(self.seen, self.key(message)), arrived))
                    self.changed.notify_all()
        except Exception as error:  # reported by reach
            async with self.changed:
                self.error = repr(error)
                self.changed.notify_all()

    async def reach(self, key: int) -> int:
        """When a message of at least ``key`` arrived."""
        async with self.changed:
            done = lambda: self.seen >= key or bool(self.error)  # noqa: E731
            await asyncio.wait_for(self.changed.wait_for(done), STEP_TIMEOUT)
        if self.seen < key:
            raise RuntimeError(f"stream ended at {self.seen}: {self.error}")
        return next(at for k, at in self.arrivals if k >= key)

    async def close(self) -> None:
        self.call.cancel()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


# ---- Jungle Speed ---------------------------------------------------------------------------

#: The inward-arrows card of a deck of 72 symbol cards and that one special.
INWARD_ARROWS = 72
REVEAL = js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())
GRAB = js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
#: Seat 0 gets shapes 0 to 8, seat 1 shapes 9 to 17 (card = 4 * shape + colour, seat k
#: dealt deck[k::2], JS-2.2): no two face-up cards ever match, 72 reveals follow.
NO_DUEL_DEAL = [card for pair in zip(range(36), range(36, 72), strict=True) for card in pair]


def arrows_options(players: int) -> js.JungleSpeedOptions:
    """A match whose first reveal, seat 0's, is the inward arrows: a race all may grab."""
    return js.JungleSpeedOptions(
        max_players=players,
        turn_timeout_ms=0,
        specials=js.JungleSpeedSpecials(inward_arrows=1),
        prearranged_deal=[INWARD_ARROWS, *range(INWARD_ARROWS)],
    )


def create_request(options: js.JungleSpeedOptions) -> ms.CreateMatchRequest:
    return ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=options)


def scripted_create() -> ms.CreateMatchRequest:
    """Two seats, no special, no timer, a deal with no duel until both last cards, which
    share a shape: 72 reveals and one grab end the match (tests/service/test_match_end.py)."""
    last_of_0, last_of_1, swapped = 4 * 8, 4 * 8 + 3, 4 * 17 + 3
    zero = [swapped] + [c for c in range(36) if c not in (last_of_0, last_of_1)] + [last_of_0]
    one = [c for c in range(36, 72) if c != swapped] + [last_of_1]
    deal = [card for pair in zip(zero, one, strict=True) for card in pair]
    return create_request(
        js.JungleSpeedOptions(
            max_players=2,
            prearranged_deal=deal,
            specials=js.JungleSpeedSpecials(),
            turn_timeout_ms=0,
        )
    )


def next_move(state: js.JungleSpeedState, me: int) -> tuple[int, js.JungleSpeedCommand] | None:
    """The next command from the state seat ``me`` was just answered with: a grab when one
    is offered to it (or a duel or arrows race is open for another seat), else a reveal by
    the seat whose turn it is; None when nobody can act."""
    if state.legal.grabs:
        return me, js.JungleSpeedCommand(
            grab=js.JungleSpeedGrab(target=state.legal.grabs[0].target)
        )
    if state.open_duels:
        return state.open_duels[0].seats[0], GRAB
    if state.arrows_race_open:
        return next(s.seat for s in state.seats if not s.finished), GRAB
    if state.HasField("turn"):
        return state.turn, REVEAL
    return None


async def seated_match(
    stub: Any, options: js.JungleSpeedOptions, before_seats: Any = None
) -> tuple[str, list[Any]]:
    """A match created by the organiser, ``before_seats(match_id)`` awaited, then its seats
    taken in order (JS-1.5): its id and each seat's call metadata."""
    created = await stub.CreateMatch(
        create_request(options), metadata=ORGANISER, timeout=STEP_TIMEOUT
    )
    if before_seats is not None:
        await before_seats(created.match_id)
    seats = []
    for seat in range(options.max_players):
        request = ms.JoinMatchRequest(match_id=created.match_id, name=f"p{seat}", seat=seat)
        seats.append(bearer((await stub.JoinMatch(request, timeout=STEP_TIMEOUT)).player_token))
    return created.match_id, seats


class Table:
    """A seated match of untimed Jungle Speed played by :func:`next_move`, and its state
    as the last answer gave it."""

    def __init__(self, match_id: str, seats: list[Any], view: Any) -> None:
        self.id, self.seats, self.me, self.busy, self.done = match_id, seats, 0, False, False
        self.state, self.summary = view.jungle_speed, view.summary

    @classmethod
    async def seated(cls, stub: Any, players: int, before_seats: Any = None) -> Table:
        options = js.JungleSpeedOptions(max_players=players, turn_timeout_ms=0)
        match_id, seats = await seated_match(stub, options, before_seats)
        request = ms.GetMatchRequest(match_id=match_id)
        view = await stub.GetMatch(request, metadata=seats[0], timeout=STEP_TIMEOUT)
        return cls(match_id, seats, view)

    async def act(self, stub: Any, plays: Sequence[Any] = ()) -> list[Any]:
        """The next command, by Act or on the seat's Play stream: its events; none once
        nobody can act."""
        if self.done or (move := next_move(self.state, self.me)) is None:
            self.done = True
            return []
        self.me, command = move
        request = ms.ActRequest(
            match_id=self.id, seen_version=self.summary.version, jungle_speed=command
        )
        if plays:
            async with asyncio.timeout(STEP_TIMEOUT * 2):
                acted = applied(await round_trip(plays[self.me], ms.PlayRequest(act=request)))
        else:
            acted = await stub.Act(request, metadata=self.seats[self.me], timeout=STEP_TIMEOUT * 2)
        self.state, self.summary = acted.state.jungle_speed, acted.state.summary
        self.done = self.summary.status == common_pb2.MATCH_STATUS_ENDED
        return list(acted.events)


class Revealer:
    """A client on a channel of its own revealing in 2-seat matches of :data:`NO_DUEL_DEAL`,
    the seats in turn; :meth:`prepare` makes the matches (untimed) that ``ops`` reveals need."""

    OPTIONS = js.JungleSpeedOptions(
        max_players=2,
        turn_timeout_ms=0,
        specials=js.JungleSpeedSpecials(),
        prearranged_deal=NO_DUEL_DEAL,
    )

    def __init__(self, address: str) -> None:
        self.channel, self.stub = match_stub(address)
        self.matches: list[tuple[str, list[Any]]] = []
        self.done = 0

    async def prepare(self, ops: int) -> None:
        while len(self.matches) * 72 - self.done % 72 < ops:
            self.matches.append(await seated_match(self.stub, self.OPTIONS))

    async def op(self) -> None:
        match_id, seats = self.matches[0]
        request = ms.ActRequest(match_id=match_id, jungle_speed=REVEAL)
        await self.stub.Act(request, metadata=seats[self.done % 2], timeout=STEP_TIMEOUT)
        self.done += 1
        if self.done % 72 == 0:
            self.matches.pop(0)

    async def close(self) -> None:
        await self.channel.close()
