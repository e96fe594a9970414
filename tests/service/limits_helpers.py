"""Servers with chosen limits, and waiting on conditions instead of the clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from server.limits import Limits
from server.serve import RunningServer, start
from tests.service.helpers import INWARD, bearer, create_and_join, deal_for, grab, reveal
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc

#: Bounds for waiting on a condition: generous, since a loaded machine is slow.
WAIT_S = 60.0
#: Bounds nothing in these tests: each test lowers only the limit it is about.
LOOSE = Limits(
    streams_per_connection=10_000,
    streams_per_address=10_000,
    commands_per_second=1e9,
    command_burst=10**9,
    max_concurrent_calls=10_000,
    idle_actor_s=3600.0,
)


@asynccontextmanager
async def serving(env: dict[str, str], limits: Limits) -> AsyncIterator[RunningServer]:
    running = await start("127.0.0.1:0", env, limits=limits)
    try:
        yield running
    finally:
        await running.stop(grace=None)


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds, for at most WAIT_S. The conditions are the
    server's own counts (watchers, slots, actors), which signal nothing when they change:
    they are looked at every few milliseconds, and no duration is asserted."""

    async def poll() -> None:
        while not condition():  # noqa: ASYNC110  # a count, not an event: see above
            await asyncio.sleep(0.01)

    try:
        await asyncio.wait_for(poll(), WAIT_S)
    except TimeoutError:
        raise AssertionError(f"never came true: {what}") from None


async def decided_race(
    client: match_service_pb2_grpc.MatchServiceStub, players: int = 2
) -> tuple[str, list[str], int]:
    """A Jungle Speed match whose inward-arrows race seat 0 won: any later grab is a late
    grab, an event each (JS-5.3). Returns the id, the seat tokens and the version."""
    deck = deal_for(players, {0: [INWARD]})
    match_id, _, tokens = await create_and_join(
        client, players, prearranged_deal=deck, turn_timeout_ms=0
    )
    for command in (reveal(), grab()):
        answer = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=command), metadata=bearer(tokens[0])
        )
    return match_id, tokens, answer.version
