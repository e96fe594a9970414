"""Benchmarks: committed commands per second with many concurrent matches, each watched.

Run ``python bench/throughput.py [--matches 1 10 100 1000] [--store sqlite postgres]
[--seconds 20] [--clients 2] [--via act|play] [--rounds N] [--against DIR]``. For each
store and each number of concurrent matches:

- **game**: ``totem serve`` in a process of its own (bench/race.py's ``Server``: a fresh
  store, its rate bounds lifted, and here its stream and call caps raised), and
  ``--clients`` client processes sharing the matches. Each match is a loop: create a
  Jungle Speed match of 2 seats (turn timer off), open 4 spectator ``Watch`` streams on
  it (the fan-out), seat both players, then send ``Act`` after ``Act``, each chosen from
  the state the last answer carried (bench/stream.py's ``next_move``: a grab offered, else
  a reveal by the seat whose turn it is), one in flight per match; when the match ends,
  or nobody may act, its watchers are closed and a new match starts. An answered
  command is a committed command. How a command is sent is ``--via``: with ``act`` (the
  default) each is an ``Act`` call of its own; with ``play`` each is a ``PlayRequest``
  on a ``Play`` stream of its seat, one stream per seat of the match, opened with the
  seat's token once both seats are taken and before the match's first command (untimed,
  like the joins: a token is a match's own, so each match opens its own two streams),
  each command a write and the read of its ``PlayResponse`` (a refusal counts as a
  failure, as a failed ``Act`` does), and the streams ended (no more requests, then
  their status) with the match. Everything else is the same.
- **echo** (the baseline): a bare ``grpc.aio`` server in a process of its own with a unary
  ``Echo`` that also pushes the request's bytes to the ``Listen`` streams of its key, and
  the same client loops, in the same processes, with the same channels and concurrency:
  4 ``Listen`` streams per loop, then ``Echo`` after ``Echo``.
- **stream echo** (the baseline of ``--via play``): the same server's bidirectional
  ``EchoStream``, which answers each message with its own bytes after pushing them to the
  ``Listen`` streams of its key, as ``Echo`` does; the same loops, each keeping one open
  stream (opened before its first round, untimed) on which it writes a message and reads
  its echo, round trip after round trip, with 4 ``Listen`` streams per key as above.
  Both baselines are measured whichever ``--via``, on raw bytes (no (de)serialisation).
- **stored echo** (the floor under a committed command): the echo with persistence and
  nothing else, in a bare ``grpc.aio`` server of its own on a fresh store of the same kind:
  each ``StoredEcho`` call appends an event to its key's aggregate and saves it through
  the server's own group commit (``server.commits.Committer``: the saves waiting at the
  same time in one transaction, in a store thread) before it pushes the bytes to the
  key's 4 ``Listen`` streams and answers. The same loops as the echo. No rules, state,
  stamps, token, hash chain or summary row: the game's distance from it is the server's
  own work per command, not the store's.
- **save**: the eventsourcing library's own rate of saving a one-event aggregate (a
  trivial aggregate created and saved, in a loop, one thread) on a fresh store of the
  same kind, in this process.

With ``--rounds N`` each concurrency is measured N times, and in each round every server
is driven in turn, one window each: the echo, the game (and the game of ``--against``,
the two in turn), the stored echo, the stream echo. The servers stay up through the
rounds (the game's fresh for each concurrency). Each ratio is taken within a round, and
the verdict gives the medians of the rounds' ratios: on a shared machine the rates move
by a third from one minute to the next, and a ratio of windows taken minutes apart
moves with them. ``--against DIR`` serves the game from another source tree too (the
commit before a change, say, exported with ``git archive``), driven by the same clients
next to this tree's in every round, first in every other round (the second game of a
round ran about 8% slower than the first, whichever tree it was): the before and after
of a change, side by side; give an even number of rounds.

Only the commands answered inside a window of ``--seconds`` are counted, after every loop
has been answered once. The server's CPU time over the window (``/proc``, every thread) is
given per command, and the clients' apart; the machine's too, for what else ran. Ratios
are game / echo and game / stream echo at the same concurrency (the latter is the
like-for-like baseline of ``--via play``), game / save, stored echo / echo, and game /
stored echo. The issue's target: at least 60% of the (unary) echo figure at 100 matches.

Every loop is bounded in time; tests never assert a duration, the figures go to
docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import grpc
from commits import store
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event
from latency import serve_until_told
from race import applied, close_play, stream_round_trip
from stream import next_move

from bench.harness import (
    DEFAULT_DSN,
    ORGANISER_TOKEN,
    Server,
    add_server_root,
    busy_ticks,
    machine_line,
    process_ticks,
    server_root,
)
from server.commits import Committer
from server.limits import Limits
from storage.threads import StoreThreads
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

WATCHERS = 4
ECHO_SERVICE = "bench.Echo"
#: How the game's commands are sent (``--via``): an Act call each, or a message each on a
#: Play stream per seat.
ACT, PLAY = "act", "play"
#: What a client process's loops do: the game via Act or Play, or a baseline.
ECHO, STREAM_ECHO, STORED_ECHO = "echo", "stream_echo", "stored_echo"
#: The initial metadata of a Play stream the server accepted (server/service.py).
PLAY_ACCEPTED = ("totem-play", "accepted")
#: Each client process spreads its loops over this many channels (TCP connections).
CHANNELS_PER_CLIENT = 8
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]
#: Seconds one call may take before the loop gives up on its match and starts another.
CALL_TIMEOUT = 60.0
#: Seconds the loops may take to all be answered once before the run stops.
RAMP_TIMEOUT = 300.0
#: What the server must allow for 1,000 matches of 4 watchers and 2 players from one host.
SERVER_ENV = {
    "TOTEM_STREAMS_PER_CONNECTION": "1000000",
    "TOTEM_STREAMS_PER_ADDRESS": "1000000",
    "TOTEM_MAX_CONCURRENT_CALLS": "1000000",
    "TOTEM_PENDING_CALLS": "1000000",
    "TOTEM_ORGANISER_CREATIONS_PER_MINUTE": "100000000",
}


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


# ---- the client loops -------------------------------------------------------------------


@dataclass
class Tally:
    """What one client process's loops did: answered commands, with their times."""

    answered: list[float] = field(default_factory=list)  # perf_counter at each answer
    latency: list[tuple[float, float]] = field(default_factory=list)  # (answered, seconds)
    failures: list[str] = field(default_factory=list)
    rounds: int = 0  # matches (or echo keys) begun
    first: set[int] = field(default_factory=set)  # loops answered at least once
    stop: float = float("inf")  # perf_counter after which no loop sends again


async def _drain(call: Any) -> None:
    try:
        async for _ in call:
            pass
    except (grpc.aio.AioRpcError, asyncio.CancelledError):
        pass


async def _open_play(stub: match_service_pb2_grpc.MatchServiceStub, token: str) -> Any:
    """A seat's Play stream, once the server said it accepted it: writing before that
    may race with a refusal, which grpcio's asyncio client reports badly (grpc/grpc#36066)."""
    stream = stub.Play(metadata=bearer(token))
    try:
        async with asyncio.timeout(CALL_TIMEOUT):
            metadata = await stream.initial_metadata()
        if PLAY_ACCEPTED not in tuple(metadata or ()):
            code, details = await stream.code(), await stream.details()
            raise RuntimeError(f"the Play stream was not accepted: {code} {details}")
        # A ready request first, as the clients send (no command is a stream's first).
        await stream_round_trip(stream, ms.PlayRequest(ready=ms.PlayReady()))
    except BaseException:
        stream.cancel()
        raise
    return stream


class GameLoop:
    """One match after another, each watched by 4 spectators, played as fast as answered:
    an Act call per command, or (``via`` play) a message on the acting seat's Play stream."""

    def __init__(self, channel: grpc.aio.Channel, organiser: str, via: str = ACT) -> None:
        self.organiser = bearer(organiser)
        self.via = via
        self.stub = match_service_pb2_grpc.MatchServiceStub(channel)
        self.watch = channel.unary_stream(
            "/totem.v1.MatchService/Watch",
            request_serializer=ms.WatchRequest.SerializeToString,
            response_deserializer=lambda data: data,
        )

    async def round(self, index: int, tally: Tally) -> None:
        created = await self.stub.CreateMatch(
            ms.CreateMatchRequest(
                game=common_pb2.GAME_JUNGLE_SPEED,
                jungle_speed=js.JungleSpeedOptions(max_players=2, turn_timeout_ms=0),
            ),
            metadata=self.organiser,
            timeout=CALL_TIMEOUT,
        )
        match_id = created.match_id
        watchers = [
            asyncio.create_task(_drain(self.watch(ms.WatchRequest(match_id=match_id))))
            for _ in range(WATCHERS)
        ]
        plays: list[Any] = []  # the seats' Play streams, in seat order, while open
        try:
            tokens = []
            for seat in range(2):
                joined = await self.stub.JoinMatch(
                    ms.JoinMatchRequest(match_id=match_id, name=f"p{seat}", seat=seat),
                    timeout=CALL_TIMEOUT,
                )
                tokens.append(joined.player_token)
            view = await self.stub.GetMatch(
                ms.GetMatchRequest(match_id=match_id), metadata=bearer(tokens[0])
            )
            if self.via == PLAY:  # untimed, before the match's first command
                for token in tokens:
                    plays.append(await _open_play(self.stub, token))
            me, state, summary = 0, view.jungle_speed, view.summary
            while (
                summary.status != common_pb2.MATCH_STATUS_ENDED and time.perf_counter() < tally.stop
            ):
                move = next_move(state, me)
                if move is None:
                    break
                me, command = move
                began = time.perf_counter()
                request = ms.ActRequest(
                    match_id=match_id, seen_version=summary.version, jungle_speed=command
                )
                if plays:
                    # Bounded as an Act call is (no task: a timer on this one).
                    async with asyncio.timeout(CALL_TIMEOUT):
                        response = await stream_round_trip(plays[me], ms.PlayRequest(act=request))
                    done = time.perf_counter()
                    acted = applied(response)
                else:
                    acted = await self.stub.Act(
                        request, metadata=bearer(tokens[me]), timeout=CALL_TIMEOUT
                    )
                    done = time.perf_counter()
                tally.answered.append(done)
                tally.latency.append((done, done - began))
                tally.first.add(index)
                state, summary = acted.state.jungle_speed, acted.state.summary
            async with asyncio.timeout(CALL_TIMEOUT):
                while plays:
                    await close_play(plays[-1])
                    plays.pop()
        finally:
            for stream in plays:
                stream.cancel()
            for task in watchers:
                task.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)


class EchoLoop:
    """The same loop against a bare gRPC server: 4 listeners per key, then echoes."""

    #: Echoes per key before a new key (about a Jungle Speed match's commands).
    PER_ROUND = 100
    #: The echo server's unary method each round trip calls.
    METHOD = "Echo"

    def __init__(self, channel: grpc.aio.Channel, organiser: str) -> None:
        identity = {"request_serializer": bytes, "response_deserializer": bytes}
        self.echo = channel.unary_unary(f"/{ECHO_SERVICE}/{self.METHOD}", **identity)
        self.listen = channel.unary_stream(f"/{ECHO_SERVICE}/Listen", **identity)
        self.echo_stream = channel.stream_stream(f"/{ECHO_SERVICE}/EchoStream", **identity)
        self.payload = ms.ActRequest(
            match_id=str(uuid.uuid4()),
            seen_version=42,
            jungle_speed=js.JungleSpeedCommand(reveal=js.JungleSpeedReveal()),
        ).SerializeToString()

    async def round(self, index: int, tally: Tally) -> None:
        key = uuid.uuid4().bytes
        watchers = [asyncio.create_task(_drain(self.listen(key))) for _ in range(WATCHERS)]
        try:
            await asyncio.sleep(0)
            for _ in range(self.PER_ROUND):
                if time.perf_counter() >= tally.stop:
                    return
                began = time.perf_counter()
                await self.once(key + self.payload)
                done = time.perf_counter()
                tally.answered.append(done)
                tally.latency.append((done, done - began))
                tally.first.add(index)
        finally:
            for task in watchers:
                task.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)

    async def once(self, request: bytes) -> None:
        await self.echo(request, timeout=CALL_TIMEOUT)

    def close(self) -> None:
        pass


class StoredEchoLoop(EchoLoop):
    """The same loop, each echo stored first: the floor under a committed command."""

    METHOD = "StoredEcho"


class StreamEchoLoop(EchoLoop):
    """The same loop with each echo a round trip on one stream the loop keeps open: the
    baseline of the game via Play."""

    def __init__(self, channel: grpc.aio.Channel, organiser: str) -> None:
        super().__init__(channel, organiser)
        self.stream: Any = None

    async def round(self, index: int, tally: Tally) -> None:
        if self.stream is None or self.stream.done():  # untimed; again only after a failure
            self.stream = self.echo_stream()
        await super().round(index, tally)

    async def once(self, request: bytes) -> None:
        # Bounded as the game's Play round trip is (no task: a timer on this one).
        async with asyncio.timeout(CALL_TIMEOUT):
            await stream_round_trip(self.stream, request)

    def close(self) -> None:
        if self.stream is not None:
            self.stream.cancel()


#: The loop of each baseline.
ECHO_LOOPS: dict[str, type[EchoLoop]] = {
    ECHO: EchoLoop,
    STREAM_ECHO: StreamEchoLoop,
    STORED_ECHO: StoredEchoLoop,
}


async def _client(
    address: str, kind: str, loops: int, conn: multiprocessing.connection.Connection, token: str
) -> None:
    channels = [
        grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
        for _ in range(min(loops, CHANNELS_PER_CLIENT))
    ]
    tally = Tally()

    async def run(index: int) -> None:
        channel = channels[index % len(channels)]
        player: GameLoop | EchoLoop
        if kind in (ACT, PLAY):
            player = GameLoop(channel, token, kind)
        else:
            player = ECHO_LOOPS[kind](channel, token)
        try:
            while time.perf_counter() < tally.stop:
                tally.rounds += 1
                try:
                    await player.round(index, tally)
                except grpc.aio.AioRpcError as error:
                    tally.failures.append(f"{error.code().name}: {error.details()}")
                    await asyncio.sleep(0.1)
                except (RuntimeError, TimeoutError) as error:  # a stream's end or refusal
                    tally.failures.append(f"{type(error).__name__}: {error}")
                    if isinstance(player, StreamEchoLoop):
                        player.close()
                    await asyncio.sleep(0.1)
        finally:
            if isinstance(player, EchoLoop):
                player.close()

    tasks = [asyncio.create_task(run(i)) for i in range(loops)]
    deadline = time.monotonic() + RAMP_TIMEOUT
    while len(tally.first) < loops and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)  # polls a counter the loops fill; bounded in time
    conn.send(("ready", len(tally.first), tally.failures[:1]))
    loop = asyncio.get_running_loop()
    window = await loop.run_in_executor(None, conn.recv)  # (begin, end), perf_counter
    tally.stop = window[1]
    await asyncio.gather(*tasks)
    inside = [s for t, s in tally.latency if window[0] <= t <= window[1]]
    conn.send(
        {
            "commands": sum(1 for t in tally.answered if window[0] <= t <= window[1]),
            "latency": inside,
            "failures": tally.failures[:5],
            "failed": len(tally.failures),
            "rounds": tally.rounds,
        }
    )
    for channel in channels:
        await channel.close()


def client_main(
    address: str, kind: str, loops: int, conn: multiprocessing.connection.Connection, token: str
) -> None:
    """A client process: ``kind`` is ``act`` or ``play`` (the game, via Act or Play),
    ``echo`` or ``stream_echo``; ``token`` is the organiser's (a spawned process draws its
    own)."""
    asyncio.run(_client(address, kind, loops, conn, token))


# ---- the echo server ----------------------------------------------------------------------


class Echoes(Aggregate):
    """A loop's key in the stored echo: an event per echo, as a match has one per command."""

    @event("Echoed")
    def echoed(self, size: int) -> None:
        self.size = size


async def _echo_server(
    conn: multiprocessing.connection.Connection, store_env: dict[str, str] | None = None
) -> None:
    """The bare server; given ``store_env`` (the library's environment) it also serves the
    stored echo: each call's key gets an event, saved through the server's own
    :class:`Committer` (several waiting saves in one transaction, in a store thread) before
    the listeners get the bytes and the caller its answer. Nothing else of a command's work
    (no rules, state, stamps, token, hash chain or summary row): the floor under Act."""
    listeners: dict[bytes, list[asyncio.Queue[bytes]]] = {}
    committer = None
    if store_env is not None:
        committer = Committer(cast(Any, Application(env=store_env)), StoreThreads())
    keys: dict[bytes, Echoes] = {}

    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        for queue in listeners.get(request[:16], ()):
            queue.put_nowait(request)
        return request

    async def stored_echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        assert committer is not None
        key = request[:16]
        echoes = keys.get(key)
        if echoes is None:
            echoes = keys[key] = Echoes()
        echoes.echoed(len(request))
        await committer.save(cast(Any, echoes))
        return await echo(request, context)

    async def echo_stream(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext
    ) -> None:
        async for request in requests:
            for queue in listeners.get(request[:16], ()):
                queue.put_nowait(request)
            await context.write(request)

    async def listen(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        listeners.setdefault(request, []).append(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            listeners[request].remove(queue)
            if not listeners[request]:
                del listeners[request]

    identity = {"request_deserializer": bytes, "response_serializer": bytes}
    # gRPC's core cancels calls beyond its queue of calls not yet taken (a bare
    # CANCELLED): the same queue as totem serve's, or the baseline drops calls it keeps.
    options = [("grpc.so_reuseport", 0), *Limits(pending_calls=10**6).grpc_options()]
    server = grpc.aio.server(options=options)
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                ECHO_SERVICE,
                {
                    "Echo": grpc.unary_unary_rpc_method_handler(echo, **identity),
                    "StoredEcho": grpc.unary_unary_rpc_method_handler(stored_echo, **identity),
                    "EchoStream": grpc.stream_stream_rpc_method_handler(echo_stream, **identity),
                    "Listen": grpc.unary_stream_rpc_method_handler(listen, **identity),
                },
            ),
        )
    )
    await serve_until_told(server, conn)


def echo_main(
    conn: multiprocessing.connection.Connection, store_env: dict[str, str] | None = None
) -> None:
    asyncio.run(_echo_server(conn, store_env))


class EchoServer:
    """The baseline server, in a process of its own; with ``store_env``, the stored echo."""

    def __init__(self, store_env: dict[str, str] | None = None) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=echo_main, args=(theirs, store_env), daemon=True)
        self.process.start()
        if not self.conn.poll(30):
            raise RuntimeError("the echo server did not start")
        self.port: int = self.conn.recv()
        self.pid: int = self.process.pid or 0

    def stop(self) -> None:
        self.conn.send("stop")
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()


# ---- one measurement --------------------------------------------------------------------


@dataclass
class Result:
    commands: int
    seconds: float
    latency: list[float]
    failed: int
    failures: list[str]
    rounds: int
    server_ticks: int
    client_ticks: int
    machine_ticks: int

    @property
    def rate(self) -> float:
        return self.commands / self.seconds


def drive(
    address: str, server_pid: int, kind: str, matches: int, args: argparse.Namespace
) -> Result:
    """Run ``matches`` loops of ``kind`` over the client processes; count one window."""
    context = multiprocessing.get_context("spawn")
    shares = [matches // args.clients + (i < matches % args.clients) for i in range(args.clients)]
    children = []
    for share in (s for s in shares if s):
        mine, theirs = context.Pipe()
        process = context.Process(
            target=client_main, args=(address, kind, share, theirs, ORGANISER_TOKEN), daemon=True
        )
        process.start()
        children.append((process, mine))
    try:
        for _, conn in children:
            if not conn.poll(RAMP_TIMEOUT + 30):
                raise RuntimeError("a client process did not get going")
            _, ready, failures = conn.recv()
            if ready == 0:
                raise RuntimeError(f"a client process got no answer at all: {failures}")
        # perf_counter is CLOCK_MONOTONIC on Linux: the same clock in every process.
        begin = time.perf_counter() + 1.0
        end = begin + args.seconds
        for _, conn in children:
            conn.send((begin, end))
        time.sleep(max(0.0, begin - time.perf_counter()))
        pids = [p.pid or 0 for p, _ in children]
        ticks = (process_ticks([server_pid]), process_ticks(pids), busy_ticks())
        time.sleep(max(0.0, end - time.perf_counter()))
        after = (process_ticks([server_pid]), process_ticks(pids), busy_ticks())
        reports = [conn.recv() if conn.poll(CALL_TIMEOUT + 30) else {} for _, conn in children]
    finally:
        for process, _ in children:
            process.join(30)
            if process.is_alive():
                process.kill()
    return Result(
        commands=sum(r.get("commands", 0) for r in reports),
        seconds=args.seconds,
        latency=[s for r in reports for s in r.get("latency", [])],
        failed=sum(r.get("failed", 0) for r in reports),
        failures=[f for r in reports for f in r.get("failures", [])],
        rounds=sum(r.get("rounds", 0) for r in reports),
        server_ticks=after[0] - ticks[0],
        client_ticks=after[1] - ticks[1],
        machine_ticks=after[2] - ticks[2],
    )


class Trivial(Aggregate):
    """An aggregate whose only event is its creation: the least a save can store."""


def save_rate(kind: str, dsn: str, seconds: float) -> float:
    """One-event aggregates saved per second by the library alone, on a fresh store."""
    with store(dsn if kind == "postgres" else None) as env:
        app: Application[Any] = Application(env=env)
        try:
            for _ in range(50):  # warm up
                app.save(Trivial())
            saved = 0
            began = time.perf_counter()
            while time.perf_counter() - began < seconds:
                app.save(Trivial())
                saved += 1
            return saved / (time.perf_counter() - began)
        finally:
            app.close()


# ---- the run ------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def row(
    name: str,
    matches: int,
    result: Result,
    echo: Result | None,
    save: float,
    stream_echo: Result | None = None,
) -> str:
    tick = os.sysconf("SC_CLK_TCK")
    per = result.commands or 1
    vs_echo = f"{result.rate / echo.rate:.0%}" if echo and echo.rate else "-"
    vs_stream = f"{result.rate / stream_echo.rate:.0%}" if stream_echo and stream_echo.rate else "-"
    failed = f" ({result.failed} failed: {result.failures[0]})" if result.failed else ""
    return (
        f"| {name}{failed} | {matches:,} | {result.rate:,.0f} | {vs_echo} | {vs_stream} "
        f"| {result.rate / save:.2f} | {statistics.median(result.latency or [0]) * 1e3:.1f} "
        f"/ {percentile(result.latency, 0.99) * 1e3:.1f} "
        f"| {result.server_ticks / tick / per * 1e6:,.0f} "
        f"| {result.client_ticks / tick / per * 1e6:,.0f} "
        f"| {result.machine_ticks / tick / result.seconds:.2f} |"
    )


@dataclass
class Round:
    """One round at one concurrency: each server driven in turn, one window each."""

    echo: Result
    stream_echo: Result
    stored_echo: Result
    game: Result
    #: The game served from ``--against``'s tree, if given.
    against: Result | None = None


def median_ratio(
    rounds: list[Round],
    top: Callable[[Round], Result | None],
    bottom: Callable[[Round], Result | None],
) -> float:
    """The median over ``rounds`` of one figure's rate over another's, both of one round:
    a ratio of rates measured minutes apart moves with whatever else the machine does."""
    ratios = []
    for r in rounds:
        numerator, denominator = top(r), bottom(r)
        if numerator is not None and denominator is not None and denominator.rate:
            ratios.append(numerator.rate / denominator.rate)
    return statistics.median(ratios) if ratios else float("nan")


def game_server(kind: str, args: argparse.Namespace, root: Path, workdir: Path) -> Server:
    return Server(kind, args.postgres, workdir, root=root, extra_env=SERVER_ENV)


def measure_round(
    matches: int,
    args: argparse.Namespace,
    echo: EchoServer,
    stored: EchoServer,
    game: Server,
    against: Server | None,
    index: int,
) -> Round:
    def driven(port: int, pid: int, kind: str) -> Result:
        return drive(f"127.0.0.1:{port}", pid, kind, matches, args)

    # The echo right before the games, whose ratio to it is the target; the two games
    # in turn, the first of them every other round (the second game of a round ran
    # about 8% slower than the first, whichever tree it was).
    first = driven(echo.port, echo.pid, ECHO)
    games: list[Server | None] = [game, against] if index % 2 == 0 else [against, game]
    played = {
        id(server): driven(server.port, server.process.pid, args.via)
        for server in games
        if server is not None
    }
    return Round(
        echo=first,
        game=played[id(game)],
        against=played[id(against)] if against is not None else None,
        stored_echo=driven(stored.port, stored.pid, STORED_ECHO),
        stream_echo=driven(echo.port, echo.pid, STREAM_ECHO),
    )


def round_rows(name: str, kind: str, matches: int, r: Round, save: float, index: int) -> list[str]:
    label = f" (round {index})" if index else ""
    rows = [row(f"{name}, {kind}{label}", matches, r.game, r.echo, save, r.stream_echo)]
    if r.against is not None:
        against = f"{name} of --against, {kind}{label}"
        rows.append(row(against, matches, r.against, r.echo, save, r.stream_echo))
    rows.append(row(f"echo (baseline){label}", matches, r.echo, None, save))
    rows.append(row(f"stream echo (baseline){label}", matches, r.stream_echo, None, save))
    rows.append(row(f"stored echo, {kind} (floor){label}", matches, r.stored_echo, r.echo, save))
    return rows


def main(args: argparse.Namespace) -> None:
    print(machine_line(), flush=True)
    print(
        f"{args.clients} client processes, {WATCHERS} watchers a match, window {args.seconds} s, "
        f"{args.rounds} round(s): every server driven in turn in each round",
        flush=True,
    )
    path = (
        "an Act call per command"
        if args.via == ACT
        else "a message per command on a Play stream per seat, opened (untimed) before the "
        "match's first command"
    )
    print(f"game commands via {args.via}: {path}", flush=True)
    if args.against is not None:
        print(f"--against: the game is also served from {args.against}, in the same rounds")
    header = (
        "| what | matches | commands/s | / echo | / stream echo | / save | latency p50 / p99 ms "
        "| server CPU µs/command | clients' CPU µs/command | machine busy, cores |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    name = "game" if args.via == ACT else "game via Play"
    many = args.rounds > 1
    echo = EchoServer()
    try:
        for kind in args.store:
            save = save_rate(kind, args.postgres, args.save_seconds)
            print(f"{kind}: library save of a one-event aggregate: {save:,.0f}/s", flush=True)
            lines: list[str] = []
            verdicts: list[str] = []
            with store(args.postgres if kind == "postgres" else None) as env:
                stored = EchoServer(store_env=env)
                try:
                    for matches in args.matches:
                        rounds = measure_at(kind, matches, args, echo, stored)
                        for index, r in enumerate(rounds, start=1):
                            more = round_rows(name, kind, matches, r, save, index if many else 0)
                            print(more[0], flush=True)
                            lines.extend(more)
                        verdicts.append(verdict(kind, matches, rounds))
                finally:
                    stored.stop()
            print(f"\n{kind}: library save {save:,.0f}/s\n{header}")
            print("\n".join(lines), flush=True)
            print("\n".join(verdicts), flush=True)
    finally:
        echo.stop()
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def measure_at(
    kind: str, matches: int, args: argparse.Namespace, echo: EchoServer, stored: EchoServer
) -> list[Round]:
    """``--rounds`` rounds at one concurrency, each game server fresh for it."""
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        game = game_server(kind, args, server_root(args), Path(one))
        against = None
        try:
            if args.against is not None:
                against = game_server(kind, args, args.against.resolve(), Path(two))
            return [
                measure_round(matches, args, echo, stored, game, against, index)
                for index in range(args.rounds)
            ]
        finally:
            game.stop()
            if against is not None:
                against.stop()


def verdict(kind: str, matches: int, rounds: list[Round]) -> str:
    """The ratios the issue's target and a comparison are read from, as medians over the
    rounds of each round's own ratios."""
    game = median_ratio(rounds, lambda r: r.game, lambda r: r.echo)
    floor = median_ratio(rounds, lambda r: r.stored_echo, lambda r: r.echo)
    of_floor = median_ratio(rounds, lambda r: r.game, lambda r: r.stored_echo)
    text = (
        f"{kind}, {matches} matches, median of {len(rounds)} round(s): the game is "
        f"{game:.0%} of the echo, the stored echo {floor:.0%}; the game is {of_floor:.0%} "
        "of the stored echo"
    )
    if rounds[0].against is not None:
        before = median_ratio(rounds, lambda r: r.against, lambda r: r.echo)
        change = median_ratio(rounds, lambda r: r.game, lambda r: r.against)
        text += (
            f"; --against's game {before:.0%} of the echo; this tree's / --against's {change:.2f}"
        )
    if matches == 100:
        met = "met" if game >= 0.6 else "not met"
        text += f"\ntarget (≥ 60% of echo at 100 matches), {kind}: {game:.0%}, {met}"
    return text


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument(
        "--store", nargs="+", choices=("sqlite", "postgres"), default=["sqlite", "postgres"]
    )
    parser.add_argument("--postgres", default=DEFAULT_DSN, metavar="DSN")
    parser.add_argument("--seconds", type=float, default=20.0, help="the counted window")
    parser.add_argument("--save-seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument(
        "--via",
        choices=(ACT, PLAY),
        default=ACT,
        help="how the game's commands are sent: act, an Act call each (the default); play, "
        "a message each on a Play stream per seat, opened before the match's first command "
        "(both echo baselines are measured either way)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="rounds at each concurrency, every server driven in turn in each: the ratios "
        "are each round's own, and their medians are given",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="also serve the game from another source tree (e.g. the commit before, "
        "exported with 'git archive COMMIT | tar -x -C DIR'), driven in the same rounds",
    )
    add_server_root(parser)
    args = parser.parse_args(argv)
    if args.clients < 1 or args.seconds <= 0 or any(m < 1 for m in args.matches):
        parser.error("--clients, --seconds and --matches must be positive")
    if args.rounds < 1:
        parser.error("--rounds must be positive")
    return args


if __name__ == "__main__":
    main(parse(sys.argv[1:]))
