"""How soon clients are back after a server restart, with gRPC's default reconnection
backoff and with the client's own (``totem_client.reconnect``).

The server (``totem serve`` in a process of its own, on a SQLite store) is killed
(SIGKILL), stays down for ``--down`` seconds, and is started again on the same store.
Two clients call it every 50 ms throughout: one built with ``connect()`` as it is, one
with gRPC's default backoff (first pause 1 s, up to 120 s). The figure is the time from
the restarted server's ready line to each client's first answered call.

Run: ``python bench/reconnect.py [--down 30] [--rounds 3]`` (never part of pass/fail;
``tests/client/test_client_restart.py`` checks the outcome, not the time).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from bench import harness
from totem_client import TotemError, connect
from totem_client.client import Client

#: gRPC's own defaults, given explicitly so that ``connect()`` adds nothing.
GRPC_DEFAULTS = (
    ("grpc.initial_reconnect_backoff_ms", 1000),
    ("grpc.max_reconnect_backoff_ms", 120_000),
)
POLL_S = 0.05


async def first_answer_after(client: Client, since: list[float]) -> float:
    """Call the server every 50 ms; return the time of the first answer at or after the
    moment ``since`` holds (set once the server is back)."""
    while True:
        with contextlib.suppress(TotemError):
            await client.server_key()
            now = time.monotonic()
            if since and now >= since[0]:
                return now
        await asyncio.sleep(POLL_S)


async def one_round(down: float) -> tuple[float, float]:
    """Seconds from the restarted server's ready line to each client's first answer:
    ``connect()``'s, then the one with gRPC's defaults."""
    with harness.fresh_store("sqlite") as (store, _, folder):
        server = harness.Server(store, folder)
        server.start()
        try:
            common: dict[str, Any] = {"organiser_token": harness.ORGANISER_TOKEN, "call_timeout": 5}
            async with (
                connect(server.address, **common) as ours,
                connect(server.address, **common, options=GRPC_DEFAULTS) as default,
            ):
                await ours.server_key()
                await default.server_key()
                back: list[float] = []
                waits = [
                    asyncio.create_task(first_answer_after(client, back))
                    for client in (ours, default)
                ]
                server.kill()
                await asyncio.sleep(down)
                server.start()
                back.append(time.monotonic())
                ours_at, default_at = await asyncio.gather(*waits)
                return ours_at - back[0], default_at - back[0]
        finally:
            server.stop()


async def run(down: float, rounds: int) -> None:
    print("| server down | round | connect() | gRPC defaults |\n|---|---|---|---|", flush=True)
    for index in range(rounds):
        ours, default = await one_round(down)
        print(f"| {down:g} s | {index + 1} | {ours:.2f} s | {default:.2f} s |", flush=True)


def main() -> None:
    parser = harness.arguments(__doc__, store=False, root=False)
    parser.add_argument("--down", type=float, default=30.0, help="seconds the server is down")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(run(args.down, args.rounds))


if __name__ == "__main__":
    main()
