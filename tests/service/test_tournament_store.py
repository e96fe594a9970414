"""Tournaments in the matches' store (TO-8.1): created with their log entry, loaded at a
version, listed in creation order, and told apart from matches; only those not ended
are picked up after a restart. On SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterator

import pytest

from domain.tournament import Format, Tournament
from storage.arena import Arena, MatchNotFound
from storage.tournaments import TournamentNotFound, TournamentStore

ORGANISER = hashlib.sha256(b"organiser").hexdigest()


@pytest.fixture
def store(store_env: dict[str, str]) -> Iterator[TournamentStore]:
    arena = Arena(store_env)
    try:
        yield TournamentStore(arena)
    finally:
        arena.close()


def make(seed: bytes) -> Tournament:
    return Tournament.create(
        organiser_token_hash=ORGANISER,
        game="tribes",
        options={},
        format=Format.SWISS,
        table_size=2,
        seed=seed,
    )


def test_tournaments_are_stored_logged_and_loaded(store: TournamentStore) -> None:
    first, second = store.create(make), store.create(make)
    assert [e.tournament_id for e in store.logged()] == [first.id, second.id]
    first.add_entrant("ann", hashlib.sha256(b"ann").hexdigest())
    store.save(first)
    assert store.load(first.id).registered == ["ann"]
    assert store.load(first.id, version=1).registered == []
    assert [e.originator_version for e in store.events(first.id)] == [1, 2]
    assert store.live_ids() == [first.id, second.id]


def test_a_match_is_no_tournament_and_a_tournament_no_match(store: TournamentStore) -> None:
    made = store.create(make)
    with pytest.raises(TournamentNotFound):
        store.load(uuid.uuid4())
    with pytest.raises(MatchNotFound):
        store.arena.load(made.id)
    # The log's own id names no tournament.
    with pytest.raises(TournamentNotFound):
        store.load(store.log.originator_id)


def test_only_tournaments_not_ended_are_live(store: TournamentStore) -> None:
    ended = store.create(make)
    for name in ("ann", "bob"):
        ended.add_entrant(name, hashlib.sha256(name.encode()).hexdigest())
    paired = ended.pairing(1_000)
    ended.start_round(1_000, [str(uuid.uuid4()) for _ in paired.tables])
    table = ended.round_state(1).tables[0]
    ended.record_result(table.match_id, {"ann": 1, "bob": 2}, secrets.token_hex(32), 9, 2_000)
    ended.end(ended.round_state(1).dispute_deadline_ms or 0)
    store.save(ended)
    waiting = store.create(make)
    assert store.live_ids() == [waiting.id]
