from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from replay_support import Run, Store, as_referee, open_store, store_match

from entrypoints.totem_replay import main


@pytest.fixture(autouse=True)
def sqlite_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store is chosen from the environment: make sure it is the test's SQLite file."""
    for name in ("PERSISTENCE_MODULE", "POSTGRES_DBNAME", "SQLITE_DBNAME", "TOTEM_DB"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A store with an ended ES match of 3, an RU match of 2 in play, and a match of 4
    with one seat taken. The arena is closed before the tests touch the file."""
    db = tmp_path / "totem.db"
    arena = open_store(db)
    try:
        ended = store_match(arena, players=3, variant="ES")
        playing = store_match(arena, players=2, variant="RU", max_events=40, moves_seed=2)
        waiting = store_match(arena, players=4, seats_taken=1)
    finally:
        arena.close()
    assert ended.status.value == "ended" and playing.status.value == "playing"
    return Store(db, ended, playing, waiting)


@pytest.fixture
def run(store: Store) -> Run:
    """Run ``totem-replay --db <the store's file> ARGS``."""

    def invoke(*args: object, db: Path | None = None, env: dict[str, str] | None = None) -> Result:
        argv: Sequence[str] = ["--db", str(db or store.db), *as_referee(args)]
        return CliRunner().invoke(main, argv, env=env)

    return invoke
