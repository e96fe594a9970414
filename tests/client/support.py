"""Helpers of the client tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from server.access import ORGANISER_TOKEN_ENV
from server.limits import Limits
from server.serve import start
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import Client, MatchEvent, connect

#: Bound on any single wait, so that a broken test fails instead of hanging. Not a timing
#: assertion: nothing here checks how fast anything is.
BOUND = 60.0


def sqlite_store(path: Path) -> dict[str, str]:
    """Server settings for an SQLite event store at ``path``, the tests' organiser known."""
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(path),
        ORGANISER_TOKEN_ENV: ORGANISER_TOKEN,
    }


@contextlib.asynccontextmanager
async def limited_server(tmp_path: Path, limits: Limits) -> AsyncIterator[Client]:
    """A server of its own with ``limits``, and a client of it."""
    running = await start("127.0.0.1:0", sqlite_store(tmp_path / "limited.db"), limits=limits)
    try:
        async with connect(
            f"127.0.0.1:{running.port}", organiser_token=ORGANISER_TOKEN
        ) as connected:
            yield connected
    finally:
        await running.stop(grace=None)


def symbol(shape: int, colour: int) -> int:
    """The id of the symbol card of a shape and a colour index (JS-1.1)."""
    return 4 * shape + colour


def deal_with_tops(players: int, tops: list[int], deck_size: int = 80) -> list[int]:
    """A deck order (top first) in which seat k's first face-down card is ``tops[k]``.

    Cards are dealt one at a time clockwise from seat 0 (JS-2.1), so the first
    ``players`` cards of the deck are the seats' first cards.
    """
    rest = [c for c in range(deck_size) if c not in tops]
    assert len(tops) == players
    return [*tops, *rest]


def kind(event: MatchEvent) -> str:
    """The name of the event's field: a common event or a Jungle Speed one."""
    which = event.WhichOneof("event")
    if which == "jungle_speed":
        return str(event.jungle_speed.WhichOneof("event"))
    return str(which)
