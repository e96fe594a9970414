"""Two grabs that arrive together: the kernel's order against the order the server reads them.

Run ``python bench/read_order.py [--races 400] [--seed S] [--store sqlite|postgres]`` as
root, with ``perf`` installed (it records kernel tracepoints) and tracefs mounted.

It runs ``bench/race.py --via play --offsets 0`` (6 contenders on Play streams, their
grabs sent at the same instant) while ``perf record`` traces two kernel tracepoints
system-wide: ``sock:sk_data_ready``, the moment the kernel made a socket readable because
data arrived, and ``sock:sock_recv_length``, each read of a socket by a process
(bench/perf_sockets.py writes them out). The server's threads are taken from ``/proc``
while it runs. For each race it finds, on the server's side, the contenders' TCP sockets,
the moment each became readable with its grab and the moment a thread of the server
first read it afterwards.

The races whose first two sockets became readable less than 1 µs apart are *kernel ties*.
For each socket it reports how often it was in such a tie, how often it became readable
first (the kernel's order) and how often it was read first (the server's), each against
an even share of its ties (chi-square), and which threads did the reading. If the
kernel's column is even and the server's is not, a connection's advantage in a tie is
made in the server process, after the kernel, not in the network stack.

Tracing slows the receive path, so fewer races are ties than without it (race.py's own
report of the run is printed too); these figures say where an order comes from, not how
the race benchmark's targets fare. Nothing is asserted; the figures go to
docs/performance.md.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import chi_square_against

BENCH = Path(__file__).resolve().parent
#: How far apart two sockets became readable for a kernel tie.
TIE_NS = 1_000
#: How long after a race's go its grabs are looked for.
RACE_WINDOW_NS = 3_000_000
TCP = 6
#: The kernel tracepoints recorded (see bench/perf_sockets.py).
EVENTS = ("-e", "sock:sk_data_ready", "-e", "sock:sock_recv_length")


@dataclass
class Trace:
    """The traced events of the server's TCP sockets: when each became readable, and
    each read by one of the server's threads (time, thread)."""

    readable: dict[str, list[int]] = field(default_factory=lambda: collections.defaultdict(list))
    reads: dict[str, list[tuple[int, int]]] = field(
        default_factory=lambda: collections.defaultdict(list)
    )


def load(lines: Iterable[str], server_threads: set[int]) -> Trace:
    """The server's sockets are those its threads read data from."""
    readable: dict[str, list[int]] = collections.defaultdict(list)
    trace = Trace()
    for line in lines:
        kind, when, _cpu, tid, socket, protocol, size = line.rstrip("\n").split(",")
        if int(protocol) != TCP:
            continue  # the event loop's wake-up socket, and other local sockets
        if kind == "R":
            readable[socket].append(int(when))
        elif int(tid) in server_threads and int(size) > 0:
            trace.reads[socket].append((int(when), int(tid)))
    for socket, times in readable.items():
        if socket in trace.reads:
            trace.readable[socket] = sorted(times)
    for socket_reads in trace.reads.values():
        socket_reads.sort()
    return trace


@dataclass(frozen=True)
class Arrival:
    socket: str
    readable_ns: int
    read_ns: int
    reader: int


def races(trace: Trace, starts: Iterable[int], contenders: int) -> list[list[Arrival]]:
    """Each race's arrivals in the order the sockets became readable. A race starts at
    its go (race.py's ``start_ns``, on the clock perf records with); its grabs are the
    first readiness of each socket within :data:`RACE_WINDOW_NS` after it (the streams
    were opened and used before the go), each with the server's first read of that
    socket at or after it. A race with fewer than ``contenders`` sockets is left out."""
    found = []
    for start in sorted(starts):
        first: dict[str, int] = {}
        for socket, times in trace.readable.items():
            at = bisect.bisect_left(times, start)
            if at < len(times) and times[at] - start <= RACE_WINDOW_NS:
                first[socket] = times[at]
        if len(first) < contenders:
            continue
        arrivals = []
        for socket, when in sorted(first.items(), key=lambda item: item[1]):
            reads = trace.reads[socket]
            at = bisect.bisect_left(reads, (when, 0))
            if at < len(reads):
                arrivals.append(Arrival(socket, when, *reads[at]))
        if len(arrivals) == len(first):
            found.append(arrivals)
    return found


def report(found: list[list[Arrival]]) -> list[str]:
    ties = [race for race in found if race[1].readable_ns - race[0].readable_ns < TIE_NS]
    sockets = sorted({a.socket for race in found for a in race})
    label = {socket: str(number) for number, socket in enumerate(sockets)}
    in_ties: collections.Counter[str] = collections.Counter()
    kernel_first: collections.Counter[str] = collections.Counter()
    read_first: collections.Counter[str] = collections.Counter()
    gaps = []
    for first, second, *_ in ties:
        in_ties.update((first.socket, second.socket))
        kernel_first[first.socket] += 1
        read_first[min(first, second, key=lambda a: a.read_ns).socket] += 1
        gaps.append(abs(second.read_ns - first.read_ns) / 1000)
    followed = sum(1 for first, second, *_ in ties if first.read_ns < second.read_ns)
    readers = collections.Counter(a.reader for race in found for a in race)
    order = [s for s in sockets if in_ties[s]]
    _, kernel_p = chi_square_against([kernel_first[s] for s in order], [in_ties[s] for s in order])
    _, read_p = chi_square_against([read_first[s] for s in order], [in_ties[s] for s in order])
    lines = [
        f"Races found in the trace: {len(found)}; kernel ties (first two sockets readable under "
        f"{TIE_NS // 1000} µs apart): {len(ties)}; read in the order they became readable: "
        f"{followed} of {len(ties)}"
        + (f"; the two reads a median {statistics.median(gaps):.0f} µs apart" if gaps else ""),
        f"Threads of the server that read the grabs: {len(readers)} "
        f"({', '.join(f'{n} reads' for _, n in readers.most_common())})",
        "",
        "| socket | kernel ties | readable first | read first |",
        "|---|---|---|---|",
    ]
    for socket in order:
        lines.append(
            f"| {label[socket]} | {in_ties[socket]} | {kernel_first[socket]} | "
            f"{read_first[socket]} |"
        )
    lines += [
        "",
        f"Against an even share of each socket's ties: readable first p = {kernel_p:.3g} "
        f"(the kernel's order), read first p = {read_p:.3g} (the server's)",
    ]
    return lines


def server_threads(stop: threading.Event, seen: set[int]) -> None:
    """Collect the threads of every ``totem serve`` process until ``stop``."""
    while not stop.is_set():
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
                if b"server" in argv and b"serve" in argv:
                    seen.update(int(t.name) for t in (proc / "task").iterdir())
            except OSError:
                continue
        stop.wait(0.5)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Kernel order against server read order in grab races (the module's "
        "text says what is measured).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--races", type=int, default=400, help="races at offset 0")
    parser.add_argument("--seed", type=int, default=12, help="race.py's seed")
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("-n", "--clients", type=int, default=6, help="contenders")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="passed to race.py: the server's environment (gRPC's settings, say)",
    )
    args = parser.parse_args(argv)
    perf = shutil.which("perf")
    if perf is None:
        parser.error("perf is needed (linux-perf), and root")
    with tempfile.TemporaryDirectory() as tmp:
        data, csv = Path(tmp) / "perf.data", Path(tmp) / "sockets.csv"
        results = Path(tmp) / "race.json"
        recorder = subprocess.Popen(
            # The monotonic clock, as race.py's times: each race's go places its grabs.
            [perf, "record", "-a", "-k", "CLOCK_MONOTONIC", "-o", str(data), *EVENTS],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1)  # perf is recording
        seen: set[int] = set()
        stop = threading.Event()
        watcher = threading.Thread(target=server_threads, args=(stop, seen), daemon=True)
        watcher.start()
        try:
            race = subprocess.run(
                [
                    *(sys.executable, str(BENCH / "race.py"), "--via", "play", "--offsets", "0"),
                    *("--races", str(args.races), "--seed", str(args.seed)),
                    *("--store", args.store, "--clients", str(args.clients)),
                    *("--json", str(results)),
                    *(f"--server-env={item}" for item in args.server_env),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
        finally:
            stop.set()
            recorder.send_signal(signal.SIGINT)
            recorder.wait()
        subprocess.run(
            [perf, "script", "-i", str(data), "-s", str(BENCH / "perf_sockets.py")],
            env=dict(os.environ, READ_ORDER_CSV=str(csv)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        starts = [r["start_ns"] for r in json.loads(results.read_text())["races"]]
        with csv.open() as lines:
            found = races(load(lines, seen), starts, args.clients)
    print(f"Server environment: {' '.join(args.server_env) or 'as shipped'}")
    print("race.py, traced:")
    keep = ("Exact ties", "Connections stamped first", "chi-square")
    print("\n".join(line for line in race.stdout.splitlines() if line.startswith(keep)))
    print()
    print("\n".join(report(found)))


if __name__ == "__main__":
    main()
