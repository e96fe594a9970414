"""Stop the server mid-turn, even between a lift and its place, and start it again on the
same store: the turn timer, rebuilt from the events, plays on."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from server.serve import start
from tests.service.helpers import bearer, stub
from tests.service.tribes_helpers import act, create_tribes, lift, place, state, tribes_event
from totem.v1 import match_service_pb2 as ms
from totem.v1 import tribes_pb2 as tr

#: The turn timer. A move answers at once, and the next command (the lift) is sent right
#: after it, well within this; it is long only so that a busy machine cannot let it fire
#: before the server is stopped.
TURN_TIMEOUT_MS = 2_000


@pytest.mark.parametrize("between_lift_and_place", [False, True])
async def test_the_turn_timer_plays_on_after_a_restart(
    store_env: dict[str, str], between_lift_and_place: bool
) -> None:
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        match_id, referee, tokens = await create_tribes(client, 2, turn_timeout_ms=TURN_TIMEOUT_MS)
        await act(client, match_id, tokens[0], place(4, 2))
        answer = await act(client, match_id, tokens[1], place(0, 3))  # seat 0's turn begins
        if between_lift_and_place:
            answer = await act(client, match_id, tokens[0], lift(4))
            assert answer.state.tribes.HasField("lifted")
        acknowledged = answer.version
    finally:
        await first.stop(grace=None)
        await channel.close()

    second = await start("127.0.0.1:0", store_env)
    channel, client = stub(second.port)
    try:
        async with channel:
            call = client.Watch(
                ms.WatchRequest(match_id=match_id, after_version=acknowledged),
                metadata=bearer(tokens[0]),
            )
            # Nobody acts: the timer completes seat 0's turn, then seat 1's, and so on.
            timed: list[ms.MatchEvent] = []
            while len(timed) < 2:
                event = await asyncio.wait_for(call.read(), 30)
                assert event is not grpc.aio.EOF
                if tribes_event(event) == "placed":
                    timed.append(event)
            call.cancel()
            first_move, second_move = (e.tribes.placed for e in timed)
            assert first_move.seat == 0 and second_move.seat == 1
            assert first_move.cause == second_move.cause == tr.TRIBES_MOVE_CAUSE_TIMEOUT
            if between_lift_and_place:
                # The unfinished lift is completed: seat 0's 2 goes to the first space it
                # may (space 1; space 0's 3 is larger).
                assert first_move.origin == 4 and first_move.totem.size == 2
                assert first_move.destination == 1
            else:
                assert not first_move.HasField("origin") and first_move.totem.size == 1
            # The old tokens still work.
            turn = (await state(client, match_id)).turn
            view = await state(client, match_id, tokens[turn])
            assert view.legal.places
            every = await client.GetMatch(
                ms.GetMatchRequest(match_id=match_id), metadata=bearer(referee)
            )
            assert every.summary.version > acknowledged
    finally:
        await second.stop(grace=None)
