"""Thousands of open Watch streams on one server process: memory and delivery latency,
against the bare echo server's fan-out to as many ``Listen`` streams.

``totem serve`` in a process of its own: its resident memory empty, with ``--idle``
matches waiting (each an actor in memory), with ``--matches`` playing, then with
``--streams`` spectator streams on those matches opened by ``--clients`` processes (100
streams a connection). Then ``--rate`` commands per second in all, round robin over the
matches, for ``--seconds``: each event's delivery latency from the command's send and
from the event's ``recorded_at``. The baseline: the same streams as ``Listen`` streams
over as many keys of the bare echo server, and echoes at the same rate.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import struct
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.harness import (
    ECHO,
    LISTEN,
    ORGANISER,
    EchoServer,
    arguments,
    bearer,
    create_request,
    machine_line,
    markdown_table,
    next_move,
    p50_p99,
    rss_mib,
    serve,
)
from totem.v1 import common_pb2
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

ENV = {
    "TOTEM_STREAMS_PER_CONNECTION": "1000000",
    "TOTEM_STREAMS_PER_ADDRESS": "1000000",
    "TOTEM_MAX_CONCURRENT_CALLS": "1000000",
    "TOTEM_ORGANISER_CREATIONS_PER_MINUTE": "100000000",
    "TOTEM_IDLE_ACTOR_SECONDS": "1000000",
}


async def watch(address: str, game: bool, keys: list[str], conn: Any) -> None:
    """A watcher process: a stream per key; (key, version, arrival, latency) per message."""
    import grpc

    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [
        grpc.aio.insecure_channel(address, options=options) for _ in range(len(keys) // 100 + 1)
    ]
    seen: list[tuple[str, int, float, float]] = []
    opened, failures = set(), []

    async def one(index: int, key: str) -> None:
        channel = channels[index % len(channels)]
        if game:
            call = channel.unary_stream(
                "/totem.v1.MatchService/Watch", ms.WatchRequest.SerializeToString
            )
            call = call(ms.WatchRequest(match_id=key))
        else:
            call = channel.unary_stream(LISTEN)(bytes.fromhex(key))
        try:
            async for data in call:
                now = time.time()
                opened.add(index)
                if game:
                    event = ms.MatchEvent.FromString(data)
                    seen.append(
                        (key, event.version, now, now - event.recorded_at.ToNanoseconds() / 1e9)
                    )
                elif data:
                    seen.append((key, 0, now, now - struct.unpack("!d", data[16:24])[0]))
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                failures.append(f"{error.code().name}: {error.details()}")

    tasks = [asyncio.ensure_future(one(i, k)) for i, k in enumerate(keys)]
    deadline = time.monotonic() + 300
    while len(opened) < len(keys) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.1)
    conn.send((len(opened), failures[:3]))
    await asyncio.to_thread(conn.recv)  # the run is over
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    conn.send((seen, failures[:3], len(failures)))


def watch_main(address: str, game: bool, keys: list[str], conn: Any) -> None:
    asyncio.run(watch(address, game, keys, conn))


def watchers(address: str, game: bool, keys: list[str], processes: int) -> list[tuple[Any, Any]]:
    context = multiprocessing.get_context("spawn")
    children = []
    for index in range(processes):
        mine, theirs = context.Pipe()
        args = (address, game, keys[index::processes], theirs)
        children.append((context.Process(target=watch_main, args=args, daemon=True), mine))
        children[-1][0].start()
    return children


def opened(children: list[tuple[Any, Any]]) -> tuple[int, list[str]]:
    replies = [conn.recv() for _, conn in children if conn.poll(330)]
    return sum(r[0] for r in replies), [f for r in replies for f in r[1]]


def finish(children: list[tuple[Any, Any]]) -> tuple[list[Any], list[str]]:
    for _, conn in children:
        conn.send("done")
    replies = [conn.recv() for _, conn in children if conn.poll(120)]
    for process, _ in children:
        process.join(30)
    return [a for r in replies for a in r[0]], [f for r in replies for f in r[1]]


async def paced(rate: float, seconds: float, act: Any) -> None:
    """``act(tick)`` at ``rate`` a second, without waiting for one to end."""
    pending = set()
    began = time.perf_counter()
    for tick in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, began + tick / rate - time.perf_counter()))
        pending.add(task := asyncio.ensure_future(act(tick)))
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)


async def game_run(address: str, pid: int, args: argparse.Namespace) -> dict[str, Any]:
    import grpc

    from totem.v1 import match_service_pb2_grpc

    out: dict[str, Any] = {}
    options = js.JungleSpeedOptions(max_players=2, turn_timeout_ms=0)
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        await asyncio.sleep(1.0)
        out["rss empty"] = rss_mib(pid)
        for _ in range(args.idle):
            await stub.CreateMatch(create_request(options), metadata=ORGANISER)
        await asyncio.sleep(1.0)
        out["rss idle"] = rss_mib(pid)
        tables = []
        for _ in range(args.matches):
            match_id = (
                await stub.CreateMatch(create_request(options), metadata=ORGANISER)
            ).match_id
            tokens = []
            for seat in range(2):
                request = ms.JoinMatchRequest(match_id=match_id, name=f"p{seat}", seat=seat)
                tokens.append(bearer((await stub.JoinMatch(request)).player_token))
            view = await stub.GetMatch(ms.GetMatchRequest(match_id=match_id), metadata=tokens[0])
            tables.append({"id": match_id, "tokens": tokens, "state": view.jungle_speed, "me": 0})
            tables[-1] |= {"version": view.summary.version, "busy": False, "over": False}
        await asyncio.sleep(1.0)
        out["rss playing"] = rss_mib(pid)
        keys = [tables[i % len(tables)]["id"] for i in range(args.streams)]
        children = watchers(address, True, keys, args.clients)
        out["opened"], failures = await asyncio.to_thread(opened, children)
        await asyncio.sleep(1.0)
        out["rss streams"] = rss_mib(pid)
        sent: dict[tuple[str, int], float] = {}

        async def act(tick: int) -> None:
            for k in range(len(tables)):
                table = tables[(tick + k) % len(tables)]
                if not table["busy"] and not table["over"]:
                    break
            else:
                return
            move = next_move(table["state"], table["me"])
            if move is None:
                table["over"] = True
                return
            table["busy"], (table["me"], command) = True, move
            when = time.time()
            request = ms.ActRequest(
                match_id=table["id"], seen_version=table["version"], jungle_speed=command
            )
            try:
                acted = await stub.Act(request, metadata=table["tokens"][table["me"]], timeout=30)
            except grpc.aio.AioRpcError:
                table["over"] = True
                return
            finally:
                table["busy"] = False
            sent.update({(table["id"], e.version): when for e in acted.events})
            table["state"], table["version"] = acted.state.jungle_speed, acted.state.summary.version
            table["over"] = acted.state.summary.status == common_pb2.MATCH_STATUS_ENDED

        await paced(args.rate, args.seconds, act)
        await asyncio.sleep(3.0)
        arrivals, failures = await asyncio.to_thread(finish, children)
    measured = [(k, v, at, late) for k, v, at, late in arrivals if (k, v) in sent]
    watching = Counter(keys)
    out["deliveries"] = f"{len(measured)} of {sum(watching[k] for k, _ in sent)}"
    out["from send"] = [at - sent[(k, v)] for k, v, at, _ in measured]
    out["from recorded_at"] = [late for *_, late in measured]
    out["failures"] = failures
    return out


async def echo_run(echo: EchoServer, args: argparse.Namespace) -> dict[str, Any]:
    import grpc

    out: dict[str, Any] = {"rss empty": rss_mib(echo.pid)}
    keys = [uuid.uuid4().bytes.hex() for _ in range(args.matches)]
    streams = [keys[i % len(keys)] for i in range(args.streams)]
    children = watchers(echo.address, False, streams, args.clients)
    out["opened"], failures = await asyncio.to_thread(opened, children)
    await asyncio.sleep(1.0)
    out["rss streams"] = rss_mib(echo.pid)
    async with grpc.aio.insecure_channel(echo.address) as channel:
        call = channel.unary_unary(ECHO)

        async def echo_one(tick: int) -> None:
            key = bytes.fromhex(keys[tick % len(keys)])
            await call(key + struct.pack("!d", time.time()), timeout=30)

        await paced(args.rate, args.seconds, echo_one)
    await asyncio.sleep(3.0)
    arrivals, failures = await asyncio.to_thread(finish, children)
    out["deliveries"] = (
        f"{len(arrivals)} of {int(args.rate * args.seconds) * args.streams // args.matches}"
    )
    out["from send"] = [late for *_, late in arrivals]
    out["failures"] = failures
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = arguments(__doc__)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--matches", type=int, default=100, help="matches the streams watch")
    parser.add_argument("--idle", type=int, default=1000, help="idle matches held")
    parser.add_argument("--rate", type=float, default=50.0, help="commands per second in all")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4, help="watcher processes")
    args = parser.parse_args(argv)
    print(machine_line())
    echo = EchoServer()
    try:
        bare = asyncio.run(echo_run(echo, args))
    finally:
        echo.stop()
    with serve(args, ENV) as server:
        game = asyncio.run(game_run(server.address, server.pid, args))
    each = (game["rss streams"] - game["rss playing"]) * 1024 / max(1, game["opened"])
    bare_each = (bare["rss streams"] - bare["rss empty"]) * 1024 / max(1, bare["opened"])
    idle = (game["rss idle"] - game["rss empty"]) * 1024 / max(1, args.idle)
    rows = [
        ["streams open", bare["opened"], game["opened"]],
        ["deliveries", bare["deliveries"], game["deliveries"]],
        [
            "from send, p50 / p99 ms",
            p50_p99(bare["from send"], 1e3, 1),
            p50_p99(game["from send"], 1e3, 1),
        ],
        ["from recorded_at, p50 / p99 ms", "-", p50_p99(game["from recorded_at"], 1e3, 1)],
        ["RSS empty, MiB", f"{bare['rss empty']:.1f}", f"{game['rss empty']:.1f}"],
        [
            f"RSS with {args.idle} idle matches, MiB (KiB each)",
            "-",
            f"{game['rss idle']:.1f} ({idle:.1f})",
        ],
        [f"RSS with {args.matches} playing, MiB", "-", f"{game['rss playing']:.1f}"],
        [
            "RSS with the streams, MiB (KiB a stream)",
            f"{bare['rss streams']:.1f} ({bare_each:.1f})",
            f"{game['rss streams']:.1f} ({each:.1f})",
        ],
        ["failures", bare["failures"] or "-", game["failures"] or "-"],
    ]
    print(markdown_table(["", "bare fan-out", "totem serve"], rows))


if __name__ == "__main__":
    main()
