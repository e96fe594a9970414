"""The eventsourcing Application: where matches are stored and found.

It only orchestrates: the rules are in the aggregates, the ordering of commands in the
match actors. Everything here is synchronous (the library has no asyncio API); the
server calls it from its store threads (:mod:`server.threads`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import AggregateNotFoundError, Application, EventSourcedLog
from eventsourcing.domain import DomainEvent
from eventsourcing.persistence import IntegrityError

from domain.kernel.match import MatchAggregate

#: The default store: an embedded SQLite file. Set explicitly, since the library's own
#: default is an in-memory store.
DEFAULT_DB = "totem.db"
LOG_ATTEMPTS = 20


#: The log of every match created: stored beside the matches, never one of them.
MATCH_LOG_ID = uuid5(NAMESPACE_URL, "/totem/matches")


class MatchNotFound(LookupError):
    def __init__(self, match_id: UUID | str) -> None:
        super().__init__(f"no match {match_id}")
        self.match_id = match_id


@dataclass(frozen=True)
class MatchLogged(DomainEvent):
    """One entry of the log of every match created, in creation order."""

    match_id: UUID
    game: str


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
    """All matches of all games, and the log that lists them."""

    name = "Arena"

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        seed_source: Callable[[], bytes] | None = None,
    ) -> None:
        _create_private(env or {})
        super().__init__(env)
        self.seed_source = seed_source or (lambda: secrets.token_bytes(32))
        self.match_log: EventSourcedLog[MatchLogged] = EventSourcedLog(
            self.events, MATCH_LOG_ID, MatchLogged
        )

    @property
    def persistence(self) -> str:
        return str(self.env.get("PERSISTENCE_MODULE", ""))

    def create_match(self, factory: Callable[[bytes], MatchAggregate]) -> MatchAggregate:
        """Create and save a match; ``factory`` builds it from a fresh secret seed.

        The match and its log entry are saved in one transaction. If another writer took
        the log position first, the whole attempt is made again from a fresh seed (a
        failed save has already collected the match's pending events).
        """
        for attempt in range(LOG_ATTEMPTS):
            match = factory(self.seed_source())
            logged = self.match_log.trigger_event(match_id=match.id, game=type(match).GAME)
            try:
                self.save(match, logged)
            except IntegrityError:
                if attempt == LOG_ATTEMPTS - 1:
                    raise
            else:
                return match
        raise AssertionError("unreachable")

    def load(self, match_id: UUID) -> MatchAggregate:
        return self.load_at(match_id, None)

    def load_at(self, match_id: UUID, version: int | None) -> MatchAggregate:
        """The match as it was at ``version`` (``None``: now). The match log's id is no
        match's, and is refused before its whole history is read."""
        if match_id == MATCH_LOG_ID:
            raise MatchNotFound(match_id)
        try:
            match: object = self.repository.get(match_id, version=version)
        except AggregateNotFoundError:
            raise MatchNotFound(match_id) from None
        if not isinstance(match, MatchAggregate):
            raise MatchNotFound(match_id)
        return match

    def events_after(self, match_id: UUID, after_version: int = 0) -> list[Any]:
        """Stored events of a match with a version greater than ``after_version``."""
        return list(self.events.get(match_id, gt=after_version or None))

    def logged_matches(self, after: int = 0, limit: int | None = None) -> Iterator[MatchLogged]:
        """Log entries after log position ``after`` (positions start at 1)."""
        return self.match_log.get(gt=after or None, limit=limit)
