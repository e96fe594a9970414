"""Grab race latency with 8 watching seats, beside bare gRPC baselines from the same run.

Run ``python bench/latency.py [--store sqlite|postgres] [--races N]``. Everything runs on
this machine, over loopback, in three processes:

- the server (``python -m server serve``) in a process of its own, on a fresh store: a
  temporary SQLite file, or a PostgreSQL schema made for the run and dropped after it
  (bench/race.py's :class:`Server`);
- a bare ``grpc.aio`` server in another process: a generic unary handler that answers
  with the request's own bytes (echo), a bidirectional stream that answers each message
  with its own bytes (stream echo), and a publish call whose bytes the server writes to
  every open server-streaming subscription before it answers (fan-out);
- this process, the client: one ``grpc.aio`` channel (one connection) per seat.

A race: an 8-seat Jungle Speed match whose prearranged deal puts an inward-arrows card on
top of seat 0's pile, turn timer off. Each seat joins on its own channel and watches the
match on its own stream with its player token; seat 0 reveals the inward arrows, every
stream shows the reveal, then one seat grabs (seat k of race k, mod 8): the grab wins
the race (JS-6.1) and ArrowsWon follows. How the grab is sent is ``--via``: ``act`` (the
default), an Act call; ``play``, a PlayRequest on a Play stream the grabbing seat opened
on its channel before the reveal (untimed; a call of its own on the channel after it,
answered, shows the server has taken the stream's call, so the grab is a message on an
open stream). Timed, from just before the Act call or the stream's write:

- (a) grab round trip: until the Act call is answered, or the stream's PlayResponse
  arrives (the event is stamped, decided, stored and fanned out);
- (b) all 8 watchers: until the last of the 8 streams has delivered the ArrowsWon event.

Each race gets a fresh match (its setup is not timed). Before each race, on the same
client, one echo call (baseline of an Act grab), right after an untimed one as the grab
comes right after the reveal; one message on the stream echo opened at the start of the
run (baseline of a Play grab: no call to set up), right after an untimed one; and one
publish to 8 subscriptions held on 8 channels (baseline of (b): publish round trip, and
until all 8 streams have the bytes), with a request as large as the grab's. Interleaved,
so that the baselines and the races see the same load of this shared machine. Both echo
baselines are timed and printed whichever way the grab is sent, with (a) against each.

Targets (from the issue): grab round trip p50 within 2x the echo round trip's p50, p99
within 4x its p99. (a) against the stream echo, the like-for-like baseline of a Play
grab, and (b) against the fan-out baseline are printed with the same thresholds beside
it, as information. Figures go to docs/performance.md; tests never assert a duration.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
from race import INWARD_ARROWS, applied, close_play, stream_round_trip

from bench.harness import (
    ORGANISER,
    STEP_TIMEOUT,
    Server,
    add_server_root,
    add_store,
    percentile,
    server_root,
)

SEATS = 8
BARE = "bench.Bare"
ECHO, ECHO_STREAM, PUBLISH, SUBSCRIBE = (
    f"/{BARE}/{m}" for m in ("Echo", "EchoStream", "Publish", "Subscribe")
)
#: How the grab is sent (``--via``): an Act call, or a message on an open Play stream.
ACT, PLAY = "act", "play"


# ---- the bare gRPC server ------------------------------------------------------------------


def bare_server_main(conn: multiprocessing.connection.Connection) -> None:
    """Entry of the baseline server's process."""
    asyncio.run(_bare_server(conn))


async def _bare_server(conn: multiprocessing.connection.Connection) -> None:
    """Echo, publish and subscribe on raw bytes: no (de)serialisation, no work, so that
    what it costs is gRPC's and Python's own."""
    subscribers: set[asyncio.Queue[bytes]] = set()

    async def echo(request: bytes, _context: Any) -> bytes:
        return request

    async def echo_stream(requests: AsyncIterator[bytes], context: Any) -> None:
        async for request in requests:
            await context.write(request)

    async def publish(request: bytes, _context: Any) -> bytes:
        for queue in subscribers:
            queue.put_nowait(request)
        return request

    async def subscribe(_request: bytes, _context: Any) -> AsyncIterator[bytes]:
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        subscribers.add(queue)
        try:
            yield b""  # subscribed: the client may publish now
            while True:
                yield await queue.get()
        finally:
            subscribers.discard(queue)

    handler = grpc.method_handlers_generic_handler(
        BARE,
        {
            "Echo": grpc.unary_unary_rpc_method_handler(echo),
            "EchoStream": grpc.stream_stream_rpc_method_handler(echo_stream),
            "Publish": grpc.unary_unary_rpc_method_handler(publish),
            "Subscribe": grpc.unary_stream_rpc_method_handler(subscribe),
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    await serve_until_told(server, conn)


async def serve_until_told(
    server: grpc.aio.Server, conn: multiprocessing.connection.Connection
) -> None:
    """Run a baseline server in its own process: its port goes up ``conn``, and any
    message down it stops the server."""
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    conn.send(port)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, conn.recv)  # any message: stop
    await server.stop(grace=None)


# ---- streams read in tasks -------------------------------------------------------------


class Reader:
    """A server stream read to the end in a task. Its messages carry growing keys (an
    event's version, a publish's counter); :meth:`expect` returns a future that gets the
    ``perf_counter_ns`` at which the first message with at least that key arrived."""

    def __init__(self, call: Any, key: Callable[[Any], int]) -> None:
        self.call = call
        self.key = key
        self.latest = -2  # a subscription's first message has key -1
        self.waiting: list[tuple[int, asyncio.Future[int]]] = []
        self.task = asyncio.get_running_loop().create_task(self._read())

    def expect(self, key: int) -> asyncio.Future[int]:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if self.latest >= key:
            future.set_result(time.perf_counter_ns())  # already here: only for catching up
        else:
            self.waiting.append((key, future))
        return future

    async def _read(self) -> None:
        try:
            async for message in self.call:
                arrived = time.perf_counter_ns()
                self.latest = max(self.latest, self.key(message))
                still = []
                for key, future in self.waiting:
                    if key > self.latest:
                        still.append((key, future))
                    elif not future.done():
                        future.set_result(arrived)
                self.waiting = still
        except asyncio.CancelledError:
            raise
        except Exception as error:  # reported through the futures still waiting
            for _, future in self.waiting:
                if not future.done():
                    future.set_exception(error)

    async def close(self) -> None:
        self.call.cancel()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def _counter(message: bytes) -> int:
    return int.from_bytes(message[:8], "big") if len(message) >= 8 else -1


def _version(event: Any) -> int:
    return int(event.version)


async def _all(futures: Sequence[asyncio.Future[int]]) -> int:
    """The latest arrival of ``futures``."""
    return max(await asyncio.wait_for(asyncio.gather(*futures), STEP_TIMEOUT))


# ---- the run ----------------------------------------------------------------------------


class Samples:
    """Durations in nanoseconds, by name."""

    def __init__(self) -> None:
        self.by_name: dict[str, list[int]] = {}

    def add(self, name: str, ns: int) -> None:
        self.by_name.setdefault(name, []).append(ns)

    def stats(self, name: str) -> dict[str, float]:
        values = self.by_name[name]
        return {
            "p50": statistics.median(values) / 1e6,
            "p99": percentile(values, 0.99) / 1e6,
            "max": max(values) / 1e6,
        }


async def run(args: argparse.Namespace) -> tuple[Samples, dict[str, Any]]:
    from totem.v1 import common_pb2, match_service_pb2_grpc
    from totem.v1 import jungle_speed_pb2 as js
    from totem.v1 import match_service_pb2 as ms

    options = js.JungleSpeedOptions(
        max_players=SEATS,
        turn_timeout_ms=0,
        specials=js.JungleSpeedSpecials(inward_arrows=1),
        prearranged_deal=[INWARD_ARROWS, *range(INWARD_ARROWS)],
    )
    grab = js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
    reveal = js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())
    samples = Samples()
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    bare = context.Process(target=bare_server_main, args=(theirs,), daemon=True)
    bare.start()
    channels: list[grpc.aio.Channel] = []
    readers: list[Reader] = []
    streams: list[Any] = []  # the stream echo's, and a race's Play stream while it is open
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(args.store, args.dsn, Path(tmp), root=server_root(args))
        try:
            if not ours.poll(STEP_TIMEOUT):
                raise RuntimeError("the bare gRPC server did not start")
            bare_address = f"127.0.0.1:{ours.recv()}"
            address = f"127.0.0.1:{server.port}"
            # One channel per seat, on each server: each seat is a client of its own.
            seat_channels = [grpc.aio.insecure_channel(address) for _ in range(SEATS)]
            bare_channels = [grpc.aio.insecure_channel(bare_address) for _ in range(SEATS)]
            channels = [*seat_channels, *bare_channels]
            for channel in channels:
                await asyncio.wait_for(channel.channel_ready(), STEP_TIMEOUT)
            stubs = [match_service_pb2_grpc.MatchServiceStub(c) for c in seat_channels]
            echo = bare_channels[0].unary_unary(ECHO)
            # Opened once: each message is written on an open stream, as a Play grab is.
            echoing = bare_channels[0].stream_stream(ECHO_STREAM)()
            streams.append(echoing)
            publish = bare_channels[0].unary_unary(PUBLISH)
            subscribers = []
            for channel in bare_channels:
                reader = Reader(channel.unary_stream(SUBSCRIBE)(b""), _counter)
                subscribers.append(reader)
            readers = list(subscribers)
            await _all([r.expect(-1) for r in subscribers])  # every subscription is open
            # The baseline's request is as large as the grab's.
            size = len(
                ms.ActRequest(
                    match_id="0" * 36, seen_version=2, jungle_speed=grab
                ).SerializeToString()
            )
            load_before = os.getloadavg()
            began = time.monotonic()
            for index in range(args.warmup + args.races):
                counted = index >= args.warmup
                # (a)'s baseline: one echo, right after an untimed one, as the grab comes
                # right after the reveal: both servers are awake when the clock starts.
                payload = index.to_bytes(8, "big") + b"x" * max(0, size - 8)
                await echo(payload, timeout=STEP_TIMEOUT)
                sent = time.perf_counter_ns()
                await echo(payload, timeout=STEP_TIMEOUT)
                if counted:
                    samples.add("echo", time.perf_counter_ns() - sent)
                # A Play grab's baseline: one message on the open stream, right after an
                # untimed one.
                await stream_round_trip(echoing, payload)
                sent = time.perf_counter_ns()
                await stream_round_trip(echoing, payload)
                if counted:
                    samples.add("stream_echo", time.perf_counter_ns() - sent)
                # (b)'s baseline: one publish to 8 subscriptions.
                arrivals = [r.expect(index) for r in subscribers]
                sent = time.perf_counter_ns()
                await publish(payload, timeout=STEP_TIMEOUT)
                answered = time.perf_counter_ns()
                last = await _all(arrivals)
                if counted:
                    samples.add("publish", answered - sent)
                    samples.add("fanout", last - sent)
                # The race.
                created = await stubs[0].CreateMatch(
                    ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=options),
                    metadata=ORGANISER,
                    timeout=STEP_TIMEOUT,
                )
                match_id = created.match_id
                tokens = []
                for seat in range(SEATS):  # seats are taken in order (JS-1.5)
                    joined = await stubs[seat].JoinMatch(
                        ms.JoinMatchRequest(match_id=match_id, name=f"seat {seat}", seat=seat),
                        timeout=STEP_TIMEOUT,
                    )
                    tokens.append((("authorization", f"Bearer {joined.player_token}"),))
                watchers = [
                    Reader(
                        stubs[seat].Watch(
                            ms.WatchRequest(match_id=match_id), metadata=tokens[seat]
                        ),
                        _version,
                    )
                    for seat in range(SEATS)
                ]
                readers = [*subscribers, *watchers]
                grabber = index % SEATS
                play: Any = None
                if args.via == PLAY:
                    # The grab's stream, before the race and untimed: its call's headers
                    # go out before the call below on the same channel, and the server
                    # takes a channel's calls in order, so once that call is answered the
                    # stream's handler is waiting for a message.
                    play = stubs[grabber].Play(metadata=tokens[grabber], timeout=STEP_TIMEOUT)
                    streams.append(play)
                    await asyncio.wait_for(play.wait_for_connection(), STEP_TIMEOUT)
                    # A ready request first, as the clients send: the grab is not the
                    # stream's first message (which gRPC hands over sooner).
                    await stream_round_trip(play, ms.PlayRequest(ready=ms.PlayReady()))
                    await stubs[grabber].GetServerKey(
                        ms.GetServerKeyRequest(), timeout=STEP_TIMEOUT
                    )
                revealed = await stubs[0].Act(
                    ms.ActRequest(match_id=match_id, jungle_speed=reveal),
                    metadata=tokens[0],
                    timeout=STEP_TIMEOUT,
                )
                card = revealed.events[0].jungle_speed.revealed.card
                if card.kind != js.CARD_KIND_INWARD_ARROWS:
                    raise RuntimeError(f"the reveal showed {card}, not inward arrows")
                revealed_version = revealed.version
                await _caught_up(watchers, revealed_version)
                request = ms.ActRequest(
                    match_id=match_id, seen_version=revealed_version, jungle_speed=grab
                )
                play_request = ms.PlayRequest(act=request)
                outcome = [w.expect(revealed_version + 1) for w in watchers]
                sent_mono = time.monotonic_ns()
                sent = time.perf_counter_ns()
                if play is None:
                    answer = await stubs[grabber].Act(
                        request, metadata=tokens[grabber], timeout=STEP_TIMEOUT
                    )
                else:
                    response = await stream_round_trip(play, play_request)
                answered = time.perf_counter_ns()
                answered_wall = time.time_ns()
                last = await _all(outcome)
                if play is not None:
                    answer = applied(response)
                    await close_play(play)
                    streams.remove(play)
                if answer.events[0].jungle_speed.WhichOneof("event") != "arrows_won":
                    raise RuntimeError(f"race {index}: the grab did not win: {answer.events[0]}")
                if counted:
                    samples.add("grab", answered - sent)
                    samples.add("watchers", last - sent)
                    # Where the round trip went, by the server's own clocks (this machine's):
                    # until the stamp; stamp to the event's recorded_at (waiting for the
                    # match's actor, deciding); then storing, answering and the way back.
                    won = answer.events[0]
                    stamp = won.jungle_speed.arrows_won.stamp
                    decided = won.recorded_at.ToNanoseconds()
                    samples.add("to_stamp", stamp.monotonic_ns - sent_mono)
                    samples.add("to_decision", decided - stamp.received_at.ToNanoseconds())
                    samples.add("after_decision", answered_wall - decided)
                for watcher in watchers:
                    await watcher.close()
                readers = list(subscribers)
                if args.progress and (index + 1) % 100 == 0:
                    print(f"  {index + 1} races, {time.monotonic() - began:.0f} s", file=sys.stderr)
            elapsed = time.monotonic() - began
            load_after = os.getloadavg()
        finally:
            for reader in readers:
                await reader.close()
            for stream in streams:
                stream.cancel()
            for channel in channels:
                await channel.close()
            with contextlib.suppress(OSError):
                ours.send("stop")
            bare.join(10)
            if bare.is_alive():
                bare.terminate()
            server.stop()
    config = {
        "store": args.store,
        "via": args.via,
        "races": args.races,
        "warmup": args.warmup,
        "request_bytes": size,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "elapsed_s": round(elapsed, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
    }
    return samples, config


async def _caught_up(watchers: Sequence[Reader], version: int) -> None:
    """Every watcher has delivered ``version`` (the reveal): the race starts with every
    seat having seen the card."""
    await _all([w.expect(version) for w in watchers])


# ---- report -------------------------------------------------------------------------------


ROWS = (
    ("echo", "bare gRPC echo, round trip (baseline of a via Act)"),
    ("stream_echo", "bare gRPC stream echo, round trip on an open stream (baseline of a via Play)"),
    ("grab", ""),  # labelled by GRAB, for the way the grab was sent
    ("publish", "bare gRPC publish, round trip"),
    ("fanout", "bare gRPC fan-out, all 8 streams (baseline of b)"),
    ("watchers", "(b) grab, until all 8 watchers have ArrowsWon"),
    ("to_stamp", "(a) in parts: sent to the server's receive stamp"),
    ("to_decision", "(a) in parts: stamp to the event's recorded_at (queue, decide)"),
    ("after_decision", "(a) in parts: recorded_at to answered (store, answer, way back)"),
)
GRAB = {
    ACT: "(a) grab, Act round trip",
    PLAY: "(a) grab, Play round trip (a message on a stream opened before the race)",
}


def report(samples: Samples, config: dict[str, Any]) -> str:
    c = config
    lines = [
        f"store {c['store']}, {c['races']} races (+{c['warmup']} warm-up), {len(ROWS)} "
        f"timings per race; requests of {c['request_bytes']} bytes; {c['cpus']} CPUs, "
        f"Python {c['python']}, grpcio {c['grpcio']}; {c['elapsed_s']} s; load average "
        f"(1 min) {c['load_average_before'][0]:.2f} before, {c['load_average_after'][0]:.2f} "
        "after",
        "",
        "| ms | p50 | p99 | max |",
        "|---|---|---|---|",
    ]
    for name, label in ROWS:
        label = label or GRAB[c["via"]]
        s = samples.stats(name)
        lines.append(f"| {label} | {s['p50']:.3f} | {s['p99']:.3f} | {s['max']:.3f} |")
    lines += ["", "| ratio | p50 | p99 | max |", "|---|---|---|---|"]
    verdicts = []
    for top, bottom, label in (
        ("grab", "echo", "(a) grab / echo"),
        ("grab", "stream_echo", "(a) grab / stream echo"),
        ("watchers", "fanout", "(b) watchers / fan-out"),
        ("watchers", "echo", "(b) watchers / echo"),
    ):
        t, b = samples.stats(top), samples.stats(bottom)
        ratios = {q: t[q] / b[q] for q in ("p50", "p99", "max")}
        lines.append(
            f"| {label} | {ratios['p50']:.2f} | {ratios['p99']:.2f} | {ratios['max']:.2f} |"
        )
        if bottom != "echo" or top == "grab":
            met = ratios["p50"] <= 2 and ratios["p99"] <= 4
            verdicts.append(
                f"- {label}: p50 {ratios['p50']:.2f}x (≤ 2x), p99 {ratios['p99']:.2f}x (≤ 4x): "
                f"{'met' if met else 'NOT met'}"
            )
    lines += [
        "",
        "Targets (the issue's are on (a) against the echo; (a) against the stream echo and "
        "(b) beside them for information):",
        *verdicts,
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Grab race latency with 8 watching seats, against bare gRPC echo and "
        "fan-out baselines. The module docstring (bench/latency.py) says what is measured.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_store(parser)
    parser.add_argument("--races", type=int, default=1000, help="races timed")
    parser.add_argument("--warmup", type=int, default=20, help="races run first, not counted")
    parser.add_argument(
        "--via",
        choices=(ACT, PLAY),
        default=ACT,
        help="how the grab is sent: act, an Act call; play, a message on a Play stream the "
        "grabbing seat opened before the race (untimed)",
    )
    parser.add_argument("--progress", action="store_true", help="a line per 100 races")
    add_server_root(parser)
    args = parser.parse_args(argv)
    if args.races < 1 or args.warmup < 0:
        parser.error("--races must be at least 1 and --warmup not negative")
    samples, config = asyncio.run(run(args))
    print(report(samples, config))


if __name__ == "__main__":
    main()
