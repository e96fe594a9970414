"""Helpers for the tournament tests: results written as a person reads them."""

from __future__ import annotations

from domain.tournament import MatchResult, Round


def beat(round: int, table: int, seats: tuple[str, str], winner: str) -> MatchResult:
    """A two-seat result: ``winner`` first, the other second."""
    places = (1, 2) if seats[0] == winner else (2, 1)
    return MatchResult(round, table, seats, places)


def drew(round: int, table: int, seats: tuple[str, str]) -> MatchResult:
    return MatchResult(round, table, seats, (1, 1))


def seats_of(r: Round) -> list[tuple[str, ...]]:
    return [t.seats for t in r.tables]


def byes_of(r: Round) -> list[str]:
    return [b.entrant for b in r.byes]
