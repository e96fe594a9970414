"""Group commit: events saved per second by matches played flat out, each command's save
a transaction of its own ("alone") against the saves waiting together in one ("grouped").

``--matches`` players, each with a match of its own, send command after command as
answered for ``--seconds``: 2-seat matches of the scripted deal (72 reveals and a grab end
one; the next starts at once). In this process, through the server's match actors on a
fresh store (``Actors(group_commit=False)`` for alone), or with ``--grpc`` through the
whole server over loopback. Alone and grouped alternate which goes first each round.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bench.harness import (
    GRAB,
    ORGANISER,
    REVEAL,
    add_server_options,
    bearer,
    fresh_store,
    in_process,
    machine_line,
    markdown_table,
    scripted_create,
)
from totem.v1 import match_service_pb2 as ms


def scripted_options() -> tuple[Any, Any]:
    from server import codec

    game = codec.codec_for("jungle_speed")
    return game.options_from_request(scripted_create()), game


async def player(actors: Any, stop: float, counts: list[int]) -> None:
    """Matches one after the other through the actors, each command once answered."""
    from domain.jungle_speed import JungleSpeed

    options, game = scripted_options()
    reveal, grab = (game.command(ms.ActRequest(jungle_speed=c)) for c in (REVEAL, GRAB))
    stamper = actors.stamper
    while time.perf_counter() < stop:
        created = await actors.threads.call(
            actors.app.create_match, lambda seed: JungleSpeed.create(options, seed, b"", "0" * 64)
        )
        for seat in range(2):
            joined = await actors.run(
                created.id, lambda m, s=seat: m.join(f"p{s}", b"", "1" * 64, stamper.stamp())
            )
            counts[0] += len(joined.events)
        for turn in range(73):
            if time.perf_counter() >= stop:
                return
            command, seat = (reveal, turn % 2) if turn < 72 else (grab, 0)
            outcome = await actors.run(
                created.id, lambda m, c=command, s=seat: c.run(m, s, stamper.stamp(m.version))
            )
            counts[0] += len(outcome.events)


async def client(address: str, stop: float, counts: list[int]) -> None:
    """The same player as a gRPC client, on a channel of its own."""
    import grpc

    from domain.jungle_speed import JungleSpeed
    from totem.v1 import match_service_pb2_grpc

    first = JungleSpeed.create(scripted_options()[0], bytes(32), b"", "0" * 64).version
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        while time.perf_counter() < stop:
            created = await stub.CreateMatch(scripted_create(), metadata=ORGANISER)
            tokens = []
            for seat in range(2):
                request = ms.JoinMatchRequest(match_id=created.match_id, name=f"p{seat}", seat=seat)
                joined = await stub.JoinMatch(request)
                tokens.append(bearer(joined.player_token))
            counts[0] += joined.version - first  # the joins' events, and the deal's
            for turn in range(73):
                if time.perf_counter() >= stop:
                    return
                which, seat = (REVEAL, turn % 2) if turn < 72 else (GRAB, 0)
                request = ms.ActRequest(match_id=created.match_id, jungle_speed=which)
                counts[0] += len((await stub.Act(request, metadata=tokens[seat])).events)


async def measure(
    env: dict[str, str], args: argparse.Namespace, together: bool
) -> tuple[float, float]:
    """Events saved per second, and matches a transaction."""
    counts = [0]
    if args.grpc:
        async with in_process(env) as running:
            running.actors.committer.together = together
            stop = time.perf_counter() + args.seconds
            address = f"127.0.0.1:{running.port}"
            await asyncio.gather(*(client(address, stop, counts) for _ in range(args.matches)))
            committer = running.actors.committer
    else:
        from server import codec
        from server.actors import Actors
        from server.hub import EventHub
        from server.stamps import Stamper
        from storage.arena import Arena

        actors = Actors(Arena(env), EventHub(codec.encoded_event), Stamper(), group_commit=together)
        try:
            stop = time.perf_counter() + args.seconds
            await asyncio.gather(*(player(actors, stop, counts) for _ in range(args.matches)))
        finally:
            await actors.close()
            await actors.threads.close()
            actors.app.close()
        committer = actors.committer
    return counts[0] / args.seconds, committer.saved / max(1, committer.transactions)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--grpc", action="store_true", help="the whole server, over loopback")
    add_server_options(parser, root=False)
    args = parser.parse_args(argv)
    print(f"{machine_line()}\n{args.matches} matches, store {args.store}, grpc {args.grpc}")
    rows, ratios = [], []
    for index in range(args.rounds):
        rates: dict[bool, tuple[float, float]] = {}
        for together in (False, True) if index % 2 == 0 else (True, False):
            with fresh_store(args.store, args.dsn) as (env, _):
                rates[together] = asyncio.run(measure(env, args, together))
        ratios.append(rates[True][0] / rates[False][0])
        rows.append(
            [
                index + 1,
                f"{rates[False][0]:,.0f}",
                f"{rates[True][0]:,.0f}",
                f"{ratios[-1]:.2f}",
                f"{rates[True][1]:.1f}",
            ]
        )
    print(
        markdown_table(
            ["round", "alone ev/s", "grouped ev/s", "grouped / alone", "matches a transaction"],
            rows,
        )
    )
    print(f"grouped / alone, median: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
