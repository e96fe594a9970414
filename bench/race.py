"""Grab races: does the server's receive order follow the order in which grabs were sent?

Run ``python bench/race.py --help`` for the options. Everything runs on this machine, over
loopback:

- a server in a process of its own (``python -m server serve``), on a fresh store: a
  temporary SQLite file, or a PostgreSQL schema made for the run and dropped after it;
- N contenders (2 to 8), each a process of its own with its own ``grpc.aio`` channel
  (one connection) and event loop; contender ``c`` is started and connected c-th;
- one spectator process holding ``--watchers`` Watch streams per match without a token,
  in addition to the stream each seated contender keeps on its own match;
- this process, the coordinator: it creates the matches, reveals, and gives the start
  signal; it never grabs.

One race per match. The coordinator creates an N-seat Jungle Speed match whose
prearranged deal puts an inward-arrows card on top of seat 0's pile, with the turn timer
off; each contender joins the seat it is given on its own connection and watches the
match as that player. The coordinator reveals for seat 0: an inward-arrows race, in which
every seat may grab and the first grab received wins (JS-6.1), the others being late
(JS-5.3). Once every stream has shown the reveal, the coordinator sends each contender a
common start time (``time.monotonic_ns()`` plus ``--margin-ms``) and its own offset; the
contender sleeps until just before its send time, busy-waits the last ``--spin-us``, notes
``time.monotonic_ns()`` (its send time) and sends its grab; after one turn of its event
loop, by which time gRPC's core has the request, it notes the time again (handed). Its
answer holds its grab's receive stamp.

Seats rotate: in the k-th race at an offset, contender c sits in seat (c + k) mod N, so
every contender holds every seat equally often and a bias of seats can be told from a
bias of connections. At a non-zero offset d the contenders send at start + r*d, their
ranks r a fresh random permutation for each race (``--seed``). The races of all offsets
are interleaved in a random order.

Processes on one machine share CLOCK_MONOTONIC, and the server's stamps carry its
``time.monotonic_ns()`` (ReceiveStamp.monotonic_ns), so send times and stamps are on one
clock. Per race:

- send spread: last send minus first send; stamp spread: last stamp minus first stamp;
- first stamp after first send: how long after the first send the first grab was stamped;
- stamp order = send order: the contenders sorted by stamp ``sequence`` are in the order
  of their send times (the whole order, all N);
- first sender won: the earliest sender's grab won (had the smallest ``sequence``);
- pairs in send order: of the N(N-1)/2 pairs of grabs, the share stamped in send order;
  the same pairs are also grouped by how far apart they were sent;
- send windows apart: a pair whose first grab was handed to gRPC before the second was
  sent. Between its send time and handing over, a contender can lose its CPU to another
  (more processes than cores), so a pair whose windows overlap may reach the server in
  either order whatever the server does; pairs with windows apart are those whose order
  on the client side is beyond doubt.

At offset 0 the wins per seat and per contender (connection) are tested against equal
shares with Pearson's chi-square test (N-1 degrees of freedom; the p-value from the
regularized upper incomplete gamma function, computed here).

Targets: stamp order = send order in at least 95% of the races at every offset
of 1 ms or more; chi-square p > 0.01 for seats and for connections over at least 600
races at offset 0; median stamp spread at most twice the median send spread at offset 0.
Figures go to docs/performance.md; tests never assert a duration.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OFFSETS = "0,0.25,0.5,1,2,5"
DEFAULT_DSN = os.environ.get(
    "TOTEM_TEST_POSTGRES", "host=127.0.0.1 port=5432 user=postgres dbname=test"
)
#: Seconds any one step (a call, a reply from a process) may take before the run stops.
STEP_TIMEOUT = 30.0
#: The deck: 72 symbol cards and one inward-arrows card, id 72 (see jungle_speed.proto).
INWARD_ARROWS = 72
DECK_SIZE = 73
#: Pairs of grabs grouped by how far apart they were sent, in microseconds.
GAP_EDGES_US = (0, 50, 100, 250, 500, 1000, 2000, 5000)


# ---- statistics -------------------------------------------------------------------------


def upper_gamma_regularized(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): a series below x = a + 1, a continued fraction above
    (the classic Numerical Recipes pair, ``gser`` and ``gcf``)."""
    if x <= 0:
        return 1.0
    log_prefactor = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return math.exp(log_prefactor) * h


def chi_square_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for a chi-square variable with ``dof`` degrees of freedom."""
    return upper_gamma_regularized(dof / 2, statistic / 2)


def chi_square_uniform(counts: Sequence[int]) -> tuple[float, float]:
    """Pearson's statistic for ``counts`` against equal shares, and its p-value."""
    total = sum(counts)
    if total == 0 or len(counts) < 2:
        return 0.0, 1.0
    expected = total / len(counts)
    statistic = sum((c - expected) ** 2 / expected for c in counts)
    return statistic, chi_square_sf(statistic, len(counts) - 1)


def one_against_rest(count: int, total: int, cells: int) -> float:
    """p-value of one cell's count against its equal share (chi-square, 1 dof)."""
    if total == 0:
        return 1.0
    share = 1 / cells
    expected_in, expected_out = total * share, total * (1 - share)
    statistic = (count - expected_in) ** 2 / expected_in + (
        (total - count) - expected_out
    ) ** 2 / expected_out
    return chi_square_sf(statistic, 1)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation between order statistics."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# ---- what a race records ------------------------------------------------------------------


@dataclass
class Grab:
    """One contender's grab in one race (times in ns, CLOCK_MONOTONIC of this machine)."""

    contender: int
    seat: int
    rank: int
    target_ns: int
    sent_ns: int
    handed_ns: int
    answered_ns: int
    sequence: int
    stamp_ns: int
    received_at_ns: int
    seen_version: int
    won: bool
    event_version: int
    recorded_at_ns: int
    started_late: bool


@dataclass
class Race:
    index: int
    offset_ms: float
    match_id: str
    reveal_version: int
    start_ns: int
    grabs: list[Grab] = field(default_factory=list)

    def by_send(self) -> list[Grab]:
        return sorted(self.grabs, key=lambda g: g.sent_ns)

    def by_stamp(self) -> list[Grab]:
        return sorted(self.grabs, key=lambda g: g.sequence)

    @property
    def send_spread_ns(self) -> int:
        return max(g.sent_ns for g in self.grabs) - min(g.sent_ns for g in self.grabs)

    @property
    def stamp_spread_ns(self) -> int:
        return max(g.stamp_ns for g in self.grabs) - min(g.stamp_ns for g in self.grabs)

    @property
    def first_stamp_lag_ns(self) -> int:
        return min(g.stamp_ns for g in self.grabs) - min(g.sent_ns for g in self.grabs)

    @property
    def order_matches(self) -> bool:
        return [g.contender for g in self.by_send()] == [g.contender for g in self.by_stamp()]

    @property
    def winner_stamped_first(self) -> bool:
        """The winning grab has the smallest receive ``sequence`` (JS-4.2)."""
        return self.winner.sequence == min(g.sequence for g in self.grabs)

    @property
    def first_sender_won(self) -> bool:
        return self.by_send()[0].won

    @property
    def winner(self) -> Grab:
        return next(g for g in self.grabs if g.won)

    def pairs(self) -> Iterator[tuple[int, bool, bool]]:
        """Each pair of grabs: how far apart they were sent (ns), whether they were
        stamped in send order, and whether their send windows are apart (the first was
        handed to gRPC before the second was sent)."""
        for a, b in itertools.combinations(self.grabs, 2):
            first, second = (a, b) if a.sent_ns <= b.sent_ns else (b, a)
            apart = first.handed_ns < second.sent_ns
            yield second.sent_ns - first.sent_ns, first.sequence < second.sequence, apart


# ---- child processes ----------------------------------------------------------------------


async def receive(conn: multiprocessing.connection.Connection, seconds: float) -> Any:
    """The next message on a pipe, awaited without blocking the event loop."""
    if not conn.poll():
        loop = asyncio.get_running_loop()
        ready = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(conn.fileno(), wake)
        try:
            await asyncio.wait_for(ready, seconds)
        finally:
            loop.remove_reader(conn.fileno())
    return conn.recv()


class Follower:
    """A Watch stream read to the end in a task, with the highest version seen so far."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.seen = 0
        self.error: str | None = None
        self.changed = asyncio.Condition()
        self.task = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        try:
            async for event in self.call:
                async with self.changed:
                    self.seen = event.version
                    self.changed.notify_all()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a stream that fails is reported by ``reach``
            self.error = repr(error)
            async with self.changed:
                self.changed.notify_all()

    async def reach(self, version: int) -> None:
        async with self.changed:
            await asyncio.wait_for(
                self.changed.wait_for(lambda: self.seen >= version or self.error is not None),
                STEP_TIMEOUT,
            )
        if self.seen < version:
            raise RuntimeError(f"stream ended at version {self.seen}: {self.error}")

    async def close(self) -> None:
        self.call.cancel()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def contender_main(
    index: int, address: str, conn: multiprocessing.connection.Connection, spin_ns: int
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator stops us
    asyncio.run(_contender(index, address, conn, spin_ns))


async def _contender(
    index: int, address: str, conn: multiprocessing.connection.Connection, spin_ns: int
) -> None:
    import grpc

    from totem.v1 import jungle_speed_pb2 as js
    from totem.v1 import match_service_pb2 as ms
    from totem.v1 import match_service_pb2_grpc

    channel = grpc.aio.insecure_channel(address)
    await asyncio.wait_for(channel.channel_ready(), STEP_TIMEOUT)
    stub = match_service_pb2_grpc.MatchServiceStub(channel)
    conn.send(("ready", index))
    match_id, seat, token = "", 0, ""
    follower: Follower | None = None
    grab = js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
    try:
        while True:
            message = await receive(conn, STEP_TIMEOUT * 4)
            kind = message[0]
            try:
                if kind == "stop":
                    return
                if kind == "join":
                    _, match_id, seat = message
                    joined = await stub.JoinMatch(
                        ms.JoinMatchRequest(
                            match_id=match_id, name=f"contender {index}", seat=seat
                        ),
                        timeout=STEP_TIMEOUT,
                    )
                    token = joined.player_token
                    follower = Follower(
                        stub.Watch(
                            ms.WatchRequest(match_id=match_id),
                            metadata=(("authorization", f"Bearer {token}"),),
                        )
                    )
                    await follower.reach(1)
                    conn.send(("joined", index, token))
                elif kind == "arm":
                    assert follower is not None
                    await follower.reach(message[1])
                    conn.send(("armed", index))
                elif kind == "go":
                    _, reveal_version, start_ns, offset_ns, rank, last_version = message
                    assert follower is not None
                    request = ms.ActRequest(
                        match_id=match_id, seen_version=reveal_version, jungle_speed=grab
                    )
                    metadata = (("authorization", f"Bearer {token}"),)
                    target = start_ns + offset_ns
                    gc.disable()
                    now = time.monotonic_ns()
                    started_late = now > target
                    if target - now > spin_ns:
                        # Blocking on purpose: nothing else may run on this loop now.
                        time.sleep((target - now - spin_ns) / 1e9)  # noqa: ASYNC251
                    while time.monotonic_ns() < target:
                        pass
                    sent = time.monotonic_ns()
                    call = stub.Act(request, metadata=metadata, timeout=STEP_TIMEOUT)
                    # One turn of the loop: the call's task hands the request to gRPC's
                    # core (which writes it or queues it for writing), then we run again.
                    await asyncio.sleep(0)
                    handed = time.monotonic_ns()
                    answer = await call
                    answered = time.monotonic_ns()
                    gc.enable()
                    mine = _own_event(answer, seat)
                    await follower.reach(last_version)
                    await follower.close()
                    follower = None
                    outcome = mine.jungle_speed.WhichOneof("event")
                    stamp = getattr(mine.jungle_speed, outcome).stamp
                    conn.send(
                        (
                            "done",
                            index,
                            asdict(
                                Grab(
                                    contender=index,
                                    seat=seat,
                                    rank=rank,
                                    target_ns=target,
                                    sent_ns=sent,
                                    handed_ns=handed,
                                    answered_ns=answered,
                                    sequence=stamp.sequence,
                                    stamp_ns=stamp.monotonic_ns,
                                    received_at_ns=stamp.received_at.ToNanoseconds(),
                                    seen_version=stamp.seen_version,
                                    won=outcome == "arrows_won",
                                    event_version=mine.version,
                                    recorded_at_ns=mine.recorded_at.ToNanoseconds(),
                                    started_late=started_late,
                                )
                            ),
                        )
                    )
                    gc.collect()
                else:
                    raise ValueError(f"unknown message {kind!r}")
            except Exception as error:
                gc.enable()
                conn.send(("error", index, f"{kind}: {error!r}"))
    finally:
        if follower is not None:
            await follower.close()
        await channel.close()


def _own_event(answer: Any, seat: int) -> Any:
    """The event of an ActResponse that records this seat's grab."""
    for event in answer.events:
        if event.WhichOneof("event") != "jungle_speed":
            continue
        inner = event.jungle_speed
        kind = inner.WhichOneof("event")
        if kind == "arrows_won" and inner.arrows_won.winner == seat:
            return event
        if kind == "late_grab" and inner.late_grab.seat == seat:
            return event
    kinds = [e.jungle_speed.WhichOneof("event") for e in answer.events]
    raise RuntimeError(f"seat {seat}: no ArrowsWon or LateGrab of its own in {kinds}")


def spectators_main(address: str, conn: multiprocessing.connection.Connection, count: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_spectators(address, conn, count))


async def _spectators(
    address: str, conn: multiprocessing.connection.Connection, count: int
) -> None:
    import grpc

    from totem.v1 import match_service_pb2 as ms
    from totem.v1 import match_service_pb2_grpc

    channel = grpc.aio.insecure_channel(address)
    await asyncio.wait_for(channel.channel_ready(), STEP_TIMEOUT)
    stub = match_service_pb2_grpc.MatchServiceStub(channel)
    conn.send(("ready", -1))
    followers: list[Follower] = []
    try:
        while True:
            message = await receive(conn, STEP_TIMEOUT * 4)
            kind = message[0]
            try:
                if kind == "stop":
                    return
                if kind == "watch":
                    request = ms.WatchRequest(match_id=message[1])
                    followers = [Follower(stub.Watch(request)) for _ in range(count)]
                    await asyncio.gather(*(f.reach(1) for f in followers))
                    conn.send(("watching", -1))
                elif kind == "arm":
                    await asyncio.gather(*(f.reach(message[1]) for f in followers))
                    conn.send(("armed", -1))
                elif kind == "until":
                    await asyncio.gather(*(f.reach(message[1]) for f in followers))
                    for follower in followers:
                        await follower.close()
                    followers = []
                    conn.send(("done", -1, None))
                else:
                    raise ValueError(f"unknown message {kind!r}")
            except Exception as error:
                conn.send(("error", -1, f"{kind}: {error!r}"))
    finally:
        for follower in followers:
            await follower.close()
        await channel.close()


# ---- the machine --------------------------------------------------------------------------


def busy_ticks() -> int:
    """CPU time spent by every process of the machine, in clock ticks (Linux)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return user + nice + system + irq + softirq


def process_ticks(pids: Sequence[int]) -> int:
    """CPU time spent by these processes (all their threads), in clock ticks (Linux)."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


# ---- the server -------------------------------------------------------------------------


class Server:
    """``totem serve`` in a process of its own, on a fresh store."""

    def __init__(self, store: str, dsn: str, workdir: Path, root: Path = ROOT) -> None:
        self.store = store
        self.dsn = dsn
        self.schema: str | None = None
        env = dict(os.environ)
        for name in list(env):
            if name.startswith(("POSTGRES_", "SQLITE_")) or name == "PERSISTENCE_MODULE":
                del env[name]
        if store == "postgres":
            self.schema = f"totem_race_{uuid.uuid4().hex[:12]}"
            self._sql(f'CREATE SCHEMA "{self.schema}"')
            parts = dict(item.split("=", 1) for item in dsn.split())
            env.update(
                PERSISTENCE_MODULE="eventsourcing.postgres",
                POSTGRES_DBNAME=parts.get("dbname", "test"),
                POSTGRES_HOST=parts.get("host", "127.0.0.1"),
                POSTGRES_PORT=parts.get("port", "5432"),
                POSTGRES_USER=parts.get("user", "postgres"),
                POSTGRES_PASSWORD=parts.get("password", ""),
                POSTGRES_SCHEMA=self.schema,
            )
        else:
            env["PERSISTENCE_MODULE"] = "eventsourcing.sqlite"
        if root != ROOT:
            # Another source tree's server: its packages come before the installed ones.
            paths = [root, root / "protos", root / "clients" / "python"]
            env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
        self.log_path = workdir / "server.log"
        self.log = self.log_path.open("w+b")
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "server", "serve", "--address", "127.0.0.1:0"),
                *("--db", str(workdir / "race.db"), "--log-level", "WARNING"),
            ],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self.port = self._wait_ready()

    def _sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True, connect_timeout=5) as conn:
            conn.execute(statement)

    def _wait_ready(self) -> int:
        deadline = time.monotonic() + STEP_TIMEOUT
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
            found = re.search(r"totem serving on [^\s:]+:(\d+)", text)
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the server did not start:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()
        if self.schema is not None:
            self._sql(f'DROP SCHEMA "{self.schema}" CASCADE')
            self.schema = None


# ---- the coordinator ----------------------------------------------------------------------


class Children:
    """The contender and spectator processes, each with its end of a pipe."""

    def __init__(self, address: str, contenders: int, watchers: int, spin_ns: int) -> None:
        context = multiprocessing.get_context("spawn")  # no gRPC state inherited by fork
        self.pipes: dict[int, multiprocessing.connection.Connection] = {}
        self.processes: list[Any] = []
        for index in range(contenders):
            ours, theirs = context.Pipe()
            process = context.Process(
                target=contender_main,
                args=(index, address, theirs, spin_ns),
                name=f"contender {index}",
                daemon=True,
            )
            process.start()
            # Started and connected one after the other: contender c connects c-th.
            self.pipes[index] = ours
            self.processes.append(process)
            self.gather([index])
        if watchers:
            ours, theirs = context.Pipe()
            process = context.Process(
                target=spectators_main, args=(address, theirs, watchers), daemon=True
            )
            process.start()
            self.pipes[-1] = ours
            self.processes.append(process)
            self.gather([-1])

    def send(self, index: int, *message: Any) -> None:
        self.pipes[index].send(message)

    def gather(self, indexes: Sequence[int]) -> dict[int, Any]:
        """One reply from each of ``indexes``: index -> the reply's payload."""
        waiting = {self.pipes[i]: i for i in indexes}
        replies: dict[int, Any] = {}
        deadline = time.monotonic() + STEP_TIMEOUT * 2
        while waiting:
            ready = multiprocessing.connection.wait(
                list(waiting), max(0.0, deadline - time.monotonic())
            )
            if not ready:
                raise TimeoutError(f"no reply from {sorted(waiting.values())}")
            for conn in ready:
                assert isinstance(conn, multiprocessing.connection.Connection)
                message = conn.recv()
                if message[0] == "error":
                    raise RuntimeError(f"process {message[1]}: {message[2]}")
                replies[waiting.pop(conn)] = message[2] if len(message) > 2 else None
        return replies

    def stop(self) -> None:
        for conn in self.pipes.values():
            with contextlib.suppress(OSError):
                conn.send(("stop",))
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.terminate()
                process.join(5)


def schedule(
    races: int, per_offset: int, offsets: Sequence[float], rng: random.Random
) -> list[float]:
    """The offset of each race: ``races`` at 0 and ``per_offset`` at each other offset,
    interleaved in a random order."""
    plan = [o for o in offsets for _ in range(races if o == 0 else per_offset)]
    rng.shuffle(plan)
    return plan


def run(args: argparse.Namespace) -> tuple[list[Race], dict[str, Any]]:
    import grpc

    from totem.v1 import common_pb2, match_service_pb2_grpc
    from totem.v1 import jungle_speed_pb2 as js
    from totem.v1 import match_service_pb2 as ms

    n = args.clients
    offsets = [float(o) for o in args.offsets.split(",")]
    rng = random.Random(args.seed)
    plan = [0.0] * args.warmup + schedule(args.races, args.races_per_offset, offsets, rng)
    deal = [INWARD_ARROWS, *range(INWARD_ARROWS)]
    options = js.JungleSpeedOptions(
        max_players=n,
        turn_timeout_ms=0,
        specials=js.JungleSpeedSpecials(inward_arrows=1),
        prearranged_deal=deal,
    )
    races: list[Race] = []
    rotation: dict[float, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = ROOT if args.server_root is None else args.server_root.resolve()
        server = Server(args.store, args.dsn, Path(tmp), root)
        children: Children | None = None
        channel = None
        try:
            address = f"127.0.0.1:{server.port}"
            children = Children(address, n, args.watchers, args.spin_us * 1000)
            channel = grpc.insecure_channel(address)
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            everyone = list(children.pipes)
            ours = [os.getpid(), server.process.pid, *(p.pid for p in children.processes)]
            load_before = os.getloadavg()
            ticks_before = busy_ticks() - process_ticks(ours)
            began = time.monotonic()
            for index, offset in enumerate(plan):
                key = -1.0 if index < args.warmup else offset
                turn = rotation.get(key, 0)
                rotation[key] = turn + 1
                seats = {c: (c + turn) % n for c in range(n)}
                ranks = list(range(n))
                rng.shuffle(ranks)
                created = stub.CreateMatch(
                    ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=options),
                    timeout=STEP_TIMEOUT,
                )
                match_id = created.match_id
                # Seats are taken in order (JS-1.5): each contender joins in turn.
                tokens: dict[int, Any] = {}
                for c in sorted(range(n), key=seats.__getitem__):
                    children.send(c, "join", match_id, seats[c])
                    tokens.update(children.gather([c]))
                if args.watchers:
                    children.send(-1, "watch", match_id)
                    children.gather([-1])
                first = next(c for c in range(n) if seats[c] == 0)
                revealed = stub.Act(
                    ms.ActRequest(
                        match_id=match_id,
                        jungle_speed=js.JungleSpeedCommand(reveal=js.JungleSpeedReveal()),
                    ),
                    metadata=(("authorization", f"Bearer {tokens[first]}"),),
                    timeout=STEP_TIMEOUT,
                )
                card = revealed.events[0].jungle_speed.revealed.card
                if card.kind != js.CARD_KIND_INWARD_ARROWS:
                    raise RuntimeError(f"the reveal showed {card}, not inward arrows")
                version = revealed.version
                for i in everyone:
                    children.send(i, "arm", version)
                children.gather(everyone)
                # One ArrowsWon and N-1 LateGrabs follow the reveal.
                last_version = version + n
                start_ns = time.monotonic_ns() + int(args.margin_ms * 1e6)
                offset_ns = int(offset * 1e6)
                for c in range(n):
                    children.send(
                        c, "go", version, start_ns, ranks[c] * offset_ns, ranks[c], last_version
                    )
                if args.watchers:
                    children.send(-1, "until", last_version)
                done = children.gather(everyone)
                race = Race(index - args.warmup, offset, match_id, version, start_ns)
                race.grabs = [Grab(**done[c]) for c in range(n)]
                if sum(g.won for g in race.grabs) != 1:
                    raise RuntimeError(f"race {index}: not exactly one winner")
                if index >= args.warmup:
                    races.append(race)
                if args.progress and (index + 1) % 100 == 0:
                    print(
                        f"  {index + 1}/{len(plan)} races, {time.monotonic() - began:.0f} s",
                        file=sys.stderr,
                    )
            elapsed = time.monotonic() - began
            load_after = os.getloadavg()
            others = (busy_ticks() - process_ticks(ours) - ticks_before) / os.sysconf("SC_CLK_TCK")
        finally:
            if channel is not None:
                channel.close()
            if children is not None:
                children.stop()
            server.stop()
    config = {
        "clients": n,
        "store": args.store,
        "watchers": args.watchers,
        "seat_streams": n,
        "races_at_0": args.races,
        "races_per_offset": args.races_per_offset,
        "offsets_ms": offsets,
        "warmup": args.warmup,
        "margin_ms": args.margin_ms,
        "spin_us": args.spin_us,
        "seed": args.seed,
        "server_root": None if args.server_root is None else str(args.server_root),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "elapsed_s": round(elapsed, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "other_processes_cores": round(others / elapsed, 2),
    }
    return races, config


# ---- analysis and report ------------------------------------------------------------------


def summarise(races: list[Race], config: dict[str, Any]) -> dict[str, Any]:
    n = config["clients"]
    by_offset: dict[float, list[Race]] = {}
    for race in races:
        by_offset.setdefault(race.offset_ms, []).append(race)

    def ms_stats(values: list[int]) -> dict[str, float]:
        return {
            "median": statistics.median(values) / 1e6,
            "p99": percentile(values, 0.99) / 1e6,
        }

    offsets: list[dict[str, Any]] = []
    for offset in sorted(by_offset):
        group = by_offset[offset]
        pairs = [ok for r in group for _, ok, _ in r.pairs()]
        apart = [ok for r in group for _, ok, separate in r.pairs() if separate]
        offsets.append(
            {
                "offset_ms": offset,
                "races": len(group),
                "send_spread_ms": ms_stats([r.send_spread_ns for r in group]),
                "stamp_spread_ms": ms_stats([r.stamp_spread_ns for r in group]),
                "first_stamp_after_first_send_ms": ms_stats([r.first_stamp_lag_ns for r in group]),
                "order_matches": sum(r.order_matches for r in group) / len(group),
                "first_sender_won": sum(r.first_sender_won for r in group) / len(group),
                "pairs_in_send_order": sum(pairs) / len(pairs),
                "pairs_apart": len(apart),
                "pairs_apart_in_send_order": sum(apart) / len(apart) if apart else math.nan,
                "handing_ms": ms_stats([g.handed_ns - g.sent_ns for r in group for g in r.grabs]),
                "started_late": sum(g.started_late for r in group for g in r.grabs),
            }
        )

    gaps: list[dict[str, Any]] = []
    edges = [e * 1000 for e in GAP_EDGES_US] + [math.inf]
    all_pairs = [p for r in races for p in r.pairs()]
    for low, high in itertools.pairwise(edges):
        inside = [ok for gap, ok, _ in all_pairs if low <= gap < high]
        apart = [ok for gap, ok, separate in all_pairs if low <= gap < high and separate]
        if inside:
            gaps.append(
                {
                    "from_us": low / 1000,
                    "to_us": None if high == math.inf else high / 1000,
                    "pairs": len(inside),
                    "in_send_order": sum(inside) / len(inside),
                    "pairs_apart": len(apart),
                    "apart_in_send_order": sum(apart) / len(apart) if apart else math.nan,
                }
            )

    simultaneous = by_offset.get(0.0, [])
    total = len(simultaneous)
    seat_wins = [sum(r.winner.seat == s for r in simultaneous) for s in range(n)]
    conn_wins = [sum(r.winner.contender == c for r in simultaneous) for c in range(n)]
    seat_chi, seat_p = chi_square_uniform(seat_wins)
    conn_chi, conn_p = chi_square_uniform(conn_wins)
    fairness = {
        "races": total,
        "seat_wins": seat_wins,
        "seat_p_each": [one_against_rest(w, total, n) for w in seat_wins],
        "seat_chi_square": seat_chi,
        "seat_p": seat_p,
        "connection_wins": conn_wins,
        "connection_p_each": [one_against_rest(w, total, n) for w in conn_wins],
        "connection_chi_square": conn_chi,
        "connection_p": conn_p,
        "dof": n - 1,
    }

    later = [o for o in offsets if o["offset_ms"] >= 1]
    zero = next((o for o in offsets if o["offset_ms"] == 0), None)
    targets = {
        "order_at_1ms_and_more": {
            "met": bool(later) and all(o["order_matches"] >= 0.95 for o in later),
            "figures": {str(o["offset_ms"]): o["order_matches"] for o in later},
        },
        "no_seat_bias": {"met": total >= 600 and seat_p > 0.01, "p": seat_p, "races": total},
        "no_connection_bias": {
            "met": total >= 600 and conn_p > 0.01,
            "p": conn_p,
            "races": total,
        },
        "stamp_spread_within_2x_send_spread": {
            "met": zero is not None
            and zero["stamp_spread_ms"]["median"] <= 2 * zero["send_spread_ms"]["median"],
            "ratio": None
            if zero is None
            else zero["stamp_spread_ms"]["median"] / zero["send_spread_ms"]["median"],
        },
    }
    anomalies = {
        "winner_not_first_stamp": sum(not r.winner_stamped_first for r in races),
        "stamp_time_order_differs_from_sequence": sum(
            [g.contender for g in r.by_stamp()]
            != [g.contender for g in sorted(r.grabs, key=lambda g: g.stamp_ns)]
            for r in races
        ),
    }
    return {
        "config": config,
        "anomalies": anomalies,
        "offsets": offsets,
        "gaps": gaps,
        "fairness": fairness,
        "targets": targets,
    }


def report(summary: dict[str, Any]) -> str:
    c = summary["config"]
    lines = [
        f"{c['clients']} contenders (a process and a connection each), store {c['store']}, "
        f"streams per match: {c['seat_streams']} seats + {c['watchers']} spectators; "
        f"{c['cpus']} CPUs, Python {c['python']}; {c['elapsed_s']} s; load average "
        f"(1 min) {c['load_average_before'][0]:.2f} before, {c['load_average_after'][0]:.2f} "
        f"after; other processes used {c['other_processes_cores']:.2f} cores meanwhile",
        "",
        "Times in ms, median / p99:",
        "",
        "| offset ms | races | send spread | stamp spread | first stamp after first send "
        "| sent to handed to gRPC |",
        "|---|---|---|---|---|---|",
    ]

    def pair(stats: dict[str, float]) -> str:
        return f"{stats['median']:.2f} / {stats['p99']:.2f}"

    def share(value: float, digits: int = 0) -> str:
        return "–" if math.isnan(value) else f"{value:.{digits}%}"

    for o in summary["offsets"]:
        lines.append(
            f"| {o['offset_ms']:g} | {o['races']} | {pair(o['send_spread_ms'])} "
            f"| {pair(o['stamp_spread_ms'])} | {pair(o['first_stamp_after_first_send_ms'])} "
            f"| {pair(o['handing_ms'])} |"
        )
    lines += [
        "",
        "| offset ms | stamp order = send order | first sender won | pairs in send order "
        "| pairs with send windows apart: in send order |",
        "|---|---|---|---|---|",
    ]
    for o in summary["offsets"]:
        lines.append(
            f"| {o['offset_ms']:g} | {share(o['order_matches'])} "
            f"| {share(o['first_sender_won'])} | {share(o['pairs_in_send_order'])} "
            f"| {share(o['pairs_apart_in_send_order'])} of {o['pairs_apart']} |"
        )
    odd = summary["anomalies"]
    if odd["winner_not_first_stamp"]:
        lines.append(
            f"\nIn {odd['winner_not_first_stamp']} races the winner's grab was not the one "
            "with the smallest receive sequence."
        )
    if odd["stamp_time_order_differs_from_sequence"]:
        lines.append(
            f"\nIn {odd['stamp_time_order_differs_from_sequence']} races the order of the "
            "stamps' monotonic_ns differs from their sequence order."
        )
    late = sum(o["started_late"] for o in summary["offsets"])
    if late:
        lines.append(f"\n{late} grabs got their start signal after their send time (sent at once).")
    lines += [
        "",
        "| pairs sent apart by | pairs | stamped in send order | with send windows apart "
        "| of which in send order |",
        "|---|---|---|---|---|",
    ]
    for g in summary["gaps"]:
        span = (
            f"{g['from_us']:g} µs or more"
            if g["to_us"] is None
            else f"{g['from_us']:g}–{g['to_us']:g} µs"
        )
        lines.append(
            f"| {span} | {g['pairs']} | {share(g['in_send_order'], 1)} | {g['pairs_apart']} "
            f"| {share(g['apart_in_send_order'], 1)} |"
        )
    f = summary["fairness"]
    total = f["races"]
    lines += [
        "",
        f"Wins at offset 0 ({total} races; p: that one against its equal share, 1 dof):",
        "",
        "| # | seat wins | share | p | connection wins | share | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for i in range(c["clients"]):
        sw, cw = f["seat_wins"][i], f["connection_wins"][i]
        lines.append(
            f"| {i} | {sw} | {sw / max(total, 1):.1%} | {f['seat_p_each'][i]:.3f} "
            f"| {cw} | {cw / max(total, 1):.1%} | {f['connection_p_each'][i]:.3f} |"
        )
    lines += [
        "",
        f"chi-square against equal shares ({f['dof']} dof): seats {f['seat_chi_square']:.2f}, "
        f"p = {f['seat_p']:.3g}; connections {f['connection_chi_square']:.2f}, "
        f"p = {f['connection_p']:.3g}",
        "",
        "Targets:",
    ]
    t = summary["targets"]

    def verdict(met: bool) -> str:
        return "met" if met else "NOT met"

    order = t["order_at_1ms_and_more"]
    figures = ", ".join(f"{k} ms: {v:.0%}" for k, v in order["figures"].items())
    lines.append(
        f"- stamp order = send order ≥ 95% at offsets ≥ 1 ms: {verdict(order['met'])} ({figures})"
    )
    for key, name in (("no_seat_bias", "seat"), ("no_connection_bias", "connection")):
        item = t[key]
        if item["races"] < 600:
            outcome = f"not tested, {item['races']} races (600 needed)"
        else:
            outcome = verdict(item["met"])
        lines.append(f"- no {name} bias, p > 0.01: {outcome} (p = {item['p']:.3g})")
    spread = t["stamp_spread_within_2x_send_spread"]
    ratio = "n/a" if spread["ratio"] is None else f"{spread['ratio']:.1f}x"
    lines.append(
        f"- median stamp spread ≤ 2x median send spread at offset 0: {verdict(spread['met'])} "
        f"({ratio})"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Grab races: receive order against send order, and win shares per seat "
        "and per connection. The module docstring (bench/race.py) says what is measured.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("-n", "--clients", type=int, default=6, help="contenders, 2 to 8")
    parser.add_argument("--races", type=int, default=600, help="races at offset 0")
    parser.add_argument(
        "--races-per-offset", type=int, default=100, help="races at each non-zero offset"
    )
    parser.add_argument(
        "--offsets", default=DEFAULT_OFFSETS, help="send offsets in ms, comma-separated"
    )
    parser.add_argument(
        "--store", choices=("sqlite", "postgres"), default="sqlite", help="event store"
    )
    parser.add_argument("--dsn", default=DEFAULT_DSN, help="PostgreSQL (a schema per run)")
    parser.add_argument(
        "--watchers", type=int, default=4, help="spectator streams per match, besides the seats'"
    )
    parser.add_argument("--warmup", type=int, default=20, help="races run first and not counted")
    parser.add_argument("--margin-ms", type=float, default=15.0, help="start signal lead time")
    parser.add_argument("--spin-us", type=int, default=200, help="busy-wait before a send")
    parser.add_argument("--seed", type=int, default=12, help="seed of the schedule and ranks")
    parser.add_argument(
        "--server-root",
        type=Path,
        metavar="DIR",
        help="run the server from another source tree, e.g. a commit exported with "
        "'git archive COMMIT | tar -x -C DIR' (the clients stay this tree's; default: "
        "this tree)",
    )
    parser.add_argument("--json", metavar="FILE", help="write every race and the summary here")
    parser.add_argument("--progress", action="store_true", help="a line per 100 races")
    args = parser.parse_args(argv)
    if not 2 <= args.clients <= 8:
        parser.error("--clients must be 2 to 8")
    if args.races < 0 or args.races_per_offset < 0 or args.warmup < 0:
        parser.error("race counts must not be negative")
    offsets = [float(o) for o in args.offsets.split(",")]
    if any(o < 0 for o in offsets) or 0.0 not in offsets:
        parser.error("--offsets must be non-negative and include 0")
    races, config = run(args)
    summary = summarise(races, config)
    print(report(summary))
    if args.json:
        raw = {"summary": summary, "races": [asdict(r) for r in races]}
        Path(args.json).write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
