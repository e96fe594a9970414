"""Benchmark: GetMatch of an ended long match against a live one, without and with snapshots.

``--game`` is ``tribes`` (the default), ``village`` or ``jungle_speed``. The store is
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
import inspect
import random
import secrets
import statistics
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from functools import partial
from typing import Any
from uuid import UUID

import grpc

from bench.harness import add_server_options, fresh_store, in_process, machine_line, markdown_table
from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel.match import MatchAggregate, MatchStatus
from domain.kernel.stamps import ReceiveStamp
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.village import Options as VillageOptions
from domain.village import Village
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


async def timed(
    cases: dict[str, Callable[[], Any]], calls: int, seed: int
) -> dict[str, list[float]]:
    """Each case ``calls`` times, a round of all of them in a fresh random order each
    time; the first round not timed. A case may return an awaitable, awaited."""
    timings: dict[str, list[float]] = {name: [] for name in cases}
    order = random.Random(seed)
    for round_ in range(calls + 1):
        for name in order.sample(list(cases), len(cases)):
            began = time.perf_counter()
            if inspect.isawaitable(done := cases[name]()):
                await done
            if round_:
                timings[name].append(time.perf_counter() - began)
    return timings


async def measure(env: dict[str, str], ended: UUID, live: UUID, calls: int) -> None:
    matches = (("live", live), ("ended", ended))
    async with AsyncExitStack() as stack:
        servers = {
            "before": await stack.enter_async_context(in_process({**env, **OFF})),
            "after": await stack.enter_async_context(in_process(env)),
        }
        channels = {k: grpc.aio.insecure_channel(f"127.0.0.1:{s.port}") for k, s in servers.items()}
        stubs = {k: match_service_pb2_grpc.MatchServiceStub(c) for k, c in channels.items()}
        cases = {
            f"{which} match, {when}": partial(
                stubs[when].GetMatch, ms.GetMatchRequest(match_id=str(m))
            )
            for when in ("before", "after")
            for which, m in matches
        }
        table(f"GetMatch, {calls} calls each", await timed(cases, calls, 1), "live match, before")
        for channel in channels.values():
            await channel.close()
    apps = {"before": Arena({**env, **OFF}), "after": Arena(env)}
    cases = {
        f"{which} match, {when}": partial(apps[when].load, m)
        for when in ("before", "after")
        for which, m in matches
    }
    table(f"Arena.load, {calls} each", await timed(cases, calls, 2), "live match, after")
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
    print(machine_line(), flush=True)
    with fresh_store(args.store, args.dsn) as (env, where):
        began = time.perf_counter()
        ended, live = fill(env, args.game)
        print(
            f"{where}: {args.game}, ended match {ended.version} events, live match "
            f"{live.version} events, filled in {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        await measure(env, ended.id, live.id, args.calls)
        print("\n" + snapshot_cost(env, ended.id, args.calls))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--game", choices=sorted(GAMES), default="tribes")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per case")
    add_server_options(parser, root=False)
    asyncio.run(main(parser.parse_args()))
