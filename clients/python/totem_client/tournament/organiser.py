"""The organiser's side of running a tournament to its end: start each round as soon as
the rules allow it, end the tournament, and report the progress.

:func:`conduct` follows the tournament's events (one WatchTournament stream) and reads
the tournament (GetTournament) after each batch of them. It starts round 1 at once, and
each next round once the round before has ended (TO-9.5), its dispute window has closed
and no dispute is open (TO-9.1); after the last round it ends the tournament (TO-11.1)
unless the server has already done so. A round's dispute window closes at a time and no
event marks it: that one wait is for the window's deadline (or the next event, whichever
comes first). The server may start a round or end the tournament by its own timer: a
refusal of StartRound or EndTournament is then no failure, and the next reading shows
what happened.

:func:`run_tournament` does all of it with bots: it creates the tournament, enters the
entrants, plays each entrant's tables with the game's bot
(:func:`~totem_client.tournament.entrant.play_entrant`, sharing the organiser's stream
of events) and returns the signed result sheet.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from google.protobuf.message import Message

from totem_client.bots.command import CountingBot
from totem_client.client import Client
from totem_client.errors import TotemError
from totem_client.reconnect import PATIENCE, pause
from totem_client.session import Session
from totem_client.tournament.client import TournamentClient
from totem_client.tournament.entrant import EntrantRun, play_entrant
from totem_client.tournament.results import (
    EntrantTicket,
    ResultSheet,
    RoundInfo,
    Standings,
    TournamentEvent,
    TournamentInfo,
)


class Progress(Protocol):
    """What :func:`conduct` reports as the tournament goes."""

    def round_started(self, round_: RoundInfo, total: int) -> None:
        """A round has started (by this organiser or the server's timer)."""

    def tables_finished(self, round_: RoundInfo, total: int) -> None:
        """More tables of the round under way have their result."""

    def round_ended(self, round_: RoundInfo, total: int, standings: Standings) -> None:
        """Every table of the round has its result; the standings after it."""

    def ended(self, tournament: TournamentInfo) -> None:
        """The tournament has ended: its final event is recorded."""


class Silent:
    """A :class:`Progress` that reports nothing."""

    def round_started(self, round_: RoundInfo, total: int) -> None:
        pass

    def tables_finished(self, round_: RoundInfo, total: int) -> None:
        pass

    def round_ended(self, round_: RoundInfo, total: int, standings: Standings) -> None:
        pass

    def ended(self, tournament: TournamentInfo) -> None:
        pass


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Broadcast:
    """One stream of a tournament's events handed to several readers, each from the first
    event: every reader gets every event, in order, and the end."""

    def __init__(self) -> None:
        self._queues: list[asyncio.Queue[TournamentEvent | None]] = []
        self._past: list[TournamentEvent] = []
        self._done = False

    def reader(self) -> AsyncIterator[TournamentEvent]:
        queue: asyncio.Queue[TournamentEvent | None] = asyncio.Queue()
        for event in self._past:
            queue.put_nowait(event)
        if self._done:
            queue.put_nowait(None)
        self._queues.append(queue)
        return self._read(queue)

    @staticmethod
    async def _read(
        queue: asyncio.Queue[TournamentEvent | None],
    ) -> AsyncIterator[TournamentEvent]:
        while (event := await queue.get()) is not None:
            yield event

    def put(self, event: TournamentEvent) -> None:
        self._past.append(event)
        for queue in self._queues:
            queue.put_nowait(event)

    def close(self) -> None:
        self._done = True
        for queue in self._queues:
            queue.put_nowait(None)

    async def feed(self, events: AsyncIterator[TournamentEvent]) -> None:
        """Hand on every event of ``events``, then the end (also if it fails)."""
        try:
            async for event in events:
                self.put(event)
        finally:
            self.close()


@dataclass
class _Report:
    """What has been reported so far, so that each change is reported once."""

    started: set[int] = field(default_factory=set)
    finished: dict[int, int] = field(default_factory=dict)
    ended: set[tuple[int, int]] = field(default_factory=set)


async def _report(
    tournaments: TournamentClient, info: TournamentInfo, progress: Progress, seen: _Report
) -> None:
    total = info.summary.rounds
    for round_ in info.rounds:
        if round_.number not in seen.started:
            seen.started.add(round_.number)
            progress.round_started(round_, total)
        done = round_.tables_finished
        if done and seen.finished.get(round_.number, 0) != done and round_.tables:
            seen.finished[round_.number] = done
            progress.tables_finished(round_, total)
        key = (round_.number, round_.ended_ms)
        if round_.ended and key not in seen.ended:
            seen.ended.add(key)
            standings = await tournaments.standings(info.tournament_id, round_.number)
            progress.round_ended(round_, total, standings)


def _next_step(info: TournamentInfo, at_ms: int) -> tuple[str, int | None]:
    """What the organiser does next: ``start``, ``end`` or ``wait``, and for a wait the
    time (ms) at which it may be worth looking again without an event (None: at the next
    event)."""
    current = info.current_round
    if current is None:
        return "start", None
    if not current.ended:
        return "wait", None
    if at_ms < current.dispute_deadline_ms:
        return "wait", current.dispute_deadline_ms
    if info.open_disputes:
        return "wait", None
    if len(info.rounds) < info.summary.rounds:
        return "start", None
    return "end", None


async def conduct(
    tournaments: TournamentClient,
    tournament_id: str,
    *,
    progress: Progress | None = None,
    events: AsyncIterator[TournamentEvent] | None = None,
    end: bool = True,
) -> TournamentInfo:
    """Run the tournament's rounds as its organiser until it has ended (see the module's
    docstring); the tournament as it ended. ``events``: its events from the first (by
    default a watch stream of its own). ``end`` False leaves the end to the server's
    timer. A refusal that is not about timing is raised as :class:`TotemError`."""
    progress = progress or Silent()
    seen = _Report()
    changed = asyncio.Event()
    if events is None:
        events = tournaments.watch(tournament_id, max_failures=PATIENCE)

    async def follow() -> None:
        async for _ in events:
            changed.set()
        changed.set()

    follower = asyncio.create_task(follow(), name=f"tournament {tournament_id} events")
    refusals = 0
    try:
        while True:
            changed.clear()  # before reading: a change after the reading wakes the wait
            info = await tournaments.get(tournament_id)
            await _report(tournaments, info, progress, seen)
            if info.ended:
                progress.ended(info)
                return info
            step, until_ms = _next_step(info, now_ms())
            if step == "end" and not end:
                step = "wait"
            if step in ("start", "end"):
                try:
                    if step == "start":
                        await tournaments.start_round(tournament_id)
                    else:
                        await tournaments.end(tournament_id)
                    refusals = 0
                    continue
                except TotemError as error:
                    if error.code != grpc.StatusCode.FAILED_PRECONDITION:
                        raise
                    # The server's timer was first, or its clock is behind ours: look
                    # again at the next event, or after a pause.
                    refusals += 1
                    until_ms = now_ms() + int(1000 * pause(refusals, error))
            if follower.done():
                follower.result()  # raises what stopped the stream
                if until_ms is None:
                    raise TotemError(
                        grpc.StatusCode.DATA_LOSS,
                        "the tournament's event stream ended before the tournament did",
                    )
            await _wait(changed, until_ms)
    finally:
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError, TotemError):
            await follower


async def _wait(changed: asyncio.Event, until_ms: int | None) -> None:
    """Until an event comes, or the time ``until_ms`` (ms since the epoch) if given."""
    if until_ms is None:
        await changed.wait()
        return
    seconds = max(0.0, (until_ms - now_ms()) / 1000)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await changed.wait()


@dataclass
class TournamentRun:
    """A tournament run to its end by :func:`run_tournament`."""

    tournament_id: str
    entrants: list[EntrantTicket]
    final: TournamentInfo
    sheet: ResultSheet
    entrant_runs: list[EntrantRun]


async def run_tournament(
    client: Client,
    game: str,
    options: Message | None,
    *,
    entrants: int,
    bot: Callable[[Session], CountingBot] | None,
    tournaments: TournamentClient | None = None,
    progress: Progress | None = None,
    on_created: Callable[[str, list[EntrantTicket]], None] | None = None,
    names: Callable[[int], str] = lambda i: f"bot-{i}",
    **settings: Any,
) -> TournamentRun:
    """Create a tournament of ``game`` (``settings``: the keywords of
    :meth:`TournamentClient.create`), enter ``entrants`` entrants named by ``names`` (from
    1: ``bot-1``...), play every entrant's tables with ``bot`` (None: nobody plays here,
    the entrants' tokens are for others, ``on_created`` hands them out), run the rounds
    to the end (:func:`conduct`) and fetch the signed result sheet."""
    tournaments = tournaments or TournamentClient.of(client)
    created = await tournaments.create(game, options, **settings)
    tid = created.tournament_id
    tickets = [await tournaments.add_entrant(tid, names(i)) for i in range(1, entrants + 1)]
    if on_created is not None:
        on_created(tid, tickets)
    broadcast = Broadcast()
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(
                broadcast.feed(tournaments.watch(tid, max_failures=PATIENCE)),
                name=f"tournament {tid} events",
            )
            players = []
            if bot is not None:
                players = [
                    group.create_task(
                        play_entrant(
                            client,
                            tid,
                            ticket.token,
                            bot,
                            tournaments=tournaments,
                            events=broadcast.reader(),
                            name=ticket.name,
                            game=game,
                        ),
                        name=f"entrant {ticket.name}",
                    )
                    for ticket in tickets
                ]
            final = await conduct(tournaments, tid, progress=progress, events=broadcast.reader())
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from failed
    sheet = await tournaments.result_sheet(tid)
    return TournamentRun(tid, tickets, final, sheet, [task.result() for task in players])
