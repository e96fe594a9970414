"""Grab races: does the receive order follow the order grabs were sent, is any seat or
connection favoured, and how are simultaneous grabs drawn (JS-4.2a)?

``--clients`` contender processes, a connection each, grab in an inward-arrows race
(JS-6.1) at a shared start plus an offset: all at once (0), or in a drawn order ``d`` ms
apart (``--offsets``); every seat and ``--watchers`` spectators watch the match, and the
seats rotate between the contenders so that a seat's bias is told from a connection's.
A contender waits for its send time asleep under SCHED_FIFO where it may (the contenders
wake in the random order the start signal reached them), else spinning. ``--via act``
sends each grab as an Act call; ``--via play`` as a message on a Play stream opened before
the race. Send times and the server's stamps share CLOCK_MONOTONIC; where a packet socket
may be opened (root), the kernel's timestamps of each request on ``lo`` also give the
order the grabs reached the machine ("wire"). ``--bare`` races against a grpc.aio server
that only stamps as totem serve does (the floor); ``--with-bare B`` runs both, B races at
a time each. Targets: stamp order = send order in 95% of the races at offsets of 1 ms or
more; no seat or connection bias over 600 races at offset 0 (chi-square p > 0.01); median
stamp spread at most twice the median send spread at offset 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import itertools
import multiprocessing
import multiprocessing.connection
import os
import random
import socket
import statistics
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bench.harness import (
    ORGANISER,
    REVEAL,
    STEP_TIMEOUT,
    arguments,
    arrows_options,
    bearer,
    chi_square_p,
    close_play,
    create_request,
    machine_line,
    markdown_table,
    open_play,
    p50_p99,
    round_trip,
    serve,
)
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

SERVER, BARE = "totem serve", "bare gRPC"
ACT, PLAY = "act", "play"
SEND, WIRE = "send", "wire"
#: The bare server's answer: the receive sequence, CLOCK_MONOTONIC and CLOCK_REALTIME.
STAMP = struct.Struct("<qqq")
BARE_ACT, BARE_PLAY = "/totem.v1.MatchService/Act", "/totem.v1.MatchService/Play"
MARGIN_NS, SPIN_NS = 15_000_000, 200_000
#: Races against the bare server are read this long after their last send.
BARE_SETTLE_NS = 20_000_000
GAP_EDGES_US = (0, 1, 5, 20, 50, 100, 250, 500, 1000, 2000, 5000)


@dataclass
class Grab:
    """One contender's grab: ``*_ns`` CLOCK_MONOTONIC, ``*_wall_ns`` and ``received_ns``
    CLOCK_REALTIME; ``wire_ns`` 0 where the request was not seen on the wire."""

    contender: int
    seat: int
    sent_ns: int
    sent_wall_ns: int
    answered_ns: int
    answered_wall_ns: int
    sequence: int
    stamp_ns: int
    received_ns: int
    won: bool = False
    tied: bool = False
    version: int = 0
    wire_ns: int = 0


@dataclass
class Race:
    offset_ms: float
    grabs: list[Grab]

    def by(self, view: str) -> list[Grab]:
        return sorted(self.grabs, key=lambda g: g.sent_ns if view == SEND else g.wire_ns)

    def by_stamp(self) -> list[Grab]:
        return sorted(self.grabs, key=lambda g: g.sequence)

    def spread(self, view: str) -> int:
        times = [g.sent_ns if view == SEND else g.wire_ns for g in self.grabs]
        return max(times) - min(times)

    @property
    def stamp_spread(self) -> int:
        return max(g.stamp_ns for g in self.grabs) - min(g.stamp_ns for g in self.grabs)

    @property
    def on_wire(self) -> bool:
        return all(g.wire_ns for g in self.grabs)

    @property
    def winner(self) -> Grab:
        return next(g for g in self.grabs if g.won)

    def in_order(self, view: str) -> bool:
        return [g.contender for g in self.by(view)] == [g.contender for g in self.by_stamp()]

    def pairs(self, view: str) -> Iterator[tuple[int, bool]]:
        """Each pair of grabs: how far apart in ``view`` (ns), and stamped in that order?"""
        for a, b in itertools.combinations(self.by(view), 2):
            apart = (b.sent_ns - a.sent_ns) if view == SEND else (b.wire_ns - a.wire_ns)
            yield apart, a.sequence < b.sequence


# ---- the contenders' and spectators' processes --------------------------------------------


class Follower:
    """A Watch stream read in a task, with the highest version it has shown."""

    def __init__(self, call: Any) -> None:
        self.call, self.seen, self.error = call, 0, ""
        self.changed = asyncio.Condition()
        self.task = asyncio.ensure_future(self._follow())

    async def _follow(self) -> None:
        try:
            async for event in self.call:
                async with self.changed:
                    self.seen = event.version
                    self.changed.notify_all()
        except Exception as error:  # reported by reach
            async with self.changed:
                self.error = repr(error)
                self.changed.notify_all()

    async def reach(self, version: int) -> None:
        async with self.changed:
            done = lambda: self.seen >= version or bool(self.error)  # noqa: E731
            await asyncio.wait_for(self.changed.wait_for(done), STEP_TIMEOUT)
        if self.seen < version:
            raise RuntimeError(f"stream ended at version {self.seen}: {self.error}")

    async def close(self) -> None:
        self.call.cancel()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def fifo_allowed() -> bool:
    """Whether this process may raise a thread to SCHED_FIFO (root or CAP_SYS_NICE)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except (OSError, AttributeError):
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


def wait_until(target_ns: int, fifo: Any) -> None:
    """Sleep to ``target_ns`` under SCHED_FIFO with no timer slack (timers of one expiry
    wake in the order armed, and a real-time task runs as it wakes), else spin the end."""
    if fifo is not None:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        spec = _Timespec(target_ns // 1_000_000_000, target_ns % 1_000_000_000)
        while fifo.clock_nanosleep(time.CLOCK_MONOTONIC, 1, ctypes.byref(spec), None):
            pass  # interrupted: sleep again to the same time
        return
    if target_ns - time.monotonic_ns() > SPIN_NS:
        time.sleep((target_ns - time.monotonic_ns() - SPIN_NS) / 1e9)
    while time.monotonic_ns() < target_ns:
        pass


def local_ports(remote_port: int) -> list[int]:
    """This process's local ports of TCP connections to 127.0.0.1:``remote_port``."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            inodes.add(os.readlink(f"/proc/self/fd/{fd}").removeprefix("socket:[")[:-1])
    ports = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):  # gRPC may use IPv4-mapped IPv6
        with contextlib.suppress(OSError), open(name) as table:
            for line in itertools.islice(table, 1, None):
                local, remote, inode = (line.split()[i] for i in (1, 2, 9))
                address, port = remote.split(":")
                if (
                    inode in inodes
                    and address.endswith("0100007F")
                    and int(port, 16) == remote_port
                ):
                    ports.append(int(local.split(":")[1], 16))
    return ports


def child_main(
    index: int, addresses: dict[str, str], conn: Any, fifo: bool, via: str, watchers: int
) -> None:
    asyncio.run(_child(index, addresses, conn, fifo, via, watchers))


async def _child(
    index: int, addresses: dict[str, str], conn: Any, fifo: bool, via: str, watchers: int
) -> None:
    """A contender (``index`` >= 0: a connection to each server, grabs when told) or the
    spectators (-1: ``watchers`` Watch streams on each match)."""
    import grpc

    from totem.v1 import match_service_pb2_grpc

    channels = {kind: grpc.aio.insecure_channel(a) for kind, a in addresses.items()}
    ports: list[int] = []
    for kind, channel in channels.items():
        await asyncio.wait_for(channel.channel_ready(), STEP_TIMEOUT)
        ports += local_ports(int(addresses[kind].rsplit(":", 1)[1]))
    stub: Any = (
        match_service_pb2_grpc.MatchServiceStub(channels[SERVER]) if SERVER in channels else None
    )
    acts = {SERVER: stub.Act} if stub else {}
    plays = {SERVER: stub.Play} if stub else {}
    if BARE in channels:  # the same requests, answered with packed stamps
        acts[BARE] = channels[BARE].unary_unary(BARE_ACT, ms.ActRequest.SerializeToString)
        plays[BARE] = channels[BARE].stream_stream(BARE_PLAY, ms.PlayRequest.SerializeToString)
    grab = js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
    # To the bare server, a request of a real grab's size: match id, version, token.
    bare = ms.ActRequest(match_id=str(uuid.uuid4()), seen_version=7, jungle_speed=grab)
    metadata = {BARE: bearer(str(uuid.uuid4()) + "x" * 7)}
    libc = ctypes.CDLL(None, use_errno=True) if fifo else None
    if libc is not None:
        libc.prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK: 1 ns
    followers: list[Follower] = []
    streams: dict[str, Any] = {}
    match_id, seat = "", 0
    conn.send(("ready", ports))
    try:
        while (message := await asyncio.to_thread(conn.recv))[0] != "stop":
            kind, *rest = message
            try:
                if kind == "join":  # a seat, and its stream of the match
                    match_id, seat = rest
                    joined = await stub.JoinMatch(
                        ms.JoinMatchRequest(match_id=match_id, name=f"c{index}", seat=seat),
                        timeout=STEP_TIMEOUT,
                    )
                    metadata[SERVER] = bearer(joined.player_token)
                    followers = [
                        Follower(
                            stub.Watch(
                                ms.WatchRequest(match_id=match_id), metadata=metadata[SERVER]
                            )
                        )
                    ]
                    await followers[0].reach(1)
                    conn.send(("joined", joined.player_token))
                elif kind == "watch":  # the spectators
                    followers = [
                        Follower(stub.Watch(ms.WatchRequest(match_id=rest[0])))
                        for _ in range(watchers)
                    ]
                    await asyncio.gather(*(f.reach(1) for f in followers))
                    conn.send(("watching", None))
                elif kind == "reach":
                    await asyncio.gather(*(f.reach(rest[0]) for f in followers))
                    if rest[1]:
                        for follower in followers:
                            await follower.close()
                    conn.send(("reached", None))
                elif kind == "arm":  # the race's stream, then a call of its own
                    on, version = rest
                    if on == SERVER:
                        await followers[0].reach(version)
                    if via == PLAY:
                        streams[on] = await open_play(plays[on], metadata[on])
                    if on == SERVER:  # armed in a fresh order: the last call is not by habit
                        await stub.GetServerKey(ms.GetServerKeyRequest(), timeout=STEP_TIMEOUT)
                    else:
                        await acts[BARE](bare, metadata=metadata[BARE], timeout=STEP_TIMEOUT)
                    conn.send(("armed", None))
                elif kind == "go":
                    on, version, target = rest
                    request = (
                        bare
                        if on == BARE
                        else ms.ActRequest(
                            match_id=match_id, seen_version=version, jungle_speed=grab
                        )
                    )
                    gc.disable()
                    wait_until(target, libc)  # blocking on purpose: nothing else runs now
                    sent, sent_wall = time.monotonic_ns(), time.time_ns()
                    if via == PLAY:
                        call = asyncio.ensure_future(
                            round_trip(streams[on], ms.PlayRequest(act=request))
                        )
                    else:
                        call = acts[on](request, metadata=metadata[on], timeout=STEP_TIMEOUT)
                    await asyncio.sleep(0)  # the request handed to gRPC's core
                    if libc is not None:
                        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
                    answer = await call
                    times = (index, seat, sent, sent_wall, time.monotonic_ns(), time.time_ns())
                    gc.enable()
                    if on == BARE:
                        done = Grab(*times, *STAMP.unpack(answer))
                    else:
                        done = own_grab(times, answer.applied if via == PLAY else answer)
                        await followers[0].reach(done.version)  # the race is over for it
                        await followers.pop().close()
                        if via == PLAY:
                            await close_play(streams.pop(SERVER))
                        gc.collect()
                    conn.send(("done", asdict(done)))
                elif kind == "collect":  # after a bare race, once all are answered
                    if BARE in streams:
                        await close_play(streams.pop(BARE))
                    gc.collect()
                    conn.send(("collected", None))
            except Exception as error:
                gc.enable()
                conn.send(("error", f"{index} {kind}: {error!r}"))
    finally:
        for follower in followers:
            await follower.close()
        for stream in streams.values():
            stream.cancel()
        for channel in channels.values():
            await channel.close()


def own_grab(times: tuple[int, ...], answer: Any) -> Grab:
    """The grab of seat ``times[1]`` from the events of its answer: the ArrowsWon that
    decided it (as the winner, or a contender of a tie, JS-4.2a) or its LateGrab."""
    seat = times[1]
    for event in answer.events:
        inner = event.jungle_speed
        if inner.WhichOneof("event") == "arrows_won":
            won = inner.arrows_won
            for contender in won.tie.contenders:
                if contender.seat == seat:
                    stamp, tied = contender.stamp, True
                    break
            else:
                stamp, tied = won.stamp, False
                if won.winner != seat:
                    continue
        elif inner.WhichOneof("event") == "late_grab" and inner.late_grab.seat == seat:
            stamp, tied, won = inner.late_grab.stamp, False, None
        else:
            continue
        return Grab(
            *times,
            stamp.sequence,
            stamp.monotonic_ns,
            stamp.received_at.ToNanoseconds(),
            won is not None and won.winner == seat,
            tied,
            event.version,
        )
    raise RuntimeError(f"seat {seat}: no ArrowsWon or LateGrab of its own in the answer")


# ---- the bare server -------------------------------------------------------------------------


async def serve_bare() -> None:
    """grpc.aio with totem serve's listener (this module's harness import set it), switch
    interval, queue of pending calls and arrival interceptor, answering each Act call and
    each Play message with its stamp, nothing decoded (``python bench/race.py --serve-bare``)."""
    import grpc

    from server.limits import Limits
    from server.serve import SWITCH_INTERVAL_S
    from server.stamps import ArrivalStamps, Stamper

    sys.setswitchinterval(SWITCH_INTERVAL_S)
    stamper = Stamper()

    def packed(stamp: Any) -> bytes:
        return STAMP.pack(stamp.sequence, stamp.monotonic_ns, stamp.wall_ns)

    async def act(_request: bytes, _context: Any) -> bytes:
        return packed(stamper.on_arrival(0))

    async def play(requests: Any, context: Any) -> None:
        # As totem serve: a task reads and stamps, the handler writes the answers.
        answers: asyncio.Queue[bytes | None] = asyncio.Queue()

        async def read() -> None:
            async for _ in requests:
                answers.put_nowait(packed(stamper.stamp()))
            answers.put_nowait(None)

        reader = asyncio.ensure_future(read())
        while (answer := await answers.get()) is not None:
            await context.write(answer)
        await reader

    options = [("grpc.so_reuseport", 0), *Limits().grpc_options()]
    bare = grpc.aio.server(
        interceptors=[ArrivalStamps(stamper, frozenset({BARE_ACT}))], options=options
    )
    handlers = {
        "Act": grpc.unary_unary_rpc_method_handler(act),
        "Play": grpc.stream_stream_rpc_method_handler(play),
    }
    bare.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("totem.v1.MatchService", handlers),)
    )
    bare.add_registered_method_handlers("totem.v1.MatchService", handlers)
    print(bare.add_insecure_port("127.0.0.1:0"), flush=True)
    await bare.start()
    await bare.wait_for_termination()


@contextlib.contextmanager
def bare_server(env: dict[str, str]) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve-bare"],
        env=os.environ | env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield f"127.0.0.1:{int(process.stdout.readline())}"
    finally:
        process.terminate()
        process.wait(10)


# ---- the wire -------------------------------------------------------------------------------


class WireTap:
    """The TCP segments sent to ``port`` on ``lo``, each stamped by the kernel as written
    (a packet socket with ``tcp dst port PORT`` as classic BPF; needs CAP_NET_RAW)."""

    def __init__(self, port: int) -> None:
        program = [  # (code, jt, jf, k) of tcpdump -dd 'ip and tcp dst port PORT', 128 bytes
            *((0x28, 0, 0, 12), (0x15, 0, 8, 0x0800), (0x30, 0, 0, 23), (0x15, 0, 6, 6)),
            *((0x28, 0, 0, 20), (0x45, 4, 0, 0x1FFF), (0xB1, 0, 0, 14), (0x48, 0, 0, 16)),
            *((0x15, 0, 1, port), (0x06, 0, 0, 128), (0x06, 0, 0, 0)),
        ]
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.code = ctypes.create_string_buffer(
            b"".join(struct.pack("HBBI", *op) for op in program)
        )
        filter_ = struct.pack("HL", len(program), ctypes.addressof(self.code))
        self.sock.setsockopt(socket.SOL_SOCKET, 26, filter_)  # SO_ATTACH_FILTER
        self.sock.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind(("lo", 3))  # ETH_P_ALL
        self.sock.setblocking(False)

    def take(self) -> list[tuple[int, int, int]]:
        """(wall ns, source port, payload bytes) of every segment sent since the last."""
        segments = []
        while True:
            try:
                data, ancillary, _, address = self.sock.recvmsg(128, 64)
            except BlockingIOError:
                return segments
            if address[2] != 4 or not ancillary:  # PACKET_OUTGOING: each is seen twice on lo
                continue
            sec, nsec = struct.unpack("qq", ancillary[0][2][:16])
            ip = (data[14] & 0x0F) * 4
            tcp = 14 + ip
            payload = struct.unpack_from("!H", data, 16)[0] - ip - (data[tcp + 12] >> 4) * 4
            segments.append(
                (sec * 1_000_000_000 + nsec, struct.unpack_from("!H", data, tcp)[0], payload)
            )


def find_on_wire(
    grabs: list[Grab], ports: dict[int, list[int]], segments: list[tuple[int, int, int]]
) -> None:
    """Each grab's ``wire_ns``: its connection's first segment between its send and its
    answer large enough for a request (HTTP/2 control frames are 9 to 17 bytes)."""
    for grab in grabs:
        found = [
            wall
            for wall, port, payload in segments
            if port in ports[grab.contender]
            and payload >= 40
            and grab.sent_wall_ns - 1000 <= wall <= grab.answered_wall_ns
        ]
        grab.wire_ns = min(found, default=0)


# ---- the coordinator ------------------------------------------------------------------------


class Children:
    """The contender processes, and the spectators' (index -1), each with a pipe."""

    def __init__(self, addresses: dict[str, str], args: argparse.Namespace, fifo: bool) -> None:
        context = multiprocessing.get_context("spawn")  # no gRPC state inherited
        self.pipes: dict[int, Any] = {}
        self.processes: list[Any] = []
        self.ports: dict[int, list[int]] = {}
        watchers = args.watchers if SERVER in addresses else 0
        for index in [*range(args.clients), *([-1] if watchers else [])]:
            self.pipes[index], theirs = context.Pipe()
            process = context.Process(
                target=child_main,
                args=(index, addresses, theirs, fifo, args.via, watchers),
                daemon=True,
            )
            process.start()
            self.processes.append(process)
            self.ports[index] = self.gather([index])[index]  # connected one after another

    def ask(self, indexes: Sequence[int], *message: Any) -> dict[int, Any]:
        for index in indexes:
            self.pipes[index].send(message)
        return self.gather(indexes)

    def gather(self, indexes: Sequence[int]) -> dict[int, Any]:
        waiting = {self.pipes[i]: i for i in indexes}
        replies: dict[int, Any] = {}
        while waiting:
            ready = multiprocessing.connection.wait(list(waiting), STEP_TIMEOUT * 2)
            if not ready:
                raise TimeoutError(f"no reply from {sorted(waiting.values())}")
            for conn in ready:
                kind, payload = conn.recv()  # type: ignore[union-attr]
                if kind == "error":
                    raise RuntimeError(payload)
                replies[waiting.pop(conn)] = payload  # type: ignore[index]
        return replies

    def stop(self) -> None:
        for conn in self.pipes.values():
            with contextlib.suppress(OSError):
                conn.send(("stop",))
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.terminate()


def run(args: argparse.Namespace) -> tuple[dict[str, list[Race]], bool, bool]:
    """The counted races against each server, whether the wire was seen, and whether the
    contenders slept under SCHED_FIFO."""
    import grpc

    from totem.v1 import match_service_pb2_grpc

    n, rng = args.clients, random.Random(args.seed)
    offsets = [float(o) for o in args.offsets.split(",")]
    plan = [o for o in offsets for _ in range(args.races if o == 0 else args.races_per_offset)]
    rng.shuffle(plan)
    plan = [0.0] * args.warmup + plan
    # Each race's ranks and the order of its start signal: the same for both servers.
    draws = [(rng.sample(range(n), n), rng.sample(range(n), n)) for _ in plan]
    kinds = [BARE] if args.bare else [BARE, SERVER] if args.with_bare else [SERVER]
    block = args.with_bare or len(plan)
    steps = [
        (kind, index)
        for start in range(0, len(plan), block)
        for kind in kinds
        for index in range(start, min(start + block, len(plan)))
    ]
    env = dict(item.split("=", 1) for item in args.server_env)
    races: dict[str, list[Race]] = {kind: [] for kind in kinds}
    rotation: dict[float, int] = {}
    fifo = fifo_allowed()
    with contextlib.ExitStack() as stack:
        addresses = {}
        if BARE in kinds:
            addresses[BARE] = stack.enter_context(bare_server(env))
        if SERVER in kinds:
            served = serve(args, env)
            addresses[SERVER] = stack.enter_context(served).address
        taps = {}
        with contextlib.suppress(OSError, AttributeError):  # not Linux, or not root
            taps = {kind: WireTap(int(a.rsplit(":", 1)[1])) for kind, a in addresses.items()}
        children = Children(addresses, args, fifo)
        stack.callback(children.stop)
        contenders = list(range(n))
        if SERVER in addresses:
            channel = stack.enter_context(grpc.insecure_channel(addresses[SERVER]))
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
        for kind, index in steps:
            offset, (ranks, order) = plan[index], draws[index]
            version = 0
            if kind == SERVER:
                key = -1.0 if index < args.warmup else offset
                turn = rotation[key] = rotation.get(key, -1) + 1
                seats = {c: (c + turn) % n for c in contenders}
                created = stub.CreateMatch(create_request(arrows_options(n)), metadata=ORGANISER)
                tokens = {}
                for c in sorted(contenders, key=seats.__getitem__):  # seats in order (JS-1.5)
                    tokens |= children.ask([c], "join", created.match_id, seats[c])
                spectators = [-1] if -1 in children.pipes else []
                children.ask(spectators, "watch", created.match_id)
                first = next(c for c in contenders if seats[c] == 0)
                request = ms.ActRequest(match_id=created.match_id, jungle_speed=REVEAL)
                revealed = stub.Act(request, metadata=bearer(tokens[first]), timeout=STEP_TIMEOUT)
                if revealed.events[0].jungle_speed.revealed.card.kind != js.CARD_KIND_INWARD_ARROWS:
                    raise RuntimeError("the reveal was not the inward arrows")
                version = revealed.version
                children.ask(spectators, "reach", version, False)
            for c in order if kind == SERVER or args.via == PLAY else []:
                children.ask([c], "arm", kind, version)
            start = time.monotonic_ns() + MARGIN_NS
            for c in order:  # a fresh order each time: nobody is told first by habit
                children.pipes[c].send(("go", kind, version, start + ranks[c] * int(offset * 1e6)))
            if kind == BARE:  # answers read after the race: no competing with the stamping
                time.sleep(
                    max(0, start + n * offset * 1e6 + BARE_SETTLE_NS - time.monotonic_ns()) / 1e9
                )
            race = Race(offset, [Grab(**g) for _, g in sorted(children.gather(contenders).items())])
            if kind == SERVER:
                children.ask(spectators, "reach", max(g.version for g in race.grabs), True)
                if sum(g.won for g in race.grabs) != 1:
                    raise RuntimeError("not exactly one winner")
            else:
                children.ask(contenders, "collect")
            if taps:
                find_on_wire(race.grabs, children.ports, taps[kind].take())
            if index >= args.warmup:
                races[kind].append(race)
    return races, bool(taps), fifo


# ---- the report -------------------------------------------------------------------------------


def pct(flags: Sequence[bool]) -> str:
    return f"{sum(flags) / len(flags):.0%}" if flags else "-"


def counts(items: Sequence[int], n: int) -> list[int]:
    return [sum(i == c for i in items) for c in range(n)]


def report(kind: str, races: list[Race], n: int, wire: bool) -> str:
    offsets = sorted({r.offset_ms for r in races})
    views = [SEND, WIRE] if wire else [SEND]
    rows = []
    for offset in offsets:
        group = [r for r in races if r.offset_ms == offset]
        rows.append([f"{offset:g}", len(group), p50_p99([r.spread(SEND) for r in group], 1e-6, 2)])
        rows[-1] += [p50_p99([r.stamp_spread for r in group], 1e-6, 2)]
        rows[-1] += [pct([r.in_order(v) for r in group if v == SEND or r.on_wire]) for v in views]
    header = ["offset ms", "races", "send spread", "stamp spread", "stamp order = send"]
    lines = [
        f"## {kind}, ms, median / p99",
        "",
        markdown_table(header + ["= wire"][: len(views) - 1], rows),
    ]
    rows = []
    for low, high in itertools.pairwise([*GAP_EDGES_US, 10**9]):
        rows.append([f"{low}–{high} µs" if high < 10**9 else f"{low} µs or more"])
        for view in views:
            apart = [
                ok
                for r in races
                if view == SEND or r.on_wire
                for d, ok in r.pairs(view)
                if low * 1000 <= d < high * 1000
            ]
            rows[-1] += [len(apart), pct(apart)]
    header = ["apart", "pairs sent", "stamped in send order", "pairs on the wire", "in wire order"]
    lines += ["", "Pairs of grabs by how far apart they were sent, and reached the machine:", ""]
    lines += [markdown_table(header[: 1 + 2 * len(views)], rows)]
    zero = [r for r in races if r.offset_ms == 0]
    if not zero:
        return "\n".join(lines)
    ratio = statistics.median(r.stamp_spread for r in zero) / statistics.median(
        r.spread(SEND) for r in zero
    )
    gaps = [[b.stamp_ns - a.stamp_ns for a, b in itertools.pairwise(r.by_stamp())] for r in zero]
    lines += [
        "",
        f"Offset 0 ({len(zero)} races): stamp spread / send spread, medians, {ratio:.2f}x; gaps "
        f"between successive stamps, medians, µs: "
        + ", ".join(f"{statistics.median(g) / 1000:,.0f}" for g in zip(*gaps, strict=True)),
    ]
    wired = [r for r in zero if r.on_wire]
    if wired:
        stamped = counts([r.by_stamp()[0].contender for r in wired], n)
        arrived = counts([r.by(WIRE)[0].contender for r in wired], n)
        lines.append(
            f"Connection stamped first {stamped}, first on the wire {arrived} "
            f"({len(wired)} races): p = {chi_square_p(stamped, arrived):.3g}"
        )
    if kind == BARE:
        return "\n".join(lines)
    seat_p = chi_square_p(seats := counts([r.winner.seat for r in zero], n))
    conn_p = chi_square_p(conns := counts([r.winner.contender for r in zero], n))
    ties = [sum(g.tied for g in r.grabs) for r in zero if any(g.tied for g in r.grabs)]
    winner = [(r.winner.answered_ns - r.winner.sent_ns) / 1e6 for r in zero]
    last = [
        (max(g.answered_ns for g in r.grabs) - min(g.sent_ns for g in r.grabs)) / 1e6 for r in zero
    ]
    later = {
        o: pct([r.in_order(SEND) for r in races if r.offset_ms == o]) for o in offsets if o >= 1
    }
    met = bool(later) and all(float(v[:-1]) >= 95 for v in later.values())
    bias = f"{min(seat_p, conn_p) > 0.01}" if len(zero) >= 600 else "not tested (600 races needed)"
    lines += [
        f"Wins: seats {seats}, p = {seat_p:.3g}; connections {conns}, p = {conn_p:.3g}",
        f"Decided by a draw (JS-4.2a): {len(ties)}"
        + (
            f", contenders per tie median {statistics.median(ties):g}, max {max(ties)}"
            if ties
            else ""
        ),
        f"The winner's answer from its send, ms: {p50_p99(winner, 1, 2)}; the race's last "
        f"answer from its first send: {p50_p99(last, 1, 2)}",
        "",
        f"Targets: stamp order = send order ≥ 95% at ≥ 1 ms: {met} {later}; no seat or connection "
        f"bias (p > 0.01): {bias}; stamp spread ≤ 2x send spread: {ratio <= 2}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = arguments(__doc__)
    parser.add_argument("-n", "--clients", type=int, default=6, help="contenders, 2 to 8")
    parser.add_argument("--races", type=int, default=600, help="races at offset 0")
    parser.add_argument("--races-per-offset", type=int, default=100)
    parser.add_argument("--offsets", default="0,0.25,0.5,1,2,5", help="ms, comma-separated")
    parser.add_argument("--via", choices=(ACT, PLAY), default=ACT)
    parser.add_argument("--watchers", type=int, default=4, help="spectators besides the seats")
    parser.add_argument("--warmup", type=int, default=20, help="races run first, not counted")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--bare", action="store_true", help="race the bare stamping server")
    parser.add_argument("--with-bare", type=int, default=0, metavar="B", help="both, B at a time")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    if not 2 <= args.clients <= 8 or "0" not in args.offsets.split(","):
        parser.error("--clients must be 2 to 8 and --offsets must hold 0")
    races, wire, fifo = run(args)
    print(
        f"{machine_line()}\n{args.clients} contenders via {args.via} "
        f"({'SCHED_FIFO' if fifo else 'spinning'}), store {args.store}, {args.watchers} "
        f"spectators; wire timestamps {'on' if wire else 'off'}"
    )
    for kind, counted in races.items():
        print("\n" + report(kind, counted, args.clients, wire))


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve-bare"]:
        asyncio.run(serve_bare())
    else:
        main()
