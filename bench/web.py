"""Watch in a browser's protocols: the web endpoint's Watch against native gRPC's, one run.

One ``totem serve --web``. Live: ``--matches`` 2-seat Jungle Speed matches, each watched by
``--watchers`` spectator streams in 2 processes, in blocks of ``--seconds`` taking the
protocols in turn, ``--rounds`` times: gRPC, Connect (binary), Connect JSON, gRPC-Web (the
last three over HTTP/1.1, a connection a stream); in each, ``--rate`` commands a second
from this process, round robin: events delivered a second, latency from a command's send
to each watcher's receipt, CPU a delivery of the server (its commands' included) and of
the watchers. Catch-up: a spectator reads a match of ``--events`` stored events (late
grabs, JS-5.3), ``--reads`` times a protocol in turn. Ratios to gRPC's in brackets.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench import harness
from totem.v1 import match_service_pb2 as ms

# isort: split
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.protocol import ProtocolType

from totem.v1.match_service_connect import MatchServiceClient

PROCESSES = 2
WEB = {
    "Connect": (ProtocolType.CONNECT, google_protobuf_binary_codec()),
    "Connect JSON": (ProtocolType.CONNECT, google_protobuf_json_codec()),
    "gRPC-Web": (ProtocolType.GRPC_WEB, google_protobuf_binary_codec()),
}
PROTOCOLS = ["gRPC", *WEB]
Watch = Callable[[ms.WatchRequest], AsyncIterator[ms.MatchEvent]]


@dataclass
class Figures:
    """A protocol's: latencies (live) or read rates (catch-up), deliveries made and due,
    CPU seconds of the server and of the clients, failures."""

    values: list[float] = field(default_factory=list)
    delivered: int = 0
    expected: int = 0
    server: float = 0.0
    clients: float = 0.0
    failures: list[str] = field(default_factory=list)


def cpu(pids: Sequence[int]) -> float:
    return harness.process_ticks(pids) / os.sysconf("SC_CLK_TCK")


@contextlib.asynccontextmanager
async def watching(protocol: str, addresses: tuple[str, str]) -> AsyncIterator[Watch]:
    """Watch over ``protocol``, on a channel (or client) of its own, closed on leaving."""
    if protocol == "gRPC":
        channel, stub = harness.match_stub(addresses[0], harness.OWN_CONNECTION)
        async with channel:
            yield stub.Watch
    else:
        kind, codec = WEB[protocol]
        async with MatchServiceClient(addresses[1], protocol=kind, codec=codec) as client:
            yield client.watch


async def watcher(conn: Any, addresses: tuple[str, str], protocol: str, streams: Any) -> None:
    """A watcher process, a block's: it opens its streams (a match, the version to watch
    after), answers once each has had an event (or failed), and once told the block is
    over, each event's match, version and arrival, and the failures."""
    seen: list[tuple[str, int, float]] = []
    failures: list[str] = []
    started, all_started, over = set[int](), asyncio.Event(), asyncio.Event()

    async def one(index: int, match_id: str, after: int) -> None:
        try:
            async for event in watch(ms.WatchRequest(match_id=match_id, after_version=after)):
                seen.append((match_id, event.version, time.time()))
                started.add(index)
                if len(started) == len(streams):
                    all_started.set()
        except Exception as error:  # but our own cancelling at the block's end
            failures.extend([] if over.is_set() else [repr(error)])
            started.add(index)

    async with watching(protocol, addresses) as watch:
        tasks = [asyncio.ensure_future(one(i, *stream)) for i, stream in enumerate(streams)]
        await asyncio.wait_for(all_started.wait(), harness.STEP_TIMEOUT)
        conn.send(("started", len(started)))
        await asyncio.to_thread(conn.recv)  # the block is over
        over.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    conn.send(("seen", (seen, failures)))


async def live(args: argparse.Namespace, addresses: tuple[str, str], pid: int) -> dict[str, Any]:
    """The blocks, each protocol's in turn, on the same matches (an ended one replaced)."""
    out = {protocol: Figures() for protocol in PROTOCOLS}
    channel, stub = harness.match_stub(addresses[0])
    tables: list[harness.Table] = []
    for block in range(args.rounds * len(PROTOCOLS)):
        protocol, keys = PROTOCOLS[block % len(PROTOCOLS)], range(PROCESSES)
        tables = [t for t in tables if not t.done]
        while len(tables) < args.matches:
            tables.append(await harness.Table.seated(stub, 2))
        streams = [(t.id, t.summary.version - 1) for t in tables] * args.watchers
        with harness.Children(watcher) as watchers:  # each stream gets one stored event first
            for key in keys:
                watchers.start(key, addresses, protocol, streams[key::PROCESSES])
            await asyncio.to_thread(watchers.gather, keys)
            pids, figures = [process.pid for process in watchers.processes], out[protocol]
            server, clients = cpu([pid]), cpu(pids)
            sent = await commands(args, stub, tables)
            await asyncio.sleep(2.0)  # the last deliveries
            figures.server += cpu([pid]) - server
            figures.clients += cpu(pids) - clients
            watchers.send(keys, "done")
            for seen, failed in (await asyncio.to_thread(watchers.gather, keys)).values():
                figures.values += [at - sent[k, v] for k, v, at in seen if (k, v) in sent]
                figures.failures += failed
        figures.delivered = len(figures.values)
        figures.expected += len(sent) * args.watchers
    await channel.close()
    return out


async def commands(args: argparse.Namespace, stub: Any, tables: list[harness.Table]) -> Any:
    """``--rate`` commands a second for ``--seconds``, round robin over the tables (one in
    flight a table, a busy one skipped): when each event's command was sent."""
    sent: dict[tuple[str, int], float] = {}

    async def act(table: harness.Table) -> None:
        when = time.time()
        sent.update({(table.id, e.version): when for e in await table.act(stub)})
        table.busy = False

    began, pending = time.perf_counter(), []
    for tick in range(int(args.rate * args.seconds)):
        await asyncio.sleep(max(0.0, began + tick / args.rate - time.perf_counter()))
        if not ((table := tables[tick % len(tables)]).busy or table.done):
            table.busy = True
            pending.append(asyncio.ensure_future(act(table)))
    await asyncio.gather(*pending)
    return sent


async def catch_up(args: argparse.Namespace, addresses: tuple[str, str], pid: int) -> Any:
    """A match of ``--events`` events, then each protocol's reads of it in turn."""
    channel, stub = harness.match_stub(addresses[0])
    async with channel:
        match_id, seats = await harness.seated_match(stub, harness.arrows_options(2))
        grab = ms.ActRequest(match_id=match_id, jungle_speed=harness.GRAB)
        reveal = ms.ActRequest(match_id=match_id, jungle_speed=harness.REVEAL)
        last = (await stub.Act(reveal, metadata=seats[0])).state.summary.version
        while last < args.events:  # the arrows race's grab, then late grabs, 100 at once
            answers = [stub.Act(grab, metadata=seats[i % 2]) for i in range(100)]
            last = max(a.state.summary.version for a in await asyncio.gather(*answers))
    out = {protocol: Figures() for protocol in PROTOCOLS}
    for _ in range(args.reads):
        for protocol, figures in out.items():
            began, server, client = time.perf_counter(), cpu([pid]), time.process_time()
            async with watching(protocol, addresses) as watch:
                stream = watch(ms.WatchRequest(match_id=match_id))
                async for event in stream:
                    figures.delivered += 1
                    if event.version >= last:
                        break
                if isinstance(stream, AsyncGenerator):  # Connect's; gRPC's ends with its channel
                    await stream.aclose()
            figures.values.append(last / (time.perf_counter() - began))
            figures.server += cpu([pid]) - server
            figures.clients += time.process_time() - client
            figures.expected += last
    return out


def table(title: str, out: dict[str, Figures], columns: list[Any]) -> str:
    """A row a protocol: each column's figure, and its ratio to gRPC's in brackets."""
    columns = [
        *columns,
        ("server CPU µs a delivery", lambda f: f.server * 1e6 / max(1, f.delivered), ".0f"),
        ("clients' CPU µs a delivery", lambda f: f.clients * 1e6 / max(1, f.delivered), ".0f"),
    ]
    rows: list[list[object]] = [
        [protocol, f"{figures.delivered} of {figures.expected}"]
        + [f"{get(figures):{form}} ({get(figures) / get(out['gRPC']):.2f}×)"
           for _, get, form in columns]
        + [len(figures.failures) or "-"]
        for protocol, figures in out.items()
    ]  # fmt: skip
    header = [title, "deliveries", *(column[0] for column in columns), "failures"]
    return harness.markdown_table(header, rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--watchers", type=int, default=10, help="streams a match")
    parser.add_argument("--rate", type=float, default=20.0, help="commands/s in all")
    parser.add_argument("--seconds", type=float, default=5.0, help="a block's")
    parser.add_argument("--rounds", type=int, default=2, help="blocks a protocol")
    parser.add_argument("--events", type=int, default=2000, help="the catch-up match's")
    parser.add_argument("--reads", type=int, default=5, help="catch-up reads a protocol")
    args = parser.parse_args(argv)
    args.extra.append("--web=127.0.0.1:0")
    print(harness.machine_line())
    with harness.serve(args, harness.MANY_CLIENTS_ENV) as server:
        web = re.search(rb"Connect for browsers on (\S+)", server.log_path.read_bytes())
        assert web is not None
        addresses = (server.address, f"http://{web.group(1).decode()}")
        streams = asyncio.run(live(args, addresses, server.pid))
        reads = asyncio.run(catch_up(args, addresses, server.pid))
    print(harness.machine_line())
    seconds = args.rounds * args.seconds
    print(table("live", streams, [
        ("events/s", lambda f: f.delivered / seconds, ".0f"),
        ("from send p50, ms", lambda f: statistics.median(f.values) * 1e3, ".2f"),
        ("p99, ms", lambda f: harness.p99(f.values) * 1e3, ".2f"),
    ]))  # fmt: skip
    for protocol, figures in streams.items():
        if figures.failures:
            print(f"{protocol}, first failures: {figures.failures[:3]}")
    print(table(f"catch-up, {args.events:,} events", reads, [
        ("events/s, median", lambda f: statistics.median(f.values), ",.0f"),
        ("slowest", lambda f: min(f.values), ",.0f"),
    ]))  # fmt: skip


if __name__ == "__main__":
    main()
