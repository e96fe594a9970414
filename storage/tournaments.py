"""Tournaments in the same store as the matches (TO-8.1): their events, chained and
signed as a match's, and a log that lists them in creation order.

A tournament is saved through :meth:`storage.arena.Arena.save` like any aggregate, so
its events share the matches' store, transactions and encryption at rest; nothing of a
match's projection or snapshots applies to it. Everything here is synchronous: the
server calls it from its store threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, EventSourcedLog
from eventsourcing.domain import DomainEvent
from eventsourcing.persistence import IntegrityError

from domain.tournament import Tournament
from domain.tournament.aggregate import is_final
from storage.arena import (
    LOG_ATTEMPTS,
    MATCH_LOG_ID,
    TOURNAMENT_LOG_ID,
    TRANSPARENCY_LOG_ID,
    Arena,
)


class TournamentNotFound(LookupError):
    def __init__(self, tournament_id: UUID | str) -> None:
        super().__init__(f"no tournament {tournament_id}")
        self.tournament_id = tournament_id


@dataclass(frozen=True)
class TournamentLogged(DomainEvent):
    """One entry of the log of every tournament created, in creation order."""

    tournament_id: UUID
    game: str


class TournamentStore:
    """The tournaments of one store: create, load, save, list."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.log: EventSourcedLog[TournamentLogged] = EventSourcedLog(
            arena.events, TOURNAMENT_LOG_ID, TournamentLogged
        )
        #: Creations in this process take log positions one at a time; another process
        #: sharing the store may still take one first, and the creation is tried again.
        self._log_lock = threading.Lock()

    def create(self, factory: Callable[[bytes], Tournament]) -> Tournament:
        """Create and save a tournament with its log entry, in one transaction;
        ``factory`` builds it from a fresh secret seed."""
        for attempt in range(LOG_ATTEMPTS):
            tournament = factory(self.arena.seed_source())
            with self._log_lock:
                logged = self.log.trigger_event(
                    None, tournament_id=tournament.id, game=tournament.game
                )
                try:
                    self.arena.save(tournament, logged)
                except IntegrityError:
                    if attempt == LOG_ATTEMPTS - 1:
                        raise
                    continue
                return tournament
        raise AssertionError("unreachable")

    def load(self, tournament_id: UUID, version: int | None = None) -> Tournament:
        """The tournament as it was at ``version`` (None: now)."""
        if tournament_id in (TOURNAMENT_LOG_ID, MATCH_LOG_ID, TRANSPARENCY_LOG_ID):
            raise TournamentNotFound(tournament_id)
        try:
            found: object = self.arena.repository.get(tournament_id, version=version)
        except AggregateNotFoundError:
            raise TournamentNotFound(tournament_id) from None
        if not isinstance(found, Tournament):
            raise TournamentNotFound(tournament_id)
        return found

    def save(self, tournament: Tournament) -> None:
        """Save what the tournament's commands triggered, all or nothing; a conflict
        (another process saved the same version first) raises IntegrityError."""
        self.arena.save(tournament)

    def events(self, tournament_id: UUID, after_version: int = 0) -> list[Any]:
        """Its stored events after ``after_version``."""
        return list(self.arena.events.get(tournament_id, gt=after_version or None))

    def live_ids(self) -> list[UUID]:
        """The tournaments not ended, in creation order: each one's last event read, no
        ended tournament loaded. (Still a read per tournament ever created: a projection
        of their status would make it flat.)"""
        live = []
        for entry in self.logged():
            last = list(self.arena.events.get(entry.tournament_id, desc=True, limit=1))
            if last and not is_final(last[0]):
                live.append(entry.tournament_id)
        return live

    def logged(self, after: int = 0, limit: int | None = None) -> Iterator[TournamentLogged]:
        """Log entries after log position ``after`` (positions start at 1)."""
        return self.log.get(gt=after or None, limit=limit)
