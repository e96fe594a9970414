"""The shared deadline of stream writes (server.limits.WriteDeadlines), on its own: a write
its client never takes is cut, one it takes is not, and other cancellations pass through.
The end-to-end case (a real client that stops reading) is in test_slow_streams.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.limits import WriteDeadlines

BOUND = 10.0


class Context:
    """A servicer context whose writes finish only when told (a client's window)."""

    def __init__(self) -> None:
        self.taken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.begun = asyncio.Event()
        self.written: list[Any] = []

    async def write(self, data: Any) -> None:
        self.begun.set()
        await self.taken
        self.written.append(data)


async def begun(deadlines: WriteDeadlines, context: Context, data: bytes) -> asyncio.Task[bool]:
    """A write of ``data``, under way: its client has not taken it yet."""
    task = asyncio.ensure_future(deadlines.write(context, data))
    await asyncio.wait_for(context.begun.wait(), BOUND)
    return task


async def test_a_write_never_taken_is_cut_and_its_task_is_not_left_cancelled() -> None:
    deadlines = WriteDeadlines(0.02)
    context = Context()

    async def stream() -> tuple[bool, int]:
        cut = await deadlines.write(context, b"event")
        task = asyncio.current_task()
        assert task is not None
        cancelling = task.cancelling()
        await asyncio.sleep(0)  # the stream carries on: no cancellation is left pending
        return cut, cancelling

    assert await asyncio.wait_for(asyncio.ensure_future(stream()), BOUND) == (False, 0)
    assert context.written == []
    assert deadlines.waiting() == 0


async def test_a_write_taken_in_time_is_not_cut() -> None:
    deadlines = WriteDeadlines(60.0)
    context = Context()
    writing = await begun(deadlines, context, b"event")
    assert deadlines.waiting() == 1
    context.taken.set_result(None)
    assert await asyncio.wait_for(writing, BOUND) is True
    assert context.written == [b"event"]
    assert deadlines.waiting() == 0


async def test_another_cancellation_of_the_writer_is_not_taken_for_a_deadline() -> None:
    deadlines = WriteDeadlines(60.0)
    context = Context()
    writing = await begun(deadlines, context, b"event")
    writing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writing
    assert deadlines.waiting() == 0


async def test_only_the_late_writes_are_cut() -> None:
    deadlines = WriteDeadlines(0.05)
    stuck, quick = Context(), Context()
    cut = asyncio.ensure_future(deadlines.write(stuck, b"a"))
    taken = await begun(deadlines, quick, b"b")
    quick.taken.set_result(None)
    assert await asyncio.wait_for(taken, BOUND) is True
    assert await asyncio.wait_for(cut, BOUND) is False
    assert (stuck.written, quick.written) == ([], [b"b"])
