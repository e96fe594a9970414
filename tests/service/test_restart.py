"""Stop the server mid-match, start it again on the same store: nothing is lost."""

from __future__ import annotations

import asyncio
from uuid import UUID

import grpc

from server.serve import start
from tests.service.helpers import (
    act,
    bearer,
    create_and_join,
    grab,
    js_event,
    play_reveals,
    stub,
)
from totem.v1 import match_service_pb2 as ms

TURN_TIMEOUT_MS = 300


async def test_match_timers_and_streams_carry_on_after_a_restart(store_env: dict[str, str]) -> None:
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        match_id, referee, tokens = await create_and_join(
            client, 2, turn_timeout_ms=TURN_TIMEOUT_MS
        )
        acknowledged = await play_reveals(client, match_id, tokens, 2)
        watch = client.Watch(ms.WatchRequest(match_id=match_id), metadata=bearer(tokens[0]))
        seen: list[ms.MatchEvent] = []
        while not seen or seen[-1].version < acknowledged:
            event = await asyncio.wait_for(watch.read(), 30)
            assert event is not grpc.aio.EOF
            seen.append(event)
    finally:
        await first.stop(grace=None)
        await channel.close()

    # The stream broke with the server; it resumes on the restarted one.
    second = await start("127.0.0.1:0", store_env)
    channel, client = stub(second.port)
    try:
        async with channel:
            call = client.Watch(
                ms.WatchRequest(match_id=match_id, after_version=seen[-1].version),
                metadata=bearer(tokens[0]),
            )
            # Nobody acts: the turn timer, rebuilt from the events, reveals (JS-3.4).
            timed_out = await asyncio.wait_for(call.read(), 30)
            call.cancel()
            assert timed_out.version == acknowledged + 1
            assert js_event(timed_out) == "revealed"
            assert timed_out.jungle_speed.revealed.cause == 2  # REVEAL_CAUSE_TIMEOUT
            # The old tokens still work: a grab is applied whoever's turn it is (JS-5.2),
            # however often the turn timer reveals meanwhile on a slow machine.
            answer = await act(client, match_id, tokens[0], grab())
            assert answer.version > timed_out.version
            every = await client.GetMatch(
                ms.GetMatchRequest(match_id=match_id), metadata=bearer(referee)
            )
            assert every.summary.version >= answer.version
            # Every acknowledged event is there, and nothing is missing between them.
            stored = second.app.events_after(UUID(match_id))
            versions = [e.originator_version for e in stored]
            assert versions == list(range(1, len(stored) + 1)) and len(stored) >= answer.version
    finally:
        await second.stop(grace=None)
