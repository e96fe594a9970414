"""The replay tool on PostgreSQL: matches recorded through the server's application in a
schema of the real PostgreSQL server, read back with the server's variables."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from replay_support import SEED, Stamps, as_referee, json_lines, play, store_match

from domain.jungle_speed import JungleSpeed, Options
from domain.jungle_speed.views import state_view
from domain.kernel.views import Viewer
from entrypoints.totem_replay import main
from server.auth import token_hash
from server.fork import fork_match
from storage.arena import Arena
from tests.conftest import POSTGRES_DSN, _postgres_env

pytestmark = pytest.mark.postgres

REFEREE = "the referee's token"


@dataclass
class Recorded:
    env: dict[str, str]
    schema: str
    ended: JungleSpeed
    playing: JungleSpeed
    fork_id: str


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    """A schema of its own holding an ended match, one in play and a fork of the latter,
    recorded by the server's application; dropped afterwards."""
    schema = f"totem_replay_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        env = _postgres_env(schema)
        arena = Arena(env, seed_source=lambda: SEED)
        try:
            ended = store_match(arena, players=3, variant="ES")
            playing = _playing(arena)
            forked = fork_match(arena, playing.id, 20, REFEREE, Stamps()())
        finally:
            arena.close()
        yield Recorded(env, schema, ended, playing, str(forked.match.id))
    finally:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _playing(arena: Arena) -> JungleSpeed:
    """An RU match of two in play, with a referee token (the fork needs it)."""
    options = Options(variant="RU", max_players=2)
    created = arena.create_match(
        lambda seed: JungleSpeed.create(options, seed, b"", token_hash(REFEREE))
    )
    assert isinstance(created, JungleSpeed)
    stamps = Stamps()
    for seat in range(2):
        created.join(f"player{seat}", b"", f"token-hash-{seat}", stamps())
    play(created, stamps, random.Random(2), 30)
    arena.save(created)
    return created


def replay(recorded: Recorded, *args: object) -> Result:
    """The tool as an operator runs it beside a PostgreSQL server: the server's variables
    in the environment, and a --db that does not exist (it is ignored)."""
    argv = ["--db", "/nonexistent/ignored.db", *as_referee(args)]
    return CliRunner().invoke(main, argv, env=recorded.env)


def test_list_reads_every_match_from_postgresql(recorded: Recorded) -> None:
    text = replay(recorded, "list")
    records = json_lines(replay(recorded, "list", "--json").stdout)
    assert text.exit_code == 0, text.output
    assert len(text.stdout.splitlines()) == 3
    assert [r["match_id"] for r in records] == [
        str(recorded.ended.id),
        str(recorded.playing.id),
        recorded.fork_id,
    ]
    assert [r["status"] for r in records] == ["ended", "playing", "playing"]
    assert records[2]["origin"]["match_id"] == str(recorded.playing.id)
    assert records[2]["origin"]["version"] == 20


def test_show_events_and_at_read_postgresql(recorded: Recorded) -> None:
    ended = recorded.ended
    shown = json.loads(replay(recorded, "show", str(ended.id), "--json").stdout)
    exported = json_lines(replay(recorded, "events", str(ended.id), "--json").stdout)
    at = replay(recorded, "at", str(recorded.playing.id), 12, "--seat", 1, "--json")
    text = replay(recorded, "events", str(ended.id), "--to", 5)
    assert shown["digest"] == ended.digest and shown["events"] == ended.version
    assert shown["seed_revealed_at"] == ended.version
    assert [r["version"] for r in exported] == list(range(1, ended.version + 1))
    assert exported[-1]["digest"] == ended.digest
    assert at.exit_code == 0, at.output
    arena = Arena(recorded.env)
    try:
        then = arena.load_at(recorded.playing.id, 12)
    finally:
        arena.close()
    assert isinstance(then, JungleSpeed)
    assert json.loads(at.stdout) == _json(state_view(then, Viewer.player(1)))
    assert text.exit_code == 0 and len(text.stdout.splitlines()) == 5


def test_verify_reads_postgresql_and_finds_a_changed_event(recorded: Recorded) -> None:
    ok = replay(recorded, "verify", str(recorded.ended.id), "--digest", recorded.ended.digest)
    fork_ok = replay(recorded, "verify", recorded.fork_id)
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith(f"OK match {recorded.ended.id}: {recorded.ended.version} events")
    assert fork_ok.exit_code == 0, fork_ok.output
    # A tamperer with the database renames a player in the history the fork carries.
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        table = _events_table(conn, recorded.schema)
        stored = f'"{recorded.schema}"."{table}"'
        which = "originator_id = %s AND originator_version = 1"
        key = (uuid.UUID(recorded.fork_id),)
        row = conn.execute(f"SELECT state FROM {stored} WHERE {which}", key).fetchone()
        assert row is not None and b"player0" in bytes(row[0])
        state = bytes(row[0]).replace(b"player0", b"playerX")
        changed = conn.execute(
            f"UPDATE {stored} SET state = %s WHERE {which}", (state, *key)
        ).rowcount
    assert changed == 1
    bad = replay(recorded, "verify", recorded.fork_id)
    assert bad.exit_code == 1, bad.output
    assert bad.stdout.startswith(f"FAILED match {recorded.fork_id}: first bad version 1: ")


def _events_table(conn: psycopg.Connection[Any], schema: str) -> str:
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
        "AND table_name LIKE %s",
        (schema, "%events"),
    ).fetchall()
    assert len(rows) == 1, rows
    return str(rows[0][0])


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))
