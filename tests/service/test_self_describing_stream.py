"""A client renders the game from its stream alone: each event carries the viewer's state.

The state on an event is exactly the state the match had at that event's version, as that
viewer may see it (the one redaction of the domain); it is encoded once per kind of
viewer, whatever the number of streams; a referee can give a seat a fresh token.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any
from uuid import UUID

import grpc
import pytest

from domain.kernel.views import Viewer
from server import codec
from server.serve import RunningServer
from tests.service.helpers import (
    NO_SPECIALS,
    act,
    bearer,
    create_and_join,
    deal_for,
    grab,
    play_reveals,
    reveal,
    stub,
    watch_until,
)
from tests.service.limits_helpers import until
from totem.v1 import match_service_pb2 as ms

BOUND = 30.0


async def test_every_event_carries_the_viewers_state_at_its_version(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        # Symbol cards only: with three players, outward arrows revealed during an open
        # duel hold the next reveal back until a grab, and every reveal here must pass.
        match_id, referee, tokens = await create_and_join(
            client, 3, turn_timeout_ms=0, specials=NO_SPECIALS
        )
        last = await play_reveals(client, match_id, tokens, 12)
        # A grab too, whatever it does: one command may record several events.
        last = (await act(client, match_id, tokens[0], grab())).version
        streams = {
            Viewer.player(1): await watch_until(client, match_id, last, tokens[1]),
            Viewer.spectator(): await watch_until(client, match_id, last),
            Viewer.referee(): await watch_until(client, match_id, last, referee),
        }
    for viewer, events in streams.items():
        assert [e.version for e in events] == list(range(1, last + 1))
        for event in events:
            at = server.app.load_at(UUID(match_id), event.version)
            assert event.state == codec.match_state(at, viewer), (viewer, event.version)
            assert event.state.summary.version == event.version
    # Only the player's state says what its seat may do.
    assert streams[Viewer.player(1)][-1].state.jungle_speed.HasField("legal")
    assert not streams[Viewer.spectator()][-1].state.jungle_speed.HasField("legal")


async def test_a_resumed_stream_carries_the_same_states(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        last = await play_reveals(client, match_id, tokens, 6)
        whole = await watch_until(client, match_id, last, tokens[0])
        resumed = await watch_until(client, match_id, last, tokens[0], after_version=4)
    assert resumed == whole[4:]


async def test_omit_state_sends_events_alone(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        last = await play_reveals(client, match_id, tokens, 2)
        call = client.Watch(ms.WatchRequest(match_id=match_id, omit_state=True))
        events = []
        async for event in call:
            events.append(event)
            if event.version == last:
                break
        call.cancel()
    assert [e.version for e in events] == list(range(1, last + 1))
    assert not any(e.HasField("state") for e in events)


async def test_an_act_answer_carries_the_callers_state_after_it(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        # Seat 0 reveals a symbol card: one event (an outward-arrows card would add more).
        match_id, _, tokens = await create_and_join(
            client, 2, turn_timeout_ms=0, prearranged_deal=deal_for(2, {0: [0], 1: [5]})
        )
        answer = await act(client, match_id, tokens[0], reveal())
        view = await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=bearer(tokens[0])
        )
    assert answer.state.summary.version == answer.version == view.summary.version
    assert answer.state.jungle_speed == view.jungle_speed
    assert answer.state.jungle_speed.legal.reveal is False  # seat 1's turn now
    assert [e.version for e in answer.events] == [answer.version]
    assert not answer.events[0].HasField("state")


async def test_each_event_is_encoded_once_per_kind_of_viewer(server: RunningServer) -> None:
    encoded: Counter[tuple[Viewer, bool]] = Counter()
    encode = server.actors.hub.encode
    watched_from = -1

    def counting(match: Any, evt: Any, key: tuple[Viewer, bool]) -> bytes:
        if evt.originator_version == watched_from + 1:
            encoded[key] += 1
        return encode(match, evt, key)

    server.actors.hub.encode = counting
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        version = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        watched_from = version
        # Six spectators, three of them without state, and two streams of seat 0.
        calls = [
            client.Watch(ms.WatchRequest(match_id=match_id, after_version=version))
            for _ in range(3)
        ]
        calls += [
            client.Watch(ms.WatchRequest(match_id=match_id, after_version=version, omit_state=True))
            for _ in range(3)
        ]
        calls += [
            client.Watch(
                ms.WatchRequest(match_id=match_id, after_version=version),
                metadata=bearer(tokens[0]),
            )
            for _ in range(2)
        ]
        await until(
            lambda: server.actors.hub.watchers(UUID(match_id)) == len(calls),
            "every stream subscribed",
        )
        await act(client, match_id, tokens[0], reveal())
        received = await asyncio.wait_for(asyncio.gather(*(c.read() for c in calls)), BOUND)
        for call in calls:
            call.cancel()
    assert {e.version for e in received} == {version + 1}
    assert encoded == {
        (Viewer.spectator(), True): 1,
        (Viewer.spectator(), False): 1,
        (Viewer.player(0), True): 1,
    }


async def test_the_referee_reissues_a_lost_token(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        answer = await client.ReissueToken(
            ms.ReissueTokenRequest(match_id=match_id, seat=0), metadata=bearer(referee)
        )
        assert answer.player_token and answer.player_token != tokens[0]
        with pytest.raises(grpc.aio.AioRpcError) as old:
            await act(client, match_id, tokens[0], reveal())
        assert old.value.code() is grpc.StatusCode.UNAUTHENTICATED
        revealed = await act(client, match_id, answer.player_token, reveal())
        events = await watch_until(client, match_id, revealed.version, tokens[1])
    reissued = [e for e in events if e.WhichOneof("event") == "token_reissued"]
    assert [(e.version, e.token_reissued.seat) for e in reissued] == [(answer.version, 0)]
    # The token's hash is in the store (every instance must know it) but on no stream.
    stored = server.app.events_after(UUID(match_id), answer.version - 1)[0]
    assert stored.token_hash.encode() not in b"".join(e.SerializeToString() for e in events)
