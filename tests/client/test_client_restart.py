"""A table of bots rides out a crash of the server: ``totem serve`` is killed under it and
started again on the same store, and the match goes on to its end.

Nothing here is timed: the test waits for events (every bot has tried the absent server
again), and its bounds only keep a broken test from hanging. How soon clients are back
is measured in ``bench/reconnect.py``.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.cli.test_serve import free_port, launch
from tests.client.support import BOUND
from tests.service.helpers import ORGANISER_TOKEN
from tests.service.limits_helpers import until
from totem.v1 import common_pb2
from totem_client import Client, connect
from totem_client.bots.jungle_speed import JungleSpeedBot
from totem_client.bots.table import run_bots

#: The turn timer, far longer than a bot takes to reveal (0 to 5 ms).
SAFETY_NET_MS = 2000
#: A whole match, restart included: a bound against hanging, not a timing assertion.
MATCH_BOUND = 300.0
#: The version after which the server is killed: the match is well under way (both
#: seats have revealed) and far from its end (each seat holds about 40 cards).
KILL_AFTER_VERSION = 12
#: How often each bot's watch stream tries the absent server before it is started again:
#: more than a watch stream gives up after by default (``max_failures=10``), so the
#: bots are seen to be more patient than that (about two minutes).
ATTEMPTS_WHILE_AWAY = 12


class Served:
    """``totem serve`` on a port and store file of the test's choosing, killed and
    started again at will."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.port = free_port()
        self.process: subprocess.Popen[str] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Start it, and return once it says it is serving (its readiness line)."""
        self.process = await asyncio.to_thread(launch, self.db, self.port, "--log-level", "WARNING")

    def kill(self) -> None:
        """SIGKILL: a crash, with no goodbye to any client."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=BOUND)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(tmp_path / "arena.db")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def started(served: Served) -> AsyncIterator[tuple[Served, Client]]:
    await served.start()
    async with connect(served.address, organiser_token=ORGANISER_TOKEN) as client:
        yield served, client


async def test_a_table_of_bots_finishes_its_match_across_a_crash_of_the_server(
    started: tuple[Served, Client],
) -> None:
    served, client = started
    # The bots reveal within milliseconds; the turn timer (JS-3.4) is only a safety net
    # (without one, a match can reach a state where every card is face up and no seat may
    # act, restart or not), and the reveals it makes are counted apart (``timed_out``).
    created = await client.create_match(max_players=2, turn_timeout_ms=SAFETY_NET_MS)
    sessions = [await client.join(created.match_id, f"bot-{seat}") for seat in (0, 1)]
    bots = [
        JungleSpeedBot(session, reaction_ms=(0, 5), reveal_delay_ms=(0, 5)) for session in sessions
    ]
    table = asyncio.create_task(run_bots(created.match_id, bots))

    async for event in client.watch(created.match_id, with_state=False):
        if event.version >= KILL_AFTER_VERSION:
            break
    served.kill()

    # Every bot's watch stream has broken and tried the absent server again and again
    # (its resumes count each new attempt).
    await until(
        lambda: (
            all(b.stream is not None and b.stream.resumes > ATTEMPTS_WHILE_AWAY for b in bots)
            or table.done()
        ),
        "every bot tried the absent server again and again",
    )
    assert not table.done(), table
    before = [bot.stats.reveals for bot in bots]
    assert all(before), before  # both seats played before the crash
    await served.start()

    result = await asyncio.wait_for(table, MATCH_BOUND)
    assert result.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert result.end_reason == "completed"
    assert sorted(s.seat for s in result.standings) == [0, 1]
    # Each bot played on after the restart, from its own resumed stream: it made more
    # reveals of its own (those of the timer are not counted there).
    after = [bot.stats.reveals for bot in bots]
    timed_out = [bot.stats.timed_out for bot in bots]
    assert all(a > b for a, b in zip(after, before, strict=True)), (before, after, timed_out)
    # The server's record agrees: the match ended, completed, with every event in order.
    events = [e async for e in client.watch(created.match_id, with_state=False)]
    assert [e.version for e in events] == list(range(1, len(events) + 1))
    assert events[-1].WhichOneof("event") == "match_ended"
    assert events[-1].version == result.summary.version
