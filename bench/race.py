"""Grab races: does the server's receive order follow the order in which grabs were sent?

Run ``python bench/race.py --help`` for the options. Everything runs on this machine, over
loopback:

- a server in a process of its own (``python -m server serve``), on a fresh store: a
  temporary SQLite file, or a PostgreSQL schema made for the run and dropped after it;
- N contenders (2 to 8), each a process of its own with its own ``grpc.aio`` channel
  (one connection) and event loop; contender ``c`` is started and connected c-th;
- one spectator process holding ``--watchers`` Watch streams per match without a token,
  in addition to the stream each seated contender keeps on its own match;
- this process, the coordinator: it creates the matches, reveals, and gives the start
  signal; it never grabs.

One race per match. The coordinator creates an N-seat Jungle Speed match whose
prearranged deal puts an inward-arrows card on top of seat 0's pile, with the turn timer
off; each contender joins the seat it is given on its own connection and watches the
match as that player. The coordinator reveals for seat 0: an inward-arrows race, in which
every seat may grab and the first grab received wins (JS-6.1), the others being late
(JS-5.3). Once every stream has shown the reveal, each contender in turn, in a fresh
order, makes one call of its own on its connection (so the last to have used its
connection before the race is not always the last to join, the highest seat, whose send
was then about 20 µs quicker); then the coordinator sends each contender a
common start time (``time.monotonic_ns()`` plus ``--margin-ms``) and its own offset. How
a contender waits for its send time is ``--sender``: with ``fifo`` (the default where the
run may use real-time scheduling) it sleeps to that exact time under SCHED_FIFO with no
timer slack, so the contenders wake in the order they armed their timers, the random
order the start signal reached them, and each runs the moment it wakes; with ``spin`` it
sleeps until just before its send time and busy-waits the last ``--spin-us``, and on two
cores whichever contender the scheduler happens to be running then sends first, which
is not even between processes. Then it notes ``time.monotonic_ns()`` (its send time) and
sends its grab; after one turn of its event
loop, by which time gRPC's core has the request, it notes the time again (handed). Its
answer holds its grab's receive stamp.

The path a grab is raced on is ``--via``. With ``act`` (the default) a grab is an Act call
of its own, which ``totem serve`` stamps when gRPC hands the new call to the event loop
(server/stamps.py); grpcio's asyncio server keeps one call request outstanding, so calls
that arrive together reach Python one at a time. With ``play`` a grab is a PlayRequest
written on a Play stream its contender opened when it was armed, just before its call of
its own: that call follows the stream's headers on the same connection and a server's
calls reach Python in the order they arrive, so once it is answered the stream's handler
is waiting for a message, and the grab is stamped as its message is read, with no call
to set up. Before that call, as the clients do, the contender sends a ready request on
the new stream and waits for its answer, so that the grab is not the stream's first
message (which gRPC hands over sooner). Before its grab, each contender draws what it
does last (``BEFORE``): its call of its own only, or that call and then an empty command
sent the way the grab will be, which totem serve refuses and the bare server stamps;
which of the two it did must not change who wins. The send time is noted just before
the write is handed to gRPC, and handed
after one turn of the loop, as for Act; the answer is the stream's PlayResponse (a
refusal stops the run, as a failed Act does), and the stream is ended once every grab
of the race is stored.

Where the run may open a packet socket (Linux, CAP_NET_RAW; ``--wire``), the coordinator
also records when each grab's request was written to the loopback interface: the kernel
timestamps every TCP segment sent to the server's port (see bench/wire.py), and a grab's
wire time is the first segment of its connection, between its send time and its answer,
large enough to hold a request. That is the order in which the requests reached the
server's machine, free of the contenders' own scheduling: on two cores a contender can
lose its CPU between noting its send time and writing, so send order and arrival order
differ for sends less than about a millisecond apart.

Seats rotate: in the k-th race at an offset, contender c sits in seat (c + k) mod N, so
every contender holds every seat equally often and a bias of seats can be told from a
bias of connections. At a non-zero offset d the contenders send at start + r*d, their
ranks r a fresh random permutation for each race (``--seed``). The races of all offsets
are interleaved in a random order, and the start signal goes to the contenders in a fresh
random order each time.

Processes on one machine share CLOCK_MONOTONIC, and the server's stamps carry its
``time.monotonic_ns()`` (ReceiveStamp.monotonic_ns), so send times and stamps are on one
clock; wire times are CLOCK_REALTIME, compared with the stamps' ``received_at``. Per race:

- send spread: last send minus first send; wire spread: the same on the wire; stamp
  spread: last stamp minus first stamp;
- first send (wire) to first stamp: how long after the first send (the first request on
  the wire) the first grab was stamped; send to wire: each grab's own;
- stamp order = send order: the contenders sorted by stamp ``sequence`` are in the order
  of their send times (the whole order, all N); the same against the wire order;
- first sender won: the earliest sender's grab won (had the smallest ``sequence``); first
  on the wire won: the same for the first request on the wire;
- pairs in send order: of the N(N-1)/2 pairs of grabs, the share stamped in send order;
  the same pairs are also grouped by how far apart they were sent, and on the wire;
- gaps between successive stamps: first to second stamp, second to third, and so on
  (medians at offset 0), where the stamp spread goes.

At offset 0 the wins per seat and per contender (connection) are tested against equal
shares with Pearson's chi-square test (N-1 degrees of freedom; the p-value from the
regularized upper incomplete gamma function, computed here). Beside them: how often each
seat and connection arrived first on the wire, and the winner's place in the arrival
order (a server that decides by arrival gives the first arrival the win; one that ignores
arrival gives each place 1/N). For both servers, the bare one included: which
connection's grab was stamped first, against which arrived first on the wire (what the
server, gRPC and the kernel add between the wire and the stamp); the same apart for
exact ties (the first two grabs less than 1 µs apart on the wire) and for the other
races.

A baseline, ``--bare``: the same races against a server that does nothing but stamp
(bench/race_bare.py), a ``grpc.aio`` server in a process of its own with the real
server's gRPC listener setting, switch interval, channel options and arrival
interceptor, and the grab's two paths, answered with the stamp and nothing else: an Act
call stamped by the same interceptor, and a Play stream whose messages are stamped as
they are read, neither request decoded. The contenders are the same processes with the
same sender, start signal, margin, spin, offsets and schedule, each on a connection of
its own, and send a request of the grab's size on the same path (``--via``): only the
server differs. With ``play`` they are armed against it too, one at a time in the same
fresh order, to open their race's stream, their call of its own being an Act to the bare
server. Its stamp spread is the floor that gRPC and Python set with this rig on this
machine. It has no matches, so no joins, seat streams or spectators (``--watchers`` does
not apply), and nothing is won: first sender won, wins per seat and per connection,
their bias targets and the winner's place on the wire are left out; spreads, orders,
gaps and wire times are reported as for ``totem serve``. ``--with-bare BLOCK`` runs both
in one invocation, in turn, BLOCK races on the bare server then the same BLOCK races on
``totem serve``, and compares them.

Targets: stamp order = send order in at least 95% of the races at every offset
of 1 ms or more; chi-square p > 0.01 for seats and for connections over at least 600
races at offset 0; median stamp spread at most twice the median send spread at offset 0.
The same two figures against the wire are reported beside them, as diagnosis.
Figures go to docs/performance.md; tests never assert a duration.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import itertools
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import platform
import random
import re
import secrets
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from race_bare import PATH as BARE_PATH
from race_bare import PLAY_PATH as BARE_PLAY_PATH
from race_bare import STAMP as BARE_STAMP
from wire import Segment, WireTap, local_ports

from bench.harness import (
    ORGANISER,
    ROOT,
    STEP_TIMEOUT,
    Server,
    add_server_root,
    add_store,
    busy_ticks,
    chi_square_against,
    chi_square_uniform,
    one_against_rest,
    percentile,
    process_ticks,
    server_root,
)

DEFAULT_OFFSETS = "0,0.25,0.5,1,2,5"
#: The deck: 72 symbol cards and one inward-arrows card, id 72 (see jungle_speed.proto).
INWARD_ARROWS = 72
DECK_SIZE = 73
#: The smallest TCP payload taken for a request on the wire.
MIN_REQUEST_BYTES = 40
#: How long after its last send a race against the bare server is read (its answers are
#: left in the pipes until then, so that reading them does not compete with stamping).
BARE_SETTLE_NS = 20_000_000
#: Pairs of grabs grouped by how far apart they were sent, in microseconds.
GAP_EDGES_US = (0, 1, 5, 20, 50, 100, 250, 500, 1000, 2000, 5000)


# ---- what a race records ------------------------------------------------------------------


@dataclass
class Grab:
    """One contender's grab in one race. ``*_ns`` times are CLOCK_MONOTONIC of this
    machine, ``*_wall_ns`` and ``received_at_ns``, ``recorded_at_ns``, ``wire_ns`` its
    CLOCK_REALTIME; ``wire_ns`` is 0 when the request was not seen on the wire."""

    contender: int
    seat: int
    rank: int
    target_ns: int
    sent_ns: int
    sent_wall_ns: int
    handed_ns: int
    answered_ns: int
    answered_wall_ns: int
    wire_ns: int
    wire_bytes: int
    sequence: int
    stamp_ns: int
    received_at_ns: int
    seen_version: int
    won: bool
    event_version: int
    recorded_at_ns: int
    started_late: bool
    #: The CPU the contender's thread ran on as it handed the request to gRPC; -1 unknown.
    cpu: int = -1
    #: The contender's last request before its grab (``BEFORE``).
    before: str = "call"
    #: The grab was a contender of a tie, its winner drawn (JS-4.2a).
    tied: bool = False


#: How a race's grabs are ordered before the server: by send time, or by the time the
#: request was written to the loopback interface.
SEND, WIRE = "send", "wire"
#: Which server a race ran against: ``totem serve``, or the bare one (bench/race_bare.py).
SERVER, BARE = "server", "bare"
#: How a grab is sent (``--via``): an Act call of its own, or a message on a Play stream
#: the contender opened when it was armed.
ACT, PLAY = "act", "play"
#: The last request a contender makes before its grab, drawn per contender and race: a
#: call of its own on the connection (GetServerKey; the bare server's stamping Act), or
#: that call and then a command sent the way the grab will be (an Act call, or a message
#: on the race's Play stream) and answered without effect: totem serve refuses it (an
#: empty command, INVALID_ARGUMENT, nothing written), the bare server stamps it. What a
#: contender did just before must not change who wins.
BEFORE_CALL, BEFORE_COMMAND = "call", "command"
BEFORE = (BEFORE_CALL, BEFORE_COMMAND)


def _when(grab: Grab, view: str) -> int:
    return grab.sent_ns if view == SEND else grab.wire_ns


@dataclass
class Race:
    index: int
    offset_ms: float
    match_id: str
    reveal_version: int
    start_ns: int
    grabs: list[Grab] = field(default_factory=list)

    @property
    def seen_on_wire(self) -> bool:
        return all(g.wire_ns for g in self.grabs)

    def by(self, view: str) -> list[Grab]:
        return sorted(self.grabs, key=lambda g: _when(g, view))

    def by_stamp(self) -> list[Grab]:
        return sorted(self.grabs, key=lambda g: g.sequence)

    def spread_ns(self, view: str) -> int:
        times = [_when(g, view) for g in self.grabs]
        return max(times) - min(times)

    @property
    def stamp_spread_ns(self) -> int:
        return max(g.stamp_ns for g in self.grabs) - min(g.stamp_ns for g in self.grabs)

    @property
    def first_stamp_after_first_send_ns(self) -> int:
        return min(g.stamp_ns for g in self.grabs) - min(g.sent_ns for g in self.grabs)

    @property
    def first_stamp_after_first_wire_ns(self) -> int:
        return min(g.received_at_ns for g in self.grabs) - min(g.wire_ns for g in self.grabs)

    def order_matches(self, view: str) -> bool:
        """The whole stamp order is the order of the grabs in ``view``."""
        return [g.contender for g in self.by(view)] == [g.contender for g in self.by_stamp()]

    def first_won(self, view: str) -> bool:
        return self.by(view)[0].won

    @property
    def winner(self) -> Grab:
        return next(g for g in self.grabs if g.won)

    @property
    def tied(self) -> bool:
        """The winner was drawn among grabs received within the tie window (JS-4.2a)."""
        return any(g.tied for g in self.grabs)

    @property
    def winner_stamped_first(self) -> bool:
        """The winning grab has the smallest receive ``sequence`` (JS-4.2), or was drawn
        among the contenders of a tie, the first received among them (JS-4.2a)."""
        first = min(g.sequence for g in self.grabs)
        if self.tied:
            return any(g.tied and g.sequence == first for g in self.grabs)
        return self.winner.sequence == first

    def pairs(self, view: str) -> Iterator[tuple[int, bool]]:
        """Each pair of grabs: how far apart they were in ``view`` (ns), and whether they
        were stamped in that order."""
        for a, b in itertools.combinations(self.grabs, 2):
            first, second = (a, b) if _when(a, view) <= _when(b, view) else (b, a)
            yield _when(second, view) - _when(first, view), first.sequence < second.sequence


# ---- child processes ----------------------------------------------------------------------


async def receive(conn: multiprocessing.connection.Connection, seconds: float) -> Any:
    """The next message on a pipe, awaited without blocking the event loop."""
    if not conn.poll():
        loop = asyncio.get_running_loop()
        ready = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(conn.fileno(), wake)
        try:
            await asyncio.wait_for(ready, seconds)
        finally:
            loop.remove_reader(conn.fileno())
    return conn.recv()


class Follower:
    """A Watch stream read to the end in a task, with the highest version seen so far."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.seen = 0
        self.error: str | None = None
        self.changed = asyncio.Condition()
        self.task = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        try:
            async for event in self.call:
                async with self.changed:
                    self.seen = event.version
                    self.changed.notify_all()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a stream that fails is reported by ``reach``
            self.error = repr(error)
            async with self.changed:
                self.changed.notify_all()

    async def reach(self, version: int) -> None:
        async with self.changed:
            await asyncio.wait_for(
                self.changed.wait_for(lambda: self.seen >= version or self.error is not None),
                STEP_TIMEOUT,
            )
        if self.seen < version:
            raise RuntimeError(f"stream ended at version {self.seen}: {self.error}")

    async def close(self) -> None:
        self.call.cancel()
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def contender_main(
    index: int,
    addresses: dict[str, str],
    conn: multiprocessing.connection.Connection,
    spin_ns: int,
    sender: str,
    via: str,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator stops us
    asyncio.run(_contender(index, addresses, conn, spin_ns, sender, via))


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class FifoWake:
    """Wakes this thread at an absolute CLOCK_MONOTONIC time under SCHED_FIFO.

    With spinning senders, which contender sends first is whichever the scheduler happens
    to have on a core at the start time, and on two cores that is not even between
    processes. Here every contender sleeps to the same absolute time with no timer slack:
    the kernel's timer queue keeps timers of equal expiry in the order they were armed,
    which is the (random) order the contenders got the start signal, and a real-time
    task runs as soon as it wakes, before any ordinary one. Only the sending thread is
    raised, and only from arming until its request is handed to gRPC.
    """

    PR_SET_TIMERSLACK = 29
    TIMER_ABSTIME = 1

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.prctl(self.PR_SET_TIMERSLACK, 1, 0, 0, 0)
        self._clock = time.CLOCK_MONOTONIC

    def raise_(self) -> None:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))

    def lower(self) -> None:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    def sleep_until(self, target_ns: int) -> None:
        spec = _Timespec(target_ns // 1_000_000_000, target_ns % 1_000_000_000)
        while self._libc.clock_nanosleep(self._clock, self.TIMER_ABSTIME, ctypes.byref(spec), None):
            pass  # interrupted by a signal: sleep again to the same time


_LIBC = ctypes.CDLL(None)


def current_cpu() -> int:
    """The CPU this thread runs on (glibc's ``sched_getcpu``)."""
    return int(_LIBC.sched_getcpu())


def fifo_allowed() -> bool:
    """Whether this process may raise a thread to SCHED_FIFO (root or CAP_SYS_NICE)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except (OSError, AttributeError):
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


async def _contender(
    index: int,
    addresses: dict[str, str],
    conn: multiprocessing.connection.Connection,
    spin_ns: int,
    sender: str,
    via: str,
) -> None:
    """A contender: a connection of its own to each server in ``addresses`` (SERVER,
    BARE or both), each opened in turn, and grabs on whichever a "go" names: an Act call,
    or (``via`` PLAY) a message on the Play stream it opened on that server when armed."""
    import grpc

    from totem.v1 import jungle_speed_pb2 as js
    from totem.v1 import match_service_pb2 as ms
    from totem.v1 import match_service_pb2_grpc

    channels = {kind: grpc.aio.insecure_channel(address) for kind, address in addresses.items()}
    ports: list[int] = []
    for kind, channel in channels.items():
        await asyncio.wait_for(channel.channel_ready(), STEP_TIMEOUT)
        with contextlib.suppress(OSError):
            ports += local_ports(int(addresses[kind].rsplit(":", 1)[1]))
    acts: dict[str, Any] = {}
    plays: dict[str, Any] = {}
    stub: Any = None
    if SERVER in channels:
        stub = match_service_pb2_grpc.MatchServiceStub(channels[SERVER])
        acts[SERVER] = stub.Act
        plays[SERVER] = stub.Play
    if BARE in channels:
        # The generated stub's Act and Play but for the answers, the bare server's packed
        # stamps.
        acts[BARE] = channels[BARE].unary_unary(
            BARE_PATH,
            request_serializer=ms.ActRequest.SerializeToString,
            response_deserializer=None,
            _registered_method=True,
        )
        plays[BARE] = channels[BARE].stream_stream(
            BARE_PLAY_PATH,
            request_serializer=ms.PlayRequest.SerializeToString,
            response_deserializer=None,
            _registered_method=True,
        )
    conn.send(("ready", index, ports))
    match_id, seat, token = "", 0, ""
    follower: Follower | None = None
    before = BEFORE_CALL  # by Act against the bare server a contender is never armed
    #: With PLAY, the stream opened when armed for the next race, by server.
    streams: dict[str, Any] = {}
    grab = js.JungleSpeedCommand(grab=js.JungleSpeedGrab())
    # Against the bare server, a request of the same size as a real grab's: a match id, a
    # seen version and a bearer token as long as the real ones (the server reads none).
    bare_request = ms.ActRequest(match_id=str(uuid.uuid4()), seen_version=7, jungle_speed=grab)
    bare_metadata = (("authorization", f"Bearer {secrets.token_urlsafe(32)}"),)
    fifo = FifoWake() if sender == "fifo" else None
    try:
        while True:
            message = await receive(conn, STEP_TIMEOUT * 4)
            kind = message[0]
            try:
                if kind == "stop":
                    return
                if kind == "join":
                    _, match_id, seat = message
                    joined = await stub.JoinMatch(
                        ms.JoinMatchRequest(
                            match_id=match_id, name=f"contender {index}", seat=seat
                        ),
                        timeout=STEP_TIMEOUT,
                    )
                    token = joined.player_token
                    follower = Follower(
                        stub.Watch(
                            ms.WatchRequest(match_id=match_id),
                            metadata=(("authorization", f"Bearer {token}"),),
                        )
                    )
                    await follower.reach(1)
                    conn.send(("joined", index, token))
                elif kind == "arm":
                    _, on, reveal_version, before = message
                    if on == SERVER:
                        assert follower is not None
                        await follower.reach(reveal_version)
                        metadata = (("authorization", f"Bearer {token}"),)
                    else:
                        metadata = bare_metadata
                    if via == PLAY:
                        # The grab's stream, opened now so that the grab is a message on
                        # an open stream: its call's headers go out before the call below,
                        # on the same connection, and gRPC's core hands a server's calls
                        # to Python in the order they arrive, so once that call is
                        # answered the stream's handler is running, waiting to read.
                        if on in streams:  # left open by a race that failed
                            streams.pop(on).cancel()
                        stream = plays[on](metadata=metadata, timeout=STEP_TIMEOUT)
                        streams[on] = stream
                        await asyncio.wait_for(stream.wait_for_connection(), STEP_TIMEOUT)
                        # As the clients do: a ready request first, so that the grab is
                        # not the stream's first message (which gRPC hands over sooner;
                        # the bare server stamps it like any other).
                        await stream_round_trip(stream, ms.PlayRequest(ready=ms.PlayReady()))
                    # A call of its own on the connection: the contenders are armed one at
                    # a time in a fresh order, so the last to have used its connection is
                    # not always the last to join (the highest seat), whose send would
                    # then be the quickest. The bare server's is a stamping Act.
                    if on == SERVER:
                        await stub.GetServerKey(ms.GetServerKeyRequest(), timeout=STEP_TIMEOUT)
                    else:
                        await acts[BARE](bare_request, metadata=metadata, timeout=STEP_TIMEOUT)
                    if before == BEFORE_COMMAND and on == SERVER:
                        await _refused_command(via, stub, streams.get(on), match_id, metadata)
                    elif before == BEFORE_COMMAND and via == PLAY:
                        await stream_round_trip(streams[BARE], ms.PlayRequest(act=bare_request))
                    elif before == BEFORE_COMMAND:
                        await acts[BARE](bare_request, metadata=metadata, timeout=STEP_TIMEOUT)
                    conn.send(("armed", index))
                elif kind == "go":
                    _, on, reveal_version, start_ns, offset_ns, rank, last_version = message
                    if on == BARE:
                        request, metadata = bare_request, bare_metadata
                    else:
                        assert follower is not None
                        request = ms.ActRequest(
                            match_id=match_id, seen_version=reveal_version, jungle_speed=grab
                        )
                        metadata = (("authorization", f"Bearer {token}"),)
                    if via == PLAY:
                        stream = streams[on]
                        play_request = ms.PlayRequest(act=request)
                    target = start_ns + offset_ns
                    gc.disable()
                    now = time.monotonic_ns()
                    started_late = now > target
                    if fifo is not None:
                        fifo.raise_()
                        # Blocking on purpose: nothing else may run on this loop now.
                        fifo.sleep_until(target)
                    else:
                        if target - now > spin_ns:
                            time.sleep((target - now - spin_ns) / 1e9)  # noqa: ASYNC251
                        while time.monotonic_ns() < target:
                            pass
                    sent = time.monotonic_ns()
                    sent_wall = time.time_ns()
                    if via == PLAY:
                        call = asyncio.ensure_future(stream_round_trip(stream, play_request))
                    else:
                        call = acts[on](request, metadata=metadata, timeout=STEP_TIMEOUT)
                    # One turn of the loop: the call's task (the write's, on a stream)
                    # hands the request to gRPC's core (which writes it or queues it for
                    # writing), then we run again.
                    await asyncio.sleep(0)
                    handed = time.monotonic_ns()
                    cpu = current_cpu()
                    if fifo is not None:
                        fifo.lower()
                    answer = await call
                    answered = time.monotonic_ns()
                    answered_wall = time.time_ns()
                    gc.enable()
                    timing = {
                        "contender": index,
                        "rank": rank,
                        "target_ns": target,
                        "sent_ns": sent,
                        "sent_wall_ns": sent_wall,
                        "handed_ns": handed,
                        "answered_ns": answered,
                        "answered_wall_ns": answered_wall,
                        "wire_ns": 0,
                        "wire_bytes": 0,
                        "started_late": started_late,
                        "cpu": cpu,
                        "before": before,
                    }
                    if on == BARE:
                        # No match: no seat, no winner, no event; only the stamp.
                        sequence, stamp_ns, wall_ns = BARE_STAMP.unpack(answer)
                        outcome_fields: dict[str, Any] = {
                            "seat": -1,
                            "sequence": sequence,
                            "stamp_ns": stamp_ns,
                            "received_at_ns": wall_ns,
                            "seen_version": 0,
                            "won": False,
                            "event_version": 0,
                            "recorded_at_ns": 0,
                        }
                    else:
                        assert follower is not None
                        mine, stamp, won, tied = _own_grab(
                            applied(answer) if via == PLAY else answer, seat
                        )
                        # The event that decided this grab shown on its seat's stream:
                        # the race is over for it (the stream's end competes with no
                        # grab of its batch; JS-4.2a answers a tie's grabs together).
                        await follower.reach(max(last_version, mine.version))
                        await follower.close()
                        follower = None
                        if via == PLAY:
                            # Every grab is stored: the stream's end competes with none.
                            await close_play(streams.pop(SERVER))
                        outcome_fields = {
                            "seat": seat,
                            "sequence": stamp.sequence,
                            "stamp_ns": stamp.monotonic_ns,
                            "received_at_ns": stamp.received_at.ToNanoseconds(),
                            "seen_version": stamp.seen_version,
                            "won": won,
                            "tied": tied,
                            "event_version": mine.version,
                            "recorded_at_ns": mine.recorded_at.ToNanoseconds(),
                        }
                    conn.send(("done", index, asdict(Grab(**timing, **outcome_fields))))
                    if on == SERVER:
                        gc.collect()  # the stream has shown every grab: the race is over
                elif kind == "collect":
                    # After a race against the bare server, once every contender has its
                    # answer: collecting at once (about 2 ms of CPU a contender) would
                    # compete with the stamping of the grabs still on their way. The
                    # same for ending the race's Play stream.
                    if BARE in streams:
                        await close_play(streams.pop(BARE))
                    gc.collect()
                    conn.send(("collected", index))
                else:
                    raise ValueError(f"unknown message {kind!r}")
            except Exception as error:
                gc.enable()
                conn.send(("error", index, f"{kind}: {error!r}"))
    finally:
        if follower is not None:
            await follower.close()
        for stream in streams.values():
            stream.cancel()
        for channel in channels.values():
            await channel.close()


async def _refused_command(via: str, stub: Any, stream: Any, match_id: str, metadata: Any) -> None:
    """An empty command, sent as the grab will be: the server refuses it and writes
    nothing (``BEFORE_COMMAND``)."""
    import grpc

    from totem.v1 import match_service_pb2 as ms

    if via == PLAY:
        answer = await stream_round_trip(
            stream, ms.PlayRequest(act=ms.ActRequest(match_id=match_id))
        )
        if not answer.HasField("refused"):
            raise RuntimeError(f"an empty command was not refused: {answer}")
        return
    try:
        await stub.Act(ms.ActRequest(match_id=match_id), metadata=metadata, timeout=STEP_TIMEOUT)
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.INVALID_ARGUMENT:
            raise
    else:
        raise RuntimeError("an empty command was not refused")


async def stream_round_trip(stream: Any, request: Any) -> Any:
    """One message written on an open stream, and the answer it gets: a PlayResponse from
    ``totem serve``, a packed stamp from the bare server, the bytes from an echo. A stream
    that ends instead of answering raises, as an Act call that fails does. No
    ``wait_for`` (a task of its own) around the read: callers time it."""
    import grpc

    await stream.write(request)
    answer = await stream.read()
    if answer is grpc.aio.EOF:
        raise RuntimeError(f"the Play stream ended: {await stream.code()} {await stream.details()}")
    return answer


def applied(response: Any) -> Any:
    """The ActResponse of an applied PlayResponse; a refusal raises, as Act's would."""
    outcome = response.WhichOneof("outcome")
    if outcome == "applied":
        return response.applied
    if outcome == "refused":
        import grpc

        refusal = response.refused
        code = next((c for c in grpc.StatusCode if c.value[0] == refusal.code), refusal.code)
        raise RuntimeError(f"refused on the Play stream: {code} {refusal.message}")
    raise RuntimeError(f"a PlayResponse with no outcome: {response}")


async def close_play(stream: Any) -> None:
    """End a Play stream as a player would: no more requests, then its status."""
    import grpc

    await stream.done_writing()
    rest = await asyncio.wait_for(stream.read(), STEP_TIMEOUT)
    code = await asyncio.wait_for(stream.code(), STEP_TIMEOUT)
    if rest is not grpc.aio.EOF or code != grpc.StatusCode.OK:
        raise RuntimeError(f"the Play stream ended badly: {code} {await stream.details()}")


def _own_grab(answer: Any, seat: int) -> tuple[Any, Any, bool, bool]:
    """The event of an ActResponse that records this seat's grab, the grab's stamp,
    whether it won, and whether it was a contender of a tie (JS-4.2a): the winner drawn
    among the grabs received within the window, or one that lost the draw."""
    for event in answer.events:
        if event.WhichOneof("event") != "jungle_speed":
            continue
        inner = event.jungle_speed
        kind = inner.WhichOneof("event")
        if kind == "arrows_won":
            won = inner.arrows_won
            for contender in won.tie.contenders:
                if contender.seat == seat:
                    return event, contender.stamp, won.winner == seat, True
            if won.winner == seat:
                return event, won.stamp, True, False
        if kind == "late_grab" and inner.late_grab.seat == seat:
            return event, inner.late_grab.stamp, False, False
    kinds = [e.jungle_speed.WhichOneof("event") for e in answer.events]
    raise RuntimeError(f"seat {seat}: no ArrowsWon or LateGrab of its own in {kinds}")


def spectators_main(address: str, conn: multiprocessing.connection.Connection, count: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_spectators(address, conn, count))


async def _spectators(
    address: str, conn: multiprocessing.connection.Connection, count: int
) -> None:
    import grpc

    from totem.v1 import match_service_pb2 as ms
    from totem.v1 import match_service_pb2_grpc

    channel = grpc.aio.insecure_channel(address)
    await asyncio.wait_for(channel.channel_ready(), STEP_TIMEOUT)
    stub = match_service_pb2_grpc.MatchServiceStub(channel)
    conn.send(("ready", -1))
    followers: list[Follower] = []
    try:
        while True:
            message = await receive(conn, STEP_TIMEOUT * 4)
            kind = message[0]
            try:
                if kind == "stop":
                    return
                if kind == "watch":
                    request = ms.WatchRequest(match_id=message[1])
                    followers = [Follower(stub.Watch(request)) for _ in range(count)]
                    await asyncio.gather(*(f.reach(1) for f in followers))
                    conn.send(("watching", -1))
                elif kind == "arm":
                    await asyncio.gather(*(f.reach(message[1]) for f in followers))
                    conn.send(("armed", -1))
                elif kind == "until":
                    await asyncio.gather(*(f.reach(message[1]) for f in followers))
                    for follower in followers:
                        await follower.close()
                    followers = []
                    conn.send(("done", -1, None))
                else:
                    raise ValueError(f"unknown message {kind!r}")
            except Exception as error:
                conn.send(("error", -1, f"{kind}: {error!r}"))
    finally:
        for follower in followers:
            await follower.close()
        await channel.close()


# ---- the machine --------------------------------------------------------------------------


class BareServer(Server):
    """bench/race_bare.py in a process of its own: a ``grpc.aio`` server that only stamps
    each call's arrival as ``totem serve`` does (see that file for what is kept). A
    process started like the real server's, with its environment (``--server-env``) and
    priority (``--server-nice``), so that the server is the only difference. It always
    runs from this tree: it has no store and imports nothing of the server but its
    stamping interceptor."""

    READY = re.compile(r"bare gRPC serving on [^\s:]+:(\d+)")

    def __init__(
        self,
        workdir: Path,
        extra_env: dict[str, str] | None = None,
        nice: int = 0,
    ) -> None:
        self.store, self.dsn, self.schema = "none", "", None
        self._start(
            [sys.executable, str(Path(__file__).with_name("race_bare.py"))],
            ROOT,
            dict(os.environ) | (extra_env or {}),
            workdir / "bare.log",
            nice,
        )


# ---- the coordinator ----------------------------------------------------------------------


class Children:
    """The contender and spectator processes, each with its end of a pipe. Each contender
    connects to every server of ``addresses``; the spectators watch the real server's
    matches (the bare server has none)."""

    def __init__(
        self,
        addresses: dict[str, str],
        contenders: int,
        watchers: int,
        spin_ns: int,
        sender: str,
        via: str = ACT,
    ) -> None:
        context = multiprocessing.get_context("spawn")  # no gRPC state inherited by fork
        self.pipes: dict[int, multiprocessing.connection.Connection] = {}
        self.processes: list[Any] = []
        #: Each contender's local ports towards the server: its connection.
        self.ports: dict[int, list[int]] = {}
        for index in range(contenders):
            ours, theirs = context.Pipe()
            process = context.Process(
                target=contender_main,
                args=(index, addresses, theirs, spin_ns, sender, via),
                name=f"contender {index}",
                daemon=True,
            )
            process.start()
            # Started and connected one after the other: contender c connects c-th.
            self.pipes[index] = ours
            self.processes.append(process)
            self.ports.update(self.gather([index]))
        if watchers and SERVER in addresses:
            ours, theirs = context.Pipe()
            process = context.Process(
                target=spectators_main, args=(addresses[SERVER], theirs, watchers), daemon=True
            )
            process.start()
            self.pipes[-1] = ours
            self.processes.append(process)
            self.gather([-1])

    def send(self, index: int, *message: Any) -> None:
        self.pipes[index].send(message)

    def gather(self, indexes: Sequence[int]) -> dict[int, Any]:
        """One reply from each of ``indexes``: index -> the reply's payload."""
        waiting = {self.pipes[i]: i for i in indexes}
        replies: dict[int, Any] = {}
        deadline = time.monotonic() + STEP_TIMEOUT * 2
        while waiting:
            ready = multiprocessing.connection.wait(
                list(waiting), max(0.0, deadline - time.monotonic())
            )
            if not ready:
                raise TimeoutError(f"no reply from {sorted(waiting.values())}")
            for conn in ready:
                assert isinstance(conn, multiprocessing.connection.Connection)
                message = conn.recv()
                if message[0] == "error":
                    raise RuntimeError(f"process {message[1]}: {message[2]}")
                replies[waiting.pop(conn)] = message[2] if len(message) > 2 else None
        return replies

    def stop(self) -> None:
        for conn in self.pipes.values():
            with contextlib.suppress(OSError):
                conn.send(("stop",))
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.terminate()
                process.join(5)


def find_on_wire(grabs: list[Grab], ports: dict[int, list[int]], segments: list[Segment]) -> None:
    """Set each grab's ``wire_ns``: the first segment its connection sent between its send
    time and its answer that is large enough to hold a request (HEADERS and DATA frames;
    HTTP/2 control frames are 9 to 17 bytes)."""
    for grab in grabs:
        mine = ports.get(grab.contender, [])
        found = [
            s
            for s in segments
            if s.source_port in mine
            and s.payload >= MIN_REQUEST_BYTES
            and grab.sent_wall_ns - 1000 <= s.wall_ns <= grab.answered_wall_ns
        ]
        if found:
            first = min(found, key=lambda s: s.wall_ns)
            grab.wire_ns, grab.wire_bytes = first.wall_ns, first.payload


def schedule(
    races: int, per_offset: int, offsets: Sequence[float], rng: random.Random
) -> list[float]:
    """The offset of each race: ``races`` at 0 and ``per_offset`` at each other offset,
    interleaved in a random order."""
    plan = [o for o in offsets for _ in range(races if o == 0 else per_offset)]
    rng.shuffle(plan)
    return plan


def run_order(total: int, warmup: int, kinds: Sequence[str], block: int) -> list[tuple[str, int]]:
    """Which race of the plan runs when, and on which server: with one server, the plan in
    its order; with two, blocks of ``block`` counted races run by each server in turn (the
    first of ``kinds`` first), each server's warmup before its first block."""
    counted = list(range(warmup, total))
    size = block if block > 0 else max(len(counted), 1)
    steps: list[tuple[str, int]] = []
    for start in range(0, max(len(counted), 1), size):
        for kind in kinds:
            if start == 0:
                steps += [(kind, i) for i in range(warmup)]
            steps += [(kind, i) for i in counted[start : start + size]]
    return steps


def run(args: argparse.Namespace) -> tuple[dict[str, list[Race]], dict[str, Any]]:
    """The counted races against each server the options name (SERVER, BARE, or both in
    alternating blocks), and the run's configuration."""
    import grpc

    from totem.v1 import common_pb2, match_service_pb2_grpc
    from totem.v1 import jungle_speed_pb2 as js
    from totem.v1 import match_service_pb2 as ms

    n = args.clients
    offsets = [float(o) for o in args.offsets.split(",")]
    rng = random.Random(args.seed)
    plan = [0.0] * args.warmup + schedule(args.races, args.races_per_offset, offsets, rng)
    # Each race's ranks and the order its start signal goes out in, drawn up front (in the
    # order the races of one server always drew them), so that both servers run the same.
    draws: list[tuple[list[int], list[int]]] = []
    for _ in plan:
        ranks = list(range(n))
        rng.shuffle(ranks)
        draws.append((ranks, rng.sample(range(n), n)))
    # Drawn from a generator of their own, so that the draws above stay as they were.
    before_rng = random.Random(args.seed + 1)
    befores = [[before_rng.choice(BEFORE) for _ in range(n)] for _ in plan]
    kinds = [BARE] if args.bare else [BARE, SERVER] if args.with_bare else [SERVER]
    steps = run_order(len(plan), args.warmup, kinds, args.with_bare)
    deal = [INWARD_ARROWS, *range(INWARD_ARROWS)]
    options = js.JungleSpeedOptions(
        max_players=n,
        turn_timeout_ms=0,
        specials=js.JungleSpeedSpecials(inward_arrows=1),
        prearranged_deal=deal,
    )
    races: dict[str, list[Race]] = {kind: [] for kind in kinds}
    rotation: dict[float, int] = {}
    sender = args.sender if args.sender != "auto" else ("fifo" if fifo_allowed() else "spin")
    watchers = args.watchers if SERVER in kinds else 0
    with tempfile.TemporaryDirectory() as tmp:
        server_env = dict(item.split("=", 1) for item in args.server_env)
        servers: dict[str, Server] = {}
        children: Children | None = None
        channel = None
        taps: list[WireTap] = []
        wire_note = "off"
        try:
            for kind in kinds:
                if kind == SERVER:
                    servers[kind] = Server(
                        args.store,
                        args.dsn,
                        Path(tmp),
                        server_root(args),
                        server_env,
                        args.server_nice,
                    )
                else:
                    servers[kind] = BareServer(Path(tmp), server_env, args.server_nice)
            addresses = {kind: f"127.0.0.1:{server.port}" for kind, server in servers.items()}
            if args.wire != "off":
                try:
                    for server in servers.values():
                        taps.append(WireTap(server.port))
                    wire_note = "on"
                except OSError as error:  # not Linux, or no CAP_NET_RAW
                    if args.wire == "on":
                        raise
                    wire_note = f"unavailable: {error}"
                    print(f"no wire timestamps ({error})", file=sys.stderr)
            children = Children(addresses, n, watchers, args.spin_us * 1000, sender, args.via)
            stub: Any = None
            if SERVER in addresses:
                channel = grpc.insecure_channel(addresses[SERVER])
                stub = match_service_pb2_grpc.MatchServiceStub(channel)
            contenders = list(range(n))
            ours = [
                os.getpid(),
                *(s.process.pid for s in servers.values()),
                *(p.pid for p in children.processes),
            ]
            load_before = os.getloadavg()
            ticks_before = busy_ticks() - process_ticks(ours)
            began = time.monotonic()
            for step, (kind, index) in enumerate(steps):
                offset = plan[index]
                ranks, signal_order = draws[index]
                taking_part = contenders
                match_id, version, last_version = "", 0, 0
                if kind == SERVER:
                    key = -1.0 if index < args.warmup else offset
                    turn = rotation.get(key, 0)
                    rotation[key] = turn + 1
                    seats = {c: (c + turn) % n for c in range(n)}
                    created = stub.CreateMatch(
                        ms.CreateMatchRequest(
                            game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=options
                        ),
                        timeout=STEP_TIMEOUT,
                        metadata=ORGANISER,
                    )
                    match_id = created.match_id
                    # Seats are taken in order (JS-1.5): each contender joins in turn.
                    tokens: dict[int, Any] = {}
                    for c in sorted(range(n), key=seats.__getitem__):
                        children.send(c, "join", match_id, seats[c])
                        tokens.update(children.gather([c]))
                    if watchers:
                        children.send(-1, "watch", match_id)
                        children.gather([-1])
                    first = next(c for c in range(n) if seats[c] == 0)
                    revealed = stub.Act(
                        ms.ActRequest(
                            match_id=match_id,
                            jungle_speed=js.JungleSpeedCommand(reveal=js.JungleSpeedReveal()),
                        ),
                        metadata=(("authorization", f"Bearer {tokens[first]}"),),
                        timeout=STEP_TIMEOUT,
                    )
                    card = revealed.events[0].jungle_speed.revealed.card
                    if card.kind != js.CARD_KIND_INWARD_ARROWS:
                        raise RuntimeError(f"the reveal showed {card}, not inward arrows")
                    version = revealed.version
                    if watchers:
                        children.send(-1, "arm", version)
                        children.gather([-1])
                    for c in signal_order:
                        children.send(c, "arm", kind, version, befores[index][c])
                        children.gather([c])
                    # An ArrowsWon follows the reveal, then a LateGrab for each grab
                    # that was not among its contenders (JS-4.2a): how many is known
                    # from the answers.
                    last_version = version + 1
                    taking_part = contenders
                elif args.via == PLAY:
                    # Against the bare server the contenders are armed only to open their
                    # race's stream, as they open it against totem serve: one at a time in
                    # the same order, each with a call of its own after it.
                    for c in signal_order:
                        children.send(c, "arm", kind, 0, befores[index][c])
                        children.gather([c])
                start_ns = time.monotonic_ns() + int(args.margin_ms * 1e6)
                offset_ns = int(offset * 1e6)
                # In a fresh order each time, so that no contender is told first by habit.
                for c in signal_order:
                    children.send(
                        c,
                        "go",
                        kind,
                        version,
                        start_ns,
                        ranks[c] * offset_ns,
                        ranks[c],
                        last_version,
                    )
                if kind == BARE:
                    # Answers come while later grabs are still being stamped: read them
                    # after the race, as a real race's replies come once it is over.
                    last_send = start_ns + (n - 1) * offset_ns
                    time.sleep(max(0, last_send + BARE_SETTLE_NS - time.monotonic_ns()) / 1e9)
                done = children.gather(taking_part)
                if kind == SERVER and watchers:
                    children.send(-1, "until", max(done[c]["event_version"] for c in contenders))
                    children.gather([-1])
                race = Race(index - args.warmup, offset, match_id, version, start_ns)
                race.grabs = [Grab(**done[c]) for c in range(n)]
                if taps:
                    segments = [s for tap in taps for s in tap.take()]
                    find_on_wire(race.grabs, children.ports, segments)
                if kind == SERVER and sum(g.won for g in race.grabs) != 1:
                    raise RuntimeError(f"race {index}: not exactly one winner")
                if kind == BARE:
                    for c in contenders:
                        children.send(c, "collect")
                    children.gather(contenders)
                if index >= args.warmup:
                    races[kind].append(race)
                if args.progress and (step + 1) % 100 == 0:
                    print(
                        f"  {step + 1}/{len(steps)} races, {time.monotonic() - began:.0f} s",
                        file=sys.stderr,
                    )
            elapsed = time.monotonic() - began
            load_after = os.getloadavg()
            others = (busy_ticks() - process_ticks(ours) - ticks_before) / os.sysconf("SC_CLK_TCK")
        finally:
            for tap in taps:
                tap.close()
            if channel is not None:
                channel.close()
            if children is not None:
                children.stop()
            for server in servers.values():
                server.stop()
    config = {
        "servers": kinds,
        "via": args.via,
        "block": args.with_bare if len(kinds) > 1 else None,
        "clients": n,
        "store": args.store,
        "watchers": args.watchers,
        "seat_streams": n,
        "races_at_0": args.races,
        "races_per_offset": args.races_per_offset,
        "offsets_ms": offsets,
        "warmup": args.warmup,
        "margin_ms": args.margin_ms,
        "spin_us": args.spin_us,
        "sender": sender,
        "seed": args.seed,
        "server_root": None if args.server_root is None else str(args.server_root),
        "server_env": args.server_env,
        "server_nice": args.server_nice,
        "wire": wire_note,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "elapsed_s": round(elapsed, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "other_processes_cores": round(others / elapsed, 2),
    }
    return races, config


def config_of(config: dict[str, Any], kind: str) -> dict[str, Any]:
    """The run's configuration as it applies to the races against one server: the bare
    server has no store and no matches, hence no seat streams and no spectators."""
    if kind == SERVER:
        return config | {"server": SERVER}
    return config | {"server": BARE, "store": None, "watchers": 0, "seat_streams": 0}


# ---- analysis and report ------------------------------------------------------------------


def _ms(values: Sequence[int]) -> dict[str, float]:
    return {"median": statistics.median(values) / 1e6, "p99": percentile(values, 0.99) / 1e6}


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else math.nan


def _order(group: list[Race], view: str, decided: bool) -> dict[str, Any]:
    """How the stamps of these races follow the order of the grabs in ``view``; who won
    only where a race was ``decided`` (not against the bare server)."""
    return {
        "spread_ms": _ms([r.spread_ns(view) for r in group]),
        "order_matches": _share([r.order_matches(view) for r in group]),
        "first_won": _share([r.first_won(view) for r in group]) if decided else None,
        "pairs_in_order": _share([ok for r in group for _, ok in r.pairs(view)]),
    }


def _stamp_gaps_us(group: list[Race]) -> list[float]:
    """The median time between successive stamps of a race, by place in the stamp order
    (first to second, second to third, ...), in µs: where the server spends the spread."""
    if not group:
        return []
    places = zip(
        *(
            [(b.stamp_ns - a.stamp_ns) / 1000 for a, b in itertools.pairwise(r.by_stamp())]
            for r in group
        ),
        strict=True,
    )
    return [statistics.median(gaps) for gaps in places]


def _spread_ratio(group: list[Race]) -> dict[str, float]:
    """Each race's stamp spread over its own send spread: median and p99 over the races."""
    ratios = [r.stamp_spread_ns / max(r.spread_ns(SEND), 1) for r in group]
    return {"median": statistics.median(ratios), "p99": percentile(ratios, 0.99)}


def _gaps(races: list[Race], view: str) -> list[dict[str, Any]]:
    """Pairs of grabs grouped by how far apart they were in ``view``."""
    pairs = [p for r in races for p in r.pairs(view)]
    edges = [e * 1000 for e in GAP_EDGES_US] + [math.inf]
    rows = []
    for low, high in itertools.pairwise(edges):
        inside = [ok for gap, ok in pairs if low <= gap < high]
        rows.append(
            {
                "from_us": low / 1000,
                "to_us": None if high == math.inf else high / 1000,
                "pairs": len(inside),
                "in_order": _share(inside),
            }
        )
    return rows


def _fairness(simultaneous: list[Race], n: int) -> dict[str, Any]:
    """Wins per seat and per connection in the races at offset 0, against equal shares
    and against who arrived first on the wire."""
    total = len(simultaneous)
    seat_wins = [sum(r.winner.seat == s for r in simultaneous) for s in range(n)]
    conn_wins = [sum(r.winner.contender == c for r in simultaneous) for c in range(n)]
    seat_chi, seat_p = chi_square_uniform(seat_wins)
    conn_chi, conn_p = chi_square_uniform(conn_wins)
    wired = [r for r in simultaneous if r.seen_on_wire]
    first_on_wire = [r.by(WIRE)[0] for r in wired]
    arrived_first = [sum(g.contender == c for g in first_on_wire) for c in range(n)]
    wired_wins = [sum(r.winner.contender == c for r in wired) for c in range(n)]
    arrival_chi, arrival_p = chi_square_uniform(arrived_first)
    given_chi, given_p = chi_square_against(wired_wins, arrived_first)
    seat_arrived_first = [sum(g.seat == s for g in first_on_wire) for s in range(n)]
    seat_wired_wins = [sum(r.winner.seat == s for r in wired) for s in range(n)]
    seat_arrival_chi, seat_arrival_p = chi_square_uniform(seat_arrived_first)
    seat_given_chi, seat_given_p = chi_square_against(seat_wired_wins, seat_arrived_first)
    return {
        "races": total,
        "races_seen_on_wire": len(wired),
        # Who arrived first (a fair server gives these their wins), and which arrival won.
        "seat_first_on_wire": seat_arrived_first,
        "connection_first_on_wire": [
            sum(g.contender == c for g in first_on_wire) for c in range(n)
        ],
        "wins_by_arrival": [sum(r.by(WIRE)[k].won for r in wired) for k in range(n)],
        "seat_wins": seat_wins,
        "seat_p_each": [one_against_rest(w, total, n) for w in seat_wins],
        "seat_chi_square": seat_chi,
        "seat_p": seat_p,
        "connection_wins": conn_wins,
        "connection_p_each": [one_against_rest(w, total, n) for w in conn_wins],
        "connection_chi_square": conn_chi,
        "connection_p": conn_p,
        # Diagnosis: is an uneven share of wins the rig's (some connections' grabs reach
        # the machine first more often) or the server's (wins not following arrivals)?
        "connection_arrival_chi_square": arrival_chi,
        "connection_arrival_p": arrival_p,
        "connection_wins_given_arrival_chi_square": given_chi,
        "connection_wins_given_arrival_p": given_p,
        # The same for seats: a seat can arrive first more often than the others too.
        "seat_arrival_chi_square": seat_arrival_chi,
        "seat_arrival_p": seat_arrival_p,
        "seat_wins_given_arrival_chi_square": seat_given_chi,
        "seat_wins_given_arrival_p": seat_given_p,
        "dof": n - 1,
    }


def _stamp_ms(group: list[Race]) -> dict[str, Any]:
    return {
        "stamp_spread_ms": _ms([r.stamp_spread_ns for r in group]),
        "send_spread_ms": _ms([r.spread_ns(SEND) for r in group]),
    }


def _first_stamps(simultaneous: list[Race], n: int) -> dict[str, Any] | None:
    """Which connection's grab was stamped first in the races at offset 0, against who
    arrived first on the wire: what the server adds, measured the same way on the bare
    server (which decides nothing) as on totem serve (where the first stamp wins)."""
    wired = [r for r in simultaneous if r.seen_on_wire]
    if not wired:
        return None
    stamped = [sum(r.by_stamp()[0].contender == c for r in wired) for c in range(n)]
    arrived = [sum(r.by(WIRE)[0].contender == c for r in wired) for c in range(n)]
    chi, p = chi_square_against(stamped, arrived)
    return {
        "races": len(wired),
        "stamped_first": stamped,
        "first_on_wire": arrived,
        "given_arrival_chi_square": chi,
        "given_arrival_p": p,
        "dof": n - 1,
        "ties": _ties(wired, n),
    }


#: Two grabs that reached the machine less than this apart were sent at the same instant
#: from two cores: no clock a server reads after the kernel can tell them apart.
EXACT_TIE_NS = 1_000


def _ties(wired: list[Race], n: int) -> dict[str, Any]:
    """The races whose first two grabs reached the machine within ``EXACT_TIE_NS``, apart
    from the others: which connection the kernel and gRPC's core put first in those exact
    ties (against an even share of the ties each was in), and in the others which was
    stamped first against which arrived first. A preference found only in exact ties was
    made below any clock the server reads."""
    exact = [r for r in wired if r.by(WIRE)[1].wire_ns - r.by(WIRE)[0].wire_ns < EXACT_TIE_NS]
    apart = [r for r in wired if r not in exact]
    in_tie = [sum(g.contender == c for r in exact for g in r.by(WIRE)[:2]) for c in range(n)]
    first_in_tie = [
        sum(min(r.by(WIRE)[:2], key=lambda g: g.sequence).contender == c for r in exact)
        for c in range(n)
    ]
    tie_chi, tie_p = chi_square_against(first_in_tie, in_tie)
    stamped = [sum(r.by_stamp()[0].contender == c for r in apart) for c in range(n)]
    arrived = [sum(r.by(WIRE)[0].contender == c for r in apart) for c in range(n)]
    apart_chi, apart_p = chi_square_against(stamped, arrived)
    return {
        "exact": len(exact),
        "exact_in_wire_order": _share([r.by_stamp()[0] is r.by(WIRE)[0] for r in exact]),
        "in_exact_tie": in_tie,
        "first_in_exact_tie": first_in_tie,
        "exact_chi_square": tie_chi,
        "exact_p": tie_p,
        "apart": len(apart),
        "apart_stamped_first": stamped,
        "apart_first_on_wire": arrived,
        "apart_chi_square": apart_chi,
        "apart_p": apart_p,
    }


#: Two grabs that reached the machine closer than this are a tie the stamps cannot order.
TIE_NS = 50_000


def _first_stamp_lines(f: dict[str, Any] | None) -> list[str]:
    if f is None:
        return []
    return [
        "",
        f"Connections stamped first at offset 0 ({f['races']} races seen on the wire): "
        f"{', '.join(map(str, f['stamped_first']))}; first on the wire: "
        f"{', '.join(map(str, f['first_on_wire']))}; stamped first against those arrival "
        f"shares ({f['dof']} dof): {f['given_arrival_chi_square']:.2f}, "
        f"p = {f['given_arrival_p']:.3g} (what the server, gRPC and the kernel add)",
        *_tie_lines(f.get("ties")),
    ]


def _tie_lines(t: dict[str, Any] | None) -> list[str]:
    if t is None:
        return []
    tie_us = EXACT_TIE_NS / 1000
    return [
        f"Exact ties, first two grabs under {tie_us:g} µs apart on the wire ({t['exact']} "
        f"races; the first on the wire stamped first in {_pct(t['exact_in_wire_order'])}): "
        f"in a tie, connections 0 to {len(t['in_exact_tie']) - 1}: "
        f"{', '.join(map(str, t['in_exact_tie']))}; put first: "
        f"{', '.join(map(str, t['first_in_exact_tie']))}; against an even share of their "
        f"ties: {t['exact_chi_square']:.2f}, p = {t['exact_p']:.3g}",
        f"The other races ({t['apart']}): stamped first "
        f"{', '.join(map(str, t['apart_stamped_first']))}; first on the wire: "
        f"{', '.join(map(str, t['apart_first_on_wire']))}; against those arrival shares: "
        f"{t['apart_chi_square']:.2f}, p = {t['apart_p']:.3g}",
    ]


def summarise(races: list[Race], config: dict[str, Any]) -> dict[str, Any]:
    """The figures of the races against one server (``config["server"]``). Against the
    bare server nothing is won: no winners, no seat or connection bias."""
    n = config["clients"]
    decided = config["server"] == SERVER
    by_offset: dict[float, list[Race]] = {}
    for race in races:
        by_offset.setdefault(race.offset_ms, []).append(race)
    on_wire = [r for r in races if r.seen_on_wire]

    offsets: list[dict[str, Any]] = []
    for offset in sorted(by_offset):
        group = by_offset[offset]
        wired = [r for r in group if r.seen_on_wire]
        grabs = [g for r in wired for g in r.grabs]
        offsets.append(
            {
                "offset_ms": offset,
                "races": len(group),
                "stamp_spread_ms": _ms([r.stamp_spread_ns for r in group]),
                "first_stamp_after_first_send_ms": _ms(
                    [r.first_stamp_after_first_send_ns for r in group]
                ),
                "sent_to_handed_ms": _ms([g.handed_ns - g.sent_ns for r in group for g in r.grabs]),
                "started_late": sum(g.started_late for r in group for g in r.grabs),
                "stamp_spread_over_send_spread": _spread_ratio(group),
                "stamp_gaps_us": _stamp_gaps_us(group),
                SEND: _order(group, SEND, decided),
                "races_seen_on_wire": len(wired),
                WIRE: None
                if not wired
                else {
                    **_order(wired, WIRE, decided),
                    "sent_to_wire_ms": _ms([g.wire_ns - g.sent_wall_ns for g in grabs]),
                    "first_stamp_after_first_wire_ms": _ms(
                        [r.first_stamp_after_first_wire_ns for r in wired]
                    ),
                    "stamp_spread_ms": _ms([r.stamp_spread_ns for r in wired]),
                },
            }
        )

    simultaneous = by_offset.get(0.0, [])
    total = len(simultaneous)
    fairness = _fairness(simultaneous, n) if decided else None
    first_stamps = _first_stamps(simultaneous, n)

    later = [o for o in offsets if o["offset_ms"] >= 1]
    zero = next((o for o in offsets if o["offset_ms"] == 0), None)

    def ratio(view: str) -> float | None:
        if zero is None or zero[view] is None:
            return None
        stamps = zero[view].get("stamp_spread_ms", zero["stamp_spread_ms"])  # same races
        return float(stamps["median"] / zero[view]["spread_ms"]["median"])

    def agreement(view: str) -> dict[str, Any]:
        figures = {str(o["offset_ms"]): o[view]["order_matches"] for o in later if o[view]}
        return {
            "met": bool(figures) and all(v >= 0.95 for v in figures.values()),
            "figures": figures,
        }

    send_ratio, wire_ratio = ratio(SEND), ratio(WIRE)
    targets: dict[str, Any] = {"order_at_1ms_and_more": agreement(SEND)}
    if fairness is not None:
        seat_p, conn_p = fairness["seat_p"], fairness["connection_p"]
        targets["no_seat_bias"] = {
            "met": total >= 600 and seat_p > 0.01,
            "p": seat_p,
            "races": total,
        }
        targets["no_connection_bias"] = {
            "met": total >= 600 and conn_p > 0.01,
            "p": conn_p,
            "races": total,
        }
    targets |= {
        "stamp_spread_within_2x_send_spread": {
            "met": send_ratio is not None and send_ratio <= 2,
            "ratio": send_ratio,
            # The same at the tail: p99 of the stamp spreads over p99 of the send spreads.
            "ratio_p99": None
            if zero is None
            else float(zero["stamp_spread_ms"]["p99"] / zero[SEND]["spread_ms"]["p99"]),
        },
        # The same two, against the order and spread on the wire (not targets: diagnosis).
        "wire_order_at_1ms_and_more": agreement(WIRE),
        "stamp_spread_against_wire_spread": {"ratio": wire_ratio},
    }
    anomalies = {
        "winner_not_first_stamp": sum(not r.winner_stamped_first for r in races)
        if decided
        else None,
        # Not anomalies: races whose winner was drawn among simultaneous grabs (JS-4.2a).
        "decided_by_draw": sum(r.tied for r in races) if decided else None,
        "stamp_time_order_differs_from_sequence": sum(
            [g.contender for g in r.by_stamp()]
            != [g.contender for g in sorted(r.grabs, key=lambda g: g.stamp_ns)]
            for r in races
        ),
        "grabs_not_seen_on_wire": sum(not g.wire_ns for r in races for g in r.grabs)
        if config["wire"] == "on"
        else None,
    }
    return {
        "config": config,
        "anomalies": anomalies,
        "offsets": offsets,
        "gaps": {SEND: _gaps(races, SEND), WIRE: _gaps(on_wire, WIRE) if on_wire else None},
        "fairness": fairness,
        "first_stamps": first_stamps,
        "targets": targets,
    }


def _pair(stats: dict[str, float] | None) -> str:
    return "–" if stats is None else f"{stats['median']:.2f} / {stats['p99']:.2f}"


def _pct(value: float | None, digits: int = 0) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.{digits}%}"


def _spread_lines(summary: dict[str, Any]) -> list[str]:
    """The stamp spread at offset 0 against the send spread, and where it goes."""
    zero = next((o for o in summary["offsets"] if o["offset_ms"] == 0), None)
    if zero is None or not zero["races"]:
        return []
    target = summary["targets"]["stamp_spread_within_2x_send_spread"]
    per_race = zero["stamp_spread_over_send_spread"]
    gaps = ", ".join(f"{g:,.0f}" for g in zero["stamp_gaps_us"])
    return [
        "",
        f"Offset 0: stamp spread {_pair(zero['stamp_spread_ms'])} ms against send spread "
        f"{_pair(zero[SEND]['spread_ms'])} ms (median / p99): {target['ratio']:.2f}x at the "
        f"median, {target['ratio_p99']:.2f}x at p99; each race's own ratio "
        f"{per_race['median']:.2f}x / {per_race['p99']:.2f}x",
        f"Gaps between successive stamps at offset 0, medians (µs): {gaps}",
    ]


def report(summary: dict[str, Any]) -> str:
    c = summary["config"]
    wire = c["wire"] == "on"
    decided = c["server"] == SERVER
    if decided:
        server = (
            f"totem serve, store {c['store']}, streams per match: {c['seat_streams']} "
            f"seats + {c['watchers']} spectators"
        )
    else:
        server = (
            "bare gRPC server (bench/race_bare.py: stamps each call, nothing else; no "
            "matches, so no seat streams and no spectators)"
        )
    together = (
        f" (the whole run, both servers in turn, blocks of {c['block']} races)"
        if len(c["servers"]) > 1
        else ""
    )
    lines = [
        f"Raced: {VIA[c.get('via', ACT)]}.",
        "",
        f"{c['clients']} contenders (a process and a connection each), {server}; "
        f"{c['cpus']} CPUs, Python {c['python']}; {c['elapsed_s']} s{together}; load average "
        f"(1 min) {c['load_average_before'][0]:.2f} before, {c['load_average_after'][0]:.2f} "
        f"after; other processes used {c['other_processes_cores']:.2f} cores meanwhile; "
        f"wire timestamps: {c['wire']}",
        "",
        "Times in ms, median / p99:",
        "",
        "| offset ms | races | send spread | wire spread | stamp spread "
        "| first send to first stamp | first wire to first stamp | send to wire |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in summary["offsets"]:
        w = o[WIRE] or {}
        lines.append(
            f"| {o['offset_ms']:g} | {o['races']} | {_pair(o[SEND]['spread_ms'])} "
            f"| {_pair(w.get('spread_ms'))} | {_pair(o['stamp_spread_ms'])} "
            f"| {_pair(o['first_stamp_after_first_send_ms'])} "
            f"| {_pair(w.get('first_stamp_after_first_wire_ms'))} "
            f"| {_pair(w.get('sent_to_wire_ms'))} |"
        )
    lines += [
        "",
        "Stamp order against send order, and against the order on the wire:",
        "",
        "| offset ms | stamp order = send order | first sender won | pairs in send order "
        "| stamp order = wire order | first on the wire won | pairs in wire order |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in summary["offsets"]:
        s, w = o[SEND], o[WIRE] or {}
        lines.append(
            f"| {o['offset_ms']:g} | {_pct(s['order_matches'])} | {_pct(s['first_won'])} "
            f"| {_pct(s['pairs_in_order'])} | {_pct(w.get('order_matches'))} "
            f"| {_pct(w.get('first_won'))} | {_pct(w.get('pairs_in_order'))} |"
        )
    odd = summary["anomalies"]
    notes = []
    if odd.get("decided_by_draw"):
        notes.append(
            f"{odd['decided_by_draw']} races were ties: their winner was drawn among the "
            "grabs received within the tie window (JS-4.2a)."
        )
    if odd["winner_not_first_stamp"]:
        notes.append(
            f"In {odd['winner_not_first_stamp']} races the winner's grab was not the one "
            "with the smallest receive sequence."
        )
    if odd["stamp_time_order_differs_from_sequence"]:
        notes.append(
            f"In {odd['stamp_time_order_differs_from_sequence']} races the order of the "
            "stamps' monotonic_ns differs from their sequence order."
        )
    if odd["grabs_not_seen_on_wire"]:
        notes.append(
            f"{odd['grabs_not_seen_on_wire']} grabs were not found on the wire (their races "
            "are left out of the wire columns)."
        )
    late = sum(o["started_late"] for o in summary["offsets"])
    if late:
        notes.append(f"{late} grabs got their start signal after their send time (sent at once).")
    if notes:
        lines += ["", *notes]
    lines += _spread_lines(summary)
    wire_gaps = summary["gaps"][WIRE] or [None] * len(summary["gaps"][SEND])
    lines += [
        "",
        "Pairs of grabs by how far apart they were sent, and were written to the wire:",
        "",
        "| apart by | pairs by send | stamped in send order | pairs on the wire "
        "| stamped in wire order |",
        "|---|---|---|---|---|",
    ]
    for g, w in zip(summary["gaps"][SEND], wire_gaps, strict=True):
        span = (
            f"{g['from_us']:g} µs or more"
            if g["to_us"] is None
            else f"{g['from_us']:g}–{g['to_us']:g} µs"
        )
        lines.append(
            f"| {span} | {g['pairs']} | {_pct(g['in_order'], 1)} "
            f"| {'–' if w is None else w['pairs']} "
            f"| {'–' if w is None else _pct(w['in_order'], 1)} |"
        )
    f = summary["fairness"]
    if f is None:
        lines += [
            "",
            "Wins per seat and per connection, winners, winner's place on the wire: none "
            "(the bare server decides nothing).",
        ]
    else:
        lines += _fairness_lines(f, c["clients"])
    lines += _first_stamp_lines(summary.get("first_stamps"))
    lines += ["", "Targets:"]
    t = summary["targets"]

    def verdict(met: bool) -> str:
        return "met" if met else "NOT met"

    def figures(item: dict[str, Any]) -> str:
        return ", ".join(f"{k} ms: {_pct(v)}" for k, v in item["figures"].items())

    order = t["order_at_1ms_and_more"]
    lines.append(
        f"- stamp order = send order ≥ 95% at offsets ≥ 1 ms: {verdict(order['met'])} "
        f"({figures(order)})"
    )
    for key, name in (("no_seat_bias", "seat"), ("no_connection_bias", "connection")):
        if key not in t:
            continue
        item = t[key]
        if item["races"] < 600:
            outcome = f"not tested, {item['races']} races (600 needed)"
        else:
            outcome = verdict(item["met"])
        lines.append(f"- no {name} bias, p > 0.01: {outcome} (p = {item['p']:.3g})")
    spread = t["stamp_spread_within_2x_send_spread"]
    ratio = "–" if spread["ratio"] is None else f"{spread['ratio']:.1f}x"
    lines.append(
        f"- median stamp spread ≤ 2x median send spread at offset 0: "
        f"{verdict(spread['met'])} ({ratio})"
    )
    if wire:
        by_wire = t["wire_order_at_1ms_and_more"]
        wire_ratio = t["stamp_spread_against_wire_spread"]["ratio"]
        lines += [
            "",
            "The same against the wire (diagnosis, not targets): stamp order = wire order at "
            f"offsets ≥ 1 ms: {figures(by_wire)}; median stamp spread / median wire spread "
            f"at offset 0: {'–' if wire_ratio is None else f'{wire_ratio:.1f}x'}",
        ]
    return "\n".join(lines)


def _fairness_lines(f: dict[str, Any], clients: int) -> list[str]:
    """Wins per seat and per connection at offset 0 (races against ``totem serve``)."""
    total = f["races"]
    wired = f["races_seen_on_wire"]
    lines = [
        "",
        f"Wins at offset 0 ({total} races; p: that one against its equal share, 1 dof; "
        "first on wire: how often it arrived first):",
        "",
        "| # | seat wins | share | p | first on wire | connection wins | share | p "
        "| first on wire |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i in range(clients):
        sw, cw = f["seat_wins"][i], f["connection_wins"][i]
        sf = f["seat_first_on_wire"][i] if wired else "–"
        cf = f["connection_first_on_wire"][i] if wired else "–"
        lines.append(
            f"| {i} | {sw} | {sw / max(total, 1):.1%} | {f['seat_p_each'][i]:.3f} | {sf} "
            f"| {cw} | {cw / max(total, 1):.1%} | {f['connection_p_each'][i]:.3f} | {cf} |"
        )
    if wired:
        shares = ", ".join(f"{k + 1}: {w / wired:.0%}" for k, w in enumerate(f["wins_by_arrival"]))
        lines += [
            "",
            f"Winner's place in the arrival order on the wire, offset 0 ({wired} races): {shares}",
        ]
    lines += [
        "",
        f"chi-square against equal shares ({f['dof']} dof): seats {f['seat_chi_square']:.2f}, "
        f"p = {f['seat_p']:.3g}; connections {f['connection_chi_square']:.2f}, "
        f"p = {f['connection_p']:.3g}",
        "",
        "Connections, diagnosis (races seen on the wire): first on the wire against equal "
        f"shares {f['connection_arrival_chi_square']:.2f}, p = {f['connection_arrival_p']:.3g} "
        "(the clients' own skew); wins against those arrival shares "
        f"{f['connection_wins_given_arrival_chi_square']:.2f}, "
        f"p = {f['connection_wins_given_arrival_p']:.3g} (what the server adds)",
        "Seats, diagnosis (the same): first on the wire against equal shares "
        f"{f['seat_arrival_chi_square']:.2f}, p = {f['seat_arrival_p']:.3g}; wins against "
        f"those arrival shares {f['seat_wins_given_arrival_chi_square']:.2f}, "
        f"p = {f['seat_wins_given_arrival_p']:.3g}",
    ]
    return lines


TITLES = {BARE: "Bare gRPC server (stamps only)", SERVER: "totem serve"}
#: The path the grabs were raced on, as a report names it.
VIA = {
    ACT: "Act, each grab a unary call of its own (stamped when gRPC hands the call to the "
    "event loop)",
    PLAY: "Play, each grab a message on a stream its contender opened when armed (stamped "
    "when the message is read)",
}


def compare(bare: dict[str, Any], server: dict[str, Any]) -> str:
    """totem serve against the bare server at offset 0, both from the same run: how much of
    the stamp spread is the server's own."""
    rows = []
    for kind, summary in ((BARE, bare), (SERVER, server)):
        zero = next((o for o in summary["offsets"] if o["offset_ms"] == 0), None)
        if zero is None or not zero["races"]:
            return "Bare against totem serve: no races at offset 0."
        spread = summary["targets"]["stamp_spread_within_2x_send_spread"]
        gaps = ", ".join(f"{g:,.0f}" for g in zero["stamp_gaps_us"])
        rows.append(
            f"| {TITLES[kind]} | {zero['races']} | {_pair(zero[SEND]['spread_ms'])} "
            f"| {_pair(zero['stamp_spread_ms'])} | {spread['ratio']:.2f}x "
            f"| {spread['ratio_p99']:.2f}x | {_pair(zero['first_stamp_after_first_send_ms'])} "
            f"| {gaps} |"
        )
    medians = [
        next(o for o in s["offsets"] if o["offset_ms"] == 0)["stamp_spread_ms"]["median"]
        for s in (bare, server)
    ]
    via = server["config"].get("via", ACT).capitalize()
    return "\n".join(
        [
            f"## Bare against totem serve, offset 0, same run, grabs via {via} (ms, median / p99)",
            "",
            "| server | races | send spread | stamp spread | ratio, medians | ratio, p99s "
            "| first send to first stamp | gaps between successive stamps, medians (µs) |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Median stamp spread, totem serve over bare: {medians[1] / medians[0]:.2f}x "
            f"({medians[1] - medians[0]:+.2f} ms)",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Grab races: receive order against send order, and win shares per seat "
        "and per connection. The module docstring (bench/race.py) says what is measured.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("-n", "--clients", type=int, default=6, help="contenders, 2 to 8")
    parser.add_argument("--races", type=int, default=600, help="races at offset 0")
    parser.add_argument(
        "--races-per-offset", type=int, default=100, help="races at each non-zero offset"
    )
    parser.add_argument(
        "--offsets", default=DEFAULT_OFFSETS, help="send offsets in ms, comma-separated"
    )
    add_store(parser)
    parser.add_argument(
        "--watchers", type=int, default=4, help="spectator streams per match, besides the seats'"
    )
    parser.add_argument("--warmup", type=int, default=20, help="races run first and not counted")
    parser.add_argument("--margin-ms", type=float, default=15.0, help="start signal lead time")
    parser.add_argument("--spin-us", type=int, default=200, help="busy-wait before a send")
    parser.add_argument(
        "--sender",
        choices=("auto", "spin", "fifo"),
        default="auto",
        help="how a contender waits for its send time: spin (sleep, then busy-wait the last "
        "--spin-us) or fifo (sleep to the exact time under SCHED_FIFO, woken in the random "
        "order the start signal reached the contenders; needs privileges); auto: fifo "
        "where this process may use it",
    )
    parser.add_argument("--seed", type=int, default=12, help="seed of the schedule and ranks")
    parser.add_argument(
        "--via",
        choices=(ACT, PLAY),
        default=ACT,
        help="the path a grab is raced on: act, an Act call of its own (stamped when gRPC "
        "hands the call over); play, a message on a Play stream each contender opens when "
        "armed, before the go (stamped as the message is read); against the bare server too",
    )
    against = parser.add_mutually_exclusive_group()
    against.add_argument(
        "--bare",
        action="store_true",
        help="race against a bare grpc.aio server that only stamps each call as totem serve "
        "does (bench/race_bare.py) instead of totem serve: the stamp spread gRPC and Python "
        "alone give with these contenders. No matches, so no spectators, and no winners, "
        "seat or connection bias; --store, --dsn, --watchers and --server-root do not apply",
    )
    against.add_argument(
        "--with-bare",
        type=int,
        default=0,
        metavar="BLOCK",
        help="race against both servers in one run, in turn, BLOCK races at a time (the bare "
        "server first; each runs the same races: offsets, ranks, start signal order), and "
        "compare their stamp spreads at offset 0; 0: only totem serve",
    )
    add_server_root(parser)
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the server process only (repeatable; the bare "
        "server's too), e.g. GRPC_EXPERIMENTS=... to compare gRPC core settings",
    )
    parser.add_argument(
        "--server-nice",
        type=int,
        default=0,
        metavar="N",
        help="the server's scheduling priority (nice value; below 0 needs privileges; the "
        "bare server's too): clients on this machine compete with it for the CPU, clients "
        "elsewhere do not",
    )
    parser.add_argument(
        "--wire",
        choices=("auto", "on", "off"),
        default="auto",
        help="timestamp requests on the loopback interface (Linux, CAP_NET_RAW); auto: "
        "when possible",
    )
    parser.add_argument("--json", metavar="FILE", help="write every race and the summary here")
    parser.add_argument("--progress", action="store_true", help="a line per 100 races")
    args = parser.parse_args(argv)
    if not 2 <= args.clients <= 8:
        parser.error("--clients must be 2 to 8")
    if args.races < 0 or args.races_per_offset < 0 or args.warmup < 0:
        parser.error("race counts must not be negative")
    offsets = [float(o) for o in args.offsets.split(",")]
    if any(o < 0 for o in offsets) or 0.0 not in offsets:
        parser.error("--offsets must be non-negative and include 0")
    if args.with_bare < 0:
        parser.error("--with-bare must not be negative")
    runs, config = run(args)
    summaries = {kind: summarise(races, config_of(config, kind)) for kind, races in runs.items()}
    if len(summaries) > 1:
        print(
            "\n\n".join(
                f"## {TITLES[kind]}\n\n{report(summary)}" for kind, summary in summaries.items()
            )
        )
        print("\n" + compare(summaries[BARE], summaries[SERVER]))
    else:
        print(report(next(iter(summaries.values()))))
    if args.json:
        # One server: its summary and races; both: totem serve's, and the bare's beside.
        main_kind = SERVER if SERVER in runs else BARE
        raw: dict[str, Any] = {
            "summary": summaries[main_kind],
            "races": [asdict(r) for r in runs[main_kind]],
        }
        if len(runs) > 1:
            raw[BARE] = {"summary": summaries[BARE], "races": [asdict(r) for r in runs[BARE]]}
        Path(args.json).write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
