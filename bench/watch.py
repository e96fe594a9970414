"""Watch streams by the thousand: the server's memory, and each event's delivery latency.

``totem serve`` in a process of its own: its resident memory empty, with ``--idle``
matches waiting, with ``--matches`` seated, then with ``--streams`` spectator streams on
those opened by 4 processes (100 streams a connection); then ``--rate`` commands a second
in all, round robin over the matches, for ``--seconds``: each event's latency from its
command's send to each watcher. The baseline: as many ``Listen`` streams of the bare echo
server, over as many keys, echoed at the same rate.
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench import harness
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

# isort: split
import grpc  # after the harness, which sets totem serve's gRPC listener first

WATCHER_PROCESSES = 4
#: Many clients, and the idle matches kept in memory throughout.
SERVER_ENV = harness.MANY_CLIENTS_ENV | {"TOTEM_IDLE_ACTOR_SECONDS": "1000000"}


async def watcher(conn: Any, address: str, game: bool, keys: list[str]) -> None:
    """A watcher process: a stream per key, 100 a connection; once all are open, how
    many, and once told the run is over, for each message its key, its version (or, from
    the echo, its send time) and its arrival, with the first failures."""
    channels = [
        harness.match_stub(address, harness.OWN_CONNECTION)[0] for _ in range(len(keys) // 100 + 1)
    ]
    seen: list[tuple[str, float, float]] = []
    opened, failures = set(), []

    async def one(index: int, key: str) -> None:
        channel = channels[index % len(channels)]
        request = ms.WatchRequest(match_id=key).SerializeToString() if game else bytes.fromhex(key)
        try:
            async for data in channel.unary_stream(harness.WATCH if game else harness.LISTEN)(
                request
            ):
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
    conn.send(("opened", len(opened)))
    await asyncio.to_thread(conn.recv)  # the run is over
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    conn.send(("seen", (seen, failures[:3])))


async def paced(rate: float, seconds: float, act: Any) -> None:
    """``act(tick)`` at ``rate`` a second, without waiting for one to end."""
    pending = set()
    began = time.perf_counter()
    for tick in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, began + tick / rate - time.perf_counter()))
        pending.add(task := asyncio.ensure_future(act(tick)))
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)


async def run(address: str, pid: int, game: bool, args: argparse.Namespace) -> dict[str, Any]:
    """The streams on ``totem serve`` (``game``) or the bare echo server, and what they
    cost and deliver."""
    sent: dict[tuple[str, float], float] = {}
    channel, stub = harness.match_stub(address)
    async with channel:
        await asyncio.sleep(1.0)
        out: dict[str, Any] = {"rss empty": harness.rss_mib(pid)}
        if game:
            idle = harness.create_request(js.JungleSpeedOptions(max_players=2, turn_timeout_ms=0))
            for _ in range(args.idle):
                await stub.CreateMatch(idle, metadata=harness.ORGANISER)
            await asyncio.sleep(1.0)
            out["rss idle"] = harness.rss_mib(pid)
            tables = [await harness.Table.seated(stub, 2) for _ in range(args.matches)]
            await asyncio.sleep(1.0)
            out["rss seated"] = harness.rss_mib(pid)
            keys = [table.id for table in tables]
        else:
            keys = [uuid.uuid4().bytes.hex() for _ in range(args.matches)]
        streams = [keys[i % len(keys)] for i in range(args.streams)]
        watchers = harness.Children(watcher)
        for index in range(WATCHER_PROCESSES):
            watchers.start(index, address, game, streams[index::WATCHER_PROCESSES])
        opened = await asyncio.to_thread(watchers.gather, watchers.pipes, 330)
        out["opened"] = sum(opened.values())
        await asyncio.sleep(1.0)
        out["rss streams"] = harness.rss_mib(pid)

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
            await channel.unary_unary(harness.ECHO)(
                key + struct.pack("!d", time.time()), timeout=30
            )

        await paced(args.rate, args.seconds, act if game else echo)
        await asyncio.sleep(3.0)
    watchers.send(watchers.pipes, "done")
    finished = (await asyncio.to_thread(watchers.gather, watchers.pipes, 120)).values()
    watchers.stop()
    arrivals = [arrival for seen, _ in finished for arrival in seen]
    out["failures"] = [failure for _, failures in finished for failure in failures]
    if game:
        watching = Counter(streams)
        out["from send"] = [at - sent[k, v] for k, v, at in arrivals if (k, v) in sent]
        out["deliveries"] = f"{len(out['from send'])} of {sum(watching[k] for k, _ in sent)}"
    else:
        out["from send"] = [at - sent for _, sent, at in arrivals]
        expected = int(args.rate * args.seconds) * args.streams // args.matches
        out["deliveries"] = f"{len(arrivals)} of {expected}"
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--matches", type=int, default=100, help="matches watched")
    parser.add_argument("--idle", type=int, default=1000, help="idle matches held")
    parser.add_argument("--rate", type=float, default=50.0, help="commands/s in all")
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    print(harness.machine_line())
    with harness.EchoServer() as echo:
        bare = asyncio.run(run(echo.address, echo.pid, False, args))
    with harness.serve(args, SERVER_ENV) as server:
        game = asyncio.run(run(server.address, server.pid, True, args))

    def kib(top: str, bottom: str, count: int, side: dict[str, Any] = game) -> str:
        """MiB at ``top``, and KiB each of ``count`` from ``bottom`` to it."""
        return f"{side[top]:.1f} ({(side[top] - side[bottom]) * 1024 / max(1, count):.1f})"

    idle = kib("rss idle", "rss empty", args.idle)
    bare_streams = kib("rss streams", "rss empty", bare["opened"], bare)
    game_streams = kib("rss streams", "rss seated", game["opened"])
    rows = [
        ["streams open", bare["opened"], game["opened"]],
        ["deliveries", bare["deliveries"], game["deliveries"]],
        [
            "from send, p50 / p99 ms",
            *(harness.p50_p99(r["from send"], 1e3, 1) for r in (bare, game)),
        ],
        ["RSS empty, MiB", f"{bare['rss empty']:.1f}", f"{game['rss empty']:.1f}"],
        [f"RSS with {args.idle} idle matches, MiB (KiB each)", "-", idle],
        [f"RSS with {args.matches} seated, MiB", "-", f"{game['rss seated']:.1f}"],
        ["RSS with the streams, MiB (KiB a stream)", bare_streams, game_streams],
        ["failures", bare["failures"] or "-", game["failures"] or "-"],
    ]
    print(harness.markdown_table(["", "bare fan-out", "totem serve"], rows))


if __name__ == "__main__":
    main()
