"""How Watch streams scale: events per second a stream delivers as watchers are added,
and memory and delivery latency with thousands of streams open.

``--parts rate``, in this process over loopback: the server on a fresh store, matches of
4 players played as fast as answered, and each of ``--watchers`` spectators on a
connection of its own. Catch-up: every watcher Watches each stored match from version 0
(at least ``--history`` events). Live: the watchers Watch new matches while they are
played (``--live-events``), beside the matches' own rate with nobody watching. Raw: a
plain server-streaming RPC of a second server in this process sending the very bytes the
catch-up received. Each with the state and without; medians of ``--rounds``.

``--parts many``: ``totem serve`` in a process of its own: its resident memory empty,
with ``--idle`` matches waiting, with ``--matches`` seated, then with ``--streams``
spectator streams on those opened by 4 processes (100 streams a connection); then
``--rate`` commands a second in all, round robin over the matches, for ``--seconds``:
each event's latency from its command's send to each watcher. The baseline: as many
``Listen`` streams of the bare echo server, over as many keys, echoed at the same rate.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import struct
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Any

from bench.harness import (
    ECHO,
    LISTEN,
    ORGANISER,
    EchoServer,
    Table,
    arguments,
    create_request,
    fresh_store,
    in_process,
    machine_line,
    markdown_table,
    p50_p99,
    rss_mib,
    serve,
)
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

PARTS = ("rate", "many")
WATCH, RAW = "/totem.v1.MatchService/Watch", "/bench.Raw/Stream"
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]
PLAYERS, WATCHER_PROCESSES = 4, 4
NAMES = ("raw gRPC stream", "catch-up: Watch from 0", "live: Watch while played")
#: What thousands of streams from one host, and many matches, need of the server.
MANY_ENV = {
    "TOTEM_STREAMS_PER_CONNECTION": "1000000",
    "TOTEM_STREAMS_PER_ADDRESS": "1000000",
    "TOTEM_MAX_CONCURRENT_CALLS": "1000000",
    "TOTEM_ORGANISER_CREATIONS_PER_MINUTE": "100000000",
    "TOTEM_IDLE_ACTOR_SECONDS": "1000000",
}


# ---- rate: events per second a stream delivers --------------------------------------------


async def play(stub: Any, limit: int, before_seats: Any = None) -> tuple[str, int, float]:
    """A match played to its end or ``limit`` events: its id, its version, and the
    seconds from its first join (after ``before_seats``)."""
    began: list[float] = []

    async def first(match_id: str) -> None:
        if before_seats is not None:
            await before_seats(match_id)
        began.append(time.perf_counter())

    table = await Table.seated(stub, PLAYERS, first)
    while table.summary.version < limit and await table.act(stub):
        pass
    return table.id, table.summary.version, time.perf_counter() - began[0]


async def read(call: Any, times: list[float]) -> int:
    """Read a stream to its end (or cancellation): its messages, each arrival's time
    appended."""
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

    async def one(channel: Any) -> int:
        return sum([await read(channel.unary_stream(method)(r), []) for r in requests])

    began = time.perf_counter()
    events = await asyncio.gather(*(one(c) for c in channels))
    return sum(events) / (time.perf_counter() - began) / len(channels)


async def watched_match(
    stub: Any, channels: list[Any], with_state: bool, limit: int
) -> tuple[list[float], int, float]:
    """A match played while each channel Watches it from its creation: events/s each
    watcher received, from the match's creation to its last event; its version; the
    seconds it was played."""
    arrivals: list[list[float]] = [[] for _ in channels]
    tasks: list[Any] = []
    began = time.perf_counter()

    async def watchers(match_id: str) -> None:  # open once each has MatchCreated
        request = ms.WatchRequest(match_id=match_id, omit_state=not with_state)
        for channel, times in zip(channels, arrivals, strict=True):
            call = channel.unary_stream(WATCH)(request.SerializeToString())
            tasks.append(asyncio.ensure_future(read(call, times)))
        while not all(arrivals):  # noqa: ASYNC110  # polls what the tasks append
            await asyncio.sleep(0.005)

    _, version, took = await play(stub, limit, watchers)
    while any(len(times) < version for times in arrivals):  # noqa: ASYNC110
        await asyncio.sleep(0.005)
    for task in tasks:
        task.cancel()
    return [(version - 1) / (times[-1] - began) for times in arrivals], version, took


async def live(
    stub: Any, channels: list[Any], with_state: bool, events: int
) -> tuple[float, float]:
    """Matches played while watched, until ``events``: events/s each watcher received,
    and events/s the matches made."""
    made = seconds = 0.0
    rates: list[float] = []
    while made < events:
        each, version, took = await watched_match(stub, channels, with_state, events)
        rates, made, seconds = rates + each, made + version - 1, seconds + took
    return (statistics.fmean(rates) if rates else 0.0), made / seconds


async def rate(args: argparse.Namespace, env: dict[str, str]) -> None:
    import grpc

    from totem.v1 import match_service_pb2_grpc

    async with in_process(env) as running:
        address = f"127.0.0.1:{running.port}"
        driver = grpc.aio.insecure_channel(address)
        stub = match_service_pb2_grpc.MatchServiceStub(driver)
        history: list[str] = []
        events = 0
        while events < args.history:
            match_id, version, _ = await play(stub, 5000)
            history, events = [*history, match_id], events + version
        requests = {
            s: [ms.WatchRequest(match_id=m, omit_state=not s).SerializeToString() for m in history]
            for s in (True, False)
        }
        stored: dict[bytes, list[bytes]] = {}
        for request in requests[True] + requests[False]:
            stored[request] = [data async for data in driver.unary_stream(WATCH)(request)]

        async def raw(request: bytes, _context: Any) -> AsyncIterator[bytes]:
            for data in stored[request]:  # the bytes that Watch request was sent
                yield data

        raw_server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        handler = grpc.unary_stream_rpc_method_handler(raw)
        raw_server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("bench.Raw", {"Stream": handler}),)
        )
        addresses = {
            WATCH: address,
            RAW: f"127.0.0.1:{raw_server.add_insecure_port('127.0.0.1:0')}",
        }
        await raw_server.start()
        size = {
            s: statistics.fmean(len(d) for r in requests[s] for d in stored[r]) for s in requests
        }
        print(
            f"history: {len(history)} matches, {events} events; bytes an event with state "
            f"{size[True]:.0f}, without {size[False]:.0f}"
        )
        made = [f"nobody watching {(await live(stub, [], True, args.live_events))[1]:,.0f}"]
        rows = []
        for count in args.watchers:
            channels = {
                m: [grpc.aio.insecure_channel(a, options=OWN_CONNECTION) for _ in range(count)]
                for m, a in addresses.items()
            }
            figures: dict[tuple[str, bool], list[float]] = {}
            for _ in range(args.rounds):
                for s in (True, False):
                    got = [await catch_up(channels[m], m, requests[s]) for m in (RAW, WATCH)]
                    each, matches = await live(stub, channels[WATCH], s, args.live_events)
                    for name, value in zip(NAMES, [*got, each], strict=True):
                        figures.setdefault((name, s), []).append(value)
                    made.append(
                        f"{count} watching {'with state' if s else 'without'} {matches:,.0f}"
                    )
            median = {key: statistics.median(values) for key, values in figures.items()}
            for name in NAMES:
                w, wo = median[name, True], median[name, False]
                rows.append([name, count, f"{w:,.0f}", f"{wo:,.0f}", f"{w / wo:.2f}"])
                rows[-1] += [
                    f"{w / median[NAMES[0], True]:.2f}",
                    f"{wo / median[NAMES[0], False]:.2f}",
                ]
            for channel in channels[WATCH] + channels[RAW]:
                await channel.close()
        await raw_server.stop(None)
        await driver.close()
    header = ["stream", "watchers", "with state, ev/s each", "without", "with / without"]
    print(markdown_table([*header, "with / raw", "without / raw"], rows))
    print(f"\nLive matches, events/s made: {'; '.join(made)}")


# ---- many: thousands of streams ----------------------------------------------------------


async def watcher(address: str, game: bool, keys: list[str], conn: Any) -> None:
    """A watcher process: a stream per key, 100 a connection; for each message, its key,
    its version (or, from the echo, its send time) and its arrival."""
    import grpc

    channels = [
        grpc.aio.insecure_channel(address, options=OWN_CONNECTION)
        for _ in range(len(keys) // 100 + 1)
    ]
    seen: list[tuple[str, float, float]] = []
    opened, failures = set(), []

    async def one(index: int, key: str) -> None:
        channel = channels[index % len(channels)]
        request = ms.WatchRequest(match_id=key).SerializeToString() if game else bytes.fromhex(key)
        try:
            async for data in channel.unary_stream(WATCH if game else LISTEN)(request):
                now = time.time()
                opened.add(index)
                if game:
                    seen.append((key, ms.MatchEvent.FromString(data).version, now))
                elif data:
                    seen.append((key, struct.unpack("!d", data[16:24])[0], now))
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
    conn.send((seen, failures[:3]))


def watcher_main(address: str, game: bool, keys: list[str], conn: Any) -> None:
    asyncio.run(watcher(address, game, keys, conn))


class Watchers:
    """The watcher processes, the streams of ``keys`` shared among them."""

    def __init__(self, address: str, game: bool, keys: list[str]) -> None:
        context = multiprocessing.get_context("spawn")
        self.children = []
        for index in range(WATCHER_PROCESSES):
            mine, theirs = context.Pipe()
            args = (address, game, keys[index::WATCHER_PROCESSES], theirs)
            self.children.append(
                (context.Process(target=watcher_main, args=args, daemon=True), mine)
            )
            self.children[-1][0].start()

    def opened(self) -> tuple[int, list[str]]:
        replies = [conn.recv() for _, conn in self.children if conn.poll(330)]
        return sum(r[0] for r in replies), [f for r in replies for f in r[1]]

    def finish(self) -> tuple[list[tuple[str, float, float]], list[str]]:
        for _, conn in self.children:
            conn.send("done")
        replies = [conn.recv() for _, conn in self.children if conn.poll(120)]
        for process, _ in self.children:
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


async def many_run(address: str, pid: int, game: bool, args: argparse.Namespace) -> dict:
    """The streams on ``totem serve`` (``game``) or the bare echo server, and what they
    cost and deliver."""
    import grpc

    from totem.v1 import match_service_pb2_grpc

    sent: dict[tuple[str, float], float] = {}
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        await asyncio.sleep(1.0)
        out: dict[str, Any] = {"rss empty": rss_mib(pid)}
        if game:
            idle = create_request(js.JungleSpeedOptions(max_players=2, turn_timeout_ms=0))
            for _ in range(args.idle):
                await stub.CreateMatch(idle, metadata=ORGANISER)
            await asyncio.sleep(1.0)
            out["rss idle"] = rss_mib(pid)
            tables = [await Table.seated(stub, 2) for _ in range(args.matches)]
            await asyncio.sleep(1.0)
            out["rss seated"] = rss_mib(pid)
            keys = [table.id for table in tables]
        else:
            keys = [uuid.uuid4().bytes.hex() for _ in range(args.matches)]
        watchers = Watchers(address, game, [keys[i % len(keys)] for i in range(args.streams)])
        out["opened"], _ = await asyncio.to_thread(watchers.opened)
        await asyncio.sleep(1.0)
        out["rss streams"] = rss_mib(pid)

        async def act(tick: int) -> None:
            """The next command of the next table free, round robin."""
            turn = (tables[(tick + k) % len(tables)] for k in range(len(tables)))
            table = next((t for t in turn if not t.busy and not t.done), None)
            if table is None:
                return
            table.busy, when = True, time.time()
            try:
                sent.update({(table.id, e.version): when for e in await table.act(stub)})
            except grpc.aio.AioRpcError:
                table.done = True
            finally:
                table.busy = False

        async def echo(tick: int) -> None:
            key = bytes.fromhex(keys[tick % len(keys)])
            await channel.unary_unary(ECHO)(key + struct.pack("!d", time.time()), timeout=30)

        await paced(args.rate, args.seconds, act if game else echo)
        await asyncio.sleep(3.0)
    arrivals, out["failures"] = await asyncio.to_thread(watchers.finish)
    if game:
        watching = Counter(keys[i % len(keys)] for i in range(args.streams))
        out["from send"] = [at - sent[k, v] for k, v, at in arrivals if (k, v) in sent]
        out["deliveries"] = f"{len(out['from send'])} of {sum(watching[k] for k, _ in sent)}"
    else:
        out["from send"] = [at - sent for _, sent, at in arrivals]
        expected = int(args.rate * args.seconds) * args.streams // args.matches
        out["deliveries"] = f"{len(arrivals)} of {expected}"
    return out


def many(args: argparse.Namespace) -> None:
    echo = EchoServer()
    try:
        bare = asyncio.run(many_run(echo.address, echo.pid, False, args))
    finally:
        echo.stop()
    with serve(args, MANY_ENV) as server:
        game = asyncio.run(many_run(server.address, server.pid, True, args))

    def kib(top: str, bottom: str, count: int, side: dict = game) -> str:
        return f"{side[top]:.1f} ({(side[top] - side[bottom]) * 1024 / max(1, count):.1f})"

    rows = [
        ["streams open", bare["opened"], game["opened"]],
        ["deliveries", bare["deliveries"], game["deliveries"]],
        ["from send, p50 / p99 ms", *(p50_p99(r["from send"], 1e3, 1) for r in (bare, game))],
        ["RSS empty, MiB", f"{bare['rss empty']:.1f}", f"{game['rss empty']:.1f}"],
        [
            f"RSS with {args.idle} idle matches, MiB (KiB each)",
            "-",
            kib("rss idle", "rss empty", args.idle),
        ],
        [f"RSS with {args.matches} seated, MiB", "-", f"{game['rss seated']:.1f}"],
        [
            "RSS with the streams, MiB (KiB a stream)",
            kib("rss streams", "rss empty", bare["opened"], bare),
            kib("rss streams", "rss seated", game["opened"]),
        ],
        ["failures", bare["failures"] or "-", game["failures"] or "-"],
    ]
    print(markdown_table(["", "bare fan-out", "totem serve"], rows))


def main(argv: Sequence[str] | None = None) -> None:
    parser = arguments(__doc__)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=PARTS)
    parser.add_argument("--watchers", type=int, nargs="+", default=[1, 10, 50], help="rate")
    parser.add_argument("--history", type=int, default=2000, help="rate: stored events")
    parser.add_argument("--live-events", type=int, default=500, help="rate")
    parser.add_argument("--rounds", type=int, default=3, help="rate")
    parser.add_argument("--streams", type=int, default=2000, help="many")
    parser.add_argument("--matches", type=int, default=100, help="many: matches watched")
    parser.add_argument("--idle", type=int, default=1000, help="many: idle matches held")
    parser.add_argument("--rate", type=float, default=50.0, help="many: commands/s in all")
    parser.add_argument("--seconds", type=float, default=30.0, help="many")
    args = parser.parse_args(argv)
    print(machine_line())
    if "rate" in args.parts:
        with fresh_store(args.store, args.dsn) as (env, name):
            print(f"store: {name}")
            asyncio.run(rate(args, env))
    if "many" in args.parts:
        many(args)


if __name__ == "__main__":
    main()
