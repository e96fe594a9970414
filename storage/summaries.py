"""The projection of match summaries: what ListMatches and start-up read.

One row per match, in the same store as the events (a table of the SQLite file, or of
the PostgreSQL schema), holding exactly what a ``MatchSummary`` shows (id, game,
status, variant, seats, players, version, creation time, result, end reason) and the
match's position in the log of every match created (``MatchLogged``), which orders the
list and is what page tokens name.

How it is kept: the application's recorder writes a match's row **in the same
transaction** as the match's events (:meth:`storage.arena.Arena.save` computes the
rows from the aggregates it saves and hands them to the recorder, as the library's own
process recorders are handed their tracking record). This was chosen over a projection
that follows the notification log (the library's ``ProjectionRunner``) because:

- read-your-writes comes for free: once a save returns, its row is committed, so the
  next ListMatches of any process shows the acknowledged status and version; a follower
  would need a wait on its tracking position in every listing;
- the SQLite recorder has no subscription to follow, and a polling follower adds a
  thread and a lag for nothing;
- the row cannot disagree with the events: both commit, or neither does.

Every write keeps the higher version (``WHERE version <= new``), so a stale writer never
moves a row backwards, whichever transaction commits last: another process saving the
same match on a shared PostgreSQL database, or a rebuild racing with a running server.

If rows are lost, :meth:`storage.arena.Arena.catch_up_summaries` (run at start-up)
writes those of the matches logged after the last position the table holds, and
``totem rebuild-summaries`` rewrites every row from the events.

A live match's row also says when the server must next look at it, so that start-up
loads no match to rebuild its timers (:meth:`SummaryRecorder.due_matches`), in three
columns that depend neither on the server's settings nor on who is at the table:
``timer_ms``, a match in play's own timer deadline (its turn timer, a decision's
default); ``waiting_since_ms``, when a waiting match last changed (it expires the
server's ``waiting_expiry_ms`` later); ``abandon_after_ms``, a match in play's time
away before it is abandoned (after a restart nobody is at any table, so the absence
counts from the server's start). They are null where they do not apply, and in every
row of an ended match. A store written before they existed gets them at start-up
(:meth:`SummaryRecorder.unfilled_match_ids`, :meth:`storage.arena.Arena.fill_deadlines`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor, SQLiteDatastore

from domain.kernel.match import MatchAggregate, MatchStatus

TABLE = "match_summaries"
#: The statuses of a live match.
LIVE = (MatchStatus.WAITING.value, MatchStatus.PLAYING.value)
#: The columns a live match's next deadline is read from (see the module docstring).
DUE_COLUMNS = ("timer_ms", "waiting_since_ms", "abandon_after_ms")
#: A live row none of whose deadline columns is filled: written before they existed (a
#: live row always has one: a waiting match its ``waiting_since_ms``, a match in play
#: its ``abandon_after_ms``). Literal, so that both stores' planners take the partial
#: index of such rows for the query that finds them.
UNFILLED = (
    "status IN ('waiting', 'playing') AND waiting_since_ms IS NULL AND abandon_after_ms IS NULL"
)
#: A bound beyond any deadline (wall ms).
NEVER_MS = 2**62
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_MILLISECOND = timedelta(milliseconds=1)


@dataclass(frozen=True)
class Summary:
    """One row of the projection. ``position`` is the match's position in the log of
    matches created; ``None`` when the saver does not know it (any save but the
    creation), which only updates an existing row."""

    match_id: UUID
    position: int | None
    game: str
    status: str
    variant: str
    max_players: int
    players: tuple[str, ...]
    version: int
    created_us: int
    result: tuple[tuple[int, int], ...]
    end_reason: str | None
    #: When the server must next look at the match (see the module docstring).
    timer_ms: int | None = None
    waiting_since_ms: int | None = None
    abandon_after_ms: int | None = None

    def columns(self) -> tuple[Any, ...]:
        """The values of the mutable columns."""
        return (
            self.status,
            json.dumps(list(self.players)),
            self.version,
            json.dumps([list(r) for r in self.result]),
            self.end_reason,
            self.timer_ms,
            self.waiting_since_ms,
            self.abandon_after_ms,
        )


def summary_of(match: MatchAggregate, position: int | None = None) -> Summary:
    """The row of ``match`` as it is now (pending events included)."""
    playing = match.status is MatchStatus.PLAYING
    waiting = match.status is MatchStatus.WAITING
    return Summary(
        match_id=match.id,
        position=position,
        game=type(match).GAME,
        status=match.status.value,
        variant=match.variant,
        max_players=match.max_players,
        players=tuple(match.players),
        version=match.version,
        created_us=(match.created_on - _EPOCH) // _MICROSECOND,
        result=tuple((r["seat"], r["place"]) for r in match.result),
        end_reason=match.end_reason.value if match.end_reason is not None else None,
        timer_ms=match.timer_deadline_ms() if playing else None,
        waiting_since_ms=(match.modified_on - _EPOCH) // _MILLISECOND if waiting else None,
        abandon_after_ms=match.abandon_after_ms if playing else None,
    )


def row_summary(row: Any, match_id: UUID) -> Summary:
    """A :class:`Summary` from a selected row (SQLite or PostgreSQL)."""
    names = row.keys()  # a SQLite row's ``in`` looks at its values
    return Summary(
        match_id=match_id,
        position=row["position"],
        game=row["game"],
        status=row["status"],
        variant=row["variant"],
        max_players=row["max_players"],
        players=tuple(json.loads(row["players"])),
        version=row["version"],
        created_us=row["created_us"],
        result=tuple((seat, place) for seat, place in json.loads(row["result"])),
        end_reason=row["end_reason"],
        # Absent from a store written before they existed and opened read-only.
        **{c: row[c] for c in DUE_COLUMNS if c in names},
    )


class SummaryRecorder(ABC):
    """What the application asks of a recorder that keeps the projection."""

    @abstractmethod
    def write_summaries(self, summaries: Sequence[Summary]) -> None:
        """Upsert rows in a transaction of their own (catch-up and rebuild); a row
        without its position only updates the one the table holds."""

    @abstractmethod
    def select_summaries(
        self, after: int, limit: int, game: str | None = None, status: str | None = None
    ) -> list[Summary]:
        """Rows after log position ``after``, in log order, optionally of one game and
        one status."""

    @abstractmethod
    def select_summary(self, match_id: UUID) -> Summary | None:
        """The row of one match, if the table holds one (the replay tool's check of a
        match's events against what the store recorded of it)."""

    @abstractmethod
    def max_summary_position(self) -> int:
        """The highest log position the table holds (0 when empty)."""

    @abstractmethod
    def live_match_ids(self) -> list[UUID]:
        """The ids of the matches waiting or playing, in log order."""

    @abstractmethod
    def due_matches(
        self, after: tuple[int, UUID], until_ms: int, offsets: Sequence[int], limit: int
    ) -> list[tuple[int, UUID]]:
        """Up to ``limit`` live matches' deadlines with the match's id, in that order,
        after ``after`` and at or before ``until_ms``: a match's deadline is each of its
        :data:`DUE_COLUMNS` plus the offset given for it (``offsets``, in the same
        order), so a match may come once per column. Indexed: the time a page takes
        does not grow with the matches stored."""

    @abstractmethod
    def unfilled_matches(self, after: int, limit: int) -> list[tuple[int, UUID]]:
        """The log positions and ids of live matches after position ``after`` whose row
        lacks its deadline columns (:data:`UNFILLED`), in log order. From a partial
        index that holds only those rows: on a store whose rows all have them, it costs
        the same whatever the store holds."""


def due_parameters(
    after: tuple[int, UUID], until_ms: int, offsets: Sequence[int], limit: int, key: Any
) -> list[Any]:
    """The parameters of :func:`due_statement`'s query, ``key`` making a match id the
    store's."""
    params: list[Any] = []
    for offset in offsets:
        params += [offset, after[0] - offset, key(after[1]), until_ms - offset, limit]
    return [*params, limit]


def due_statement(table: str, mark: str) -> str:
    """The query of :meth:`SummaryRecorder.due_matches`: one indexed range per column,
    merged (``mark``: the driver's parameter mark)."""
    parts = [
        f"SELECT * FROM (SELECT {c} + {mark} AS due, match_id FROM {table} "
        f"WHERE {c} IS NOT NULL AND ({c}, match_id) > ({mark}, {mark}) AND {c} <= {mark} "
        f"ORDER BY {c}, match_id LIMIT {mark}) AS {c}_due"
        for c in DUE_COLUMNS
    ]
    return (
        "SELECT due, match_id FROM ("
        + " UNION ALL ".join(parts)
        + f") AS due_matches ORDER BY due, match_id LIMIT {mark}"
    )


def writes(
    summaries: Iterable[Summary], key: Callable[[UUID], Any]
) -> Iterator[tuple[bool, tuple[Any, ...]]]:
    """The statement parameters that write ``summaries``, each with whether it is the
    update of a listed match (a summary without a log position) or else the upsert of a
    new one; ``key`` is how the store holds a match id. In match id order: two
    transactions lock the same rows in the same order."""
    for s in sorted(summaries, key=lambda s: s.match_id):
        status, players, version, result, end_reason, *due = s.columns()
        if s.position is None:
            yield True, (*s.columns(), key(s.match_id), s.version)
        else:
            yield (
                False,
                (
                    key(s.match_id),
                    s.position,
                    s.game,
                    status,
                    s.variant,
                    s.max_players,
                    players,
                    version,
                    s.created_us,
                    result,
                    end_reason,
                    *due,
                ),
            )


class SQLiteSummaryRecorder(SQLiteApplicationRecorder, SummaryRecorder):
    """The library's SQLite application recorder, writing the summaries it is given
    (``summaries=[...]``) in the transaction that inserts the events."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "stored_events"):
        super().__init__(datastore, events_table_name)
        columns = (
            "match_id, position, game, status, variant, max_players, players, version, "
            f"created_us, result, end_reason, {', '.join(DUE_COLUMNS)}"
        )
        due_set = "".join(f", {c}=excluded.{c}" for c in DUE_COLUMNS)
        self.upsert_statement = (
            f"INSERT INTO {TABLE} ({columns}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (match_id) DO UPDATE SET position=excluded.position, "
            "status=excluded.status, players=excluded.players, version=excluded.version, "
            f"result=excluded.result, end_reason=excluded.end_reason{due_set} "
            f"WHERE {TABLE}.version <= excluded.version"
        )
        self.update_statement = (
            f"UPDATE {TABLE} SET status=?, players=?, version=?, result=?, end_reason=?"
            + "".join(f", {c}=?" for c in DUE_COLUMNS)
            + " WHERE match_id=? AND version <= ?"
        )
        self.due_statement = due_statement(TABLE, "?")

    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            f"CREATE TABLE IF NOT EXISTS {TABLE} ("
            "match_id TEXT PRIMARY KEY, "
            "position INTEGER NOT NULL UNIQUE, "
            "game TEXT NOT NULL, "
            "status TEXT NOT NULL, "
            "variant TEXT NOT NULL, "
            "max_players INTEGER NOT NULL, "
            "players TEXT NOT NULL, "
            "version INTEGER NOT NULL, "
            "created_us INTEGER NOT NULL, "
            "result TEXT NOT NULL, "
            "end_reason TEXT) WITHOUT ROWID",
            f"CREATE INDEX IF NOT EXISTS {TABLE}_status ON {TABLE} (status, position)",
            f"CREATE INDEX IF NOT EXISTS {TABLE}_game ON {TABLE} (game, position)",
            f"CREATE INDEX IF NOT EXISTS {TABLE}_game_status ON {TABLE} (game, status, position)",
        ]

    def _create_table(self, c: SQLiteCursor) -> None:
        """The library's tables and the summaries', then the deadline columns (added to
        a table made before they existed) and their indexes."""
        super()._create_table(c)
        c.execute(f"PRAGMA table_info({TABLE})")
        have = {row["name"] for row in c.fetchall()}
        for column in DUE_COLUMNS:
            if column not in have:
                c.execute(f"ALTER TABLE {TABLE} ADD COLUMN {column} INTEGER")
        for column in DUE_COLUMNS:
            c.execute(
                f"CREATE INDEX IF NOT EXISTS {TABLE}_{column} ON {TABLE} ({column}, match_id) "
                f"WHERE {column} IS NOT NULL"
            )
        c.execute(
            f"CREATE INDEX IF NOT EXISTS {TABLE}_unfilled ON {TABLE} (position) WHERE {UNFILLED}"
        )

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        returning = super()._insert_events(c, stored_events, **kwargs)
        self._write(c, kwargs.get("summaries") or ())
        return returning

    def _write(self, c: SQLiteCursor, summaries: Iterable[Summary]) -> None:
        for update, params in writes(summaries, lambda match_id: match_id.hex):
            c.execute(self.update_statement if update else self.upsert_statement, params)

    def write_summaries(self, summaries: Sequence[Summary]) -> None:
        with self.datastore.transaction(commit=True) as c:
            self._write(c, summaries)

    def select_summaries(
        self, after: int, limit: int, game: str | None = None, status: str | None = None
    ) -> list[Summary]:
        statement = f"SELECT * FROM {TABLE} WHERE position > ? "
        params: list[Any] = [after]
        if game is not None:
            statement += "AND game = ? "
            params.append(game)
        if status is not None:
            statement += "AND status = ? "
            params.append(status)
        statement += "ORDER BY position LIMIT ?"
        params.append(limit)
        with self.datastore.transaction(commit=False) as c:
            c.execute(statement, params)
            return [row_summary(row, UUID(row["match_id"])) for row in c.fetchall()]

    def select_summary(self, match_id: UUID) -> Summary | None:
        with self.datastore.transaction(commit=False) as c:
            c.execute(f"SELECT * FROM {TABLE} WHERE match_id = ?", (match_id.hex,))
            row = c.fetchone()
            return None if row is None else row_summary(row, match_id)

    def max_summary_position(self) -> int:
        with self.datastore.transaction(commit=False) as c:
            c.execute(f"SELECT MAX(position) FROM {TABLE}")
            return int(c.fetchone()[0] or 0)

    def live_match_ids(self) -> list[UUID]:
        with self.datastore.transaction(commit=False) as c:
            c.execute(
                f"SELECT match_id FROM {TABLE} WHERE status IN (?, ?) ORDER BY position", LIVE
            )
            return [UUID(row["match_id"]) for row in c.fetchall()]

    def due_matches(
        self, after: tuple[int, UUID], until_ms: int, offsets: Sequence[int], limit: int
    ) -> list[tuple[int, UUID]]:
        params = due_parameters(after, until_ms, offsets, limit, lambda m: m.hex)
        with self.datastore.transaction(commit=False) as c:
            c.execute(self.due_statement, params)
            return [(int(row["due"]), UUID(row["match_id"])) for row in c.fetchall()]

    def unfilled_matches(self, after: int, limit: int) -> list[tuple[int, UUID]]:
        statement = (
            f"SELECT position, match_id FROM {TABLE} INDEXED BY {TABLE}_unfilled "
            f"WHERE {UNFILLED} AND position > ? "
            "ORDER BY position LIMIT ?"
        )
        with self.datastore.transaction(commit=False) as c:
            c.execute(statement, (after, limit))
            return [(row["position"], UUID(row["match_id"])) for row in c.fetchall()]
