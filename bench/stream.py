"""Events per second a Watch stream delivers, with the state and without, against a raw
gRPC stream of the same bytes.

In this process, over loopback: the server on a fresh store, matches of ``--players``
played by their players as fast as answered, and ``--watchers`` spectators, each on a
connection of its own. Catch-up: every watcher Watches each stored match from version 0
(at least ``--history`` events). Live: the watchers Watch new matches while they are
played (``--live-events``), and the matches' own rate beside a match nobody watches. Raw:
a plain server-streaming RPC of a second server in this process sending the very bytes
the catch-up received. Medians of ``--rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Any

from bench.harness import (
    ORGANISER,
    arguments,
    bearer,
    create_request,
    fresh_store,
    in_process,
    machine_line,
    markdown_table,
    next_move,
)
from totem.v1 import common_pb2
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

WATCH, RAW = "/totem.v1.MatchService/Watch", "/bench.Raw/Stream"
OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # a connection per watcher


async def play(
    stub: Any, players: int, limit: int, watchers: Any = None
) -> tuple[str, int, int, float]:
    """A match created, ``watchers(match_id)`` awaited, seated and played to its end or
    ``limit`` events: (id, version, commands, seconds from the first join)."""
    options = js.JungleSpeedOptions(max_players=players, turn_timeout_ms=0)
    match_id = (await stub.CreateMatch(create_request(options), metadata=ORGANISER)).match_id
    if watchers is not None:
        await watchers(match_id)
    began, tokens = time.perf_counter(), []
    for seat in range(players):
        request = ms.JoinMatchRequest(match_id=match_id, name=f"p{seat}", seat=seat)
        tokens.append(bearer((await stub.JoinMatch(request)).player_token))
    view = await stub.GetMatch(ms.GetMatchRequest(match_id=match_id), metadata=tokens[0])
    me, state, summary, commands = 0, view.jungle_speed, view.summary, 0
    while summary.status != common_pb2.MATCH_STATUS_ENDED and summary.version < limit:
        if (move := next_move(state, me)) is None:
            break
        me, command = move
        request = ms.ActRequest(
            match_id=match_id, seen_version=summary.version, jungle_speed=command
        )
        acted = await stub.Act(request, metadata=tokens[me])
        state, summary, commands = acted.state.jungle_speed, acted.state.summary, commands + 1
    return match_id, summary.version, commands, time.perf_counter() - began


async def read(call: Any, times: list[float]) -> int:
    """Read a stream of MatchEvents to its end (or cancellation): the events, each
    arrival's time appended."""
    count = 0
    try:
        async for _ in call:
            count += 1
            times.append(time.perf_counter())
    except asyncio.CancelledError:
        pass
    return count


async def catch_up(channels: list[Any], method: str, requests: list[bytes]) -> float:
    """Every watcher reads every stream in turn, all at once: events/s each."""
    import grpc

    async def one(channel: grpc.aio.Channel) -> int:
        call = channel.unary_stream(method, response_deserializer=ms.MatchEvent.FromString)
        return sum([await read(call(r), []) for r in requests])

    began = time.perf_counter()
    events = await asyncio.gather(*(one(c) for c in channels))
    return sum(events) / (time.perf_counter() - began) / len(channels)


async def open_watchers(
    channels: list[Any],
    with_state: bool,
    tasks: list[Any],
    arrivals: list[list[float]],
    match_id: str,
) -> None:
    """A Watch stream of ``match_id`` on each channel, open once each has MatchCreated."""
    request = ms.WatchRequest(match_id=match_id, omit_state=not with_state).SerializeToString()
    for channel, times in zip(channels, arrivals, strict=True):
        tasks.append(asyncio.ensure_future(read(channel.unary_stream(WATCH)(request), times)))
    while not all(arrivals):  # noqa: ASYNC110  # polls what the tasks append
        await asyncio.sleep(0.005)


async def live(
    stub: Any, channels: list[Any], with_state: bool, args: argparse.Namespace
) -> tuple[float, float]:
    """Matches played while watched, until ``--live-events``: events/s each watcher
    received, from the first join to its last event, and events/s the matches made."""
    made = seconds = 0.0
    rates: list[float] = []
    while made < args.live_events:
        tasks: list[Any] = []
        arrivals: list[list[float]] = [[] for _ in channels]
        watch = partial(open_watchers, channels, with_state, tasks, arrivals) if channels else None
        began = time.perf_counter()
        _, version, _, took = await play(stub, args.players, args.live_events, watch)
        while any(len(times) < version for times in arrivals):  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        for task in tasks:
            task.cancel()
        rates += [(version - 1) / (times[-1] - began) for times in arrivals]
        made, seconds = made + version - 1, seconds + took
    return (statistics.fmean(rates) if rates else 0.0), made / seconds


async def run(args: argparse.Namespace, env: dict[str, str]) -> None:
    import grpc

    from totem.v1 import match_service_pb2_grpc

    async with in_process(env) as running:
        address = f"127.0.0.1:{running.port}"
        driver = grpc.aio.insecure_channel(address)
        stub = match_service_pb2_grpc.MatchServiceStub(driver)
        history = []
        while sum(h[1] for h in history) < args.history:
            history.append(await play(stub, args.players, 5000))
        stored: dict[tuple[int, bool], list[bytes]] = {}
        for index, (match_id, *_) in enumerate(history):
            for with_state in (True, False):
                request = ms.WatchRequest(match_id=match_id, omit_state=not with_state)
                call = driver.unary_stream(WATCH)(request.SerializeToString())
                stored[index, with_state] = [data async for data in call]
        sizes = {
            s: statistics.fmean(len(d) for (_, w), ds in stored.items() if w == s for d in ds)
            for s in (True, False)
        }

        async def raw(request: bytes, _context: Any) -> AsyncIterator[bytes]:
            index, with_state = request.decode().split(":")
            for data in stored[int(index), with_state == "1"]:
                yield data

        raw_server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        handler = grpc.unary_stream_rpc_method_handler(raw)
        raw_server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("bench.Raw", {"Stream": handler}),)
        )
        raw_address = f"127.0.0.1:{raw_server.add_insecure_port('127.0.0.1:0')}"
        await raw_server.start()
        print(
            f"history: {len(history)} matches, {sum(h[1] for h in history)} events; bytes per "
            f"event with state {sizes[True]:.0f}, without {sizes[False]:.0f}"
        )
        rows, made = [], [f"nobody watching {(await live(stub, [], True, args))[1]:,.0f}"]
        for count in args.watchers:
            channels = [grpc.aio.insecure_channel(address, options=OPTIONS) for _ in range(count)]
            raws = [grpc.aio.insecure_channel(raw_address, options=OPTIONS) for _ in range(count)]
            figures: dict[tuple[str, bool], list[float]] = {}
            for _ in range(args.rounds):
                for with_state in (True, False):
                    flag = "1" if with_state else "0"
                    raw_requests = [f"{i}:{flag}".encode() for i in range(len(history))]
                    watch_requests = [
                        ms.WatchRequest(
                            match_id=h[0], omit_state=not with_state
                        ).SerializeToString()
                        for h in history
                    ]
                    for name, value in (
                        ("raw gRPC stream", await catch_up(raws, RAW, raw_requests)),
                        ("catch-up: Watch from 0", await catch_up(channels, WATCH, watch_requests)),
                        (
                            "live: Watch while played",
                            (watched := await live(stub, channels, with_state, args))[0],
                        ),
                    ):
                        figures.setdefault((name, with_state), []).append(value)
                    kind = "with state" if with_state else "without"
                    made.append(f"{count} watching {kind} {watched[1]:,.0f}")
            for name in ("raw gRPC stream", "catch-up: Watch from 0", "live: Watch while played"):
                with_, without = (statistics.median(figures[name, s]) for s in (True, False))
                raw_with, raw_without = (
                    statistics.median(figures["raw gRPC stream", s]) for s in (True, False)
                )
                rows.append(
                    [name, count, f"{with_:,.0f}", f"{without:,.0f}", f"{with_ / without:.2f}"]
                )
                rows[-1] += [f"{with_ / raw_with:.2f}", f"{without / raw_without:.2f}"]
            for channel in channels + raws:
                await channel.close()
        await raw_server.stop(None)
        await driver.close()
    header = ["stream", "watchers", "with state, ev/s each", "without", "with / without"]
    print(markdown_table([*header, "with / raw", "without / raw"], rows))
    print(f"\nLive matches, events/s made: {'; '.join(made)}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = arguments(__doc__, root=False)
    parser.add_argument("--watchers", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--history", type=int, default=2000, help="stored events to catch up on")
    parser.add_argument("--live-events", type=int, default=500)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(machine_line())
    with fresh_store(args.store, args.dsn) as (env, name):
        print(f"store: {name}")
        asyncio.run(run(args, env))


if __name__ == "__main__":
    main()
