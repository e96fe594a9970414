"""A gRPC server that does nothing but stamp: the baseline of ``bench/race.py --bare``.

Run by bench/race.py (:class:`race.BareServer`) as ``python bench/race_bare.py``, in a
process of its own, like ``totem serve``. It answers the two methods a grab can take, on
the real server's paths, so that the contenders send byte for byte the requests they send
the real server; no request is ever decoded:

- ``/totem.v1.MatchService/Act`` (unary): the answer is the call's receive stamp, taken
  by the arrival interceptor as ``totem serve`` takes an Act's, packed as :data:`STAMP`
  (sequence, monotonic_ns, wall_ns);
- ``/totem.v1.MatchService/Play`` (bidirectional stream): a task of the stream reads its
  messages in a loop and the handler answers each, in order, with its own :data:`STAMP`,
  taken right after the message is read, as ``totem serve`` stamps a Play message
  (``bench/race.py --via play``). The same stamper as Act's: one receive sequence.

What matters for arrival order is taken from ``totem serve`` as it is: gRPC's older
listener (``GRPC_EXPERIMENTS=-event_engine_listener``, set by the ``server`` package
before gRPC loads, unless the environment already names experiments), Python's 0.2 ms
switch interval, the server's channel options, the methods registered both as generic
and as registered handlers, and an Act's stamp taken by the server's own
:class:`server.stamps.ArrivalStamps` interceptor when the call's headers arrive, before
its message is read (Play is not stamped there: its calls arrive before the race). What
the real Play does beside the stamp is left out too: decoding the message (this server
stamps the raw bytes as they come out of the stream's iterator), the reading task's
bound on unanswered requests, the answers' wait for the save. Everything else the real
server does is left out: the second interceptor (``CallLimit``), health and reflection,
matches, decisions, saves, Watch streams. The stamp spread measured against this server
is what gRPC and Python alone cost.

It prints ``bare gRPC serving on HOST:PORT`` on stderr once it listens, and stops on
SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import struct
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

# Imported for its side effect: the server package sets GRPC_EXPERIMENTS when it is
# imported, before gRPC loads; grpc itself is imported only inside the functions below.
import server  # noqa: F401

#: The answer: the call's receive sequence, CLOCK_MONOTONIC and CLOCK_REALTIME in ns.
STAMP = struct.Struct("<qqq")
SERVICE = "totem.v1.MatchService"
METHOD = "Act"
PATH = f"/{SERVICE}/{METHOD}"
#: The stream a grab can be sent on instead (``bench/race.py --via play``).
PLAY_METHOD = "Play"
PLAY_PATH = f"/{SERVICE}/{PLAY_METHOD}"
#: server.serve.SWITCH_INTERVAL_S (not imported: that module loads the whole server).
SWITCH_INTERVAL_S = 0.0002
#: server.limits.Limits.pending_calls, the default ``totem serve`` runs with.
PENDING_CALLS = 20000


async def serve(address: str) -> None:
    import grpc

    from server.stamps import ArrivalStamps, Stamper

    sys.setswitchinterval(SWITCH_INTERVAL_S)
    stamper = Stamper()

    async def act(_request: bytes, _context: Any) -> bytes:
        stamp = stamper.on_arrival(0)
        return STAMP.pack(stamp.sequence, stamp.monotonic_ns, stamp.wall_ns)

    async def play(requests: AsyncIterator[bytes], context: Any) -> None:
        # As totem serve's Play: a task of the stream only reads, stamping each message as
        # it comes out of the stream's iterator; the handler writes the answers, in order.
        # Not a write after each read in one loop: gRPC's core may write to the socket
        # inline when a write is started, and such a write after each stamp, where the
        # real server's answers wait for the save, more than doubled the stamp spread
        # (about 190 against 15 µs between successive stamps).
        answers: asyncio.Queue[bytes | None] = asyncio.Queue()

        async def read() -> None:
            try:
                async for _request in requests:
                    stamp = stamper.stamp()
                    answers.put_nowait(
                        STAMP.pack(stamp.sequence, stamp.monotonic_ns, stamp.wall_ns)
                    )
            finally:
                answers.put_nowait(None)

        reader = asyncio.create_task(read())
        try:
            while (answer := await answers.get()) is not None:
                await context.write(answer)
            await reader
        finally:
            reader.cancel()

    grpc_server = grpc.aio.server(
        interceptors=[ArrivalStamps(stamper, frozenset({PATH}))],
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.server.max_pending_requests", PENDING_CALLS),
            ("grpc.server.max_pending_requests_hard_limit", PENDING_CALLS),
        ],
    )
    # Raw bytes both ways (no serializers), registered as the real server registers its
    # methods: a generic handler, and a registered method gRPC's core matches itself.
    handlers = {
        METHOD: grpc.unary_unary_rpc_method_handler(act),
        PLAY_METHOD: grpc.stream_stream_rpc_method_handler(play),
    }
    grpc_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    grpc_server.add_registered_method_handlers(SERVICE, handlers)
    port = grpc_server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    await grpc_server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    host = address.rsplit(":", 1)[0]
    experiments = os.environ.get("GRPC_EXPERIMENTS", "")
    print(
        f"bare gRPC serving on {host}:{port} (GRPC_EXPERIMENTS={experiments})",
        file=sys.stderr,
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await grpc_server.stop(grace=None)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="A grpc.aio server that only stamps each Act call's arrival and each "
        "Play message as it is read, as totem serve does, and answers with the stamp: "
        "bench/race.py --bare starts it."
    )
    parser.add_argument("--address", default="127.0.0.1:0", help="port 0 picks a free port")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.address))


if __name__ == "__main__":
    main()
