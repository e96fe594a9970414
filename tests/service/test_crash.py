"""A short crash test (bench/crash.py runs the long one): bot matches of every game, the
server killed with SIGKILL at random moments and started again on the same store; every
acknowledged command is stored as acknowledged, every match verifies, no stream had a
gap, timers fire again. On SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from pathlib import Path

import pytest

from bench import crash
from bench.crash import Recorder, crash_run

KILLS = 3
BOUND = 10.0


async def test_nothing_acknowledged_is_lost_across_sigkills(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    report = await crash_run(store_env, "store", KILLS, seed=7, workdir=tmp_path)
    assert report.problems == []
    assert report.kills == KILLS
    assert report.acknowledged_events > 0
    assert report.timer_events_after_last_restart > 0
    assert report.matches_verified > 0


async def test_the_crash_check_finds_a_lost_acknowledgement(tmp_path: Path) -> None:
    """The same run, with one acknowledged event taken out of the store before the
    check: it must be reported (the check can fail)."""
    db = tmp_path / "lost.db"
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(db)}
    lost: list[str] = []

    def drop_one(recorder: Recorder) -> None:
        match_id, answers = next(iter(recorder.acts.items()))
        version = answers[0][1][-1].version
        with sqlite3.connect(db, isolation_level=None) as conn:
            conn.execute(
                "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = ?",
                (uuid.UUID(match_id).hex, version),
            )
        lost.append(f"match {match_id}: acknowledged version {version} is missing")

    report = await crash_run(env, "SQLite", 1, seed=3, workdir=tmp_path, damage=drop_one)
    assert lost and lost[0] in report.problems
    assert any("verify --all failed" in p for p in report.problems)


async def test_bot_tables_that_do_not_stop_are_reported_not_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A table that ignores its cancellation makes the run fail with where it waits,
    instead of a run that never ends."""
    monkeypatch.setattr(crash, "STOP_TABLES_S", 0.05)
    release = asyncio.Event()

    async def stubborn() -> None:
        while not release.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await release.wait()

    async def obedient() -> None:
        await asyncio.Event().wait()

    players = [
        asyncio.create_task(stubborn(), name="village"),
        asyncio.create_task(obedient(), name="tribes"),
    ]
    await asyncio.sleep(0)
    report = crash.Report("store")
    await crash.stop_tables(players, report)
    release.set()
    await asyncio.wait_for(players[0], BOUND)
    assert len(report.problems) == 1
    assert report.problems[0].startswith("the village tables did not stop within 0.05 s")
    assert "stubborn" in report.problems[0]
