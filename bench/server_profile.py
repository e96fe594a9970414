"""Where a busy server's interpreter time goes: a sampling profile of the Act path.

``totem serve`` in a process of its own; ``--matches`` clients reveal turn after turn in
2-seat matches of their own while ``py-spy record --gil`` (``pip install py-spy``; root or
ptrace allowed) samples the thread holding the interpreter for ``--seconds``. Each sample
is put in one part by its innermost frame (gRPC, the event loop, eventsourcing, the store
driver, protobuf, thread hand-off, the rules, the server's code); each function of
``server/`` and ``domain/`` is also counted with everything it calls.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.harness import Revealer, arguments, machine_line, markdown_table, serve

PARTS = (
    ("gRPC (Python layer)", ("grpc/", "grpc_")),
    ("event loop, with the compiled callbacks it runs", ("asyncio/", "selectors.py")),
    ("eventsourcing", ("eventsourcing/",)),
    ("store driver", ("sqlite3", "psycopg")),
    ("protobuf", ("google/",)),
    ("thread hand-off", ("concurrent/", "threading.py", "queue.py")),
    ("rules (domain/)", ("domain/",)),
    ("server code (server/)", ("server/",)),
)


async def busy(address: str, matches: int, stop: asyncio.Event) -> int:
    """``matches`` revealers busy until ``stop``: the reveals they made."""
    revealers = [Revealer(address) for _ in range(matches)]
    for revealer in revealers:
        await revealer.prepare(400)

    async def loop(revealer: Revealer) -> None:
        while not stop.is_set():
            await revealer.op()
            if len(revealer.matches) < 2:
                await revealer.prepare(200)

    await asyncio.gather(*(loop(r) for r in revealers))
    for revealer in revealers:
        await revealer.close()
    return sum(r.done for r in revealers)


async def run(args: argparse.Namespace, spy: str, out: Path) -> int:
    with serve(args) as server:
        stop = asyncio.Event()
        task = asyncio.ensure_future(busy(server.address, args.matches, stop))
        await asyncio.sleep(3.0)
        argv = [spy, "record", "--pid", str(server.pid), "--duration", str(args.seconds)]
        argv += ["--rate", "500", "--format", "raw", "--output", str(out), "--nonblocking", "--gil"]
        recorder = await asyncio.create_subprocess_exec(
            *argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        await recorder.wait()
        stop.set()
        return await task


def main(argv: Sequence[str] | None = None) -> None:
    parser = arguments(__doc__)
    parser.add_argument("--matches", type=int, default=50, help="busy matches at once")
    parser.add_argument("--seconds", type=int, default=20, help="how long to sample")
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        parser.error("py-spy is needed: pip install py-spy")
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "profile.txt"
        reveals = asyncio.run(run(args, spy, out))
        collapsed = out.read_text()
    parts: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for line in collapsed.splitlines():  # py-spy's raw output: frame;frame;... COUNT
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        parts[
            next((n for n, parts_ in PARTS if any(p in frames[-1] for p in parts_)), "other")
        ] += int(count)
        for function in {
            re.sub(r":\d+\)$", ")", f)
            for f in frames
            if ("server/" in f or "domain/" in f)
            and "server/__main__" not in f
            and "server/cli" not in f
        }:
            own[function] += int(count)
    total = sum(parts.values()) or 1
    print(f"{total} samples, {reveals} reveals in the whole run, store {args.store}\n")
    print(
        markdown_table(
            ["part", "share of samples"], [[n, f"{c / total:.1%}"] for n, c in parts.most_common()]
        )
    )
    print("\nOur functions with what they call, the top 15:")
    print("\n".join(f"- {c / total:.1%} {f}" for f, c in own.most_common(15)))


if __name__ == "__main__":
    main()
