"""A page's first paint of a live match: the web client, served by ``totem serve --web``,
in Chromium.

A live 2-seat Jungle Speed match is played to ``--reveals`` reveals; then for each of
``--pages`` fresh browser contexts (empty cache), bench/paint.mjs opens the lobby page and
the match's page: the first contentful paint of each, and when the match's page shows its
newest event (its Watch stream caught up, the state drawn), from the navigation's start.
The floor, in the same run: the lobby page's first paint (the same files, no stream), and
GetMatch of the match over gRPC. Needs the web client built (``npm ci && npm run build``
in clients/web).
"""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import subprocess
import time
from collections.abc import Sequence

from bench import harness
from totem.v1 import match_service_pb2 as ms

WEB = harness.ROOT / "clients" / "web"


async def live_match(address: str, reveals: int) -> tuple[str, int, list[float]]:
    """A match with ``reveals`` reveals, still in play: its id, version, and 20 GetMatch
    round trips (ms) over gRPC."""
    revealer = harness.Revealer(address)
    try:
        await revealer.prepare(reveals + 1)
        for _ in range(reveals):
            await revealer.op()
        match_id = revealer.matches[0][0]
        times = []
        for _ in range(20):
            began = time.perf_counter()
            got = await revealer.stub.GetMatch(ms.GetMatchRequest(match_id=match_id))
            times.append((time.perf_counter() - began) * 1e3)
        return match_id, got.summary.version, times
    finally:
        await revealer.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.arguments(__doc__)
    parser.add_argument("--pages", type=int, default=10, help="fresh contexts, each page once")
    parser.add_argument("--reveals", type=int, default=60, help="reveals before the pages open")
    args = parser.parse_args(argv)
    if not (WEB / "dist" / "index.html").is_file():
        raise SystemExit("build the web client first: cd clients/web && npm ci && npm run build")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        web = free.getsockname()[1]
    args.extra += [f"--web=127.0.0.1:{web}", f"--web-root={WEB / 'dist'}"]
    print(harness.machine_line())
    with harness.serve(args) as server:
        match_id, version, get_match = asyncio.run(live_match(server.address, args.reveals))
        argv = ["node", "bench/paint.mjs", f"http://127.0.0.1:{web}", match_id, str(version)]
        done = subprocess.run(
            [*argv, str(args.pages)], cwd=harness.ROOT, capture_output=True, text=True, check=True
        )
    pages = json.loads(done.stdout.strip().splitlines()[-1])
    lobby = [p["fcp"] for p in pages["lobby"]]
    fcp = [p["fcp"] for p in pages["match"]]
    marks = {
        "match page, first contentful paint": fcp,
        "match page, GetMatch answered": [p["read"] for p in pages["match"]],
        "match page, Watch's first event": [p["first"] for p in pages["match"]],
        f"match page, v{version} in the page": [p["shown"] for p in pages["match"]],
    }
    floor = statistics.median(lobby)
    rows = [["lobby page, first contentful paint", harness.p50_p99(lobby), "1"]]
    for label, marked in marks.items():
        values = [v for v in marked if v is not None]  # a mark the page did not set
        ratio = f"{statistics.median(values) / floor:.2f}" if values else ""
        rows.append([label, harness.p50_p99(values), ratio])
    rows.append(["GetMatch over gRPC", harness.p50_p99(get_match), ""])
    print(harness.markdown_table(["ms from navigation, p50 / p99", "", "× lobby paint"], rows))


if __name__ == "__main__":
    main()
