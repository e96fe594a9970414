"""Fixtures shared by the service, client and CLI tests: stores and live servers.

Every test gets its own store: a fresh SQLite file, or a fresh schema in the real
PostgreSQL server (``TOTEM_TEST_POSTGRES`` overrides its connection string; when none is
reachable those tests are skipped and say why).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from server.access import ORGANISER_TOKEN_ENV
from server.limits import ENV_NAMES
from server.serve import RunningServer, start
from storage.arena import postgres_env
from tests.service.helpers import ORGANISER_TOKEN

POSTGRES_DSN = os.environ.get(
    "TOTEM_TEST_POSTGRES", "host=127.0.0.1 port=5432 user=postgres dbname=test"
)


def _postgres_unreachable() -> str | None:
    try:
        import psycopg

        with psycopg.connect(POSTGRES_DSN, connect_timeout=3):
            return None
    except Exception as error:  # any failure to connect means: skip, saying why
        return f"PostgreSQL not reachable at {POSTGRES_DSN!r}: {error}"


def _postgres_env(schema: str) -> dict[str, str]:
    return {**postgres_env(POSTGRES_DSN, schema), ORGANISER_TOKEN_ENV: ORGANISER_TOKEN}


@pytest.fixture(autouse=True)
def organiser_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers started as processes (``totem serve``) know the tests' organiser too."""
    monkeypatch.setenv(ORGANISER_TOKEN_ENV, ORGANISER_TOKEN)


@pytest.fixture(autouse=True)
def private_config_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The server's default key file lives in the user's configuration folder: every
    test has its own, never the real home's."""
    config = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return config


@pytest.fixture(autouse=True)
def machine_speed_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests play whole matches as fast as the server answers, far beyond any player's
    pace: every server they start (in this process or as ``totem serve``) allows it. The
    tests of the limits give their own."""
    monkeypatch.setenv(ENV_NAMES["commands_per_second"], "1000000000")
    monkeypatch.setenv(ENV_NAMES["command_burst"], "1000000000")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A fresh, empty event store: SQLite file or PostgreSQL schema."""
    if request.param == "sqlite":
        yield {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(tmp_path / "t.db"),
            ORGANISER_TOKEN_ENV: ORGANISER_TOKEN,
        }
        return
    with postgres_store() as env:
        yield env


@contextlib.contextmanager
def postgres_store() -> Iterator[dict[str, str]]:
    """A fresh schema of the real PostgreSQL server, dropped afterwards (skips the test
    if the server cannot be reached)."""
    reason = _postgres_unreachable()
    if reason:
        pytest.skip(reason)
    import psycopg

    schema = f"totem_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield _postgres_env(schema)
    finally:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
async def server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    """A real gRPC server on a free loopback port, on a fresh store."""
    running = await start("127.0.0.1:0", store_env)
    try:
        yield running
    finally:
        await running.stop(grace=None)
