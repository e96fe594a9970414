"""Receive stamps: taken the moment a request handler starts, before any await (JS-5.1)."""

from __future__ import annotations

import itertools
import time

from domain.kernel.stamps import ReceiveStamp


class Stamper:
    """Hands out receive stamps in receive order for one server process."""

    def __init__(self) -> None:
        self._sequence = itertools.count(1)

    def stamp(self, seen_version: int = 0) -> ReceiveStamp:
        return ReceiveStamp(
            sequence=next(self._sequence),
            monotonic_ns=time.monotonic_ns(),
            wall_ns=time.time_ns(),
            seen_version=seen_version,
        )
