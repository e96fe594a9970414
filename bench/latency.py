"""Grab latency with 8 watching seats, against the bare gRPC echo measured in the same run.

A race: an 8-seat match whose first reveal is the inward arrows; each seat joins and
watches on a channel of its own, seat 0 reveals, then one seat grabs, by an Act call or
(``--via play``) a message on a Play stream it opened before the race. Timed: (a) the
grab's round trip, and in parts by the server's clocks (to its receive stamp, to the
event's ``recorded_at``, to the answer); (b) until all 8 streams have ArrowsWon. Before
each race, on the same machine: one echo call, one message on an open echo stream (a
Play grab's floor), one stored echo (an event saved through the server's group commit
first: the floor under a committed command) and one echo pushed to 8 ``Listen`` streams
(the fan-out of (b)), each right after an untimed one, with a request of the grab's size.
Target: (a) within 2x the echo at p50, 4x at p99.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import time
from collections.abc import Sequence

from bench import harness
from totem.v1 import match_service_pb2 as ms

SEATS = 8


async def last(followers: Sequence[harness.Follower], key: int) -> int:
    """When the last of ``followers`` had a message of at least ``key``."""
    return max(await asyncio.gather(*(f.reach(key) for f in followers)))


async def run(
    args: argparse.Namespace, address: str, echo_address: str, stored_address: str
) -> dict[str, list[int]]:
    """Each race's times, ns, by what was timed (see the module's text)."""
    times: dict[str, list[int]] = collections.defaultdict(list)
    seat_channels, stubs = zip(*(harness.match_stub(address) for _ in range(SEATS)), strict=True)
    echo_channels = [harness.match_stub(echo_address)[0] for _ in range(SEATS)]
    echo = echo_channels[0].unary_unary(harness.ECHO)
    echoing = echo_channels[0].stream_stream(harness.ECHO_STREAM)()
    stored_channel = harness.match_stub(stored_address)[0]
    stored = stored_channel.unary_unary(harness.STORED_ECHO)
    key = b"k" * 16  # the listeners' key; the echoes' is one nobody listens to

    def count(message: bytes) -> int:
        return int.from_bytes(message[16:20]) if message else 0

    listeners = [
        harness.Follower(c.unary_stream(harness.LISTEN)(key), count) for c in echo_channels
    ]
    await last(listeners, 0)  # every listener subscribed
    size = len(
        ms.ActRequest(
            match_id="0" * 36, seen_version=2, jungle_speed=harness.GRAB
        ).SerializeToString()
    )
    try:
        for index in range(args.warmup + args.races):
            payload = b"e" * 16 + (index + 1).to_bytes(4) + b"x" * (size - 20)
            for name, call in (
                ("echo", lambda p=payload: echo(p, timeout=harness.STEP_TIMEOUT)),
                ("stream echo", lambda p=payload: harness.round_trip(echoing, p)),
                ("stored echo", lambda p=payload: stored(p, timeout=harness.STEP_TIMEOUT)),
            ):
                await call()
                began = time.perf_counter_ns()
                await call()
                times[name].append(time.perf_counter_ns() - began)
            began = time.perf_counter_ns()
            await echo(key + payload[16:], timeout=harness.STEP_TIMEOUT)
            fanned = await last(listeners, index + 1)
            times["fan-out to 8 listeners"].append(fanned - began)
            match_id, tokens = await harness.seated_match(stubs[0], harness.arrows_options(SEATS))
            watch = ms.WatchRequest(match_id=match_id)
            watchers = [
                harness.Follower(stubs[s].Watch(watch, metadata=tokens[s])) for s in range(SEATS)
            ]
            grabber, play = index % SEATS, None
            if args.via == "play":  # untimed: the grab is a message on an open stream
                play = await harness.open_play(stubs[grabber].Play, tokens[grabber])
                await stubs[grabber].GetServerKey(ms.GetServerKeyRequest())
            revealed = await stubs[0].Act(
                ms.ActRequest(match_id=match_id, jungle_speed=harness.REVEAL), metadata=tokens[0]
            )
            await last(watchers, revealed.version)
            request = ms.ActRequest(
                match_id=match_id, seen_version=revealed.version, jungle_speed=harness.GRAB
            )
            sent_mono, began = time.monotonic_ns(), time.perf_counter_ns()
            if play is None:
                answer = await stubs[grabber].Act(request, metadata=tokens[grabber])
            else:
                answer = harness.applied(
                    await harness.round_trip(play, ms.PlayRequest(act=request))
                )
            answered, answered_wall = time.perf_counter_ns(), time.time_ns()
            watched = await last(watchers, revealed.version + 1)
            for watcher in watchers:
                await watcher.close()
            if play is not None:
                await harness.close_play(play)
            won = answer.events[0]
            if won.jungle_speed.WhichOneof("event") != "arrows_won":
                raise RuntimeError(f"the grab did not win: {won}")
            stamp, decided = won.jungle_speed.arrows_won.stamp, won.recorded_at.ToNanoseconds()
            received = stamp.received_at.ToNanoseconds()
            for name, ns in (
                ("grab", answered - began),
                ("grab, until all 8 watchers have it", watched - began),
                ("grab: sent to receive stamp", stamp.monotonic_ns - sent_mono),
                ("grab: stamp to recorded_at (queue, decide)", decided - received),
                ("grab: recorded_at to answered (save, answer)", answered_wall - decided),
            ):
                times[name].append(ns)
            if index < args.warmup:  # the warm-up races are not counted
                for values in times.values():
                    values.clear()
    finally:
        for reader in listeners:
            await reader.close()
        echoing.cancel()
        for channel in [*seat_channels, *echo_channels, stored_channel]:
            await channel.close()
    return times


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--races", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=20, help="races run first, not counted")
    parser.add_argument("--via", choices=("act", "play"), default="act")
    args = parser.parse_args(argv)
    print(harness.machine_line())
    with (
        harness.fresh_store(args.store, args.dsn) as (stored_env, _, _),
        harness.EchoServer(stored_env) as stored,
        harness.EchoServer() as echo,
        harness.serve(args) as server,
    ):
        times = asyncio.run(run(args, server.address, echo.address, stored.address))
    rows = [[name, harness.p50_p99(values, 1e-6)] for name, values in times.items()]
    print(f"\n{args.races} races via {args.via}, store {args.store}\n")
    print(harness.markdown_table(["", "ms, p50 / p99"], rows))
    for floor in ("echo", "stream echo", "stored echo", "fan-out to 8 listeners"):
        top = "grab, until all 8 watchers have it" if floor.startswith("fan") else "grab"
        p50 = statistics.median(times[top]) / statistics.median(times[floor])
        tail = harness.p99(times[top]) / harness.p99(times[floor])
        verdict = "met" if p50 <= 2 and tail <= 4 else "not met"
        print(f"- {top} / {floor}: p50 {p50:.2f}x, p99 {tail:.2f}x (target 2x, 4x: {verdict})")


if __name__ == "__main__":
    main()
