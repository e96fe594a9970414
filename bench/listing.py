"""Benchmarks: ListMatches and start-up with many stored matches.

Run ``python bench/listing.py [--matches N] [--live L] [--postgres [DSN]]``. The store
(a temporary SQLite file, or a fresh schema of a PostgreSQL database with ``--postgres``)
is first filled directly through the application, in this process, many matches per
transaction: ``N`` Jungle Speed matches of 2 seats, of which ``L`` live (half waiting
for players, half playing) and the others ended (a scripted deal played to its end,
75 events each, as a finished match of a long-running server has). Then, in this
process, over loopback:

- start-up: the time ``server.serve.start`` takes on that store, until the port is open
  (it restores an actor for the matches it must);
- ListMatches with a status filter (``MATCH_STATUS_PLAYING``, 20 a page): the median and
  largest time of single calls, one after the other;
- the latency of ``Act`` in another match (a reveal, its player waiting for each answer)
  alone, then while 6 ListMatches like the one above run at once, again and again (each
  of the 6 makes at least ``--listings`` calls, and goes on until ``--acts`` Acts have
  been timed beside them; Acts go on while any listing runs, up to 20 times ``--acts``).

Every loop is bounded in count. Tests never assert a duration; the figures go to
docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from typing import Any

import grpc

from bench.harness import ORGANISER, ORGANISER_TOKEN
from bench.harness import fresh_store as store
from domain.jungle_speed import JungleSpeed
from domain.kernel.match import MatchAggregate
from server import codec
from server.serve import start
from server.stamps import Stamper
from storage.arena import Arena
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

DEFAULT_POSTGRES = "host=127.0.0.1 port=5432 user=postgres dbname=test"
PER_TRANSACTION = 20
CONCURRENT_LISTINGS = 6


def symbol(shape: int, colour: int) -> int:
    return 4 * shape + colour


def scripted_deck() -> list[int]:
    """72 symbol cards: no duel until both last cards, which share a shape; 72 reveals
    and one grab end the match (the deal of tests/service/test_match_end.py)."""
    last_of_0, last_of_1 = symbol(8, 0), symbol(8, 3)
    swapped = symbol(17, 3)
    zero = [swapped] + [c for c in range(36) if c not in (last_of_0, last_of_1)] + [last_of_0]
    one = [c for c in range(36, 72) if c != swapped] + [last_of_1]
    return [card for pair in zip(zero, one, strict=True) for card in pair]


def command(which: js.JungleSpeedCommand) -> Any:
    return codec.codec_for("jungle_speed").command(ms.ActRequest(jungle_speed=which))


REVEAL = js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())
GRAB = js.JungleSpeedCommand(grab=js.JungleSpeedGrab())


def scripted_create() -> ms.CreateMatchRequest:
    """A 2-seat Jungle Speed match on :func:`scripted_deck`, no special cards, no timer."""
    return ms.CreateMatchRequest(
        game=common_pb2.GAME_JUNGLE_SPEED,
        jungle_speed=js.JungleSpeedOptions(
            max_players=2,
            prearranged_deal=scripted_deck(),
            specials=js.JungleSpeedSpecials(),
            turn_timeout_ms=0,
        ),
    )


def add_postgres_option(parser: argparse.ArgumentParser) -> None:
    """``--postgres [DSN]``: the run's store is a fresh schema of this PostgreSQL
    database (without it, a temporary SQLite file)."""
    parser.add_argument(
        "--postgres",
        nargs="?",
        const=DEFAULT_POSTGRES,
        default=None,
        metavar="DSN",
        help=f"a fresh schema of this PostgreSQL database (default DSN: {DEFAULT_POSTGRES})",
    )


def new_match(app: Arena, stamper: Stamper, kind: str) -> MatchAggregate:
    """A match, not saved: ``waiting``, ``playing`` (both seats taken) or ``ended``."""
    game_codec = codec.codec_for("jungle_speed")
    options = game_codec.options_from_request(scripted_create())
    match: MatchAggregate = JungleSpeed.create(options, app.seed_source(), b"", "0" * 64)
    if kind == "waiting":
        return match
    for seat in range(2):
        match.join(f"p{seat}", b"", "1" * 64, stamper.stamp(), seat)
    if kind == "ended":
        reveal, grab = command(REVEAL), command(GRAB)
        for _ in range(36):
            for seat in (0, 1):
                reveal.run(match, seat, stamper.stamp(match.version))
        grab.run(match, 0, stamper.stamp(match.version))
    return match


def fill(
    env: dict[str, str],
    matches: int,
    live: int,
    per_transaction: int = PER_TRANSACTION,
    first_position: int = 1,
) -> tuple[float, int]:
    """Store ``matches`` matches, ``live`` of them live, spread through the log, at log
    positions from ``first_position`` on (so that several fills may share a store, each
    with its own range), ``per_transaction`` matches a transaction; return the seconds
    taken and the number of events stored."""
    app = Arena(env)
    stamper = Stamper()
    began = time.perf_counter()
    events = 0
    position = first_position
    every = max(1, matches // max(1, live))
    try:
        batch: list[Any] = []
        for index in range(matches):
            if live and index % every == every // 2 and index // every < live:
                kind = "waiting" if (index // every) % 2 == 0 else "playing"
            else:
                kind = "ended"
            match = new_match(app, stamper, kind)
            events += len(match.pending_events)
            batch += [
                match,
                app.match_log.trigger_event(position, match_id=match.id, game="jungle_speed"),
            ]
            position += 1
            if len(batch) == 2 * per_transaction:
                app.save(*batch)
                batch = []
        if batch:
            app.save(*batch)
    finally:
        app.close()
    return time.perf_counter() - began, events


def ms_of(seconds: list[float]) -> str:
    if not seconds:
        return "-"
    return (
        f"median {statistics.median(seconds) * 1000:.1f} ms, "
        f"max {max(seconds) * 1000:.1f} ms (n={len(seconds)})"
    )


async def timed_listing(client: match_service_pb2_grpc.MatchServiceStub) -> float:
    began = time.perf_counter()
    await client.ListMatches(
        ms.ListMatchesRequest(status=common_pb2.MATCH_STATUS_PLAYING, page_size=20)
    )
    return time.perf_counter() - began


async def scripted_match(client: match_service_pb2_grpc.MatchServiceStub) -> str:
    created = await client.CreateMatch(
        ms.CreateMatchRequest(
            game=common_pb2.GAME_JUNGLE_SPEED,
            jungle_speed=js.JungleSpeedOptions(
                max_players=2,
                prearranged_deal=scripted_deck(),
                specials=js.JungleSpeedSpecials(),
                turn_timeout_ms=0,
            ),
        ),
        metadata=ORGANISER,
    )
    return str(created.match_id)


async def measure(env: dict[str, str], args: argparse.Namespace) -> None:
    began = time.perf_counter()
    running = await start("127.0.0.1:0", {**env, "TOTEM_ORGANISER_TOKEN": ORGANISER_TOKEN})
    print(f"start-up until the port is open: {time.perf_counter() - began:.2f} s", flush=True)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    client = match_service_pb2_grpc.MatchServiceStub(channel)
    try:
        alone = [await timed_listing(client) for _ in range(args.listings)]
        print(f"ListMatches status=PLAYING, alone: {ms_of(alone)}", flush=True)

        match_id, tokens, played = "", ["", ""], 70

        async def one_act() -> float:
            """A reveal by the seat whose turn it is, in a match of the scripted deal
            (no duel before its 72nd reveal): a fresh match every 70."""
            nonlocal match_id, tokens, played
            if played == 70:
                match_id, tokens, played = await scripted_match(client), [], 0
                for seat in range(2):
                    joined = await client.JoinMatch(
                        ms.JoinMatchRequest(match_id=match_id, name=f"p{seat}", seat=seat)
                    )
                    tokens.append(joined.player_token)
            began = time.perf_counter()
            await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=REVEAL),
                metadata=(("authorization", f"Bearer {tokens[played % 2]}"),),
            )
            played += 1
            return time.perf_counter() - began

        quiet = [await one_act() for _ in range(args.acts)]
        print(f"Act in another match, no listing: {ms_of(quiet)}", flush=True)

        listings: list[float] = []
        busy: list[float] = []

        async def lister() -> None:
            """ListMatches again and again: at least ``--listings`` calls, and on until
            ``--acts`` Acts have been timed beside them."""
            done = 0
            while done < args.listings or len(busy) < args.acts:
                listings.append(await timed_listing(client))
                done += 1

        listers = [asyncio.ensure_future(lister()) for _ in range(CONCURRENT_LISTINGS)]
        while not all(t.done() for t in listers) and len(busy) < args.acts * 20:
            busy.append(await one_act())
        await asyncio.gather(*listers)
        print(
            f"Act in another match, {CONCURRENT_LISTINGS} ListMatches at once: {ms_of(busy)}",
            flush=True,
        )
        print(f"  those ListMatches: {ms_of(listings)}", flush=True)
    finally:
        await channel.close()
        await running.stop(grace=None)


async def main(args: argparse.Namespace) -> None:
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {sys.version.split()[0]}, grpcio {grpc.__version__}",
        flush=True,
    )
    with store(args.postgres) as (env, where):
        took, events = fill(env, args.matches, args.live)
        print(
            f"{where}: {args.matches} matches ({args.live} live), {events} events, "
            f"filled in {took:.1f} s",
            flush=True,
        )
        await measure(env, args)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--matches", type=int, default=20_000, help="matches stored (default: 20000)"
    )
    parser.add_argument(
        "--live",
        type=int,
        default=None,
        help="of which live, half waiting, half playing (default: 1 %% of --matches)",
    )
    parser.add_argument(
        "--listings",
        type=int,
        default=5,
        help="ListMatches calls timed alone, and by each concurrent lister (default: 5)",
    )
    parser.add_argument(
        "--acts", type=int, default=50, help="Acts timed with no listing (default: 50)"
    )
    add_postgres_option(parser)
    args = parser.parse_args(argv)
    if args.live is None:
        args.live = args.matches // 100
    return args


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
