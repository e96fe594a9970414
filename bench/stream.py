"""Benchmarks: events per second a Watch stream delivers, with state and without, against
a raw gRPC stream.

Run ``python bench/stream.py [--watchers 1 10 50] [--history N] [--postgres [DSN]]``.
Everything runs in this one process, on this machine, over loopback: the real server
(``server.serve.start`` on a temporary SQLite file, or a fresh schema of a PostgreSQL
database with ``--postgres``), the players that drive matches, and the watchers, each
watcher on a channel (and a TCP connection) of its own. The watchers are spectators.

Three measurements, each for every number of watchers, with state (the default) and with
``omit_state``:

- catch-up: every watcher Watches, from version 0, each match stored beforehand (Jungle
  Speed, turn timer off, played to the end as fast as the server answers);
- live: the watchers Watch a new match while its players send commands one after the
  other as fast as the server answers them;
- raw: the baseline, a server-streaming RPC of plain ``grpc.aio`` (a generic handler, no
  game code) on a second server in the same process, that sends the very bytes the
  catch-up streams received, as fast as it can; the watchers read it with the same code
  (decoding each ``MatchEvent``).

Figures are events per second per watcher (and in all) and ratios between them; the
baseline is measured in the same run. Also printed: the bytes per event with and without
state, and where a catching-up stream's server time goes per event (reading, applying,
encoding with and without state, timed directly on the server's objects).

Every loop is bounded in count and in time; the default run takes several minutes on two
cores, most of it the 50 watchers catching up. Tests never assert a duration; the figures
go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from listing import store

from bench.harness import ORGANISER, ORGANISER_TOKEN
from domain.kernel.views import Viewer
from server import codec
from server.limits import Limits
from server.serve import RunningServer, start
from storage.arena import Arena
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

DEFAULT_POSTGRES = "host=127.0.0.1 port=5432 user=postgres dbname=test"
WATCH_METHOD = "/totem.v1.MatchService/Watch"
RAW_SERVICE = "bench.Raw"
RAW_METHOD = f"/{RAW_SERVICE}/Stream"
#: Each watcher gets a TCP connection of its own: grpc otherwise shares one between
#: channels to the same address.
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]
#: No single stream or wait in this benchmark may take longer than this.
STREAM_TIMEOUT = 300.0


# ---- playing matches ------------------------------------------------------------------


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def next_move(state: js.JungleSpeedState, me: int) -> tuple[int, js.JungleSpeedCommand] | None:
    """The next command from the state the seat ``me`` was just answered with: a grab
    when one is offered to it (or a duel or arrows race is open for another seat), else
    a reveal by the seat whose turn it is. None when nobody can act."""
    if state.legal.grabs:
        target = state.legal.grabs[0].target
        return me, js.JungleSpeedCommand(grab=js.JungleSpeedGrab(target=target))
    if state.open_duels:
        return state.open_duels[0].seats[0], js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
    if state.arrows_race_open:
        seat = next(s.seat for s in state.seats if not s.finished)
        return seat, js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
    if state.HasField("turn"):
        return state.turn, js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())
    return None


@dataclass
class Played:
    match_id: str
    version: int
    ended: bool
    commands: int
    began: float
    seconds: float


async def play_match(
    stub: match_service_pb2_grpc.MatchServiceStub,
    players: int,
    max_commands: int,
    deadline: float,
    created: Callable[[str], Awaitable[None]] | None = None,
) -> Played:
    """Create a match, seat ``players`` players (it starts by itself) and play it until it
    ends, ``max_commands`` commands were sent, or ``deadline`` (``time.monotonic``).
    ``created`` runs, untimed, between the creation and the first join."""
    options = js.JungleSpeedOptions(max_players=players, turn_timeout_ms=0)
    answer = await stub.CreateMatch(
        ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=options),
        metadata=ORGANISER,
    )
    match_id = answer.match_id
    if created is not None:
        await created(match_id)
    began = time.perf_counter()
    tokens = []
    for seat in range(players):
        joined = await stub.JoinMatch(
            ms.JoinMatchRequest(match_id=match_id, name=f"player {seat}", seat=seat)
        )
        tokens.append(joined.player_token)
    view = await stub.GetMatch(ms.GetMatchRequest(match_id=match_id), metadata=bearer(tokens[0]))
    me, state, summary = 0, view.jungle_speed, view.summary
    commands = 0
    while (
        summary.status != common_pb2.MATCH_STATUS_ENDED
        and commands < max_commands
        and time.monotonic() < deadline
    ):
        move = next_move(state, me)
        if move is None:
            break
        me, command = move
        acted = await stub.Act(
            ms.ActRequest(match_id=match_id, seen_version=summary.version, jungle_speed=command),
            metadata=bearer(tokens[me]),
        )
        commands += 1
        state, summary = acted.state.jungle_speed, acted.state.summary
    ended = summary.status == common_pb2.MATCH_STATUS_ENDED
    return Played(match_id, summary.version, ended, commands, began, time.perf_counter() - began)


# ---- watchers -------------------------------------------------------------------------

#: Opens one stream on a channel: (channel, match index, with state) -> call.
Opener = Callable[[grpc.aio.Channel, int, bool], Any]


@dataclass
class Receiver:
    """One watcher: what it received and when it received the last of it."""

    events: int = 0
    last_version: int = 0
    last_at: float = 0.0
    failures: list[str] = field(default_factory=list)

    async def receive(self, call: Any) -> None:
        """The client code every measurement shares: read a stream of MatchEvents to its end."""
        try:
            async for event in call:
                self.events += 1
                self.last_version = event.version
                self.last_at = time.perf_counter()
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                self.failures.append(f"{error.code().name}: {error.details()}")


def watch_call(channel: grpc.aio.Channel, match_id: str, with_state: bool) -> Any:
    watch = channel.unary_stream(
        WATCH_METHOD,
        request_serializer=ms.WatchRequest.SerializeToString,
        response_deserializer=ms.MatchEvent.FromString,
    )
    return watch(
        ms.WatchRequest(match_id=match_id, omit_state=not with_state), timeout=STREAM_TIMEOUT
    )


def raw_call(channel: grpc.aio.Channel, index: int, with_state: bool) -> Any:
    stream = channel.unary_stream(
        RAW_METHOD,
        request_serializer=lambda request: request,
        response_deserializer=ms.MatchEvent.FromString,
    )
    return stream(f"{index}:{int(with_state)}".encode(), timeout=STREAM_TIMEOUT)


@dataclass
class Rate:
    """Events per second for each watcher (mean over watchers) and in all."""

    each: float
    total: float
    failures: int = 0


async def catch_up(
    channels: list[grpc.aio.Channel], opener: Opener, matches: int, with_state: bool, expected: int
) -> Rate:
    """Every watcher reads the streams of every stored match, one match after the other,
    all watchers at once."""

    async def one(channel: grpc.aio.Channel) -> Receiver:
        receiver = Receiver()
        for index in range(matches):
            await receiver.receive(opener(channel, index, with_state))
        return receiver

    began = time.perf_counter()
    receivers = await asyncio.wait_for(asyncio.gather(*(one(c) for c in channels)), STREAM_TIMEOUT)
    seconds = time.perf_counter() - began
    for receiver in receivers:
        if receiver.events != expected and not receiver.failures:
            receiver.failures.append(f"received {receiver.events} of {expected} events")
    total = sum(r.events for r in receivers)
    return Rate(
        total / seconds / len(channels), total / seconds, sum(len(r.failures) for r in receivers)
    )


# ---- the raw baseline -----------------------------------------------------------------


@asynccontextmanager
async def raw_server(payloads: dict[tuple[int, bool], list[bytes]]) -> AsyncIterator[int]:
    """A plain grpc.aio server streaming stored bytes: request ``b"<index>:<0|1>"``."""

    async def stream(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        index, with_state = request.decode().split(":")
        for data in payloads[(int(index), with_state == "1")]:
            yield data

    handler = grpc.unary_stream_rpc_method_handler(
        stream, request_deserializer=lambda data: data, response_serializer=lambda data: data
    )
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(RAW_SERVICE, {"Stream": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield port
    finally:
        await server.stop(grace=None)


async def stored_bytes(channel: grpc.aio.Channel, match_id: str, with_state: bool) -> list[bytes]:
    """A stored match's events as the Watch stream sends them to a spectator."""
    watch = channel.unary_stream(
        WATCH_METHOD,
        request_serializer=ms.WatchRequest.SerializeToString,
        response_deserializer=lambda data: data,
    )
    call = watch(ms.WatchRequest(match_id=match_id, omit_state=not with_state), timeout=60)
    return [data async for data in call]


# ---- live -----------------------------------------------------------------------------


@dataclass
class Live:
    """Watchers' and players' figures of live matches."""

    rate: Rate
    events: float  # events per second the matches made
    commands: float  # commands per second the players sent


class Audience:
    """Watchers of one live match, each on its own channel."""

    def __init__(self, channels: list[grpc.aio.Channel], with_state: bool) -> None:
        self.channels = channels
        self.with_state = with_state
        self.receivers = [Receiver() for _ in channels]
        self.tasks: list[asyncio.Task[None]] = []

    async def watch(self, match_id: str) -> None:
        """Open the streams; subscribed once each has the first event (MatchCreated)."""
        for channel, receiver in zip(self.channels, self.receivers, strict=True):
            call = watch_call(channel, match_id, self.with_state)
            self.tasks.append(asyncio.create_task(receiver.receive(call)))
        await wait_until(self.received(1), 10.0)

    def received(self, version: int) -> Callable[[], bool]:
        pairs = list(zip(self.receivers, self.tasks, strict=True))
        return lambda: all(r.last_version >= version or task.done() for r, task in pairs)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def live(
    stub: match_service_pb2_grpc.MatchServiceStub,
    channels: list[grpc.aio.Channel],
    with_state: bool,
    players: int,
    max_events: int,
    seconds: float,
) -> Live:
    """The watchers Watch new matches while they are played as fast as the server answers,
    one command after the other; matches follow one another until ``max_events`` events
    were made or ``seconds`` have passed. Timed from the first join of each match to the
    last event each watcher received. With no channels: the matches alone."""
    deadline = time.monotonic() + seconds
    produced = commands = 0
    played_seconds = 0.0
    watched_events = [0] * len(channels)
    watched_seconds = [0.0] * len(channels)
    failures = 0
    while produced < max_events and time.monotonic() < deadline:
        audience = Audience(channels, with_state)
        try:
            played = await play_match(
                stub, players, max_events - produced, deadline, audience.watch
            )
            await wait_until(audience.received(played.version), 30.0)
        finally:
            await audience.close()
        # MatchCreated, received before the first join, is not counted.
        for i, receiver in enumerate(audience.receivers):
            watched_events[i] += receiver.events - 1
            watched_seconds[i] += max(receiver.last_at - played.began, 1e-9)
            failures += len(receiver.failures)
        produced += played.version - 1
        commands += played.commands
        played_seconds += played.seconds
    each = [e / s for e, s in zip(watched_events, watched_seconds, strict=True)]
    rate = Rate(statistics.fmean(each), sum(each), failures) if each else Rate(0.0, 0.0)
    return Live(rate, produced / played_seconds, commands / played_seconds)


async def wait_until(condition: Callable[[], bool], seconds: float) -> None:
    """Poll ``condition`` (it only reads counters) until it holds, for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the watchers did not receive every event in time")
        await asyncio.sleep(0.005)


def encoding_costs(app: Arena, match_ids: list[uuid.UUID]) -> dict[str, float]:
    """Microseconds per stored event of the work a catching-up Watch stream does for
    each event (see ``MatchService._stored``): read it, apply it to the match, encode it
    for a spectator with the state after it or without."""
    spent = dict.fromkeys(("read", "apply", "with state", "without state"), 0.0)
    events = 0
    for match_id in match_ids:
        began = time.perf_counter()
        stored = app.events_after(match_id, 0)
        spent["read"] += time.perf_counter() - began
        match: Any = None
        for evt in stored:
            began = time.perf_counter()
            match = evt.mutate(match)
            applied = time.perf_counter()
            codec.encoded_event(match, evt, (Viewer.spectator(), True))
            encoded = time.perf_counter()
            codec.encoded_event(match, evt, (Viewer.spectator(), False))
            spent["apply"] += applied - began
            spent["with state"] += encoded - applied
            spent["without state"] += time.perf_counter() - encoded
        events += len(stored)
    return {name: seconds * 1e6 / events for name, seconds in spent.items()}


# ---- the run --------------------------------------------------------------------------


def median_rate(rates: list[Rate]) -> Rate:
    return Rate(
        statistics.median(r.each for r in rates),
        statistics.median(r.total for r in rates),
        sum(r.failures for r in rates),
    )


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


async def main(args: argparse.Namespace) -> None:
    with store(args.postgres) as (env, store_name):
        # As fast as the server answers, with as many watchers as asked: no bound of a client.
        running = await start(
            "127.0.0.1:0",
            {**env, "TOTEM_ORGANISER_TOKEN": ORGANISER_TOKEN},
            limits=Limits(
                commands_per_second=1e9,
                command_burst=10**9,
                streams_per_connection=10**6,
                streams_per_address=10**6,
            ),
        )
        address = f"127.0.0.1:{running.port}"
        driver = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
        stub = match_service_pb2_grpc.MatchServiceStub(driver)
        try:
            await run(args, running, stub, driver, store_name)
        finally:
            await driver.close()
            await running.stop(grace=None)


async def run(
    args: argparse.Namespace,
    running: RunningServer,
    stub: match_service_pb2_grpc.MatchServiceStub,
    driver: grpc.aio.Channel,
    store_name: str,
) -> None:
    address = f"127.0.0.1:{running.port}"
    print(f"# python bench/stream.py {' '.join(args.argv)}".rstrip())
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores, grpcio {grpc.__version__}, store: {store_name}, "
        f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )

    # The history: whole matches, stored before anyone watches.
    deadline = time.monotonic() + args.seconds
    history: list[Played] = []
    while sum(p.version for p in history) < args.history and len(history) < args.max_matches:
        if time.monotonic() > deadline:
            break
        history.append(await play_match(stub, args.players, args.max_commands, deadline))
    events = sum(p.version for p in history)
    commands = sum(p.commands for p in history)
    print(
        f"# history: {len(history)} matches of {args.players} players, {events} events, "
        f"{commands} commands, {sum(p.ended for p in history)} ended; "
        f"played at {events / sum(p.seconds for p in history):.0f} events/s"
    )

    payloads: dict[tuple[int, bool], list[bytes]] = {}
    for index, played in enumerate(history):
        for with_state in (True, False):
            payloads[(index, with_state)] = await stored_bytes(driver, played.match_id, with_state)
    sizes = {
        with_state: [len(d) for (_, s), data in payloads.items() if s == with_state for d in data]
        for with_state in (True, False)
    }
    size_with, size_without = (statistics.fmean(sizes[s]) for s in (True, False))
    print(
        f"# bytes per event (spectator view): with state mean {size_with:.0f} "
        f"(max {max(sizes[True])}), without state mean {size_without:.0f} "
        f"(max {max(sizes[False])}); x{size_with / size_without:.1f}"
    )
    costs = encoding_costs(running.app, [uuid.UUID(p.match_id) for p in history])
    print(
        "# server work per stored event, in one thread, microseconds: read "
        f"{costs['read']:.0f}, apply {costs['apply']:.0f}, encode with state "
        f"{costs['with state']:.0f}, without {costs['without state']:.0f}"
    )

    def real(channel: grpc.aio.Channel, index: int, with_state: bool) -> Any:
        return watch_call(channel, history[index].match_id, with_state)

    rows: list[tuple[str, int, Rate, Rate, Rate, Rate]] = []
    alone: list[Live] = []
    lives: dict[tuple[int, bool], list[Live]] = {}
    async with raw_server(payloads) as raw_port:
        raw_address = f"127.0.0.1:{raw_port}"
        for count in args.watchers:
            channels = [connect(address) for _ in range(count)]
            raw_channels = [connect(raw_address) for _ in range(count)]
            try:
                await asyncio.wait_for(
                    asyncio.gather(*(c.channel_ready() for c in channels + raw_channels)), 30.0
                )
                first = history[0].version
                for with_state in (True, False):  # warm up, untimed
                    await catch_up(raw_channels, raw_call, 1, with_state, first)
                    await catch_up(channels, real, 1, with_state, first)
                measured: dict[tuple[str, bool], list[Rate]] = {}
                for _ in range(args.rounds):
                    for with_state in (True, False):
                        for name, opener, chans in (
                            ("raw", raw_call, raw_channels),
                            ("catch-up", real, channels),
                        ):
                            rate = await catch_up(chans, opener, len(history), with_state, events)
                            measured.setdefault((name, with_state), []).append(rate)
                        watched = await live(
                            stub, channels, with_state, args.players, args.live_events, args.seconds
                        )
                        measured.setdefault(("live", with_state), []).append(watched.rate)
                        lives.setdefault((count, with_state), []).append(watched)
                    alone.append(
                        await live(stub, [], True, args.players, args.live_events, args.seconds)
                    )
            finally:
                for channel in channels + raw_channels:
                    await channel.close()
            raw_with, raw_without = (median_rate(measured[("raw", s)]) for s in (True, False))
            for name, label in (
                ("raw", "raw gRPC stream (baseline)"),
                ("catch-up", "catch-up: Watch from 0"),
                ("live", "live: Watch while played"),
            ):
                with_rate, without_rate = (median_rate(measured[(name, s)]) for s in (True, False))
                rows.append((label, count, with_rate, without_rate, raw_with, raw_without))
            print(f"# {count} watchers measured", file=sys.stderr)

    print(f"# load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print(
        "| stream | watchers | with state: ev/s each | in all | without: ev/s each | in all "
        "| with / without | with / raw | without / raw |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, count, with_rate, without_rate, raw_with, raw_without in rows:
        failures = with_rate.failures + without_rate.failures
        note = f" ({failures} streams failed)" if failures else ""
        print(
            f"| {label}{note} | {count} | {with_rate.each:,.0f} | {with_rate.total:,.0f} "
            f"| {without_rate.each:,.0f} | {without_rate.total:,.0f} "
            f"| {ratio(with_rate.each, without_rate.each)} "
            f"| {ratio(with_rate.each, raw_with.each)} "
            f"| {ratio(without_rate.each, raw_without.each)} |"
        )
    print()
    print("Live matches, events/s made (commands/s sent):")
    print(f"- nobody watching: {describe_live(alone)}")
    for count in args.watchers:
        for with_state in (True, False):
            kind = "with state" if with_state else "without state"
            print(f"- {count} watchers {kind}: {describe_live(lives[(count, with_state)])}")


def connect(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)


def describe_live(runs: list[Live]) -> str:
    events = statistics.median(r.events for r in runs)
    commands = statistics.median(r.commands for r in runs)
    return f"{events:,.0f} ({commands:,.0f})"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " ") if __doc__ else None,
        epilog="Figures go to docs/performance.md; see the docstring of bench/stream.py.",
    )
    parser.add_argument(
        "--watchers",
        type=int,
        nargs="+",
        default=[1, 10, 50],
        metavar="N",
        help="numbers of watchers to measure, each on its own channel (default: 1 10 50)",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=2000,
        help="stored events to catch up on: whole matches are played until there are at "
        "least this many (default: 2000)",
    )
    parser.add_argument(
        "--live-events",
        type=int,
        default=500,
        help="events to play for each live measurement (default: 500)",
    )
    parser.add_argument("--players", type=int, default=4, help="seats per match (default: 4)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="catch-up and raw measurements per figure; the median is shown (default: 3)",
    )
    parser.add_argument(
        "--postgres",
        nargs="?",
        const=DEFAULT_POSTGRES,
        metavar="DSN",
        help="store in a fresh schema of this PostgreSQL database instead of a temporary "
        f"SQLite file (default DSN: {DEFAULT_POSTGRES!r})",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="time bound of the history and of each live measurement (default: 60)",
    )
    parser.add_argument(
        "--max-matches", type=int, default=200, help="bound on the matches of the history"
    )
    parser.add_argument(
        "--max-commands", type=int, default=5000, help="bound on the commands of one match"
    )
    args = parser.parse_args(argv)
    for name in ("history", "live_events", "rounds", "max_matches", "max_commands"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not 2 <= args.players <= 10:
        parser.error("--players must be between 2 and 10")
    if any(n < 1 or n > 100 for n in args.watchers):
        parser.error("--watchers must be between 1 and 100")
    args.argv = argv
    return args


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
