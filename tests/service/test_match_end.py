"""A whole match over gRPC, to its end (JS-4.3, JS-8.1, JS-8.2, JS-9.1)."""

from __future__ import annotations

import asyncio
import hashlib

import grpc

from server.serve import RunningServer
from tests.service.helpers import (
    NO_SPECIALS,
    act,
    bearer,
    create_and_join,
    grab,
    js_event,
    reveal,
    stub,
    symbol,
)
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms


def scripted_deck() -> list[int]:
    """72 symbol cards, 36 each: no duel until both last cards, which share a shape.

    Seat 0 holds shapes 0-8 and seat 1 shapes 9-17, except that seat 1's last card is
    shape 8 (the shape of seat 0's last card) and seat 0's first card, revealed before
    seat 1 shows anything, is the shape-17 card it got in exchange.
    """
    last_of_0, last_of_1 = symbol(8, 0), symbol(8, 3)
    swapped = symbol(17, 3)
    zero = [swapped] + [c for c in range(36) if c not in (last_of_0, last_of_1)] + [last_of_0]
    one = [c for c in range(36, 72) if c != swapped] + [last_of_1]
    assert len(zero) == len(one) == 36
    return [card for pair in zip(zero, one, strict=True) for card in pair]


async def test_a_match_plays_to_its_end_and_the_stream_ends(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_and_join(
            client, 2, prearranged_deal=scripted_deck(), specials=NO_SPECIALS, turn_timeout_ms=0
        )
        watch = client.Watch(ms.WatchRequest(match_id=match_id), metadata=bearer(tokens[1]))
        for _ in range(36):
            for seat in (0, 1):
                await act(client, match_id, tokens[seat], reveal())
        state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        assert [d.seats for d in state.jungle_speed.open_duels] == [[0, 1]]
        final = await act(client, match_id, tokens[0], grab())
        events = [e async for e in watch]  # the server ends the stream after the end
        after = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        created = await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=bearer(referee)
        )
        try:
            await asyncio.wait_for(act(client, match_id, tokens[1], reveal()), 30)
        except grpc.aio.AioRpcError as error:
            assert error.code() is grpc.StatusCode.FAILED_PRECONDITION
        else:
            raise AssertionError("a reveal after the end was accepted")

    assert [js_event(e) for e in final.events] == ["duel_won", "player_finished", "match_ended"]
    assert [e.version for e in events] == list(range(1, final.version + 1))
    ended = events[-1].match_ended
    assert ended.reason == common_pb2.END_REASON_COMPLETED
    assert [(p.seat, p.place) for p in ended.result] == [(0, 1), (1, 2)]
    # The seed is revealed at the end and matches the commitment made at creation.
    assert hashlib.sha256(ended.seed).digest() == created.jungle_speed.seed_commitment
    assert after.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert after.jungle_speed.seed == ended.seed
    loser = after.jungle_speed.seats[1]
    assert loser.face_down_count == 72 and loser.face_up_count == 0  # JS-4.3
