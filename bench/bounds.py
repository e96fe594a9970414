"""What misbehaving clients can make one server process hold (docs/reliability.md).

``totem serve`` in a process of its own (``--root``: another tree's, measured the same
way; ``--extra``: its options), the clients in this process. Nothing is asserted. Parts:

- ``grabs``: one seat sends ``--grabs`` grabs one after the other once the race is
  decided: the time, the answers and the events written;
- ``streams``: ``--streams`` spectator Watch streams (with state, ten a connection) of a
  match of ``--history`` events, never read, after ``--hold-seconds``: how each stands,
  and the server's memory. Their connections take at most 64 KiB a stream unread, as a
  client that sends no HTTP/2 window updates does (a gRPC client left to itself reads
  several MiB off the socket for its application first);
- ``matches``: ``--matches`` matches created and looked at once each (GetMatch), then,
  ``--settle`` seconds later, as many more: the server's memory at each step;
- ``burst``: ``--calls`` concurrent health Checks (no work at all), then as many
  concurrent JoinMatch calls on one ten-seat match, on one channel: how each ended.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from collections.abc import Awaitable, Iterable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench import harness
from totem.v1 import common_pb2
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms
from totem.v1.match_service_pb2_grpc import MatchServiceStub as Stub

PARTS = ("grabs", "streams", "matches", "burst")
STREAMS_PER_CHANNEL = 10
#: A client that does not read: the default HTTP/2 window, never grown.
NOT_READING = [
    *harness.OWN_CONNECTION,
    ("grpc.http2.lookahead_bytes", 65535),
    ("grpc.http2.bdp_probe", 0),
]
#: A stream that gives nothing for this long while read is counted as still open.
QUIET_S = 3.0
#: No call of the burst may take longer (a client deadline far beyond the run).
BURST_TIMEOUT_S = 300.0


def counted(title: str, outcomes: Iterable[str]) -> None:
    rows = sorted(collections.Counter(outcomes).items())
    print(f"\n{title}\n\n{harness.markdown_table(['outcome', 'calls'], rows)}")


def outcome(error: grpc.aio.AioRpcError) -> str:
    """A failed call's status, and whether a RESOURCE_EXHAUSTED carried a retry hint."""
    if error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
        if "fell behind" in (error.details() or ""):
            return "RESOURCE_EXHAUSTED, fell behind"
        hinted = any(k == "grpc-retry-pushback-ms" for k, _ in error.trailing_metadata() or ())
        return f"RESOURCE_EXHAUSTED ({'with' if hinted else 'without'} retry hint)"
    if error.code() is grpc.StatusCode.CANCELLED:
        return f"CANCELLED ({error.details()!r})"
    return str(error.code().name)


async def status(call: Awaitable[object]) -> str:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return outcome(error)
    return "OK"


async def decided_race(stub: Stub, players: int) -> tuple[str, list[Any]]:
    """A match whose inward-arrows race is decided: every later grab is a late grab."""
    match_id, seats = await harness.seated_match(stub, harness.arrows_options(players))
    for command in (harness.REVEAL, harness.GRAB):
        await stub.Act(ms.ActRequest(match_id=match_id, jungle_speed=command), metadata=seats[0])
    return match_id, seats


async def version(stub: Stub, match_id: str) -> int:
    return int((await stub.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version)


async def grabs(stub: Stub, count: int) -> None:
    match_id, seats = await decided_race(stub, 2)
    before, began = await version(stub, match_id), time.perf_counter()
    request = ms.ActRequest(match_id=match_id, jungle_speed=harness.GRAB)
    answers = [await status(stub.Act(request, metadata=seats[1])) for _ in range(count)]
    took, written = time.perf_counter() - began, await version(stub, match_id) - before
    title = f"{count} grabs by one seat after the race: {took:.2f} s, {count / took:.0f}/s"
    counted(f"{title}, {written} events written", answers)


async def slow_streams(
    server: harness.Server, stub: Stub, streams: int, events: int, hold: float
) -> None:
    match_id, seats = await decided_race(stub, 10)

    async def seat(metadata: object) -> None:  # well under any rate bound
        for _ in range(events // len(seats)):
            began = time.perf_counter()
            await stub.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=harness.GRAB), metadata=metadata
            )
            await asyncio.sleep(max(0.0, 0.1 - (time.perf_counter() - began)))

    await asyncio.gather(*(seat(s) for s in seats))
    size = len((await stub.Watch(ms.WatchRequest(match_id=match_id)).read()).SerializeToString())
    rss_before = harness.rss_mib(server.pid)
    channels = [
        harness.match_stub(server.address, NOT_READING)
        for _ in range(-(-streams // STREAMS_PER_CHANNEL))
    ]
    watch = ms.WatchRequest(match_id=match_id)
    calls = [channels[i // STREAMS_PER_CHANNEL][1].Watch(watch) for i in range(streams)]
    await asyncio.sleep(hold)
    rss_held = harness.rss_mib(server.pid)

    async def stand(call: grpc.aio.UnaryStreamCall) -> str:
        try:
            while await asyncio.wait_for(call.read(), QUIET_S) is not grpc.aio.EOF:
                pass
            return "ended OK (read to the end)"
        except TimeoutError:
            call.cancel()
            return "still open"
        except grpc.aio.AioRpcError as error:
            return outcome(error)

    stands = await asyncio.gather(*(stand(c) for c in calls))
    for channel, _ in channels:
        await channel.close()
    counted(
        f"{streams} Watch streams never read, of a match of {await version(stub, match_id)} "
        f"events (the first {size} bytes), {len(channels)} connections, after {hold:.0f} s; "
        f"server RSS {rss_before:.0f} MiB before, {rss_held:.0f} MiB while held "
        f"({(rss_held - rss_before) * 1024 / streams:.0f} KiB a stream)",
        stands,
    )


async def looked_at(server: harness.Server, stub: Stub, matches: int, settle: float) -> None:
    async def round_of() -> float:
        create = ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED)
        ids = [
            (await stub.CreateMatch(create, metadata=harness.ORGANISER)).match_id
            for _ in range(matches)
        ]
        for start in range(0, matches, 100):
            batch = ids[start : start + 100]
            await asyncio.gather(*(stub.GetMatch(ms.GetMatchRequest(match_id=m)) for m in batch))
        return harness.rss_mib(server.pid)

    began, first = harness.rss_mib(server.pid), await round_of()
    await asyncio.sleep(settle)
    settled, second = harness.rss_mib(server.pid), await round_of()
    print(
        f"\n{matches} matches a round, created and looked at once each: server RSS {began:.0f} "
        f"MiB at first, {first:.0f} after round 1, {settled:.0f} {settle:.0f} s later, "
        f"{second:.0f} after round 2"
    )


async def burst(channel: grpc.aio.Channel, count: int) -> None:
    health, stub = health_pb2_grpc.HealthStub(channel), Stub(channel)
    check = health_pb2.HealthCheckRequest()
    created = await stub.CreateMatch(
        harness.create_request(js.JungleSpeedOptions(max_players=10)), metadata=harness.ORGANISER
    )
    join = ms.JoinMatchRequest(match_id=created.match_id, name="p", any_seat=True)
    for name, call in (
        ("health Check calls (baseline)", lambda: health.Check(check, timeout=BURST_TIMEOUT_S)),
        ("JoinMatch calls on one match", lambda: stub.JoinMatch(join, timeout=BURST_TIMEOUT_S)),
    ):
        began = time.perf_counter()
        outcomes = await asyncio.gather(*(status(call()) for _ in range(count)))
        counted(f"{count} concurrent {name}: {time.perf_counter() - began:.2f} s", outcomes)


async def run(server: harness.Server, args: argparse.Namespace) -> None:
    channel, stub = harness.match_stub(server.address)
    async with channel:
        if "grabs" in args.parts:
            await grabs(stub, args.grabs)
        if "streams" in args.parts:
            await slow_streams(server, stub, args.streams, args.history, args.hold_seconds)
        if "matches" in args.parts:
            await looked_at(server, stub, args.matches, args.settle)
        if "burst" in args.parts:
            await burst(channel, args.calls)


def main() -> None:
    options = harness.arguments(__doc__)
    options.add_argument("--parts", nargs="+", default=PARTS, choices=PARTS)
    options.add_argument("--grabs", type=int, default=1000)
    options.add_argument("--streams", type=int, default=200)
    options.add_argument("--history", type=int, default=1000, help="events of the watched match")
    options.add_argument("--hold-seconds", type=float, default=30.0)
    options.add_argument("--matches", type=int, default=2000, help="matches a round")
    options.add_argument("--settle", type=float, default=15.0)
    options.add_argument("--calls", type=int, default=5000, help="calls of a burst")
    args = options.parse_args()
    args.extra = ["--organiser-creations-per-minute", "1000000", *args.extra]
    print(f"server: {args.root}, options {args.extra}")
    with harness.serve(args, unlimited=False) as server:
        try:
            asyncio.run(run(server, args))
        finally:
            logged = server.log_path.read_text(errors="replace").strip().splitlines()
            print(f"\nserver log: {len(logged)} lines", *(f"  {x}" for x in logged[-5:]), sep="\n")


if __name__ == "__main__":
    main()
