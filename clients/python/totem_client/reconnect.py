"""Coming back after the server went away (a restart, a crash, a deploy).

Three things bring a client back, and every user of this package gets them (the library's
callers, the bots, ``totem play``):

- its channel tries to connect again soon (:data:`CHANNEL_OPTIONS`, which
  :func:`~totem_client.client.connect` sets unless told otherwise). gRPC's default
  backoff between connection attempts grows by 1.6 times up to 120 s: a client of a
  server that was down for half a minute went on failing with UNAVAILABLE for 8 s after
  the server was healthy again. Here the pause grows from 0.1 s to 1 s at most, so a
  client is back within about a second of the server;
- it waits what the server says: a refusal worth trying again (UNAVAILABLE while the
  server shuts down, RESOURCE_EXHAUSTED for a spent quota) carries a
  ``google.rpc.RetryInfo``, read as :attr:`TotemError.retry_delay`, and :func:`pause`
  waits that long; without a hint it backs off from 50 ms to 1 s;
- its streams resume: a Watch stream opens again after the last version it yielded
  (:class:`~totem_client.streams.EventStream`), and a session on a Play stream opens a
  new one with its next command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from totem_client.errors import TotemError

#: gRPC core's documented channel arguments for connection backoff. The first attempt
#: after a failure comes 0.1 s later, the pause grows by gRPC's 1.6 with a 20 % jitter,
#: and never exceeds 1 s. ``grpc.min_reconnect_backoff_ms`` is left at gRPC's 20 s: it
#: is the least time one attempt is given to complete (a slow TLS handshake), not a
#: pause between attempts, and a refused connection fails at once whatever it is.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
)

#: The pause after the first transient failure with no hint from the server, in seconds.
FIRST_PAUSE = 0.05
#: The longest pause with no hint: as long as the channel's longest backoff, so that a
#: client tries again as soon as its channel may have connected.
LONGEST_PAUSE = 1.0
#: Transient failures in a row after which the bots and a bot's watch stream give up:
#: with pauses of a second at most between them, the server has then been away for about
#: two minutes at least (longer when the server's hints say to wait longer).
PATIENCE = 120


def channel_options(options: Sequence[tuple[str, Any]] = ()) -> list[tuple[str, Any]]:
    """``options`` with :data:`CHANNEL_OPTIONS` added for each key they do not set: the
    caller's own value wins."""
    given = {key for key, _ in options}
    return [*options, *((key, value) for key, value in CHANNEL_OPTIONS if key not in given)]


def pause(failures: int, error: TotemError | None = None) -> float:
    """Seconds to wait before trying again after ``failures`` transient failures in a
    row, the last one ``error``: the delay the server gave with it (its RetryInfo), else
    50 ms doubling up to :data:`LONGEST_PAUSE`."""
    if error is not None and error.retry_delay is not None:
        return max(error.retry_delay, 0.0)
    return min(LONGEST_PAUSE, FIRST_PAUSE * 2.0 ** max(failures - 1, 0))
