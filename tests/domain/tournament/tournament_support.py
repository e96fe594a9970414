"""Helpers for the tournament tests: results written as a person reads them."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from uuid import NAMESPACE_URL, uuid5

import pytest

from domain.kernel.errors import DomainError
from domain.tournament import Format, MatchResult, Round, Tournament


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


# ---- the tournament aggregate -------------------------------------------------------------

ORGANISER = hashlib.sha256(b"the organiser's token").hexdigest()
REFEREE = "Rhea"
SEED = bytes(range(32))
#: The dispute window and no-show time of the tournaments of the tests.
WINDOW_MS = 60_000
NO_SHOW_MS = 30_000


def token_hash(name: str) -> str:
    """The SHA-256 of a bearer token the application would have made for ``name``."""
    return hashlib.sha256(f"token of {name}".encode()).hexdigest()


def match_digest(match_id: str) -> str:
    """A stand-in for the final digest of the match ``match_id``."""
    return hashlib.sha256(f"digest of {match_id}".encode()).hexdigest()


def new_tournament(
    format: Format,
    entrants: Sequence[str],
    table_size: int = 2,
    **options: Any,
) -> Tournament:
    """A tournament of ``entrants`` (in seed order) with one referee, :data:`REFEREE`."""
    options.setdefault("dispute_window_ms", WINDOW_MS)
    options.setdefault("no_show_ms", NO_SHOW_MS)
    tournament = Tournament.create(
        organiser_token_hash=ORGANISER,
        game="tribes",
        options={"max_players": table_size},
        format=format,
        table_size=table_size,
        seed=SEED,
        **options,
    )
    for name in entrants:
        tournament.add_entrant(name, token_hash(name))
    tournament.appoint_referee(REFEREE, token_hash(REFEREE))
    return tournament


def match_ids_for(round_number: int, tables: int, prefix: str = "") -> list[str]:
    """The ids of the matches the application would create for a round's tables."""
    return [str(uuid5(NAMESPACE_URL, f"/{prefix}/{round_number}/{t}")) for t in range(tables)]


def start(tournament: Tournament, now_ms: int) -> tuple[Round, list[str]]:
    """Start the next round with a new match for each table of its pairing."""
    paired = tournament.pairing(now_ms)
    ids = match_ids_for(paired.number, len(paired.tables), str(tournament.id))
    assert tournament.start_round(now_ms, ids) == paired
    return paired, ids


def finish(tournament: Tournament, now_ms: int, winners: Mapping[str, str] | None = None) -> None:
    """Record a result for every table of the round under way that has none: at two
    seats, ``winners`` maps the table's match id to its winner (the first seat by
    default); at more, the seats place in seat order."""
    state = tournament.round_states[-1]
    for table in state.tables:
        if table.result is not None:
            continue
        present = [e for e in table.seats if e not in table.forfeits]
        winner = (winners or {}).get(table.match_id, present[0] if present else "")
        order = [winner, *[e for e in present if e != winner]] if winner else present
        places = {e: i for i, e in enumerate(order, start=1)}
        played = len(present) >= tournament.min_seats
        tournament.record_result(
            table.match_id,
            places,
            match_digest(table.match_id) if played else "",
            40 if played else 0,
            now_ms,
        )


def refused_by(tournament: Tournament, rule: str, command: Callable[..., Any], *args: Any) -> Any:
    """Run a command the rules refuse: it raises a DomainError naming ``rule`` and records
    nothing (no event, the same state)."""
    version = tournament.version
    pending = len(tournament.pending_events)
    before = copy.deepcopy(vars(tournament))
    with pytest.raises(DomainError) as info:
        command(*args)
    assert info.value.rule == rule, info.value
    assert tournament.version == version
    assert len(tournament.pending_events) == pending
    assert vars(tournament) == before
    return info.value


def replayed(tournament: Tournament) -> Tournament:
    """A fresh tournament built from ``tournament``'s events alone."""
    rebuilt: Any = None
    for evt in tournament.pending_events:
        rebuilt = evt.mutate(rebuilt)
    assert isinstance(rebuilt, Tournament)
    return rebuilt


def events_named(tournament: Tournament, name: str) -> list[Any]:
    return [e for e in tournament.pending_events if type(e).__name__ == name]
