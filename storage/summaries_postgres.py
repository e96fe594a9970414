"""The projection of match summaries on PostgreSQL (see :mod:`storage.summaries`), and
the store's tables created one process at a time.

Imported only when PostgreSQL is the store (the recorder is named by its topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresDatastore,
)
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.sql import SQL, Composed, Identifier

from storage.summaries import (
    DUE_COLUMNS,
    LIVE,
    TABLE,
    UNFILLED,
    Summary,
    SummaryRecorder,
    due_parameters,
    due_statement,
    row_summary,
    writes,
)


def event_payload(instance: str, match_id: UUID, version: int) -> str:
    """What a save announces: who saved which match, up to which version."""
    return f"{instance} {match_id} {version}"


def parse_event(rest: str) -> tuple[UUID, int]:
    """The match and version of an event notification, its instance taken off."""
    match_id, version = rest.split(" ")
    return UUID(match_id), int(version)


#: Held while a process creates the store's tables; let go when its connection closes.
CREATE_LOCK = SQL("SELECT pg_advisory_lock(hashtext(%s))")


def creating_key(schema: str) -> str:
    """The advisory lock's key of the table creations in ``schema``."""
    return f"totem create {schema}"


@contextmanager
def creating_in_turn(datastore: PostgresDatastore) -> Iterator[None]:
    """Create the store's tables (and their types and indexes) one process at a time.

    ``CREATE TABLE IF NOT EXISTS`` and the library's ``CREATE TYPE`` are not safe against
    themselves: two processes creating one table at once (several instances started
    together on a new store) both find it missing, and the later commit fails
    (``duplicate key value violates unique constraint "pg_type_typname_nsp_index"``),
    stopping that server. Under this lock the second waits for the first to finish, then
    finds everything made. It is held on a connection of its own, beside the pool's,
    which the creation uses."""
    pool = datastore.pool
    conninfo = pool.conninfo() if callable(pool.conninfo) else pool.conninfo
    kwargs = dict((pool.kwargs() if callable(pool.kwargs) else pool.kwargs) or {})
    kwargs.pop("row_factory", None)
    with psycopg.connect(conninfo, autocommit=True, **kwargs) as conn:
        conn.execute(CREATE_LOCK, (creating_key(datastore.schema),))
        yield


class PostgresSnapshotRecorder(PostgresAggregateRecorder):
    """The library's recorder of snapshots, its table created one process at a time."""

    def create_table(self) -> None:
        with creating_in_turn(self.datastore):
            super().create_table()


class PostgresSummaryRecorder(PostgresApplicationRecorder, SummaryRecorder):
    """The library's PostgreSQL application recorder, writing the summaries it is given
    (``summaries=[...]``) in the transaction that inserts the events.

    They are written by the hook the library gives for this (``_insert_events``, where
    its process recorder writes its tracking record), before the events' table lock:
    a summary row's lock is only ever taken before that lock, never while holding it,
    so two saves cannot deadlock on them.

    These statements must never fail: they run first in the library's pipeline, and a
    failure there would skip the statements queued after it, which psycopg may then
    take for prepared when they are not ("prepared statement ... does not exist" on the
    next save). So ``position`` has no unique constraint here (the log's own key keeps
    positions unique: a creation that takes a position already taken fails on its log
    entry, the last statement, and writes nothing), and rows are upserted on their id.
    """

    def __init__(
        self, datastore: PostgresDatastore, *, events_table_name: str = "stored_events"
    ) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        #: ``(channel, instance)``: each save notifies the other server instances on
        #: ``channel`` (server/cluster.py); None: nobody is told.
        self.notify: tuple[str, str] | None = None
        if datastore.enable_db_functions:
            # That path inserts events without the hook that writes the summaries.
            msg = "POSTGRES_ENABLE_DB_FUNCTIONS is not supported: match summaries need it off"
            raise ValueError(msg)
        schema = Identifier(datastore.schema)
        table = Identifier(TABLE)
        self.sql_create_statements.append(
            SQL(
                "CREATE TABLE IF NOT EXISTS {schema}.{table} ("
                "match_id uuid PRIMARY KEY, "
                "position bigint NOT NULL, "
                "game text NOT NULL, "
                "status text NOT NULL, "
                "variant text NOT NULL, "
                "max_players integer NOT NULL, "
                "players text NOT NULL, "
                "version bigint NOT NULL, "
                "created_us bigint NOT NULL, "
                "result text NOT NULL, "
                "end_reason text)"
            ).format(schema=schema, table=table)
        )
        # Added to a table made before they existed.
        self.sql_create_statements.append(
            SQL(
                "ALTER TABLE {schema}.{table} "
                + ", ".join(f"ADD COLUMN IF NOT EXISTS {c} bigint" for c in DUE_COLUMNS)
            ).format(schema=schema, table=table)
        )
        for column in DUE_COLUMNS:
            self.sql_create_statements.append(
                SQL(
                    "CREATE INDEX IF NOT EXISTS {index} ON {schema}.{table} "
                    f"({column}, match_id) WHERE {column} IS NOT NULL"
                ).format(index=Identifier(f"{TABLE}_{column}"), schema=schema, table=table)
            )
        self.sql_create_statements.append(
            SQL(
                "CREATE INDEX IF NOT EXISTS {index} ON {schema}.{table} (position) WHERE "
                + UNFILLED
            ).format(index=Identifier(f"{TABLE}_unfilled"), schema=schema, table=table)
        )
        for suffix, columns in (
            ("position", "position"),
            ("status", "status, position"),
            ("game", "game, position"),
            ("game_status", "game, status, position"),
        ):
            self.sql_create_statements.append(
                SQL(
                    "CREATE INDEX IF NOT EXISTS {index} ON {schema}.{table} (" + columns + ")"
                ).format(index=Identifier(f"{TABLE}_{suffix}"), schema=schema, table=table)
            )
        self.upsert_statement: Composed = SQL(
            "INSERT INTO {schema}.{table} AS s (match_id, position, game, status, variant, "
            f"max_players, players, version, created_us, result, end_reason, "
            f"{', '.join(DUE_COLUMNS)}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (match_id) DO UPDATE SET position = EXCLUDED.position, "
            "status = EXCLUDED.status, players = EXCLUDED.players, "
            "version = EXCLUDED.version, result = EXCLUDED.result, "
            "end_reason = EXCLUDED.end_reason"
            + "".join(f", {c} = EXCLUDED.{c}" for c in DUE_COLUMNS)
            + " WHERE s.version <= EXCLUDED.version"
        ).format(schema=schema, table=table)
        self.update_statement: Composed = SQL(
            "UPDATE {schema}.{table} SET status = %s, players = %s, version = %s, "
            "result = %s, end_reason = %s"
            + "".join(f", {c} = %s" for c in DUE_COLUMNS)
            + " WHERE match_id = %s AND version <= %s"
        ).format(schema=schema, table=table)
        self.due_statement: Composed = SQL(due_statement("{schema}.{table}", "%s")).format(
            schema=schema, table=table
        )
        self.unfilled_statement: Composed = SQL(
            "SELECT position, match_id FROM {schema}.{table} WHERE "
            + UNFILLED
            + " AND position > %s ORDER BY position LIMIT %s"
        ).format(schema=schema, table=table)
        self.select_statement: Composed = SQL(
            "SELECT * FROM {schema}.{table} WHERE position > %s"
        ).format(schema=schema, table=table)
        self.select_one_statement: Composed = SQL(
            "SELECT * FROM {schema}.{table} WHERE match_id = %s"
        ).format(schema=schema, table=table)
        self.max_position_statement: Composed = SQL(
            "SELECT MAX(position) AS max FROM {schema}.{table}"
        ).format(schema=schema, table=table)
        self.notify_statement = SQL("SELECT pg_notify(%s, %s)")
        self.live_statement: Composed = SQL(
            "SELECT match_id FROM {schema}.{table} WHERE status IN (%s, %s) ORDER BY position"
        ).format(schema=schema, table=table)

    def create_table(self) -> None:
        with creating_in_turn(self.datastore):
            super().create_table()

    def snapshot_recorder(self, table: str, create: bool) -> PostgresSnapshotRecorder:
        """The recorder of the snapshots, in ``table`` of the same store (created now,
        with ``create``)."""
        recorder = PostgresSnapshotRecorder(self.datastore, events_table_name=table)
        if create:
            recorder.create_table()
        return recorder

    def _insert_events(
        self, curs: Cursor[DictRow], stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> None:
        super()._insert_events(curs, stored_events, **kwargs)
        summaries = kwargs.get("summaries") or ()
        self._write(curs, summaries)
        if self.notify is not None:
            # In the save's transaction: heard only if it commits, in commit order.
            name, instance = self.notify
            for summary in summaries:
                payload = event_payload(instance, summary.match_id, summary.version)
                curs.execute(self.notify_statement, (name, payload))

    def _write(self, curs: Cursor[DictRow], summaries: Iterable[Summary]) -> None:
        for update, params in writes(summaries, lambda match_id: match_id):
            curs.execute(self.update_statement if update else self.upsert_statement, params)

    def write_summaries(self, summaries: Sequence[Summary]) -> None:
        with self.datastore.transaction(commit=True) as curs:
            self._write(curs, summaries)

    def select_summaries(
        self, after: int, limit: int, game: str | None = None, status: str | None = None
    ) -> list[Summary]:
        statement = self.select_statement
        params: list[Any] = [after]
        if game is not None:
            statement += SQL(" AND game = %s")
            params.append(game)
        if status is not None:
            statement += SQL(" AND status = %s")
            params.append(status)
        statement += SQL(" ORDER BY position LIMIT %s")
        params.append(limit)
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(statement, params)
            return [row_summary(row, row["match_id"]) for row in curs.fetchall()]

    def select_summary(self, match_id: UUID) -> Summary | None:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(self.select_one_statement, (match_id,))
            row = curs.fetchone()
            return None if row is None else row_summary(row, match_id)

    def max_summary_position(self) -> int:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(self.max_position_statement)
            row = curs.fetchone()
            return int(row["max"] or 0) if row is not None else 0

    def live_match_ids(self) -> list[UUID]:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(self.live_statement, LIVE)
            return [row["match_id"] for row in curs.fetchall()]

    def due_matches(
        self, after: tuple[int, UUID], until_ms: int, offsets: Sequence[int], limit: int
    ) -> list[tuple[int, UUID]]:
        params = due_parameters(after, until_ms, offsets, limit, lambda m: m)
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(self.due_statement, params)
            return [(int(row["due"]), row["match_id"]) for row in curs.fetchall()]

    def unfilled_matches(self, after: int, limit: int) -> list[tuple[int, UUID]]:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(self.unfilled_statement, (after, limit))
            return [(row["position"], row["match_id"]) for row in curs.fetchall()]
