"""Benchmark: group commit, matches played flat out, each save alone against grouped.

Run ``python bench/commits.py [--matches 10 100] [--seconds 10] [--rounds 2]
[--postgres [DSN]] [--grpc]``. In this process, the server's match actors
(server/actors.py) on a real store: a temporary SQLite file, or a fresh schema of a
PostgreSQL database with ``--postgres`` (dropped afterwards). By default gRPC is left
out, so that what is measured is the command path that group commit changes: the
actor's queue, the aggregate's decision, the save, the publisher. With ``--grpc`` the
whole server runs (``server.serve.start`` on a loopback port, no bound on command rates)
and the players are its clients in this same process, one channel each.

``M`` players, each with a match of its own, send commands one after the other, each as
soon as the previous one is answered, for ``--seconds``: Jungle Speed matches of 2 seats
on a scripted deal (72 reveals then a grab end it, as in bench/listing.py); a match that
ends is followed at once by a new one (its creation is a save of its own, outside the
committer, and is part of the time; its joins are commands).

Each measurement runs twice on a fresh store: "alone" with the committer disabled
(``Actors(group_commit=False)``: each command's save is its own transaction in a store
thread, as before group commit) and "grouped" (the default), alternating which goes first
from round to round. Figures: events saved by commands per second, the ratio
grouped / alone of the same round, and the mean number of matches per transaction.
Nothing is asserted; the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import grpc
from listing import add_postgres_option, scripted_create

from bench.harness import ORGANISER, ORGANISER_TOKEN, fresh_store
from domain.jungle_speed import JungleSpeed
from domain.kernel.match import MatchAggregate, MatchStatus
from server import codec
from server.actors import Actors
from server.hub import EventHub
from server.limits import Limits
from server.serve import start
from server.stamps import Stamper
from storage.arena import Arena
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc

#: ``--grpc``: as fast as the server answers, no bound of a client.
MACHINE_SPEED = Limits(commands_per_second=1e9, command_burst=10**9)
GAME = codec.codec_for("jungle_speed")


CREATE = scripted_create()
OPTIONS = GAME.options_from_request(CREATE)
REVEALS = js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())
GRABS = js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
#: A new match's version: the events of its creation, saved outside the committer.
CREATED_VERSION = JungleSpeed.create(OPTIONS, bytes(32), b"", "0" * 64).version
REVEAL = GAME.command(ms.ActRequest(jungle_speed=REVEALS))
GRAB = GAME.command(ms.ActRequest(jungle_speed=GRABS))


@contextmanager
def store(postgres: str | None) -> Iterator[dict[str, str]]:
    """A fresh, empty store's environment (see :func:`bench.harness.fresh_store`)."""
    with fresh_store(postgres) as (env, _):
        yield env


@dataclass
class Run:
    events: int
    seconds: float
    transactions: int
    saved: int

    @property
    def rate(self) -> float:
        return self.events / self.seconds


async def player(actors: Actors, stamper: Stamper, stop: float, counts: list[int]) -> None:
    """One match after the other, each command sent once the previous one is answered."""
    app = actors.app
    while time.perf_counter() < stop:
        created: MatchAggregate = await actors.threads.call(
            app.create_match, lambda seed: JungleSpeed.create(OPTIONS, seed, b"", "0" * 64)
        )
        match_id: UUID = created.id
        for seat in range(2):
            name = f"p{seat}"
            outcome = await actors.run(
                match_id, lambda m, n=name: m.join(n, b"", "1" * 64, stamper.stamp())
            )
            counts[0] += len(outcome.events)
        for turn in range(73):
            if time.perf_counter() >= stop:
                return
            command, seat = (REVEAL, turn % 2) if turn < 72 else (GRAB, 0)

            def work(m: MatchAggregate, c: Any = command, s: int = seat) -> None:
                c.run(m, s, stamper.stamp(m.version))

            outcome = await actors.run(match_id, work)
            counts[0] += len(outcome.events)
        assert outcome.match.status is MatchStatus.ENDED


async def client(port: int, stop: float, counts: list[int]) -> None:
    """:func:`player` as a gRPC client of the server, on a channel of its own."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        while time.perf_counter() < stop:
            created = await stub.CreateMatch(CREATE, metadata=ORGANISER)
            tokens = []
            for seat in range(2):
                joined = await stub.JoinMatch(
                    ms.JoinMatchRequest(match_id=created.match_id, name=f"p{seat}", any_seat=True)
                )
                tokens.append((("authorization", f"Bearer {joined.player_token}"),))
            counts[0] += joined.version - CREATED_VERSION  # the joins' events, the deal's
            for turn in range(73):
                if time.perf_counter() >= stop:
                    return
                which, seat = (REVEALS, turn % 2) if turn < 72 else (GRABS, 0)
                acted = await stub.Act(
                    ms.ActRequest(match_id=created.match_id, jungle_speed=which),
                    metadata=tokens[seat],
                )
                counts[0] += len(acted.events)


async def measure_grpc(env: dict[str, str], matches: int, seconds: float, together: bool) -> Run:
    with tempfile.TemporaryDirectory() as keys:  # the run's own signing key, not the user's
        running = await start(
            "127.0.0.1:0",
            {**env, "TOTEM_ORGANISER_TOKEN": ORGANISER_TOKEN},
            limits=MACHINE_SPEED,
            key_file=str(Path(keys) / "server.key"),
        )
    running.actors.committer.together = together
    counts = [0]
    try:
        began = time.perf_counter()
        stop = began + seconds
        await asyncio.gather(*(client(running.port, stop, counts) for _ in range(matches)))
        elapsed = time.perf_counter() - began
    finally:
        await running.stop(grace=None)
    committer = running.actors.committer
    return Run(counts[0], elapsed, committer.transactions, committer.saved)


async def measure(env: dict[str, str], matches: int, seconds: float, together: bool) -> Run:
    app = Arena(env)
    stamper = Stamper()
    actors = Actors(app, EventHub(codec.encoded_event), stamper, group_commit=together)
    counts = [0]
    try:
        began = time.perf_counter()
        stop = began + seconds
        await asyncio.gather(*(player(actors, stamper, stop, counts) for _ in range(matches)))
        elapsed = time.perf_counter() - began
    finally:
        await actors.close()
        await actors.threads.close()
        app.close()
    committer = actors.committer
    return Run(counts[0], elapsed, committer.transactions, committer.saved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    add_postgres_option(parser)
    parser.add_argument("--grpc", action="store_true", help="the whole server, over loopback")
    args = parser.parse_args()
    name = ("PostgreSQL" if args.postgres else "SQLite") + (", gRPC" if args.grpc else "")
    run = measure_grpc if args.grpc else measure
    print(
        f"# {name}, {args.seconds:g} s a measurement, {args.rounds} rounds; "
        f"nproc {os.cpu_count()}, {platform.python_implementation()} "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    print(
        "| store | matches | round | alone ev/s | grouped ev/s | grouped / alone | "
        "matches a transaction (grouped) |"
    )
    print("|---|---|---|---|---|---|---|")
    for matches in args.matches:
        ratios = []
        for round_ in range(args.rounds):
            runs: dict[bool, Run] = {}
            for together in (False, True) if round_ % 2 == 0 else (True, False):
                with store(args.postgres) as env:
                    runs[together] = asyncio.run(run(env, matches, args.seconds, together))
            alone, grouped = runs[False], runs[True]
            ratios.append(grouped.rate / alone.rate)
            print(
                f"| {name} | {matches} | {round_ + 1} | {alone.rate:,.0f} | "
                f"{grouped.rate:,.0f} | {ratios[-1]:.2f} | "
                f"{grouped.saved / max(1, grouped.transactions):.1f} |",
                flush=True,
            )
        print(
            f"# {matches} matches: grouped / alone median {statistics.median(ratios):.2f}",
            file=sys.stderr,
        )
    print(f"# load at the end {os.getloadavg()[0]:.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
