"""Idle match actors leave: no work waiting or running, no timer, idle for the limit's
seconds. What they held for their match goes with them (the publisher's copy, the sent
times of reaction evidence, the command buckets); the next call loads the match again."""

from __future__ import annotations

import asyncio
import dataclasses
from uuid import UUID

from server.serve import start
from tests.service.helpers import (
    act,
    bearer,
    create_and_join,
    deal_for,
    organiser,
    reveal,
    stub,
)
from tests.service.limits_helpers import LOOSE, serving, until
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms

MATCHES = 30
IDLE_S = 0.2


async def test_idle_actors_leave_and_a_later_command_sees_the_match_as_stored(
    store_env: dict[str, str],
) -> None:
    # No actor leaves before the test has looked at what they hold...
    async with serving(store_env, LOOSE) as running:
        actors, service = running.actors, running.service
        assert service is not None
        retired: set[UUID] = set()
        actors.when_retired(retired.add)
        channel, client = stub(running.port)
        async with channel:
            # A match in play whose turn timer is far away leaves its timer behind.
            timed, _, _ = await create_and_join(client, 2, turn_timeout_ms=3_600_000)
            played, _, tokens = await create_and_join(
                client, 2, turn_timeout_ms=0, prearranged_deal=deal_for(2, {})
            )
            looked = []
            for _ in range(MATCHES):
                created = await client.CreateMatch(
                    ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED),
                    metadata=organiser(),
                )
                looked.append(UUID(created.match_id))
            await asyncio.gather(
                *(client.GetMatch(ms.GetMatchRequest(match_id=str(m))) for m in looked)
            )
            state = await client.GetMatch(ms.GetMatchRequest(match_id=played))
            turn = state.jungle_speed.turn
            # A player's stream, so that its seat's sent times are kept, open throughout.
            watch = client.Watch(ms.WatchRequest(match_id=played), metadata=bearer(tokens[turn]))
            first = await act(client, played, tokens[turn], reveal())
            while (await watch.read()).version < first.version:
                pass
            assert actors.live() == MATCHES + 2
            assert service.matches.rates.matches() == 1
            # Noted just after the write, which the client may have read already.
            await until(lambda: actors.stamper.remembers(UUID(played)), "the sent time noted")

            # ...then a short idle time, which each actor takes up after its next call.
            actors.idle_seconds = IDLE_S
            every = {*looked, UUID(played)}
            await asyncio.gather(
                *(client.GetMatch(ms.GetMatchRequest(match_id=str(m))) for m in every),
                client.GetMatch(ms.GetMatchRequest(match_id=timed)),
            )
            every.add(UUID(timed))
            await until(lambda: every <= retired, "every idle actor left")
            await until(lambda: actors.live() == 0, "no actor is left")
            await until(lambda: actors.followed() == 0, "the publisher let the copies go")
            # Timers far away stay, without their actors: the turn timer of the timed
            # match, the expiry of each waiting match (the played one has a player at
            # the table and no turn timer: nothing to wake it for).
            assert actors.waiting_wakeups() == MATCHES + 1
            await client.GetMatch(ms.GetMatchRequest(match_id=timed))
            assert actors.actor(UUID(timed)).timer is not None  # back, its timer with it
            assert actors.waiting_wakeups() == MATCHES
            assert not actors.stamper.remembers(UUID(played))
            assert service.matches.rates.matches() == 0

            # The next command loads the match again and acts on its stored state; the
            # stream opened before the actor left gets the new event.
            state = await client.GetMatch(ms.GetMatchRequest(match_id=played))
            assert state.summary.version == first.version
            turn = state.jungle_speed.turn
            second = await act(client, played, tokens[turn], reveal())
            assert second.version == first.version + 1
            assert (await watch.read()).version == second.version
            again = await client.GetMatch(ms.GetMatchRequest(match_id=played))
            assert again.summary.version == second.version
            assert again.jungle_speed.turn != turn
            watch.cancel()


async def test_js_8_3_a_timer_left_behind_brings_the_actor_back(store_env: dict[str, str]) -> None:
    """A waiting match's actor leaves long before the match expires; the expiry it left
    behind brings an actor back, which ends the match as abandoned."""
    running = await start(
        "127.0.0.1:0",
        store_env,
        limits=dataclasses.replace(LOOSE, idle_actor_s=0.05),
        waiting_expiry_ms=1_500,
    )
    try:
        actors = running.actors
        retired: set[UUID] = set()
        actors.when_retired(retired.add)
        channel, client = stub(running.port)
        async with channel:
            created = await client.CreateMatch(
                ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED), metadata=organiser()
            )
            match_id = UUID(created.match_id)
            await until(lambda: match_id in retired, "the idle actor left")
            assert actors.waiting_wakeups() == 1
            events = [e async for e in client.Watch(ms.WatchRequest(match_id=str(match_id)))]
    finally:
        await running.stop(grace=None)
    end = events[-1].match_ended
    assert end.reason == common_pb2.END_REASON_ABANDONED
    assert "nobody joined" in end.statement
