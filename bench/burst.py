"""Benchmark: a burst of concurrent calls against one server process, and how each ends.

Run ``python bench/burst.py [--calls 5000] [--root TREE] [--extra ARG ...]``. The server
runs as its own process (``python -m server serve`` on a temporary SQLite file) from the
source tree ``--root`` (this one by default: give another checkout to measure it the same
way), the client in this one, on one channel. First a baseline: as many concurrent health
``Check`` calls (no work at all). Then as many concurrent ``JoinMatch`` calls on one Jungle
Speed match of ten seats: ten take a seat, the others are refused by the rules
(FAILED_PRECONDITION) or by the server's bounds (RESOURCE_EXHAUSTED with a retry hint). The
figures are the status codes counted, whether each RESOURCE_EXHAUSTED carried a retry hint,
and the wall time; nothing is asserted. ``--extra`` passes options to ``totem serve``
(``--extra=--max-concurrent-calls=100``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.harness import ORGANISER, ROOT, serving
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

#: No call of the burst may take longer than this (a client deadline far beyond the run).
CALL_TIMEOUT_S = 300.0


def outcome(error: grpc.aio.AioRpcError | None) -> str:
    if error is None:
        return "OK"
    code = error.code().name
    if error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
        hinted = any(k == "grpc-retry-pushback-ms" for k, _ in error.trailing_metadata() or ())
        return f"{code} ({'with' if hinted else 'without'} retry hint)"
    if error.code() is grpc.StatusCode.CANCELLED:
        return f"{code} ({error.details()!r})"
    return code


async def burst(calls: list[object]) -> tuple[collections.Counter[str], float]:
    async def one(call: object) -> str:
        try:
            await call  # type: ignore[misc]
        except grpc.aio.AioRpcError as error:
            return outcome(error)
        return "OK"

    began = time.perf_counter()
    results = await asyncio.gather(*(one(c) for c in calls))
    return collections.Counter(results), time.perf_counter() - began


async def run(port: int, count: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        client = match_service_pb2_grpc.MatchServiceStub(channel)
        await health.Check(health_pb2.HealthCheckRequest(), timeout=30)
        checks, took = await burst(
            [
                health.Check(health_pb2.HealthCheckRequest(), timeout=CALL_TIMEOUT_S)
                for _ in range(count)
            ]
        )
        print(f"{count} concurrent health Check calls (baseline): {took:.2f} s")
        for name, number in sorted(checks.items()):
            print(f"  {name}: {number}")
        created = await client.CreateMatch(
            ms.CreateMatchRequest(
                game=common_pb2.GAME_JUNGLE_SPEED,
                jungle_speed=js.JungleSpeedOptions(max_players=10),
            ),
            metadata=ORGANISER,
            timeout=30,
        )
        joins, took = await burst(
            [
                client.JoinMatch(
                    ms.JoinMatchRequest(match_id=created.match_id, name=f"p{i}", any_seat=True),
                    timeout=CALL_TIMEOUT_S,
                )
                for i in range(count)
            ]
        )
        print(f"{count} concurrent JoinMatch calls on one match: {took:.2f} s")
        for name, number in sorted(joins.items()):
            print(f"  {name}: {number}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--extra", action="append", default=[], help="an option of totem serve")
    args = parser.parse_args()
    print(f"server: {args.root}, options {args.extra}")
    with serving(root=args.root.resolve(), args=args.extra, unlimited=False) as server:
        try:
            asyncio.run(run(server.port, args.calls))
        finally:
            logged = server.log_path.read_text(errors="replace").strip().splitlines()
            print(
                f"server log: {len(logged)} lines", *(f"  {line}" for line in logged[-5:]), sep="\n"
            )


if __name__ == "__main__":
    main()
