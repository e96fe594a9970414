"""Grab races: does the receive order follow the order grabs were sent, is any seat or
connection favoured, and how are simultaneous grabs drawn (JS-4.2a)?

``--clients`` contender processes, a connection each, grab in an inward-arrows race
(JS-6.1) at a shared start plus an offset: all at once (0), or in a drawn order ``d`` ms
apart (``--offsets``); every seat and ``--watchers`` spectators watch the match, and the
seats rotate between the contenders so that a seat's bias is told from a connection's. A
contender waits for its send time asleep under SCHED_FIFO where it may (the contenders
wake in the random order the start signal reached them), else spinning the end.
``--via act`` sends each grab as an Act call; ``--via play`` as a message on a Play stream
opened before the race. Send times and the server's stamps share CLOCK_MONOTONIC. gRPC's
listeners are compared by ``GRPC_EXPERIMENTS`` in this script's environment, which the
server inherits. Targets: stamp order = send order in 95% of the races at offsets of 1 ms
or more; no seat or connection bias over 600 races at offset 0 (chi-square p > 0.01);
median stamp spread at most twice the median send spread at offset 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import os
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bench import harness
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms
from totem.v1.match_service_pb2_grpc import MatchServiceStub

# isort: split
import grpc  # after the harness, which sets totem serve's gRPC listener first

ACT, PLAY = "act", "play"
MARGIN_NS, SPIN_NS = 15_000_000, 200_000


@dataclass
class Grab:
    """One contender's grab; ``*_ns`` CLOCK_MONOTONIC."""

    contender: int
    seat: int
    sent_ns: int
    answered_ns: int
    sequence: int
    stamp_ns: int
    won: bool = False
    tied: bool = False
    version: int = 0


@dataclass
class Race:
    offset_ms: float
    grabs: list[Grab]

    def by_stamp(self) -> list[Grab]:
        return sorted(self.grabs, key=lambda g: g.sequence)

    def spread(self, times: str) -> int:
        """From the first grab's to the last's ``sent_ns`` or ``stamp_ns``."""
        values: list[int] = [getattr(g, times) for g in self.grabs]
        return max(values) - min(values)

    @property
    def winner(self) -> Grab:
        return next(g for g in self.grabs if g.won)

    @property
    def in_order(self) -> bool:
        by_send = sorted(self.grabs, key=lambda g: g.sent_ns)
        return [g.contender for g in by_send] == [g.contender for g in self.by_stamp()]


# ---- the contenders' and spectators' processes --------------------------------------------


def fifo_allowed() -> bool:
    """Whether this process may raise a thread to SCHED_FIFO (root or CAP_SYS_NICE)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except (OSError, AttributeError):
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


def wait_until(target_ns: int, fifo: bool) -> None:
    """Sleep to ``target_ns`` under SCHED_FIFO where allowed (``time.sleep`` is a
    clock_nanosleep to an absolute CLOCK_MONOTONIC time; a real-time task has no timer
    slack and runs as it wakes), else sleep most of the way and spin the end."""
    if fifo:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        time.sleep(max(0, target_ns - time.monotonic_ns()) / 1e9)
        return
    if target_ns - time.monotonic_ns() > SPIN_NS:
        time.sleep((target_ns - time.monotonic_ns() - SPIN_NS) / 1e9)
    while time.monotonic_ns() < target_ns:
        pass


async def child(conn: Any, index: int, address: str, fifo: bool, via: str, watchers: int) -> None:
    """A contender (``index`` >= 0: grabs when told) or the spectators (-1: ``watchers``
    Watch streams on each match)."""
    channel, stub = harness.match_stub(address)
    await asyncio.wait_for(channel.channel_ready(), harness.STEP_TIMEOUT)
    followers: list[harness.Follower] = []
    stream: Any = None
    conn.send(("ready", None))
    try:
        while (message := await asyncio.to_thread(conn.recv))[0] != "stop":
            kind, *rest = message
            try:
                if kind == "join":  # a seat, and its stream of the match
                    match_id, seat = rest
                    joined = await stub.JoinMatch(
                        ms.JoinMatchRequest(match_id=match_id, name=f"c{index}", seat=seat),
                        timeout=harness.STEP_TIMEOUT,
                    )
                    metadata = harness.bearer(joined.player_token)
                    watch = ms.WatchRequest(match_id=match_id)
                    followers = [harness.Follower(stub.Watch(watch, metadata=metadata))]
                    await followers[0].reach(1)
                    conn.send(("joined", joined.player_token))
                elif kind == "watch":  # the spectators
                    watch = ms.WatchRequest(match_id=rest[0])
                    followers = [harness.Follower(stub.Watch(watch)) for _ in range(watchers)]
                    await asyncio.gather(*(f.reach(1) for f in followers))
                    conn.send(("watching", None))
                elif kind == "reach":
                    await asyncio.gather(*(f.reach(rest[0]) for f in followers))
                    for follower in followers if rest[1] else ():
                        await follower.close()
                    conn.send(("reached", None))
                elif kind == "arm":  # the race's stream, then a call of its own
                    version = rest[0]
                    await followers[0].reach(version)
                    request = ms.ActRequest(
                        match_id=match_id, seen_version=version, jungle_speed=harness.GRAB
                    )
                    if via == PLAY:
                        stream = await harness.open_play(stub.Play, metadata)
                    await stub.GetServerKey(ms.GetServerKeyRequest(), timeout=harness.STEP_TIMEOUT)
                    conn.send(("armed", None))
                elif kind == "go":
                    gc.disable()
                    wait_until(rest[0], fifo)  # blocking on purpose: nothing else runs now
                    sent = time.monotonic_ns()
                    if via == PLAY:
                        call = asyncio.ensure_future(
                            harness.round_trip(stream, ms.PlayRequest(act=request))
                        )
                    else:
                        call = stub.Act(request, metadata=metadata, timeout=harness.STEP_TIMEOUT)
                    await asyncio.sleep(0)  # the request handed to gRPC's core
                    if fifo:
                        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
                    answer = await call
                    times = (index, seat, sent, time.monotonic_ns())
                    gc.enable()
                    done = own_grab(times, answer.applied if via == PLAY else answer)
                    await followers[0].reach(done.version)  # the race is over for it
                    await followers.pop().close()
                    if via == PLAY:
                        await harness.close_play(stream)
                    gc.collect()
                    conn.send(("done", asdict(done)))
            except Exception as error:
                gc.enable()
                conn.send(("error", f"{index} {kind}: {error!r}"))
    finally:
        for follower in followers:
            await follower.close()
        if stream is not None:
            stream.cancel()
        await channel.close()


def own_grab(times: tuple[int, int, int, int], answer: Any) -> Grab:
    """The grab of seat ``times[1]`` from the events of its answer: the ArrowsWon that
    decided it (as the winner, or a contender of a tie, JS-4.2a) or its LateGrab."""
    seat = times[1]
    for event in answer.events:
        inner = event.jungle_speed
        if inner.WhichOneof("event") == "arrows_won":
            won = inner.arrows_won
            tie = [c.stamp for c in won.tie.contenders if c.seat == seat]
            if not tie and won.winner != seat:
                continue
            stamp = tie[0] if tie else won.stamp
            won_, tied = won.winner == seat, bool(tie)
            return Grab(*times, stamp.sequence, stamp.monotonic_ns, won_, tied, event.version)
        if inner.WhichOneof("event") == "late_grab" and inner.late_grab.seat == seat:
            stamp = inner.late_grab.stamp
            return Grab(*times, stamp.sequence, stamp.monotonic_ns, version=event.version)
    raise RuntimeError(f"seat {seat}: no ArrowsWon or LateGrab of its own in the answer")


# ---- the coordinator ------------------------------------------------------------------------


def new_match(
    stub: Any, children: harness.Children, seats: dict[int, int], spectators: list[int]
) -> int:
    """A match of the contenders at ``seats``, watched, whose first reveal is the inward
    arrows: the version the race starts from."""
    created = stub.CreateMatch(
        harness.create_request(harness.arrows_options(len(seats))), metadata=harness.ORGANISER
    )
    tokens: dict[int, str] = {}
    for c in sorted(seats, key=seats.__getitem__):  # seats in order (JS-1.5)
        tokens |= children.ask([c], "join", created.match_id, seats[c])
    children.ask(spectators, "watch", created.match_id)
    first = next(c for c in seats if seats[c] == 0)
    request = ms.ActRequest(match_id=created.match_id, jungle_speed=harness.REVEAL)
    revealed = stub.Act(
        request, metadata=harness.bearer(tokens[first]), timeout=harness.STEP_TIMEOUT
    )
    if revealed.events[0].jungle_speed.revealed.card.kind != js.CARD_KIND_INWARD_ARROWS:
        raise RuntimeError("the reveal was not the inward arrows")
    children.ask(spectators, "reach", revealed.version, False)
    return int(revealed.version)


def run(args: argparse.Namespace) -> tuple[list[Race], bool]:
    """The counted races, and whether the contenders slept under SCHED_FIFO."""
    n, rng = args.clients, random.Random(args.seed)
    offsets = [float(o) for o in args.offsets.split(",")]
    plan = [o for o in offsets for _ in range(args.races if o == 0 else args.races_per_offset)]
    rng.shuffle(plan)
    races: list[Race] = []
    rotation: dict[float, int] = {}
    fifo = fifo_allowed()
    contenders, spectators = list(range(n)), [-1] if args.watchers else []
    with contextlib.ExitStack() as stack:
        address = stack.enter_context(harness.serve(args)).address
        stub = MatchServiceStub(stack.enter_context(grpc.insecure_channel(address)))
        children = stack.enter_context(harness.Children(child))
        for index in contenders + spectators:
            children.start(index, index, address, fifo, args.via, args.watchers)
            children.gather([index])  # connected one after another
        for index, offset in enumerate([0.0] * args.warmup + plan):
            key = -1.0 if index < args.warmup else offset
            turn = rotation[key] = rotation.get(key, -1) + 1
            version = new_match(stub, children, {c: (c + turn) % n for c in contenders}, spectators)
            # The order of the grabs, and the order of the start signal.
            ranks, order = rng.sample(range(n), n), rng.sample(range(n), n)
            for c in order:
                children.ask([c], "arm", version)
            start = time.monotonic_ns() + MARGIN_NS
            for c in order:  # a fresh order each time: nobody is told first by habit
                children.send([c], "go", start + ranks[c] * int(offset * 1e6))
            race = Race(offset, [Grab(**g) for _, g in sorted(children.gather(contenders).items())])
            children.ask(spectators, "reach", max(g.version for g in race.grabs), True)
            if sum(g.won for g in race.grabs) != 1:
                raise RuntimeError("not exactly one winner")
            if index >= args.warmup:
                races.append(race)
    return races, fifo


# ---- the report -------------------------------------------------------------------------------


def pct(flags: Sequence[bool]) -> str:
    return f"{sum(flags) / len(flags):.0%}" if flags else "-"


def counts(items: Sequence[int], n: int) -> list[int]:
    return [sum(i == c for i in items) for c in range(n)]


def report(races: list[Race], n: int) -> str:
    offsets = sorted({r.offset_ms for r in races})
    rows = []
    for offset in offsets:
        group = [r for r in races if r.offset_ms == offset]
        spreads = [
            harness.p50_p99([r.spread(s) for r in group], 1e-6, 2) for s in ("sent_ns", "stamp_ns")
        ]
        rows.append([f"{offset:g}", len(group), *spreads, pct([r.in_order for r in group])])
    header = ["offset ms", "races", "send spread", "stamp spread", "stamp order = send"]
    lines = ["ms, median / p99", "", harness.markdown_table(header, rows)]
    zero = [r for r in races if r.offset_ms == 0]
    if not zero:
        return "\n".join(lines)
    ratio = statistics.median(r.spread("stamp_ns") for r in zero) / statistics.median(
        r.spread("sent_ns") for r in zero
    )
    gaps = [[b.stamp_ns - a.stamp_ns for a, b in itertools.pairwise(r.by_stamp())] for r in zero]
    lines += [
        "",
        f"Offset 0 ({len(zero)} races): stamp spread / send spread, medians, {ratio:.2f}x; gaps "
        f"between successive stamps, medians, µs: "
        + ", ".join(f"{statistics.median(g) / 1000:,.0f}" for g in zip(*gaps, strict=True)),
    ]
    seat_p = harness.chi_square_p(seats := counts([r.winner.seat for r in zero], n))
    conn_p = harness.chi_square_p(conns := counts([r.winner.contender for r in zero], n))
    ties = [sum(g.tied for g in r.grabs) for r in zero if any(g.tied for g in r.grabs)]
    tie_sizes = f", contenders per tie median {statistics.median(ties):g}, max {max(ties)}"
    winner = [(r.winner.answered_ns - r.winner.sent_ns) / 1e6 for r in zero]
    last = [
        (max(g.answered_ns for g in r.grabs) - min(g.sent_ns for g in r.grabs)) / 1e6 for r in zero
    ]
    later = {o: pct([r.in_order for r in races if r.offset_ms == o]) for o in offsets if o >= 1}
    met = bool(later) and all(float(v[:-1]) >= 95 for v in later.values())
    bias = f"{min(seat_p, conn_p) > 0.01}" if len(zero) >= 600 else "not tested (600 races needed)"
    lines += [
        f"Wins: seats {seats}, p = {seat_p:.3g}; connections {conns}, p = {conn_p:.3g}",
        f"Decided by a draw (JS-4.2a): {len(ties)}{tie_sizes if ties else ''}",
        f"The winner's answer from its send, ms: {harness.p50_p99(winner, 1, 2)}; the race's last "
        f"answer from its first send: {harness.p50_p99(last, 1, 2)}",
        "",
        f"Targets: stamp order = send order ≥ 95% at ≥ 1 ms: {met} {later}; no seat or connection "
        f"bias (p > 0.01): {bias}; stamp spread ≤ 2x send spread: {ratio <= 2}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("-n", "--clients", type=int, default=6, help="contenders, 2 to 8")
    parser.add_argument("--races", type=int, default=600, help="races at offset 0")
    parser.add_argument("--races-per-offset", type=int, default=100)
    parser.add_argument("--offsets", default="0,0.25,0.5,1,2,5", help="ms, comma-separated")
    parser.add_argument("--via", choices=(ACT, PLAY), default=ACT)
    parser.add_argument("--watchers", type=int, default=4, help="spectators besides the seats")
    parser.add_argument("--warmup", type=int, default=20, help="races run first, not counted")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args(argv)
    if not 2 <= args.clients <= 8 or "0" not in args.offsets.split(","):
        parser.error("--clients must be 2 to 8 and --offsets must hold 0")
    races, fifo = run(args)
    print(
        f"{harness.machine_line()}\n{args.clients} contenders via {args.via} "
        f"({'SCHED_FIFO' if fifo else 'spinning'}) against "
        f"totem serve, store {args.store}, {args.watchers} spectators\n"
    )
    print(report(races, args.clients))


if __name__ == "__main__":
    main()
