"""Benchmark: what misbehaving clients can make one server process hold.

Run ``python bench/hold.py [--root TREE] [--extra=--OPTION=VALUE ...]``. The server runs as
its own process (``python -m server serve`` on a temporary SQLite file) from the source
tree ``--root`` (this one by default: give another checkout to measure it the same way);
the clients run in this process. Nothing is asserted; it prints:

1. **slow streams**: ``--streams`` Watch streams (spectators, with state, ten streams per
   connection) of a match with a long history that never read a message; after
   ``--hold-seconds``, how each one stands (still open, ended with RESOURCE_EXHAUSTED,
   refused when opened), and the server's resident memory before and after opening them.
   Their connections take at most 64 KiB a stream unread (the HTTP/2 default window, with
   gRPC's window growth off), as a client that sends no window updates does; a gRPC
   client left to itself reads several MiB off the socket for its application first;
2. **one seat's grabs**: one seat sends ``--grabs`` grabs one after the other, all after
   the race was decided: how long they took, how many were answered and refused, how many
   events they wrote;
3. **matches looked at**: ``--matches`` matches created and looked at once each (GetMatch),
   then, after ``--settle`` seconds, as many more: the server's resident memory at each
   step (a server that lets idle matches go reuses the memory of the first round).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from pathlib import Path

import grpc

from bench.harness import (
    GRAB,
    ORGANISER,
    REVEAL,
    ROOT,
    Server,
    arrows_options,
    bearer,
    create_request,
    serving,
)
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms

STREAMS_PER_CHANNEL = 10
#: A client that does not read: the default HTTP/2 window, never grown.
NOT_READING = [
    ("grpc.use_local_subchannel_pool", 1),
    ("grpc.http2.lookahead_bytes", 65535),
    ("grpc.http2.bdp_probe", 0),
]
PARTS = ["grabs", "streams", "matches"]
#: A stream that gives nothing for this long while read is counted as still open.
QUIET_S = 3.0


async def decided_race(
    client: match_service_pb2_grpc.MatchServiceStub, players: int
) -> tuple[str, list[str]]:
    """A match whose inward-arrows race is decided: every later grab is a late grab."""
    created = await client.CreateMatch(create_request(arrows_options(players)), metadata=ORGANISER)
    tokens = []
    for seat in range(players):
        joined = await client.JoinMatch(
            ms.JoinMatchRequest(match_id=created.match_id, name=f"p{seat}", any_seat=True)
        )
        tokens.append(joined.player_token)
    for command in (REVEAL, GRAB):
        await client.Act(
            ms.ActRequest(match_id=created.match_id, jungle_speed=command),
            metadata=bearer(tokens[0]),
        )
    return created.match_id, tokens


async def grabs(port: int, count: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = match_service_pb2_grpc.MatchServiceStub(channel)
        match_id, tokens = await decided_race(client, 2)
        before = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        outcomes: collections.Counter[str] = collections.Counter()
        began = time.perf_counter()
        for _ in range(count):
            try:
                await client.Act(
                    ms.ActRequest(match_id=match_id, jungle_speed=GRAB),
                    metadata=bearer(tokens[1]),
                )
                outcomes["OK"] += 1
            except grpc.aio.AioRpcError as error:
                outcomes[error.code().name] += 1
        took = time.perf_counter() - began
        after = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        print(f"{count} grabs by one seat after the race: {took:.2f} s, {count / took:.0f}/s")
        print(f"  answers: {dict(outcomes)}; events written: {after - before}")


async def history(client: match_service_pb2_grpc.MatchServiceStub, events: int) -> str:
    """A ten-seat match with ``events`` late grabs, each seat well under any rate bound."""
    match_id, tokens = await decided_race(client, 10)

    async def seat(token: str, count: int) -> None:
        for _ in range(count):
            began = time.perf_counter()
            await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=GRAB), metadata=bearer(token)
            )
            await asyncio.sleep(max(0.0, 0.1 - (time.perf_counter() - began)))

    await asyncio.gather(*(seat(t, events // len(tokens)) for t in tokens))
    return match_id


async def slow_streams(server: Server, streams: int, events: int, hold: float) -> None:
    port = server.port
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = match_service_pb2_grpc.MatchServiceStub(channel)
        match_id = await history(client, events)
        version = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        size = len(
            (await client.Watch(ms.WatchRequest(match_id=match_id)).read()).SerializeToString()
        )
    rss_before = server.rss_mib()
    channels = [
        grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=NOT_READING)
        for _ in range((streams + STREAMS_PER_CHANNEL - 1) // STREAMS_PER_CHANNEL)
    ]
    calls = [
        match_service_pb2_grpc.MatchServiceStub(channels[i // STREAMS_PER_CHANNEL]).Watch(
            ms.WatchRequest(match_id=match_id)
        )
        for i in range(streams)
    ]
    await asyncio.sleep(hold)
    rss_held = server.rss_mib()

    async def stand(call: grpc.aio.UnaryStreamCall) -> str:
        try:
            while True:
                event = await asyncio.wait_for(call.read(), QUIET_S)
                if event is grpc.aio.EOF:
                    return "ended OK (read to the end)"
        except TimeoutError:
            call.cancel()
            return "still open"
        except grpc.aio.AioRpcError as error:
            if "fell behind" in (error.details() or ""):
                return "ended: RESOURCE_EXHAUSTED, fell behind"
            return f"ended or refused: {error.code().name} ({error.details()})"

    stands = collections.Counter(await asyncio.gather(*(stand(c) for c in calls)))
    for channel in channels:
        await channel.close()
    print(
        f"{streams} Watch streams that never read, of a match of {version} events "
        f"(about {size} bytes the first), {len(channels)} connections, after {hold:.0f} s:"
    )
    for name, number in sorted(stands.items()):
        print(f"  {name}: {number}")
    print(
        f"  server RSS {rss_before:.0f} MiB before the streams, {rss_held:.0f} MiB while held "
        f"({(rss_held - rss_before) * 1024 / streams:.0f} KiB a stream)"
    )


async def looked_at(server: Server, matches: int, settle: float) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        client = match_service_pb2_grpc.MatchServiceStub(channel)

        async def round_of(count: int) -> float:
            ids = []
            for _ in range(count):
                created = await client.CreateMatch(
                    ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED), metadata=ORGANISER
                )
                ids.append(created.match_id)
            for start in range(0, count, 100):
                await asyncio.gather(
                    *(
                        client.GetMatch(ms.GetMatchRequest(match_id=m))
                        for m in ids[start : start + 100]
                    )
                )
            return server.rss_mib()

        began = server.rss_mib()
        first = await round_of(matches)
        await asyncio.sleep(settle)
        settled = server.rss_mib()
        second = await round_of(matches)
        print(f"matches created and looked at once each, {matches} a round:")
        print(
            f"  server RSS {began:.0f} MiB at first, {first:.0f} MiB after round 1, "
            f"{settled:.0f} MiB {settle:.0f} s later, {second:.0f} MiB after round 2"
        )


async def run(server: Server, args: argparse.Namespace) -> None:
    print(f"server: {args.root.name or args.root}, options {args.extra}")
    if "grabs" in args.parts:
        await grabs(server.port, args.grabs)
    if "streams" in args.parts:
        await slow_streams(server, args.streams, args.history, args.hold_seconds)
    if "matches" in args.parts:
        await looked_at(server, args.matches, args.settle)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--extra", action="append", default=[], help="an option of totem serve")
    parser.add_argument("--parts", nargs="+", default=PARTS, choices=PARTS, help="what to measure")
    parser.add_argument("--grabs", type=int, default=1000)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--hold-seconds", type=float, default=30.0)
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--settle", type=float, default=15.0)
    args = parser.parse_args()
    extra = ["--organiser-creations-per-minute", "1000000", *args.extra]
    with serving(root=args.root.resolve(), args=extra, unlimited=False) as server:
        asyncio.run(run(server, args))


if __name__ == "__main__":
    main()
