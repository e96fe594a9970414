"""Benchmarks: command round trips as ratios against a raw gRPC baseline.

Run ``python bench/run.py [--rounds N]``. Everything runs on this machine in one
process pair: a server on a loopback port with a temporary SQLite store, and a client.
The baseline is a standard health ``Check`` on the same server and channel (a unary
call that does no work), so the ratios say what the game adds on top of gRPC itself.
Figures go to docs/performance.md; tests never assert a duration.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.harness import ORGANISER, ORGANISER_TOKEN
from server.limits import Limits
from server.serve import start
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

MACHINE_SPEED = Limits(
    commands_per_second=1e9,
    command_burst=10**9,
    streams_per_connection=10**6,
    streams_per_address=10**6,
)


async def timed(
    call: Callable[[], Awaitable[object]],
    rounds: int,
    prepare: Callable[[], Awaitable[object]] | None = None,
) -> list[float]:
    """Wall time of each call; ``prepare`` runs untimed before each one."""
    samples = []
    for _ in range(rounds):
        if prepare is not None:
            await prepare()
        began = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - began)
    return samples


def describe(name: str, samples: list[float], baseline: float) -> str:
    median = statistics.median(samples)
    p99 = sorted(samples)[int(len(samples) * 0.99) - 1]
    return f"| {name} | {median * 1e3:.3f} | {p99 * 1e3:.3f} | {median / baseline:.1f} |"


async def main(rounds: int, watchers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(Path(tmp) / "b.db"),
            "TOTEM_ORGANISER_TOKEN": ORGANISER_TOKEN,
        }
        # As fast as the server answers, with as many watchers as asked: no bound of a client.
        running = await start("127.0.0.1:0", env, limits=MACHINE_SPEED)
        import grpc

        channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
        client = match_service_pb2_grpc.MatchServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        check = health_pb2.HealthCheckRequest(service="")

        options = js.JungleSpeedOptions(
            max_players=2, turn_timeout_ms=0, specials=js.JungleSpeedSpecials()
        )
        match_id = ""
        tokens: list[str] = []
        drains: list[asyncio.Task[None]] = []
        seat = 0
        command = js.JungleSpeedCommand()

        async def new_match() -> None:
            nonlocal match_id, tokens, drains
            created = await client.CreateMatch(
                ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=options),
                metadata=ORGANISER,
            )
            match_id = created.match_id
            tokens = []
            for seat in range(2):
                joined = await client.JoinMatch(
                    ms.JoinMatchRequest(match_id=match_id, name=f"bench {seat}", any_seat=True)
                )
                tokens.append(joined.player_token)
            drains = [
                asyncio.create_task(_drain(client.Watch(ms.WatchRequest(match_id=match_id))))
                for _ in range(watchers)
            ]

        async def look() -> None:
            """Untimed: find a seat with something to do, from the seats' own legal
            actions (a grab that wins a race first, else a reveal); start a new match
            when one ends or when nobody may do anything (with the timer off, a deal can
            leave every pile empty of what may be revealed)."""
            nonlocal seat, command
            while True:
                for candidate, token in enumerate(tokens):
                    view = await client.GetMatch(
                        ms.GetMatchRequest(match_id=match_id),
                        metadata=(("authorization", f"Bearer {token}"),),
                    )
                    legal = view.jungle_speed.legal
                    if legal.grabs:
                        seat, command = candidate, js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
                        return
                    if legal.reveal:
                        seat, command = (
                            candidate,
                            js.JungleSpeedCommand(reveal=js.JungleSpeedReveal()),
                        )
                        return
                await new_match()

        async def reveal_or_grab() -> None:
            """The seat found reveals or grabs: commands that are stamped, decided, saved
            and fanned out."""
            await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=command),
                metadata=(("authorization", f"Bearer {tokens[seat]}"),),
            )

        await new_match()
        get = ms.GetMatchRequest(match_id=match_id)
        await timed(lambda: health.Check(check), 50)  # warm up
        baseline = await timed(lambda: health.Check(check), rounds)
        gets = await timed(lambda: client.GetMatch(get), rounds)
        acts = await timed(reveal_or_grab, rounds, prepare=look)
        base = statistics.median(baseline)
        print(f"rounds: {rounds}, watchers: {watchers}")
        print("| call | median ms | p99 ms | x baseline |")
        print("|---|---|---|---|")
        print(describe("health Check (baseline)", baseline, base))
        print(describe("GetMatch", gets, base))
        print(describe(f"Act (reveal or grab), {watchers} watchers", acts, base))
        for task in drains:
            task.cancel()
        await channel.close()
        await running.stop(grace=None)


async def _drain(stream: object) -> None:
    async for _ in stream:  # type: ignore[attr-defined]
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--watchers", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.watchers))
