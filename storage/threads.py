"""The worker threads that call the event store.

The ``eventsourcing`` library is synchronous, so every store call runs in one of these
threads while the event loop goes on. They are the server's own (not the loop's default
executor) so that shutting down can wait for the calls under way: a store closed under a
running save or read would lose an acknowledged event, or crash the process.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_WORKERS = 8


class StoreThreads:
    def __init__(self, workers: int = DEFAULT_WORKERS, name: str = "store") -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a store thread. Cancelling the caller does not stop a
        call under way: :meth:`close` waits for it."""
        return await self.submit(function, *args)

    def submit(self, function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """:meth:`call`, handed to a thread at once rather than when the caller is next
        scheduled; raises ``RuntimeError`` once the threads are closed."""
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._executor, functools.partial(function, *args))

    async def close(self) -> None:
        """Refuse new calls and wait for those under way to finish."""
        await asyncio.to_thread(self.shutdown)

    def shutdown(self) -> None:
        """:meth:`close`, from a thread that may block."""
        self._executor.shutdown(wait=True)
