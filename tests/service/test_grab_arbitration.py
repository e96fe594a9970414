"""Grab races over real gRPC on loopback (JS-4.2, JS-5.1, JS-5.3, JS-6.1)."""

from __future__ import annotations

import asyncio

import grpc

from server.serve import RunningServer
from tests.service.helpers import (
    INWARD,
    bearer,
    check_race,
    create_and_join,
    deal_for,
    grab,
    js_event,
    race_verdict,
    reveal,
    stub,
    symbol,
    watch_until,
)
from totem.v1 import match_service_pb2 as ms


async def _grab_all(port: int, match_id: str, tokens: list[str]) -> list[ms.ActResponse]:
    """Every token grabs at once, each on its own connection."""
    channels = [stub(port) for _ in tokens]
    try:
        return list(
            await asyncio.gather(
                *(
                    client.Act(
                        ms.ActRequest(match_id=match_id, jungle_speed=grab()), metadata=bearer(t)
                    )
                    for (_, client), t in zip(channels, tokens, strict=True)
                )
            )
        )
    finally:
        for channel, _ in channels:
            await channel.close()


async def test_js_6_1_js_5_3_js_4_2a_inward_arrows_race_has_one_winner_every_grab_on_record(
    server: RunningServer,
) -> None:
    """Six seats grab at once: one wins, the first received or, among the grabs received
    within the tie window after it, the one drawn (JS-4.2a); every other grab is on
    record, as a contender that lost the draw or as late for the deciding event."""
    players = 6
    channel, client = stub(server.port)
    async with channel:
        deck = deal_for(players, {0: [INWARD]})
        match_id, referee, tokens = await create_and_join(
            client, players, prearranged_deal=deck, turn_timeout_ms=0
        )
        await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
        )
        answers = await asyncio.wait_for(_grab_all(server.port, match_id, tokens), 30)
        last = max(a.version for a in answers)
        events = await asyncio.wait_for(watch_until(client, match_id, last, referee), 30)

    won, contenders, lates = race_verdict(events, "arrows_won")
    check_race(won, contenders, lates)
    decided = next(e for e in events if js_event(e) == "arrows_won").version
    seats = [c.seat for c in contenders] + [g.seat for g in lates]
    if not contenders:
        seats.append(won.winner)
    assert sorted(seats) == list(range(players))
    assert all(g.decided_at_version == decided for g in lates)
    assert all(g.stamp.received_at.seconds > 0 and g.stamp.monotonic_ns > 0 for g in lates)
    # Each grab was answered with what it did, in the caller's view: a contender with the
    # event that decided its tie, a late grab with its own.
    outcomes = sorted(js_event(a.events[0]) for a in answers)
    late = len(lates)
    assert outcomes == ["arrows_won"] * (players - late) + ["late_grab"] * late


async def test_js_4_2_duel_won_by_first_grab_received_among_many(server: RunningServer) -> None:
    """Both duellists grab three times each at once: one duel won, by the first grab
    received or drawn among those within the window (JS-4.2a), each seat contending at
    most once; every other grab is late."""
    players = 4
    channel, client = stub(server.port)
    async with channel:
        # Seats 0 and 1 reveal the same shape in two colours: a duel (JS-4.1).
        deck = deal_for(players, {0: [symbol(5, 0)], 1: [symbol(5, 2)]})
        match_id, referee, tokens = await create_and_join(
            client, players, prearranged_deal=deck, turn_timeout_ms=0
        )
        for seat in (0, 1):
            await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=reveal()),
                metadata=bearer(tokens[seat]),
            )
        # Both duellists grab three times each, all at once.
        grabbers = [tokens[0], tokens[1]] * 3
        answers = await asyncio.wait_for(_grab_all(server.port, match_id, grabbers), 30)
        last = max(a.version for a in answers)
        events = await asyncio.wait_for(watch_until(client, match_id, last, referee), 30)

    names = [js_event(e) for e in events]
    assert "wrong_grab" not in names
    won, contenders, lates = race_verdict(events, "duel_won")
    check_race(won, contenders, lates)
    assert len(lates) == len(grabbers) - max(len(contenders), 1)
    assert sorted([won.winner, *won.losers]) == [0, 1]


async def test_js_5_2_a_grab_with_nothing_open_is_wrong_and_recorded(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 3, turn_timeout_ms=0)
        answer = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=grab()), metadata=bearer(tokens[2])
        )
        state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
    assert [js_event(e) for e in answer.events] == ["wrong_grab"]
    assert answer.events[0].jungle_speed.wrong_grab.seat == 2
    assert state.jungle_speed.turn == 2  # the wrong grabber starts the next turn


async def test_grab_from_a_spectator_is_refused(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, _ = await create_and_join(client, 2)
        try:
            await client.Act(ms.ActRequest(match_id=match_id, jungle_speed=grab()))
        except grpc.aio.AioRpcError as error:
            assert error.code() is grpc.StatusCode.UNAUTHENTICATED
        else:
            raise AssertionError("a grab without a token was accepted")


async def test_a_grab_records_when_the_event_it_reacted_to_reached_the_grabbers_stream(
    server: RunningServer,
) -> None:
    """JS-5.1: the stamp of a grab that names the version it saw carries when the server
    wrote that event to the grabber's own stream, the evidence of its reaction time; a
    grab naming a version its seat was never sent carries none."""
    channel, client = stub(server.port)
    async with channel:
        deck = deal_for(2, {0: [INWARD]})
        match_id, referee, tokens = await create_and_join(
            client, 2, prearranged_deal=deck, turn_timeout_ms=0
        )
        revealed = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
        )
        # Seat 1 watches from the start and so is sent the reveal; seat 0 never watches.
        seen = await asyncio.wait_for(
            watch_until(client, match_id, revealed.version, tokens[1]), 30
        )
        assert seen[-1].version == revealed.version
        answers = [
            await client.Act(
                ms.ActRequest(
                    match_id=match_id, jungle_speed=grab(), seen_version=revealed.version
                ),
                metadata=bearer(token),
            )
            for token in (tokens[1], tokens[0])
        ]
        events = await asyncio.wait_for(
            watch_until(client, match_id, max(a.version for a in answers), referee), 30
        )
    won = next(e for e in events if js_event(e) == "arrows_won").jungle_speed.arrows_won
    late = next(e for e in events if js_event(e) == "late_grab").jungle_speed.late_grab
    assert won.winner == 1 and late.seat == 0
    assert 0 < won.stamp.seen_sent_monotonic_ns < won.stamp.monotonic_ns
    assert late.stamp.seen_version == revealed.version and late.stamp.seen_sent_monotonic_ns == 0
