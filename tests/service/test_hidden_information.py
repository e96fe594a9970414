"""Hidden information never reaches a player or spectator (JS-2.2, JS-9.2).

Two matches share everything but the order of cards nobody has seen yet. A player's and
a spectator's streams must then be identical, byte for byte, up to the first reveal that
shows a different card. Only the clocks differ between two matches (when each event was
recorded and each command received), and the match's own id and creation time in the
state each event carries; those fields are cleared before comparing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from server.serve import RunningServer, start
from tests.service.helpers import (
    bearer,
    create_and_join,
    deal_for,
    js_event,
    play_reveals,
    stub,
    watch_until,
)
from totem.v1 import match_service_pb2 as ms

SEED = bytes(range(32))
PLAYERS = 3


@pytest.fixture
async def fixed_seed_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    running = await start("127.0.0.1:0", store_env, seed_source=lambda: SEED)
    try:
        yield running
    finally:
        await running.stop(grace=None)


def _timeless(event: ms.MatchEvent) -> bytes:
    event = ms.MatchEvent.FromString(event.SerializeToString())
    event.ClearField("recorded_at")
    # The state names its match and when it was created: identity, not hidden facts.
    event.state.summary.ClearField("match_id")
    event.state.summary.ClearField("created_at")
    body = event.jungle_speed
    for field in ("revealed", "duel_won", "arrows_won", "wrong_grab", "late_grab"):
        if body.HasField(field):  # type: ignore[arg-type]
            getattr(body, field).ClearField("stamp")
    return event.SerializeToString(deterministic=True)


async def _play(
    port: int, deck: list[int], reveals: int
) -> tuple[dict[str, list[ms.MatchEvent]], dict[str, ms.GetMatchResponse]]:
    """Play ``reveals`` reveals; return the player's and the spectator's streams and views."""
    channel, client = stub(port)
    async with channel:
        match_id, _, tokens = await create_and_join(
            client, PLAYERS, prearranged_deal=deck, turn_timeout_ms=0
        )
        version = await play_reveals(client, match_id, tokens, reveals)
        streams = {
            "player": await watch_until(client, match_id, version, tokens[0]),
            "spectator": await watch_until(client, match_id, version),
        }
        request = ms.GetMatchRequest(match_id=match_id)
        views = {
            "player": await client.GetMatch(request, metadata=bearer(tokens[0])),
            "spectator": await client.GetMatch(request),
        }
        return streams, views


async def test_js_9_2_streams_identical_until_the_first_differing_reveal(
    fixed_seed_server: RunningServer,
) -> None:
    # Seat 2's third card differs; everything revealed before it is the same.
    base = deal_for(PLAYERS, {0: [0, 5, 9], 1: [13, 17, 21], 2: [25, 30, 40]})
    other = deal_for(PLAYERS, {0: [0, 5, 9], 1: [13, 17, 21], 2: [25, 30, 41]})
    assert base != other
    # Reveals in turn 0,1,2,0,1,2,0,1,2: the 9th reveal is seat 2's third card.
    (a, _), (b, _) = await asyncio.wait_for(
        asyncio.gather(
            _play(fixed_seed_server.port, base, 9), _play(fixed_seed_server.port, other, 9)
        ),
        60,
    )
    for viewer in ("player", "spectator"):
        first, second = [_timeless(e) for e in a[viewer]], [_timeless(e) for e in b[viewer]]
        assert len(first) == len(second)
        differing = [i for i, (x, y) in enumerate(zip(first, second, strict=True)) if x != y]
        # Only the last reveal differs: every earlier event is byte-identical.
        assert differing == [len(first) - 1], viewer
        assert js_event(a[viewer][-1]) == "revealed"


async def test_js_9_2_no_face_down_order_seed_or_deal_in_player_or_spectator_output(
    fixed_seed_server: RunningServer,
) -> None:
    deck = deal_for(PLAYERS, {0: [0, 5, 9]})
    streams, views = await asyncio.wait_for(_play(fixed_seed_server.port, deck, 4), 60)
    for viewer in ("player", "spectator"):
        for event in streams[viewer]:
            assert not event.digest and not event.prev_digest
            body = event.jungle_speed
            if body.HasField("created"):
                assert not body.created.seed
                assert body.created.options.prearranged
                assert not body.created.options.prearranged_deal
            if body.HasField("dealt"):
                assert not body.dealt.deck
                assert list(body.dealt.face_down_counts) == [27, 27, 26]
            assert SEED.hex().encode() not in event.SerializeToString()
            assert SEED not in event.SerializeToString()
        state = views[viewer].jungle_speed
        assert not state.seed
        assert all(not seat.face_down for seat in state.seats)
        assert not state.options.prearranged_deal


async def test_referee_sees_the_hidden_facts(fixed_seed_server: RunningServer) -> None:
    deck = deal_for(PLAYERS, {0: [0, 5, 9]})
    channel, client = stub(fixed_seed_server.port)
    async with channel:
        match_id, referee, _ = await create_and_join(
            client, PLAYERS, prearranged_deal=deck, turn_timeout_ms=0
        )
        events = await watch_until(client, match_id, PLAYERS + 2, referee)
        view = await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=bearer(referee)
        )
    dealt = next(e for e in events if js_event(e) == "dealt").jungle_speed.dealt
    assert [c.id for c in dealt.deck] == deck
    assert view.jungle_speed.seed == SEED
    assert [c.id for c in view.jungle_speed.seats[0].face_down][:3] == [0, 5, 9]
    assert all(e.digest and e.prev_digest for e in events)
