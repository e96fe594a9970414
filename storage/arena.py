"""The eventsourcing Application: where matches are stored and found.

It only orchestrates: the rules are in the aggregates, the ordering of commands in the
match actors. Everything here is synchronous (the library has no asyncio API); the
server calls it from its store threads (:mod:`storage.threads`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import (
    AggregateNotFoundError,
    Application,
    EventSourcedLog,
    ProcessingEvent,
)
from eventsourcing.domain import DomainEvent
from eventsourcing.persistence import EventStore, IntegrityError
from eventsourcing.utils import Environment, EnvType, register_topic

from domain.kernel import merkle
from domain.kernel.match import MatchAggregate, is_final
from domain.kernel.refusals import RefusalLog, refusal_log_id
from domain.kernel.translog import (
    CREATED,
    ENDED,
    TOURNAMENT_CREATED,
    TOURNAMENT_ENDED,
    Leaf,
    LeafLogged,
    created_leaf,
    ended_leaf,
    leaf_fields,
)
from domain.tournament import Tournament
from domain.tournament.aggregate import is_final as is_final_tournament
from storage.summaries import Summary, SummaryRecorder, summary_of
from storage.threads import StoreThreads

#: The default store: an embedded SQLite file. Set explicitly, since the library's own
#: default is an in-memory store.
DEFAULT_DB = "totem.db"
LOG_ATTEMPTS = 20
#: The longest pause (seconds) between two attempts to take a log position.
LOG_BACKOFF_S = 0.05
#: Threads that read the projection of match summaries (ListMatches), apart from the
#: store threads that save: a listing never waits behind saves, nor saves behind it.
QUERY_WORKERS = 4
#: Rows written per transaction when the projection is caught up or rebuilt.
PROJECTION_BATCH = 500

#: A live match is snapshotted each time its version reaches a multiple of this, so that
#: reloading it (an actor coming back after being idle, a restart) replays fewer events
#: than this; an ended match is snapshotted by the save that ends it.
SNAPSHOT_INTERVAL = 100

logger = logging.getLogger(__name__)

#: The recorders that keep the projection of match summaries (:mod:`storage.summaries`).
SUMMARY_RECORDERS = {
    "eventsourcing.sqlite": "storage.summaries:SQLiteSummaryRecorder",
    "eventsourcing.postgres": "storage.summaries_postgres:PostgresSummaryRecorder",
}


#: The log of every match created: stored beside the matches, never one of them.
MATCH_LOG_ID = uuid5(NAMESPACE_URL, "/totem/matches")
#: The transparency log (:mod:`domain.kernel.translog`): each match's creation and end.
TRANSPARENCY_LOG_ID = uuid5(NAMESPACE_URL, "/totem/transparency")
#: The log of every tournament created (:mod:`storage.tournaments`).
TOURNAMENT_LOG_ID = uuid5(NAMESPACE_URL, "/totem/tournaments")


class MatchNotFound(LookupError):
    def __init__(self, match_id: UUID | str) -> None:
        super().__init__(f"no match {match_id}")
        self.match_id = match_id


@dataclass(frozen=True)
class MatchLogged(DomainEvent):
    """One entry of the log of every match created, in creation order."""

    match_id: UUID
    game: str


# Stores written before this module moved name the entries by the module they were in.
register_topic("server.application:MatchLogged", MatchLogged)


def store_env(
    db_path: str | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The library settings for the store.

    PostgreSQL is used when ``PERSISTENCE_MODULE`` says so, or when ``POSTGRES_DBNAME`` is
    set and ``PERSISTENCE_MODULE`` is not; otherwise the SQLite file ``db_path``.
    """
    environ = os.environ if environ is None else environ
    env: dict[str, str] = {}
    module = environ.get("PERSISTENCE_MODULE")
    if module is None:
        module = (
            "eventsourcing.postgres" if environ.get("POSTGRES_DBNAME") else "eventsourcing.sqlite"
        )
    env["PERSISTENCE_MODULE"] = module
    if module == "eventsourcing.sqlite":
        env["SQLITE_DBNAME"] = db_path or environ.get("SQLITE_DBNAME") or DEFAULT_DB
    return env


def _create_private(env: Mapping[str, str]) -> None:
    """Create a new SQLite store readable by its owner only (0600): it holds every live
    match's seed and deck. SQLite gives its WAL and shared-memory files the database
    file's permissions. An existing file is left as the operator made it."""
    if env.get("PERSISTENCE_MODULE") != "eventsourcing.sqlite":
        return
    name = env.get("SQLITE_DBNAME", "")
    if not name or name.startswith("file:") or ":memory:" in name:
        return
    with contextlib.suppress(FileExistsError):
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def postgres_env(dsn: str, schema: str) -> dict[str, str]:
    """The library's settings for the PostgreSQL of a libpq keyword DSN
    (``host=... port=... user=... dbname=...``), in one schema."""
    parts = dict(item.split("=", 1) for item in dsn.split())
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": parts.get("dbname", "test"),
        "POSTGRES_HOST": parts.get("host", "127.0.0.1"),
        "POSTGRES_PORT": parts.get("port", "5432"),
        "POSTGRES_USER": parts.get("user", "postgres"),
        "POSTGRES_PASSWORD": parts.get("password", ""),
        "POSTGRES_SCHEMA": schema,
    }


class Arena(Application[UUID]):
    """All matches of all games, the log that lists them, the projection of their
    summaries (:mod:`storage.summaries`), kept in the transaction that saves them, and
    snapshots of matches, so that an ended or idle match is loaded without replaying its
    whole history.

    Snapshots are the library's (its ``snapshots`` store: a table beside the events, in
    the same SQLite file or PostgreSQL schema, written through the same mapper, so
    encrypted at rest like the events when a cipher is set). They are taken here rather
    than by the library's ``snapshotting_intervals``, which reloads the match from the
    store to snapshot it: the match just saved is snapshotted as it is. Loading takes
    the latest snapshot at or before the version asked, then the events after it; a
    match without one is replayed from its events as before. ``IS_SNAPSHOTTING_ENABLED=n``
    turns them off. The replay tool reads events only, never snapshots.
    """

    name = "Arena"
    is_snapshotting_enabled = True
    #: See :data:`SNAPSHOT_INTERVAL`.
    snapshot_interval = SNAPSHOT_INTERVAL

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        seed_source: Callable[[], bytes] | None = None,
    ) -> None:
        _create_private(env or {})
        super().__init__(env)
        if not isinstance(self.recorder, SummaryRecorder):
            raise ValueError(
                f"the store {self.persistence!r} keeps no match summaries: use "
                + " or ".join(SUMMARY_RECORDERS)
            )
        self.summaries: SummaryRecorder = self.recorder
        self.seed_source = seed_source or (lambda: secrets.token_bytes(32))
        self.match_log: EventSourcedLog[MatchLogged] = EventSourcedLog(
            self.events, MATCH_LOG_ID, MatchLogged
        )
        #: One creation at a time in this process takes the next log position, so that
        #: concurrent creations here never race for it; other processes sharing the
        #: store still may, and are retried (:meth:`create_match`).
        self._log_lock = threading.Lock()
        self._next_log_position: int | None = None
        #: The threads that read the projection (:meth:`list_summaries`).
        self.queries = StoreThreads(QUERY_WORKERS, name="query")
        self.transparency_log: EventSourcedLog[LeafLogged] = EventSourcedLog(
            self.events, TRANSPARENCY_LOG_ID, LeafLogged
        )
        #: One save at a time in this process appends leaves, so that its saves never
        #: race for a position; another process's save may, and fails as a conflict
        #: (IntegrityError), which its caller retries as any conflict.
        self._leaf_lock = threading.Lock()
        self._next_leaf_position: int | None = None
        #: The tree of the leaves read so far, to sign checkpoints (:meth:`tree_head`).
        self._frontier = merkle.Frontier()
        self._frontier_lock = threading.Lock()

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        """The library's settings, with the recorder that keeps the match summaries
        (``APPLICATION_RECORDER_TOPIC``, unless the operator names one)."""
        environment = super().construct_env(name, env)
        topic = SUMMARY_RECORDERS.get(environment.get("PERSISTENCE_MODULE", ""))
        if topic is not None and not environment.get("APPLICATION_RECORDER_TOPIC"):
            environment["APPLICATION_RECORDER_TOPIC"] = topic
        return environment

    def construct_snapshot_store(self) -> EventStore[UUID]:
        """The library's, but on PostgreSQL through the summaries' recorder, which makes
        the snapshots' table one process at a time as it does its own."""
        make = getattr(self.recorder, "snapshot_recorder", None)
        if make is None:
            return super().construct_snapshot_store()
        create = getattr(self.factory, "env_create_table", lambda: True)()
        recorder = make(f"{self.name.lower()}_snapshots", create)
        return self.factory.event_store(mapper=self.mapper, recorder=recorder)

    @property
    def persistence(self) -> str:
        return str(self.env.get("PERSISTENCE_MODULE", ""))

    def save(self, *objs: Any, **kwargs: Any) -> list[Any]:
        """Save as the library does, with the summary of every match saved written in
        the same transaction (:mod:`storage.summaries`): once this returns, the
        projection shows what was saved. A match created or ended by this save has its
        leaf appended to the transparency log in the same transaction, so a match is
        never saved without its leaf, nor the reverse. The recordings returned are those
        of the objects given: the log's own are left out."""
        leaves = self._leaves_of(objs)
        if not leaves:
            return super().save(*objs, summaries=self._summaries_of(objs), **kwargs)
        recordings = self._save_with_leaves(leaves, objs, **kwargs)
        return [r for r in recordings if r.domain_event.originator_id != TRANSPARENCY_LOG_ID]

    def _save_with_leaves(
        self, leaves: list[Leaf], objs: Iterable[Any], **kwargs: Any
    ) -> list[Any]:
        """Save ``objs`` and append ``leaves`` to the transparency log, in one
        transaction, at the positions that follow the last this process wrote (or, after
        a failure, the last the store holds)."""
        objs = list(objs)
        with self._leaf_lock:
            position = self._next_leaf_position
            logged = []
            for leaf in leaves:
                event = self.transparency_log.trigger_event(position, **leaf_fields(leaf))
                logged.append(event)
                position = event.originator_version + 1
            try:
                recordings = super().save(
                    *objs, *logged, summaries=self._summaries_of(objs), **kwargs
                )
            except BaseException:
                self._next_leaf_position = None  # read the log's end again
                raise
            self._next_leaf_position = position
        return recordings

    @staticmethod
    def _leaves_of(objs: Iterable[Any]) -> list[Leaf]:
        """The leaves of the matches and tournaments among ``objs`` that this save
        creates or ends."""
        leaves = []
        for o in objs:
            if isinstance(o, MatchAggregate):
                for evt in o.pending_events:
                    if evt.originator_version == MatchAggregate.INITIAL_VERSION:
                        leaves.append(created_leaf(evt, type(o).GAME))
                    elif is_final(evt):
                        leaves.append(ended_leaf(evt))
            elif isinstance(o, Tournament):
                for evt in o.pending_events:
                    if evt.originator_version == Tournament.INITIAL_VERSION:
                        leaves.append(created_leaf(evt, o.game, TOURNAMENT_CREATED))
                    elif is_final_tournament(evt):
                        leaves.append(ended_leaf(evt, TOURNAMENT_ENDED))
        return leaves

    def _take_snapshots(self, processing_event: ProcessingEvent[UUID]) -> None:
        """Snapshot each match this save ended, or whose version reached a multiple of
        :attr:`snapshot_interval`, once its events are committed. A snapshot is never
        needed: one that cannot be written is logged, and the save still succeeds."""
        if self.snapshots is None:
            return
        due = {
            evt.originator_id
            for evt in processing_event.events
            if is_final(evt) or evt.originator_version % self.snapshot_interval == 0
        }
        for match_id in due:
            match = processing_event.aggregates.get(match_id)
            if not isinstance(match, MatchAggregate):
                continue
            try:
                self.snapshots.put([match.Snapshot.take(match)])
            except Exception:
                logger.warning(
                    "no snapshot of match %s at version %s", match_id, match.version, exc_info=True
                )

    @staticmethod
    def _summaries_of(objs: Iterable[Any]) -> list[Summary]:
        """The rows of the matches among ``objs`` with events to save; a match logged
        in the same save is a creation, whose row takes its log position."""
        positions = {o.match_id: o.originator_version for o in objs if isinstance(o, MatchLogged)}
        return [
            summary_of(o, positions.get(o.id))
            for o in objs
            if isinstance(o, MatchAggregate) and o.pending_events
        ]

    def create_match(self, factory: Callable[[bytes], MatchAggregate]) -> MatchAggregate:
        """Create and save a match; ``factory`` builds it from a fresh secret seed.

        The match, its log entry and its summary are saved in one transaction. In this
        process, creations take log positions one at a time, so they never collide;
        if another process sharing the store took the position first, the whole attempt
        is made again from a fresh seed (a failed save has already collected the match's
        pending events), after a random pause that grows with each attempt.
        """
        for attempt in range(LOG_ATTEMPTS):
            match = factory(self.seed_source())
            with self._log_lock:
                logged = self.match_log.trigger_event(
                    self._next_log_position, match_id=match.id, game=type(match).GAME
                )
                try:
                    self.save(match, logged)
                except IntegrityError:
                    self._next_log_position = None  # read the log's end again
                    if attempt == LOG_ATTEMPTS - 1:
                        raise
                else:
                    self._next_log_position = logged.originator_version + 1
                    return match
            time.sleep(random.uniform(0, LOG_BACKOFF_S * min(1.0, 2**attempt / 64)))
        raise AssertionError("unreachable")

    def load(self, match_id: UUID) -> MatchAggregate:
        return self.load_at(match_id, None)

    def load_at(self, match_id: UUID, version: int | None) -> MatchAggregate:
        """The match as it was at ``version`` (``None``: now). The logs' ids are no
        match's, and are refused before their whole history is read."""
        if match_id in (MATCH_LOG_ID, TRANSPARENCY_LOG_ID, TOURNAMENT_LOG_ID):
            raise MatchNotFound(match_id)
        try:
            match: object = self.repository.get(match_id, version=version)
        except AggregateNotFoundError:
            raise MatchNotFound(match_id) from None
        if not isinstance(match, MatchAggregate):
            raise MatchNotFound(match_id)
        return match

    def load_refusal_log(self, match_id: UUID) -> RefusalLog | None:
        """The refusal log of a match (:mod:`domain.kernel.refusals`), or None if the
        match has refused no command that was kept."""
        try:
            found: object = self.repository.get(refusal_log_id(match_id))
        except AggregateNotFoundError:
            return None
        return found if isinstance(found, RefusalLog) else None

    def events_after(self, match_id: UUID, after_version: int = 0) -> list[Any]:
        """Stored events of a match with a version greater than ``after_version``."""
        return list(self.events.get(match_id, gt=after_version or None))

    def logged_matches(self, after: int = 0, limit: int | None = None) -> Iterator[MatchLogged]:
        """Log entries after log position ``after`` (positions start at 1)."""
        return self.match_log.get(gt=after or None, limit=limit)

    def logged_leaves(self, after: int = 0, limit: int | None = None) -> Iterator[LeafLogged]:
        """Transparency log leaves after index ``after`` (the first leaf is index 0)."""
        return self.transparency_log.get(gt=after or None, limit=limit)

    def log_unlogged_matches(self) -> int:
        """Append the leaves the transparency log lacks for the matches listed: those of
        a store written before the log existed (their creation, and their end if they
        ended), in the order they were created. Returns how many leaves were appended.
        The log then vouches for those matches as they are now, from its next
        checkpoint on: nothing vouched for them before."""
        have = {(logged.kind, logged.match_id) for logged in self.logged_leaves()}
        leaves: list[Leaf] = []
        for entry in self.logged_matches():
            first = list(self.events.get(entry.match_id, lte=1))
            if first and (CREATED, entry.match_id) not in have:
                leaves.append(created_leaf(first[0], entry.game))
            last = list(self.events.get(entry.match_id, desc=True, limit=1))
            if last and is_final(last[0]) and (ENDED, entry.match_id) not in have:
                leaves.append(ended_leaf(last[0]))
        for start in range(0, len(leaves), PROJECTION_BATCH):
            self._save_with_leaves(leaves[start : start + PROJECTION_BATCH], ())
        return len(leaves)

    def tree_head(self) -> tuple[int, bytes]:
        """The size and root hash of the transparency log now, from the leaves read
        before and those appended since (read once each, in this process)."""
        with self._frontier_lock:
            for logged in self.logged_leaves(after=self._frontier.size):
                if logged.originator_version != self._frontier.size + 1:
                    raise RuntimeError(
                        f"the transparency log has no leaf {self._frontier.size}: "
                        "it was damaged in the store"
                    )
                self._frontier.append(logged.leaf().hash())
            return self._frontier.size, self._frontier.root()

    # ---- the projection of match summaries ---------------------------------------

    def list_summaries(
        self, after: int, limit: int, game: str | None = None, status: str | None = None
    ) -> list[Summary]:
        """Summaries after log position ``after``, in creation order, read from the
        projection alone: no match is loaded."""
        return self.summaries.select_summaries(after, limit, game, status)

    def live_match_ids(self) -> list[UUID]:
        """The matches waiting or playing, from the projection."""
        return self.summaries.live_match_ids()

    def due_matches(
        self, after: tuple[int, UUID], until_ms: int, offsets: Sequence[int], limit: int
    ) -> list[tuple[int, UUID]]:
        """Live matches' next deadlines, from the projection alone: no match is loaded
        (:meth:`storage.summaries.SummaryRecorder.due_matches`)."""
        return self.summaries.due_matches(after, until_ms, offsets, limit)

    def fill_deadlines(self) -> int:
        """Write the deadline columns of the live matches whose rows were written before
        those columns existed, and return how many: each such match is loaded once,
        the first time a server starts on the store; after that, none is (one query
        of an empty index)."""
        written, after = 0, 0
        while page := self.summaries.unfilled_matches(after, PROJECTION_BATCH):
            # Without a position: a row only updated, and never moved back a version.
            self.summaries.write_summaries([summary_of(self.load(m)) for _, m in page])
            written, after = written + len(page), page[-1][0]
        return written

    def catch_up_summaries(self) -> int:
        """Write the summaries of the matches logged after the last log position the
        projection holds, and return how many: none on a store whose projection is
        whole; every match on a store written before the projection existed, or whose
        table was dropped. Rows lost in the middle need :meth:`rebuild_summaries`."""
        return self._project(self.logged_matches(after=self.summaries.max_summary_position()))

    def rebuild_summaries(self) -> int:
        """Rewrite the summary of every match logged, from its events. Safe while
        servers run: a row is never moved back to a lower version."""
        return self._project(self.logged_matches())

    def _project(self, entries: Iterable[MatchLogged]) -> int:
        written = 0
        batch: list[Summary] = []
        for entry in entries:
            batch.append(summary_of(self.load(entry.match_id), entry.originator_version))
            if len(batch) == PROJECTION_BATCH:
                self.summaries.write_summaries(batch)
                written, batch = written + len(batch), []
        if batch:
            self.summaries.write_summaries(batch)
        return written + len(batch)

    def close(self) -> None:
        """Wait for the reads under way, then close the store."""
        self.queries.shutdown()
        super().close()
