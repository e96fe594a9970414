"""A whole Tribes match played by bots, over real gRPC, on SQLite and PostgreSQL: to the
Feathers of Greatness (TR-3.5), every event once, in order, on a spectator's stream."""

from __future__ import annotations

import asyncio

from server.serve import RunningServer
from tests.service.helpers import ORGANISER_TOKEN
from totem.v1 import common_pb2
from totem_client import MatchEvent, connect
from totem_client.bots.tribes import play_table as play_tribes_table

MATCH_BOUND = 240.0


async def test_bots_play_a_whole_match_to_the_feathers(server: RunningServer) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        watching: list[asyncio.Task[list[MatchEvent]]] = []

        async def spectate(match_id: str) -> list[MatchEvent]:
            return [event async for event in client.watch(match_id)]

        result = await asyncio.wait_for(
            play_tribes_table(
                client,
                2,
                turn_timeout_ms=10_000,
                think_ms=(0, 2),
                seed=5,
                on_seated=lambda m: watching.append(asyncio.create_task(spectate(m))),
            ),
            MATCH_BOUND,
        )
        events = await asyncio.wait_for(watching[0], MATCH_BOUND)
        view = await client.get(result.match_id)
    assert view.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert view.summary.end_reason == common_pb2.END_REASON_COMPLETED
    assert [e.version for e in events] == list(range(1, view.summary.version + 1))
    won = [e.tribes.round_won for e in events if e.tribes.WhichOneof("event") == "round_won"]
    assert won[-1].feathers
    champion = won[-1].winner
    assert [r.place for r in view.summary.result if r.seat == champion] == [1]
    # Four badges, then the Feathers: five rounds won by the champion at least.
    assert sum(1 for w in won if w.winner == champion) >= 5
    assert [b for b in result.bots if b.stats.feathers] == [result.bots[champion]]
