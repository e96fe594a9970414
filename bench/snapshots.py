"""Benchmark: GetMatch of an ended long match against a live one, without and with snapshots.

Run ``python bench/snapshots.py [--game G] [--calls N] [--postgres [DSN]]``, G one of
``tribes`` (the default), ``village``, ``jungle_speed``. The store (a temporary SQLite
file, or a fresh schema of a PostgreSQL database with ``--postgres``, dropped after) is
filled through the application in this process, as the server fills it, a save after
every command: one match played to its end (the game's timer firing again and again, so
every default applies: about a thousand events for Tribes or Village of 3 seats, a few
thousand for Jungle Speed (ES), whose timer reveals for the player whose turn it is) and
one live match, the same game from the same seed stopped at 90 % of that length.
Snapshots are on while filling: the ended match has one at its last version, the live
one every 100 events.

Then two servers run in this process on that store, over loopback: "before" with
snapshots off (``IS_SNAPSHOTTING_ENABLED=n``: every load replays all the events, as the
code did before snapshots) and "after" with them on. Each round makes four GetMatch
calls, one per server and match, in an order drawn at random for each round (with a
fixed seed), so that other work on the machine, and what each call leaves behind for
the next (the replay's garbage, an actor stopping), falls on all four alike; one call
after the other, each timed alone. The live match is held by its actor after the first
call (in memory, as a match in play is); the ended match's actor leaves when each call
ends, so every call loads it from the store. The first round is not timed.

Then, with no server, ``Arena.load`` of each match, as an actor loads an idle match
again: the same random order, without and with snapshots. Last, what a snapshot costs the
save that takes it: taking and encoding the ended match's snapshot, and its size.

Figures are medians and 90th percentiles, and ratios of medians taken in the same run.
Tests never assert a duration; the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from uuid import UUID

import grpc
from listing import add_postgres_option, store

from bench.harness import markdown_table
from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel.match import MatchAggregate, MatchStatus
from domain.kernel.stamps import ReceiveStamp
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.village import Options as VillageOptions
from domain.village import Village
from server.serve import RunningServer, start
from storage.arena import Arena
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc

SEATS = 3
#: The live match stops at this share of the ended match's length.
LIVE_SHARE = 0.9
OFF = {"IS_SNAPSHOTTING_ENABLED": "n"}

GAMES: dict[str, Callable[[bytes], MatchAggregate]] = {
    "jungle_speed": lambda seed: JungleSpeed.create(
        JungleSpeedOptions(variant="ES", max_players=SEATS), seed, b""
    ),
    "tribes": lambda seed: Tribes.create(TribesOptions(max_players=SEATS), seed),
    "village": lambda seed: Village.create(
        VillageOptions(max_players=SEATS), seed, secret=secrets.token_bytes(32)
    ),
}


class Clock:
    """Receive stamps a fixed pace apart, from a fixed start: the matches' own time."""

    def __init__(self) -> None:
        self.sequence = 0
        self.wall_ms = 1_700_000_000_000

    def __call__(self, after_ms: int = 40) -> ReceiveStamp:
        self.sequence += 1
        self.wall_ms += after_ms
        nanos = self.wall_ms * 1_000_000
        return ReceiveStamp(self.sequence, nanos, nanos)


def played(app: Arena, game: str, stop_at: int | None) -> MatchAggregate:
    """A match created, joined and played by its timer, saved after every command, to
    its end or until its version reaches ``stop_at``."""
    clock = Clock()
    match = app.create_match(GAMES[game])
    for seat in range(SEATS):
        match.join(f"player {seat}", bytes([seat]), secrets.token_hex(32), clock())
        app.save(match)
    while match.status is MatchStatus.PLAYING and (stop_at is None or match.version < stop_at):
        deadline = match.timer_deadline_ms()
        assert deadline is not None
        match.fire_timer(clock(after_ms=max(1, deadline - clock.wall_ms)))
        app.save(match)
    return match


def fill(env: dict[str, str], game: str) -> tuple[MatchAggregate, MatchAggregate]:
    """The ended match, and the live one: the same seed, so the same game, stopped."""
    seed = secrets.token_bytes(32)
    app = Arena(env, seed_source=lambda: seed)
    try:
        ended = played(app, game, None)
        live = played(app, game, int(ended.version * LIVE_SHARE))
    finally:
        app.close()
    assert ended.status is MatchStatus.ENDED and live.status is MatchStatus.PLAYING
    return ended, live


def table(title: str, timings: dict[str, list[float]], baseline: str) -> None:
    base = statistics.median(timings[baseline])
    print(f"\n{title} (ratio: median / median of {baseline!r})\n")
    rows = [
        (
            name,
            f"{m * 1000:.3f}",
            f"{statistics.quantiles(s, n=10)[-1] * 1000:.3f}",
            f"{m / base:.2f}",
        )
        for name, s in timings.items()
        for m in [statistics.median(s)]
    ]
    print(markdown_table(("case", "median ms", "p90 ms", "ratio"), rows))


async def get_matches(
    env: dict[str, str], ended: UUID, live: UUID, calls: int
) -> dict[str, list[float]]:
    servers: dict[str, RunningServer] = {
        "before": await start("127.0.0.1:0", {**env, **OFF}),
        "after": await start("127.0.0.1:0", env),
    }
    channels = {k: grpc.aio.insecure_channel(f"127.0.0.1:{s.port}") for k, s in servers.items()}
    try:
        stubs = {k: match_service_pb2_grpc.MatchServiceStub(c) for k, c in channels.items()}
        cases = [
            (f"{which} match, {when}", stubs[when], str(match_id))
            for when in ("before", "after")
            for which, match_id in (("live", live), ("ended", ended))
        ]
        timings: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        order = random.Random(1)
        for round_ in range(calls + 1):
            for name, client, match_id in order.sample(cases, len(cases)):
                began = time.perf_counter()
                await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
                if round_:
                    timings[name].append(time.perf_counter() - began)
        return timings
    finally:
        for channel in channels.values():
            await channel.close()
        for server in servers.values():
            await server.stop(grace=None)


def loads(env: dict[str, str], ended: UUID, live: UUID, calls: int) -> dict[str, list[float]]:
    apps = {"before": Arena({**env, **OFF}), "after": Arena(env)}
    try:
        cases = [
            (f"{which} match, {when}", apps[when], match_id)
            for when in ("before", "after")
            for which, match_id in (("live", live), ("ended", ended))
        ]
        timings: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        order = random.Random(2)
        for round_ in range(calls + 1):
            for name, app, match_id in order.sample(cases, len(cases)):
                began = time.perf_counter()
                app.load(match_id)
                if round_:
                    timings[name].append(time.perf_counter() - began)
        return timings
    finally:
        for app in apps.values():
            app.close()


def snapshot_cost(env: dict[str, str], match_id: UUID, calls: int) -> str:
    """What the save that ends a match adds: taking the snapshot and encoding it (the
    store's own write is not included), and the size of what is stored."""
    app = Arena(env)
    try:
        match = app.load(match_id)
        took = []
        for _ in range(calls):
            began = time.perf_counter()
            stored = app.mapper.to_stored_event(match.Snapshot.take(match))
            took.append(time.perf_counter() - began)
    finally:
        app.close()
    return (
        f"snapshot of the ended match: take and encode, median {statistics.median(took) * 1000:.3f}"
        f" ms ({calls} times); {len(stored.state)} bytes stored"
    )


async def main(args: argparse.Namespace) -> None:
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {sys.version.split()[0]}, grpcio {grpc.__version__}; "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with store(args.postgres) as (env, where):
        began = time.perf_counter()
        ended, live = fill(env, args.game)
        print(
            f"{where}: {args.game}, ended match {ended.version} events, live match "
            f"{live.version} events, filled in {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        calls = await get_matches(env, ended.id, live.id, args.calls)
        table(f"GetMatch, {args.calls} calls each", calls, "live match, before")
        loaded = loads(env, ended.id, live.id, args.calls)
        table(f"Arena.load, {args.calls} each", loaded, "live match, after")
        print("\n" + snapshot_cost(env, ended.id, args.calls))
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="tribes")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per case (200)")
    add_postgres_option(parser)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
