"""Crash test: bot matches of every game while the server is killed (SIGKILL) at random
moments and started again on the same store.

What must hold, checked at the end against the store itself:

- every acknowledged command is stored: each event an Act answer carried is in the
  store at its version, with the same digest (so it is the command's own event, not
  another one that took its place), and every acknowledged join's version is stored;
- every match verifies (``totem-replay verify --all``: chain, signatures, seeds, draws);
- no stream saw a gap or a duplicate: every bot's stream resumed by itself across the
  restarts and yielded versions 1, 2, 3, ... (the client library refuses a gap);
- timers fire again: a match nobody plays, moved on only by its turn timer, has events
  recorded by the server after the last restart.

Run: ``python bench/crash.py [--kills 24] [--postgres [DSN]]`` (never part of pass/fail);
``tests/service/test_crash.py`` runs a short version in the test suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import random
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bench import harness
from domain.kernel.views import Viewer
from entrypoints.totem_replay import main as replay_main
from server import codec
from storage.arena import Arena
from totem_client import connect
from totem_client.bots import base as bot_base
from totem_client.bots import jungle_speed, tribes, village
from totem_client.client import Client
from totem_client.errors import TotemError
from totem_client.messages import MatchEvent
from totem_client.streams import RESUMABLE_CODES

#: Seconds the server runs between two kills: drawn uniformly in this range.
RUN_BETWEEN_KILLS_S = (0.4, 2.0)
#: The timer-only match: its turn timer moves it on while nobody plays.
TIMER_MS = 150
#: Seconds the bot tables have to stop once cancelled at the end of a run.
STOP_TABLES_S = 30.0
#: Each game's bot table, and its turn timer.
TABLES: dict[str, tuple[Callable[..., Awaitable[Any]], dict[str, int]]] = {
    "jungle_speed": (jungle_speed.play_table, {"turn_timeout_ms": 1000}),
    "tribes": (tribes.play_table, {"turn_timeout_ms": 1000}),
    "village": (village.play_table, {}),
}


@dataclass
class Report:
    store: str
    kills: int = 0
    acknowledged_events: int = 0
    acknowledged_joins: int = 0
    tables_finished: dict[str, int] = field(default_factory=dict)
    timer_events_after_last_restart: int = 0
    matches_verified: int = 0
    problems: list[str] = field(default_factory=list)


class Recorder:
    """Every acknowledgement the clients received: each command's answer's events (by an
    Act call or on a Play stream, as the bots send them), as the seat that sent the
    command saw them, and the version of each join."""

    def __init__(self) -> None:
        self.acts: dict[str, list[tuple[int, list[MatchEvent]]]] = {}
        self.joins: dict[str, list[int]] = {}

    def recorded(self, act: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """``act`` (a client's or a Play stream's), noting each answer's events."""

        async def recorded_act(match_id: str, *args: Any, **kwargs: Any) -> Any:
            response = await act(match_id, *args, **kwargs)
            if response.events:
                answer = (kwargs["seat"], list(response.events))
                self.acts.setdefault(match_id, []).append(answer)
            return response

        return recorded_act

    def watch(self, client: Client) -> None:
        join, play = client.join, client.play

        async def recorded_join(match_id: str, *args: Any, **kwargs: Any) -> Any:
            session = await join(match_id, *args, **kwargs)
            self.joins.setdefault(match_id, []).append(session.seen_version)
            return session

        def recorded_play(*args: Any, **kwargs: Any) -> Any:
            stream = play(*args, **kwargs)
            stream.act = self.recorded(stream.act)  # type: ignore[method-assign,assignment]
            return stream

        client.act = self.recorded(client.act)  # type: ignore[method-assign,assignment]
        client.join = recorded_join  # type: ignore[method-assign]
        client.play = recorded_play  # type: ignore[method-assign]


async def tables(client: Client, game: str, rng: random.Random, report: Report) -> None:
    """Bot matches of ``game``, one after the other, for ever; a table that failed while
    the server was away (its creation or a join) is started again."""
    play_table, timer = TABLES[game]
    while True:
        try:
            await play_table(client, 2, seed=rng.randrange(1 << 30), **timer)
        except TotemError as error:
            if error.code not in RESUMABLE_CODES:  # a gap in a stream (DATA_LOSS), say
                report.problems.append(f"a {game} table failed: {error}")
            await asyncio.sleep(0.2)
            continue
        report.tables_finished[game] = report.tables_finished.get(game, 0) + 1


async def stop_tables(players: list[asyncio.Task[None]], report: Report) -> None:
    """Cancel the bot tables; one that does not stop in time is a problem, reported with
    where it waits, rather than a run that never ends."""
    for task in players:
        task.cancel()
    _, stuck = await asyncio.wait(players, timeout=STOP_TABLES_S)
    for task in players:
        if task in stuck:
            where = io.StringIO()
            task.print_stack(file=where)
            report.problems.append(
                f"the {task.get_name()} tables did not stop within {STOP_TABLES_S:g} s of "
                f"being cancelled; waiting at:\n{where.getvalue()}"
            )
        elif not task.cancelled():
            error = task.exception()
            if error is not None and not isinstance(error, TotemError):
                raise error


async def crash_run(
    env: Mapping[str, str],
    store: str,
    kills: int,
    seed: int,
    workdir: Path,
    damage: Callable[[Recorder], None] | None = None,
) -> Report:
    """Play, kill and restart ``kills`` times, then check what was acknowledged.
    ``damage`` (for testing the check itself) may change the store before the check."""
    rng = random.Random(seed)
    report = Report(store)
    recorder = Recorder()
    bot_base.MAX_TRANSIENT_FAILURES = 1000  # the bots ride out every restart
    server = harness.Server(env, workdir)
    server.start()
    try:
        async with connect(server.address, organiser_token=harness.ORGANISER_TOKEN) as client:
            recorder.watch(client)
            await client.wait_ready(30)
            # A Jungle Speed match of two whose players never act: only its timer moves it.
            idle = (await client.create_match(max_players=2, turn_timeout_ms=TIMER_MS)).match_id
            for name in ("idle-1", "idle-2"):
                await client.join(idle, name)
            players = [
                asyncio.create_task(tables(client, game, rng, report), name=game)
                for game in ("jungle_speed", "tribes", "village")
            ]
            idle_version = 0
            for _ in range(kills):
                await asyncio.sleep(rng.uniform(*RUN_BETWEEN_KILLS_S))
                server.kill()
                report.kills += 1
                server.start()
            with contextlib.suppress(TotemError):
                idle_version = (await client.get(idle)).summary.version
            await asyncio.sleep(1.0)  # the timers and the bots carry on after the last one
            await stop_tables(players, report)
            final = (await client.get(idle)).summary.version
            report.timer_events_after_last_restart = final - idle_version
    finally:
        server.stop()
    if damage is not None:
        damage(recorder)
    check(env, recorder, report, idle)
    return report


def check(env: Mapping[str, str], recorder: Recorder, report: Report, idle: str) -> None:
    """Compare every acknowledgement with the store, and verify every match."""
    arena = Arena(dict(env))
    try:
        for match_id, answers in recorder.acts.items():
            check_answers(arena, uuid.UUID(match_id), answers, report)
        for match_id, versions in recorder.joins.items():
            last = max(e.originator_version for e in arena.events_after(uuid.UUID(match_id)))
            report.acknowledged_joins += len(versions)
            report.problems += [
                f"match {match_id}: acknowledged join at version {v} not stored"
                for v in versions
                if v > last
            ]
    finally:
        arena.close()
    if report.timer_events_after_last_restart <= 0:
        report.problems.append(f"the timer of match {idle} did not fire after the last restart")
    argv = ["verify", "--all", "--json"]
    if env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite":
        argv = ["--db", env["SQLITE_DBNAME"], *argv]
    verified = CliRunner().invoke(replay_main, argv, env=dict(env))
    lines = [line for line in verified.stdout.splitlines() if line.strip()]
    report.matches_verified = sum('"ok": true' in line for line in lines)
    if verified.exit_code != 0:
        report.problems.append(f"totem-replay verify --all failed:\n{verified.output[-2000:]}")


def check_answers(
    arena: Arena, match_id: uuid.UUID, answers: list[tuple[int, list[MatchEvent]]], report: Report
) -> None:
    """Each answer's events must be the stored events at their versions, encoded for the
    seat that acted exactly as the server encodes them (so each is the command's own
    event, not another that took its version). The stored events are walked once."""
    ending: dict[int, list[tuple[int, list[MatchEvent]]]] = {}
    for seat, events in answers:
        ending.setdefault(events[-1].version, []).append((seat, events))
        report.acknowledged_events += len(events)
    stored = arena.events_after(match_id)
    by_version = {e.originator_version: e for e in stored}
    report.problems += [
        f"match {match_id}: acknowledged version {received.version} is missing"
        for _, events in answers
        for received in events
        if received.version not in by_version
    ]
    match: Any = None
    for evt in stored:
        try:
            match = evt.mutate(match)
        except Exception as exc:  # a hole or a forgery: verify --all names it too
            report.problems.append(
                f"match {match_id}: the stored events stop replaying at version "
                f"{evt.originator_version}: {exc!r}"
            )
            return
        for seat, events in ending.pop(evt.originator_version, []):
            viewer = Viewer.player(seat)
            for received in events:
                own = by_version.get(received.version)
                if own is not None and codec.match_event(match, own, viewer) != received:
                    report.problems.append(
                        f"match {match_id}: acknowledged version {received.version} holds "
                        "another event"
                    )


def print_report(report: Report, seconds: float) -> None:
    print(f"## {report.store}: {report.kills} SIGKILLs in {seconds:.0f} s")
    for name, value in (
        ("acknowledged events checked against the store", report.acknowledged_events),
        ("acknowledged joins checked", report.acknowledged_joins),
        ("bot tables played to the end", report.tables_finished),
        ("timer events after the last restart", report.timer_events_after_last_restart),
        ("matches verified", report.matches_verified),
        ("problems", len(report.problems)),
    ):
        print(f"- {name}: {value}")
    print("".join(f"  - {problem}\n" for problem in report.problems), end="")


def main() -> None:
    parser = harness.arguments(__doc__, store=False, root=False)
    parser.add_argument("--kills", type=int, default=24, help="SIGKILLs per store")
    parser.add_argument(
        "--postgres", nargs="?", const=harness.DEFAULT_DSN, help="also PostgreSQL (DSN)"
    )
    parser.add_argument("--seed", type=int, default=1, help="of the kills")
    args = parser.parse_args()
    failed = False
    for postgres in [None] + ([args.postgres] if args.postgres else []):
        kind = "sqlite" if postgres is None else "postgres"
        with harness.fresh_store(kind, postgres or "") as (env, name, folder):
            began = time.monotonic()
            report = asyncio.run(crash_run(env, name, args.kills, args.seed, folder))
            print_report(report, time.monotonic() - began)
            failed |= bool(report.problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
