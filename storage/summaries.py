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
#: The statuses of a live match: start-up restores an actor for each.
LIVE = (MatchStatus.WAITING.value, MatchStatus.PLAYING.value)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


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

    def columns(self) -> tuple[Any, ...]:
        """The values of the mutable columns, then the version (for the guard)."""
        return (
            self.status,
            json.dumps(list(self.players)),
            self.version,
            json.dumps([list(r) for r in self.result]),
            self.end_reason,
        )


def summary_of(match: MatchAggregate, position: int | None = None) -> Summary:
    """The row of ``match`` as it is now (pending events included)."""
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
    )


def row_summary(row: Any, match_id: UUID) -> Summary:
    """A :class:`Summary` from a selected row (SQLite or PostgreSQL)."""
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
    )


class SummaryRecorder(ABC):
    """What the application asks of a recorder that keeps the projection."""

    @abstractmethod
    def write_summaries(self, summaries: Sequence[Summary]) -> None:
        """Upsert rows in a transaction of their own (catch-up and rebuild); every row
        must have its position."""

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


def writes(
    summaries: Iterable[Summary], key: Callable[[UUID], Any]
) -> Iterator[tuple[bool, tuple[Any, ...]]]:
    """The statement parameters that write ``summaries``, each with whether it is the
    update of a listed match (a summary without a log position) or else the upsert of a
    new one; ``key`` is how the store holds a match id. In match id order: two
    transactions lock the same rows in the same order."""
    for s in sorted(summaries, key=lambda s: s.match_id):
        status, players, version, result, end_reason = s.columns()
        if s.position is None:
            yield True, (status, players, version, result, end_reason, key(s.match_id), s.version)
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
                ),
            )


class SQLiteSummaryRecorder(SQLiteApplicationRecorder, SummaryRecorder):
    """The library's SQLite application recorder, writing the summaries it is given
    (``summaries=[...]``) in the transaction that inserts the events."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "stored_events"):
        super().__init__(datastore, events_table_name)
        columns = (
            "match_id, position, game, status, variant, max_players, players, version, "
            "created_us, result, end_reason"
        )
        self.upsert_statement = (
            f"INSERT INTO {TABLE} ({columns}) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (match_id) DO UPDATE SET position=excluded.position, "
            "status=excluded.status, players=excluded.players, version=excluded.version, "
            "result=excluded.result, end_reason=excluded.end_reason "
            f"WHERE {TABLE}.version <= excluded.version"
        )
        self.update_statement = (
            f"UPDATE {TABLE} SET status=?, players=?, version=?, result=?, end_reason=? "
            "WHERE match_id=? AND version <= ?"
        )

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
