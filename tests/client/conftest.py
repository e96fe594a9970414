"""Fixtures of the client tests: a real server in this process, and a client of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.serve import RunningServer, start
from tests.client.support import sqlite_store
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import Client, connect


@pytest.fixture
async def arena(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A server on a free loopback port with a fresh SQLite store; stopped after the test."""
    running = await start("127.0.0.1:0", sqlite_store(tmp_path / "client.db"))
    try:
        yield running
    finally:
        await running.stop(grace=None)


@pytest.fixture
async def client(arena: RunningServer) -> AsyncIterator[Client]:
    async with connect(f"127.0.0.1:{arena.port}", organiser_token=ORGANISER_TOKEN) as connected:
        yield connected
