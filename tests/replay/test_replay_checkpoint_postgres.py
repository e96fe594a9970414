"""Checkpoints on PostgreSQL: signed from a schema of the real server, and the store held
to one after a match was deleted from it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner, Result
from replay_support import SEED, store_match

from entrypoints.totem_replay import main
from storage.arena import Arena
from storage.keys import load_or_create
from tests.conftest import POSTGRES_DSN, _postgres_env, _postgres_unreachable

pytestmark = pytest.mark.postgres


@dataclass
class Recorded:
    env: dict[str, str]
    schema: str
    matches: list[uuid.UUID]


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    """A schema of its own holding two ended matches; dropped afterwards."""
    reason = _postgres_unreachable()
    if reason:
        pytest.skip(reason)
    schema = f"totem_translog_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        env = _postgres_env(schema)
        arena = Arena(env, seed_source=lambda: SEED)
        try:
            ids = [store_match(arena, players=players).id for players in (2, 3)]
        finally:
            arena.close()
        yield Recorded(env, schema, ids)
    finally:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def replay(recorded: Recorded, *args: object) -> Result:
    argv = ["--db", "/nonexistent/ignored.db", *(str(a) for a in args)]
    return CliRunner().invoke(main, argv, env=recorded.env)


def test_a_postgresql_store_is_held_to_its_checkpoint(recorded: Recorded, tmp_path: Path) -> None:
    key = load_or_create(tmp_path / "server.key")
    kept = tmp_path / "kept.checkpoint"
    made = replay(recorded, "checkpoint", "sign", "--key-file", key.path, "-o", kept)
    assert made.exit_code == 0, made.output
    assert "checkpoint: 4 leaves" in made.output
    held = replay(recorded, "verify", "--all", "--checkpoint", kept)
    assert held.exit_code == 0, held.output

    gone = recorded.matches[1]
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        row = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "AND table_name LIKE %s",
            (recorded.schema, "%events"),
        ).fetchone()
        assert row is not None
        table = f'"{recorded.schema}"."{row[0]}"'
        conn.execute(f"DELETE FROM {table} WHERE originator_id = %s", (gone,))
    result = replay(recorded, "verify", "--all", "--checkpoint", kept)
    assert result.exit_code == 1, result.output
    assert (
        f"FAILED checkpoint: leaf 2, the creation of match {gone} (jungle_speed): the match "
        "is no longer in the store (deleted)"
    ) in result.stdout
