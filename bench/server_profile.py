"""Where the server's time goes on the Act path: a sampling profile of a busy server.

Run ``python bench/server_profile.py [--matches 50] [--seconds 20] [--store sqlite|postgres]``.
It needs py-spy (``pip install py-spy``; not a dependency of the project) and the right
to read another process's memory (root, or ptrace allowed).

The real server runs in a process of its own (``totem serve``, as bench/race.py starts
it, on a fresh store); this process keeps ``--matches`` clients busy, each revealing
turn after turn in 2-seat Jungle Speed matches of its own (bench/peers.py's Revealer: a
deal with no duel, so every reveal is accepted), while ``py-spy record`` samples every
thread of the server for ``--seconds``. Each sample is put in one part by its innermost
Python frame (for time in compiled code, the Python frame that called it):

- gRPC (``grpc``), the event loop (``asyncio``, ``selectors``), the event store
  (``eventsourcing``), the drivers (``sqlite3``, ``psycopg``), protobuf (``google``),
  thread hand-off (``concurrent``, ``threading``, ``queue``), the rules (``domain``), the
  server's own code (``server``), and the rest.

Each function of the project's own code (``server/``, ``domain/``) is also counted with
everything it calls, once per sample it is on the stack of: the innermost frames say
where the interpreter was, these say which of our functions to make cheaper.
``--keep FILE`` writes py-spy's collapsed stacks, for a flame graph or a closer look.

Only the thread holding the interpreter is sampled (``py-spy record --gil``), so the
shares are of the server's interpreter time: one thread at a time runs Python. The figures go to
docs/performance.md, with the commands served per second during the sample.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from peers import Revealer

from bench.harness import Server

#: The parts of the server's time, first match wins, by a path fragment of the frame.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gRPC (Python layer)", ("grpc/", "grpc_")),
    ("event loop, with the compiled callbacks it runs", ("asyncio/", "selectors.py")),
    ("eventsourcing", ("eventsourcing/",)),
    ("store driver", ("sqlite3", "psycopg")),
    ("protobuf", ("google/",)),
    ("thread hand-off", ("concurrent/", "threading.py", "queue.py")),
    ("rules (domain/)", ("domain/",)),
    ("server code (server/)", ("server/",)),
)


def part_of(frame: str) -> str:
    for name, fragments in PARTS:
        if any(f in frame for f in fragments):
            return name
    return "other"


#: The project's own code, whose functions are also counted with what they call; but
#: not the entry point, which is under every sample of the event loop.
OWN = ("server/", "domain/")
ENTRY = ("server/__main__.py", "server/cli.py")


def function_of(frame: str) -> str:
    """A frame without its line, ``name (path:line)`` -> ``name (path)``: a function's
    samples counted together, whichever of its lines was running."""
    return re.sub(r":\d+\)$", ")", frame)


def shares(
    collapsed: str,
) -> tuple[collections.Counter[str], collections.Counter[str], collections.Counter[str]]:
    """Samples per part, per innermost frame, and per function of the project's own code
    counted with everything it called (inclusive: a sample counts once for each such
    function on its stack), from py-spy's raw (collapsed) output: one line per distinct
    stack, ``frame;frame;...;frame COUNT``. The innermost frames say where the
    interpreter was; the inclusive counts say which of our functions to make cheaper."""
    parts: collections.Counter[str] = collections.Counter()
    frames: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        names = stack.split(";")
        leaf = names[-1]
        parts[part_of(leaf)] += int(count)
        frames[leaf] += int(count)
        own = {
            function_of(n)
            for n in names
            if any(f in n for f in OWN) and not any(f in n for f in ENTRY)
        }
        for function in own:
            inclusive[function] += int(count)
    return parts, frames, inclusive


async def busy(address: str, matches: int, stop: asyncio.Event) -> int:
    """Keep ``matches`` revealers busy until ``stop``; the commands they sent."""
    revealers = [Revealer(address) for _ in range(matches)]
    for revealer in revealers:
        await revealer.prepare(400)

    async def loop(revealer: Revealer) -> None:
        while not stop.is_set():
            await revealer.op()
            if len(revealer.matches) < 2:
                await revealer.prepare(200)

    try:
        await asyncio.gather(*(loop(r) for r in revealers))
    finally:
        for revealer in revealers:
            await revealer.close()
    return sum(r.done for r in revealers)


async def run(args: argparse.Namespace, spy: str) -> tuple[str, str]:
    """The report, and py-spy's collapsed stacks it was made from."""
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(args.store, args.dsn, Path(tmp))
        try:
            address = f"127.0.0.1:{server.port}"
            stop = asyncio.Event()
            task = asyncio.ensure_future(busy(address, args.matches, stop))
            await asyncio.sleep(args.warmup)
            out = Path(tmp) / "profile.txt"
            began = time.monotonic()
            recorder = await asyncio.create_subprocess_exec(
                spy,
                "record",
                "--pid",
                str(server.process.pid),
                "--duration",
                str(args.seconds),
                "--rate",
                str(args.rate),
                "--format",
                "raw",
                "--output",
                str(out),
                "--nonblocking",
                "--gil",  # the thread holding the interpreter: where Python time goes
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            await recorder.wait()
            elapsed = time.monotonic() - began
            stop.set()
            done = await task
            collapsed = out.read_text()
        finally:
            server.stop()
    return report(args, *shares(collapsed), done, elapsed), collapsed


def report(
    args: argparse.Namespace,
    parts: collections.Counter[str],
    frames: collections.Counter[str],
    inclusive: collections.Counter[str],
    commands: int,
    elapsed: float,
) -> str:
    total = sum(parts.values()) or 1
    lines = [
        f"store {args.store}, {args.matches} busy matches, {os.cpu_count()} CPUs, "
        f"{total} samples over {elapsed:.1f} s; {commands} reveals in the whole run",
        "",
        "| part | share of samples |",
        "|---|---|",
    ]
    for name, count in parts.most_common():
        lines.append(f"| {name} | {100 * count / total:.1f}% |")
    lines += ["", "Innermost frames, the top 12:", ""]
    for frame, count in frames.most_common(12):
        lines.append(f"- {100 * count / total:.1f}% {frame}")
    lines += ["", "Our functions with what they call (server/, domain/), the top 15:", ""]
    for function, count in inclusive.most_common(15):
        lines.append(f"- {100 * count / total:.1f}% {function}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="A sampling profile of the server's threads while matches are busy "
        "(the module's text says what is measured).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--matches", type=int, default=50, help="busy matches at once")
    parser.add_argument("--seconds", type=int, default=20, help="how long to sample")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before sampling")
    parser.add_argument("--rate", type=int, default=500, help="samples per second")
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument(
        "--dsn",
        default="host=127.0.0.1 port=5432 user=postgres dbname=test",
        help="PostgreSQL (a schema per run)",
    )
    parser.add_argument(
        "--keep",
        metavar="FILE",
        help="also write py-spy's collapsed stacks there (for a flame graph or a closer look)",
    )
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        parser.error("py-spy is needed: pip install py-spy")
    text, collapsed = asyncio.run(run(args, spy))
    if args.keep:
        Path(args.keep).write_text(collapsed)
    print(text)


if __name__ == "__main__":
    main()
