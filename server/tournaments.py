"""The use cases of tournaments: create, enter, appoint, start a round, take a seat,
look, withdraw, dispute, rule, end, the result sheet, watch (docs/tournaments.md, TO-x.y).

Like :mod:`server.application` for matches, each use case takes plain values, authorises
its caller, runs the tournament's command (:class:`domain.tournament.Tournament`) and
saves what it caused before answering; it says nothing of protobuf or gRPC. A
tournament's tables are matches, created, joined and forked through
:class:`server.application.Matches`, so every rule of a match holds at a table.

The server also acts on a tournament by itself, as a match's timers do: when a table's
match ends, its result is recorded (TO-9.4); at a round's start deadline, the entrants who
have not taken their seats are recorded absent (TO-9.3) and a table short of players is
started with those present or decided without a match; once the last round's dispute
window has closed with no dispute open, the tournament ends with its signed result sheet
(TO-11). Every one of these is recomputed from the events after a restart
(:meth:`Tournaments.recover`), so a crash loses nothing acknowledged and a round resumes.

Commands on one tournament run one at a time in this process (a lock per tournament);
another server instance on the same store saving first makes a save fail as a conflict,
and the command is run again on the tournament as it now is.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar
from uuid import UUID, uuid4

from eventsourcing.persistence import IntegrityError

from domain.games import GAMES
from domain.kernel.commands import Stop
from domain.kernel.errors import RuleViolation
from domain.kernel.match import MatchAggregate, MatchStatus
from domain.kernel.signing import Signer
from domain.kernel.views import Viewer
from domain.tournament import Format, TieBreak, Tournament
from domain.tournament.aggregate import TableState, is_final
from domain.tournament.match_places import seat_entrants, table_places
from domain.tournament.model import TABLE_SIZES
from domain.tournament.verdicts import ReplayFrom, Verdict
from domain.tournament.views import event_view
from server import auth
from server.application import Matches
from server.failures import PermissionDenied, Unauthenticated, Unavailable
from server.fork import fork_match
from storage.sheets import sheet_document
from storage.tournaments import TournamentStore

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Times a command is run again when another instance saved the tournament first.
CONFLICT_ATTEMPTS = 5
#: How often a watcher looks at the store for events another instance saved.
WATCH_POLL_S = 2.0
#: How often the server looks for table matches another instance ended.
SWEEP_S = 5.0
#: The name a table's seat takes in its match: the entrant's, as the tournament has it.
NAME_LIMIT = 32


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Created:
    tournament_id: UUID
    seed_commitment: bytes


@dataclass(frozen=True)
class Entered:
    #: The entrant's token, shown once.
    token: str
    seed: int


@dataclass(frozen=True)
class Seated:
    match_id: UUID
    seat: int
    round: int
    table: int
    version: int


@dataclass(frozen=True)
class Ruled:
    number: int
    #: The fork a replay is played in ("" for any other ruling).
    replay_match_id: str


@dataclass(frozen=True)
class Sheet:
    document: str
    digest: str
    signature: str
    public_key: str


@dataclass(frozen=True)
class SeenEvent:
    """One event as a viewer may see it."""

    version: int
    name: str
    fields: dict[str, Any]
    digest: str


class Tournaments:
    """The tournament use cases over the store and the matches' use cases."""

    def __init__(
        self,
        store: TournamentStore,
        matches: Matches,
        signer: Signer | None,
        clock: Callable[[], int] = now_ms,
        shared: bool = False,
    ) -> None:
        self.store = store
        self.matches = matches
        self.signer = signer
        self.clock = clock
        self.threads = matches.actors.threads
        self._locks: defaultdict[UUID, asyncio.Lock] = defaultdict(asyncio.Lock)
        #: The tournament of each table match of a round under way (match id ->
        #: tournament id), so that a match's end records its result.
        self._tables: dict[UUID, UUID] = {}
        #: One timer per live tournament: its next start deadline or its end.
        self._timers: dict[UUID, asyncio.TimerHandle] = {}
        #: Woken each time a tournament's events are saved here.
        self._saved: defaultdict[UUID, asyncio.Event] = defaultdict(asyncio.Event)
        #: Woken when a table's match seats its entrants here (by match id).
        self._table_seated: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self.closed = False
        #: Other instances write to the same store: look for their table ends now and
        #: then (:meth:`_sweep`); alone, every match ends in this process.
        self.shared = shared
        matches.actors.when_ended(self._match_ended)

    # ---- running a command -------------------------------------------------------

    async def _run(self, tournament_id: UUID, command: Callable[[Tournament], T]) -> T:
        """Load the tournament, run ``command`` on it and save what it triggered, one
        command at a time per tournament; run again on a save conflict."""
        async with self._locks[tournament_id]:
            for attempt in range(CONFLICT_ATTEMPTS):
                try:
                    value, saved = await self.threads.call(self._step, tournament_id, command)
                except IntegrityError:
                    if attempt == CONFLICT_ATTEMPTS - 1:
                        raise
                    continue
                if saved is not None:
                    self._after_save(saved)
                return value  # type: ignore[no-any-return]  # the command's own
        raise AssertionError("unreachable")

    def _step(
        self, tournament_id: UUID, command: Callable[[Tournament], T]
    ) -> tuple[T, Tournament | None]:
        """The command's answer, and the tournament if it saved anything."""
        tournament = self.store.load(tournament_id)
        tournament.signer = self.signer
        value = command(tournament)
        if not tournament.pending_events:
            return value, None
        self.store.save(tournament)
        return value, tournament

    async def _load(self, tournament_id: UUID) -> Tournament:
        return await self.threads.call(self.store.load, tournament_id)

    def _after_save(self, tournament: Tournament) -> None:
        """Wake the watchers, follow the tables of the round under way, and set the
        tournament's timer."""
        event = self._saved.pop(tournament.id, None)
        if event is not None:
            event.set()
        for state in tournament.round_states:
            for table in state.tables:
                mid = UUID(table.match_id)
                if table.result is None and not tournament.ended:
                    self._tables[mid] = tournament.id
                else:
                    self._tables.pop(mid, None)
        self._schedule(tournament)

    # ---- who is who -----------------------------------------------------------------

    def _organiser(self, tournament: Tournament, caller: str | None) -> None:
        if not caller or not (
            tournament.is_organiser(auth.token_hash(caller))
            or self.matches.access.is_organiser(caller)
        ):
            raise PermissionDenied("only an organiser (the server's) runs a tournament")

    @staticmethod
    def _entrant(tournament: Tournament, caller: str | None) -> str:
        entrant = tournament.entrant_of(auth.token_hash(caller)) if caller else None
        if entrant is None:
            raise Unauthenticated("the token is not an entrant's of this tournament")
        return entrant

    @staticmethod
    def _referee(tournament: Tournament, caller: str | None) -> str:
        referee = tournament.referee_of(auth.token_hash(caller)) if caller else None
        if referee is None:
            raise PermissionDenied(
                "only a referee of the tournament (a token from AppointReferee) does this",
            )
        return referee

    # ---- the use cases -----------------------------------------------------------

    async def create(
        self,
        caller: str | None,
        game: str,
        options: Any,
        format: Format,
        table_size: int,
        title: str = "",
        rounds: int | None = None,
        tie_breaks: tuple[TieBreak, ...] | None = None,
        dispute_window_ms: int | None = None,
        no_show_ms: int | None = None,
        duplicate: bool = False,
        auto_rounds: bool = False,
    ) -> Created:
        """A new tournament of ``game`` whose tables play with ``options`` (the game's,
        decoded and checked), created by an organiser of the server (TO-8.1)."""
        if not caller or not self.matches.access.is_organiser(caller):
            raise PermissionDenied(
                "creating a tournament needs an organiser's token as 'authorization: "
                "Bearer <token>'",
            )
        self.matches.actors.check_open()
        # The game's own rules for its options, at the table's size (its rule id).
        replace(options, max_players=table_size).validate()
        min_seats = GAMES[game].aggregate.MIN_PLAYERS
        extra: dict[str, Any] = {}
        if tie_breaks:
            extra["tie_breaks"] = tie_breaks
        if dispute_window_ms is not None:
            extra["dispute_window_ms"] = dispute_window_ms
        if no_show_ms is not None:
            extra["no_show_ms"] = no_show_ms

        def make(seed: bytes) -> Tournament:
            return Tournament.create(
                organiser_token_hash=auth.token_hash(caller),
                game=game,
                options=options.to_dict(),
                format=format,
                table_size=table_size,
                seed=seed,
                title=title,
                rounds=rounds,
                duplicate=duplicate,
                auto_rounds=auto_rounds,
                min_seats=min_seats,
                max_seats=max(TABLE_SIZES),
                **extra,
            )

        tournament = await self.threads.call(self.store.create, make)
        self._after_save(tournament)
        return Created(tournament.id, bytes.fromhex(tournament.seed_commitment))

    async def add_entrant(self, tournament_id: UUID, caller: str | None, name: str) -> Entered:
        """Enter ``name`` and hand out their token, once (TO-8.2)."""
        token, token_hash = auth.new_token()

        def add(t: Tournament) -> int:
            self._organiser(t, caller)
            t.add_entrant(name, token_hash)
            return len(t.registered)

        seed = await self._run(tournament_id, add)
        return Entered(token, seed)

    async def appoint_referee(self, tournament_id: UUID, caller: str | None, name: str) -> str:
        """Appoint a referee of the tournament and hand out their token, once (TO-8.3)."""
        token, token_hash = auth.new_token()

        def appoint(t: Tournament) -> None:
            self._organiser(t, caller)
            t.appoint_referee(name, token_hash)

        await self._run(tournament_id, appoint)
        return token

    async def start_round(self, tournament_id: UUID, caller: str | None) -> Tournament:
        """The organiser starts the next round (TO-9.1): see :meth:`_start_round`."""
        return await self._start_round(tournament_id, caller, by_organiser=True)

    async def _start_round(
        self, tournament_id: UUID, caller: str | None, by_organiser: bool
    ) -> Tournament:
        """Pair the next round, create each table's match (its seats kept for the
        table's entrants, TO-9.2; its luck the round's on duplicate tables, TO-12.1) and
        record the round. The matches are saved first: a round recorded always has its
        matches; a failure after them leaves waiting matches nobody can join, which
        expire. ``by_organiser``: the caller must be one; else it is the server's timer
        of a tournament that starts its rounds by itself."""
        async with self._locks[tournament_id]:
            tournament = await self._load(tournament_id)
            if by_organiser:
                self._organiser(tournament, caller)
            at = self.clock()
            paired = tournament.pairing(at)
            seed = tournament.duplicate_seed_of(paired.number)
            ids = []
            for table in paired.tables:
                hashes = [tournament.token_hashes[e] for e in table.seats]
                ids.append(await self._create_table(tournament, len(table.seats), hashes, seed))

            tournament.signer = self.signer
            tournament.start_round(at, ids)
            await self.threads.call(self.store.save, tournament)
        self._after_save(tournament)
        return tournament

    async def _create_table(
        self, tournament: Tournament, seats: int, hashes: list[str], seed: bytes | None
    ) -> UUID:
        kind = GAMES[tournament.game]
        options = kind.options_from_dict(dict(tournament.options))
        options = replace(options, max_players=seats, reserved_for=list(hashes))
        if seed is not None:
            options = kind.duplicate_luck(options, seed, seats)
        return await self.matches.create_table(tournament.game, options)

    async def take_seat(self, tournament_id: UUID, caller: str | None) -> Seated:
        """The caller comes to their table of the round under way (recorded, TO-9.3) and
        is answered once its match has seated them: when every entrant of the table has
        come, all are seated in the pairing's seat order (so the seat the rules gave,
        TO-3.3, is the seat played); at the start deadline, those who came. Their entrant
        token is their seat's token in the match (TO-9.2). Asking again answers the same
        seat."""

        def come(t: Tournament) -> tuple[int, int, str]:
            entrant = self._entrant(t, caller)
            t.arrive(entrant, self.clock())
            current = t.round_states[-1]
            table = current.table_of(entrant)
            assert table is not None
            return current.number, table.number, table.match_id

        round_number, table_number, match_id = await self._run(tournament_id, come)
        await self._seat_if_ready(tournament_id, match_id)
        assert caller is not None
        seat, version = await self._seat_of(tournament_id, match_id, auth.token_hash(caller))
        return Seated(UUID(match_id), seat, round_number, table_number, version)

    async def _seat_of(
        self, tournament_id: UUID, match_id: str, token_hash: str
    ) -> tuple[int, int]:
        """The seat ``token_hash`` holds in the table's match and the match's version,
        once it holds one; refused if the table is decided without it meanwhile."""
        while True:
            seated = self._table_seated[match_id]
            match = await self.threads.call(self.matches.store.load, UUID(match_id))
            seat = match.seat_of(token_hash)
            if seat is not None:
                return seat, match.version
            tournament = await self._load(tournament_id)
            found = tournament.table_of_match(match_id)
            if found is None or tournament.round_state(found[0]).tables[found[1] - 1].result:
                raise RuleViolation("TO-9.4", "the table was decided without you: no seat")
            if self.closed:
                raise Unavailable("the server is shutting down: take your seat again")
            # Seated here or, with other instances, by one of them: look again now and then.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(seated.wait(), WATCH_POLL_S)

    async def _seat_if_ready(self, tournament_id: UUID, match_id: str) -> None:
        """Seat a table's entrants in its match, in the pairing's seat order, once every
        one who still plays it has come; past the start deadline (the absent recorded),
        start it with them if they are fewer than its seats (TO-9.3)."""
        tournament = await self._load(tournament_id)
        found = tournament.table_of_match(match_id)
        if found is None:
            return
        state = tournament.round_state(found[0])
        table = state.tables[found[1] - 1]
        present = [e for e in table.seats if e not in table.forfeits]
        if table.result is not None or not present or not set(present) <= set(table.arrived):
            return
        entrants = [(e[:NAME_LIMIT], tournament.token_hashes[e]) for e in present]
        short = len(present) < len(table.seats) and len(present) >= tournament.min_seats
        await self.matches.seat_table(
            UUID(match_id), entrants, self.matches.stamper.stamp(), start=short
        )
        self._table_seated.pop(match_id, asyncio.Event()).set()

    async def view(self, tournament_id: UUID) -> Tournament:
        """The tournament as it stands, for anyone: the service shows only what its
        views allow (no token hash, no seed before the end)."""
        return await self._load(tournament_id)

    async def list(self, after: int, limit: int) -> list[tuple[int, Tournament]]:
        """Tournaments after log position ``after``, with their positions."""

        def page() -> list[tuple[int, Tournament]]:
            return [
                (entry.originator_version, self.store.load(entry.tournament_id))
                for entry in self.store.logged(after, limit)
            ]

        return await self.threads.call(page)

    async def withdraw(self, tournament_id: UUID, caller: str | None, entrant: str) -> int:
        """Withdraw ``entrant`` (the caller's own entrant when empty; an organiser may
        withdraw anyone), TO-8.4. Returns the first round they do not play."""

        def go(t: Tournament) -> int:
            who = entrant
            if not who:
                who = self._entrant(t, caller)
            elif t.entrant_of(auth.token_hash(caller) if caller else "") != who:
                self._organiser(t, caller)
            t.withdraw(who, self.clock())
            return t.withdrawn[who]

        first = await self._run(tournament_id, go)
        # Their table may now be short of players.
        self._spawn(self._settle(tournament_id))
        return first

    async def file_dispute(
        self, tournament_id: UUID, caller: str | None, match_id: UUID, version: int, text: str
    ) -> int:
        """An entrant disputes a match of their table at ``version`` (TO-10.1)."""

        def go(t: Tournament) -> int:
            return t.file_dispute(self._entrant(t, caller), match_id, version, text, self.clock())

        return await self._run(tournament_id, go)

    async def disputes(self, tournament_id: UUID, caller: str | None) -> Tournament:
        """The tournament, for its referees and organisers to read the queue (TO-10.2)."""
        tournament = await self._load(tournament_id)
        digest = auth.token_hash(caller) if caller else ""
        if tournament.referee_of(digest) is None:
            self._organiser(tournament, caller)
        return tournament

    async def rule(
        self, tournament_id: UUID, caller: str | None, dispute: int, verdict: Verdict, reason: str
    ) -> Ruled:
        """A referee of the tournament rules on a dispute (TO-10.3). A replay forks the
        disputed match at the version asked, its seats kept for the same entrants with
        the same tokens; the fork is then the table's match."""
        replay_id = ""
        if isinstance(verdict, ReplayFrom):
            tournament = await self._load(tournament_id)
            # Refused as the ruling would be (no such dispute, a version the match does
            # not have...) before any fork is made.
            copy.deepcopy(tournament).rule(
                self._referee(tournament, caller),
                dispute,
                ReplayFrom(verdict.version, str(uuid4())),
                reason,
                self.clock(),
            )
            found = next(d for d in tournament.disputes if d.number == dispute)
            fork = await self.threads.call(
                fork_match,
                self.matches.store,
                UUID(found.match_id),
                verdict.version,
                None,
                self.matches.stamper.stamp(),
                True,
                True,
            )
            self.matches.actors.actor(fork.match.id).resume(fork.match)
            replay_id = str(fork.match.id)
            verdict = ReplayFrom(verdict.version, replay_id)

        def go(t: Tournament) -> int:
            return t.rule(self._referee(t, caller), dispute, verdict, reason, self.clock())

        number = await self._run(tournament_id, go)
        return Ruled(number, replay_id)

    async def end(self, tournament_id: UUID, caller: str | None) -> str:
        """End the tournament with its signed result sheet (TO-11); returns its digest."""

        def go(t: Tournament) -> str:
            self._organiser(t, caller)
            t.end(self.clock())
            return t.digest

        return await self._run(tournament_id, go)

    async def sheet(self, tournament_id: UUID) -> Sheet:
        """The result sheet of an ended tournament: every event, the last one signed."""

        def read() -> Sheet:
            events = self.store.events(tournament_id)
            if not events:
                self.store.load(tournament_id)  # raises: no such tournament
            final = events[-1]
            if not is_final(final):
                raise RuleViolation("TO-11.1", "the tournament has not ended: no sheet yet")
            return Sheet(
                sheet_document(tournament_id, events),
                final.digest,
                final.signature,
                final.public_key,
            )

        return await self.threads.call(read)

    async def watch(
        self, tournament_id: UUID, after_version: int, viewer: Viewer
    ) -> AsyncIterator[SeenEvent]:
        """The events after ``after_version`` as ``viewer`` may see them, then each new
        one, until the final event."""
        await self._load(tournament_id)  # raises: no such tournament
        last = after_version
        while True:
            if self.closed:
                raise Unavailable(
                    f"the server is shutting down: watch again with after_version={last}"
                )
            saved = self._saved[tournament_id]
            events = await self.threads.call(self.store.events, tournament_id, last)
            for evt in events:
                name, fields = event_view(evt, viewer)
                yield SeenEvent(evt.originator_version, name, fields, evt.digest)
                last = evt.originator_version
                if is_final(evt):
                    return
            if not events:
                # Another instance's saves wake nobody here: look again now and then.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(saved.wait(), WATCH_POLL_S)

    # ---- what the server does by itself -------------------------------------------------

    def _match_ended(self, match_id: UUID) -> None:
        """A match ended in this process: if it is a table of a round under way, record
        its result."""
        tournament_id = self._tables.get(match_id)
        if tournament_id is not None and not self.closed:
            self._spawn(self._settle(tournament_id, only=str(match_id)))

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("tournament work failed", exc_info=task.exception())

    async def _settle(self, tournament_id: UUID, only: str | None = None) -> None:
        """Record what the server observes of a tournament's round under way: the
        result of each table whose match has ended; past the start deadline, who is
        absent, and each table short of players started or decided (TO-9.3, TO-9.4);
        and the end, once due (TO-11.1). ``only``: the one table whose match just ended
        (its match id); else every table without a result."""
        tournament = await self._load(tournament_id)
        current = tournament.round_states[-1] if tournament.round_states else None
        if current is not None and not current.ended and not tournament.ended:
            for table in current.tables:
                if table.result is None and only in (None, table.match_id):
                    tournament = await self._settle_table(tournament_id, table.match_id)
        at = self.clock()
        if not tournament.ended and tournament.end_refusal(at) is None:
            await self._run(tournament_id, functools.partial(end_if_due, at=at))
        elif tournament.auto_rounds and tournament.start_refusal(at) is None:
            await self._start_round(tournament_id, None, by_organiser=False)

    async def _settle_table(self, tournament_id: UUID, match_id: str) -> Tournament:
        """Settle one table (see :meth:`_settle`); the tournament as it then stands."""
        match = await self.threads.call(self.matches.store.load, UUID(match_id))
        at = self.clock()

        def record(t: Tournament) -> tuple[Tournament, TableState | None]:
            found = t.table_of_match(match_id)
            if found is None:
                return t, None
            state = t.round_state(found[0])
            table = state.tables[found[1] - 1]
            if table.result is not None or state.ended:
                return t, table
            if match.status is MatchStatus.ENDED and len(match.players) >= t.min_seats:
                t.record_result(
                    match_id,
                    places_of(match, table, t.token_hashes),
                    match.digest,
                    match.version,
                    at,
                )
                return t, table
            if at >= state.no_show_deadline_ms:
                for entrant in table.seats:
                    if entrant not in table.forfeits and entrant not in table.arrived:
                        t.record_no_show(entrant, at)
            # Too few left to play (absent, or withdrawn at any time): no match decides.
            present = [e for e in table.seats if e not in table.forfeits]
            if len(present) < t.min_seats:
                t.record_result(match_id, {e: 1 for e in present}, "", 0, at)
            return t, table

        tournament, table = await self._run(tournament_id, record)
        if table is None:
            return tournament
        if table.result is not None and not table.digest and match.status is not MatchStatus.ENDED:
            await self._stop_undecisive(UUID(match_id))
        elif table.result is None and match.status is MatchStatus.WAITING:
            await self._seat_if_ready(tournament_id, match_id)
            return await self._load(tournament_id)
        return tournament

    async def _stop_undecisive(self, match_id: UUID) -> None:
        """Stop a table's match that no longer decides anything: the table was decided
        without it (TO-9.4), so nobody is left playing for nothing."""
        stamp = self.matches.stamper.stamp()
        statement = "the tournament decided this table without the match: too few entrants remain"

        def stop(match: MatchAggregate) -> None:
            if match.status is not MatchStatus.ENDED:
                match.execute(Stop(statement), None, stamp)

        await self.matches.actors.run(match_id, stop)

    def _schedule(self, tournament: Tournament) -> None:
        """Set the tournament's timer to its round's start deadline or to its end, when
        either is still to come; settle it at once when its end is due now (a ruling
        on the last open dispute after the window closed). A deadline already past was
        settled when its timer fired, or is by :meth:`recover`."""
        old = self._timers.pop(tournament.id, None)
        if old is not None:
            old.cancel()
        if tournament.ended or self.closed:
            return
        at = self.clock()
        auto_start = tournament.auto_rounds and tournament.start_refusal(at) is None
        if tournament.end_refusal(at) is None or (auto_start and tournament.round_states):
            self._spawn(self._settle(tournament.id))
            return
        due = None
        current = tournament.round_states[-1] if tournament.round_states else None
        if current is not None and not current.ended:
            due = current.no_show_deadline_ms
        elif current is not None and len(tournament.round_states) >= tournament.total_rounds():
            due = current.dispute_deadline_ms
        elif tournament.auto_rounds:
            due = tournament.next_round_due_ms()
        if due is None or due <= at:
            return
        loop = asyncio.get_running_loop()
        self._timers[tournament.id] = loop.call_later(
            (due - at) / 1000, lambda: self._spawn(self._settle(tournament.id))
        )

    async def recover(self) -> int:
        """Pick up every tournament not ended: follow its tables, record what happened
        while the server was down, set its timer. Returns how many."""

        def live() -> list[Tournament]:
            return [self.store.load(tournament_id) for tournament_id in self.store.live_ids()]

        tournaments = await self.threads.call(live)
        for tournament in tournaments:
            self._after_save(tournament)
            await self._settle(tournament.id)
        if self.shared:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        return len(tournaments)

    async def _sweep(self) -> None:
        """Now and then, settle the tournaments whose tables another instance ended."""
        while not self.closed:
            await asyncio.sleep(SWEEP_S)
            for tournament_id in set(self._tables.values()):
                try:
                    await self._settle(tournament_id)
                except Exception:
                    log.exception("tournament %s: settling failed", tournament_id)

    async def close(self) -> None:
        self.closed = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for event in self._saved.values():
            event.set()
        tasks = list(self._tasks)
        if self._sweeper is not None:
            tasks.append(self._sweeper)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def end_if_due(tournament: Tournament, at: int) -> None:
    """End the tournament at ``at`` if nothing holds it back any longer (TO-11.1)."""
    if tournament.end_refusal(at) is None:
        tournament.end(at)


def places_of(
    match: MatchAggregate, table: TableState, token_hashes: Mapping[str, str]
) -> dict[str, int]:
    """The place of each entrant of ``table`` who did not forfeit, as the ended
    ``match`` placed their seat (found by their token hash), TO-9.4."""
    at = seat_entrants(table.seats, token_hashes, match.token_hashes)
    return table_places(table.forfeits, match.result, at)
