"""Refused commands are kept as evidence beside their match, with their receive stamp
and reason, and the match's receive numbers have no gap (docs/audit.md, "Refused
commands"); the refusal writes nothing to the match (JS-5.3, JS-4.2)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from uuid import UUID

import grpc
import pytest

from domain.kernel.refusals import refusal_log_id
from domain.kernel.ties import stamps_of
from replay.refusals import numbers_accounted, read_refusals
from server.serve import RunningServer
from storage.arena import Arena
from tests.service.helpers import INWARD, bearer, create_and_join, deal_for, grab, reveal, stub
from tests.service.limits_helpers import LOOSE, serving
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc


async def _refused(
    client: match_service_pb2_grpc.MatchServiceStub,
    match_id: str,
    token: str,
    request: ms.ActRequest,
    code: grpc.StatusCode,
) -> None:
    """Send ``request``, which must be refused with ``code`` and write nothing."""
    before = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.Act(request, metadata=bearer(token))
    assert refused.value.code() is code
    after = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
    assert after == before  # a refused command writes nothing to the match


async def test_refused_grabs_of_a_race_are_kept_with_stamp_and_reason_and_no_number_is_missing(
    store_env: dict[str, str],
) -> None:
    # Two commands per seat, none given back during the test; two records per seat kept.
    limits = dataclasses.replace(
        LOOSE, commands_per_second=0.001, command_burst=2, refusals_kept_per_seat=2
    )
    async with serving(store_env, limits) as running:
        channel, client = stub(running.port)
        async with channel:
            deck = deal_for(2, {0: [INWARD]})
            match_id, _, tokens = await create_and_join(
                client, 2, prearranged_deal=deck, turn_timeout_ms=0
            )
            act = ms.ActRequest(match_id=match_id, jungle_speed=grab())
            opened = await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
            )  # the inward arrows open a race for everyone (JS-6.1)
            # Seat 1 grabs claiming a version nobody has seen: refused, kept (#2).
            bogus = ms.ActRequest(match_id=match_id, seen_version=999, jungle_speed=grab())
            await _refused(client, match_id, tokens[1], bogus, grpc.StatusCode.INVALID_ARGUMENT)
            won = await client.Act(act, metadata=bearer(tokens[0]))  # #3
            late = await client.Act(act, metadata=bearer(tokens[1]))  # #4, a late grab (JS-5.3)
            assert won.version == opened.version + 1 and late.version == won.version + 1
            # Clients read the numbers in the stamps of the events they are sent.
            assert won.events[0].jungle_speed.arrows_won.stamp.receive == 3
            assert late.events[0].jungle_speed.late_grab.stamp.receive == 4
            # Seat 1's commands are spent: refused (#5, its second record), then only
            # counted three times; seat 0's own quota still keeps its refusal (#6).
            exhausted = grpc.StatusCode.RESOURCE_EXHAUSTED
            for _ in range(4):
                await _refused(client, match_id, tokens[1], act, exhausted)
            await _refused(client, match_id, tokens[0], act, exhausted)
            final = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
            assert final == late.version
    # The server has stopped: its saves are done. The store is read as a judge would.
    arena = Arena(store_env)
    try:
        found = read_refusals(arena, UUID(match_id))
        events = arena.events_after(UUID(match_id))
        assert arena.load_refusal_log(UUID(match_id)) is not None
        assert refusal_log_id(UUID(match_id)) not in {e.match_id for e in arena.logged_matches()}
    finally:
        arena.close()
    assert found.problems == []
    assert [(r.receive, r.seat, r.code) for r in found.refusals] == [
        (2, 1, "INVALID_ARGUMENT"),
        (5, 1, "RESOURCE_EXHAUSTED"),
        (6, 0, "RESOURCE_EXHAUSTED"),
    ]
    first = found.refusals[0]
    assert first.action == "jungle_speed.grab" and first.command.startswith("jungle_speed {")
    assert "seen_version 999" in first.message
    assert first.version == opened.version  # refused while the race was open
    assert first.stamp["seen_version"] == 999 and first.stamp["receive"] == 2
    assert first.stamp["sequence"] > 0 and first.stamp["wall_ns"] > 0
    assert "seat 1 sent more than" in found.refusals[1].message
    assert found.refusals[2].version == late.version
    assert found.not_kept == {1: 3} and found.quota == 2
    # The events are the applied commands only, numbered 1, 3 and 4; with the refusals,
    # every number from 1 to 6 is accounted for, each once.
    assert len(events) == final
    # A tie's contenders are numbered in its deciding event (JS-4.2a).
    stamps = [s for e in events for s in stamps_of(vars(e))]
    numbered = sorted({s.receive for s in stamps if s.receive})
    assert numbered == [1, 3, 4]
    assert numbers_accounted(numbered, found) == []
    assert sorted(numbered + [r.receive for r in found.refusals]) == list(range(1, 7))


async def test_js_3_1_a_command_refused_on_a_play_stream_is_kept_with_its_rule(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(
            client, 3, turn_timeout_ms=0, prearranged_deal=deal_for(3, {})
        )

        async def requests() -> AsyncIterator[ms.PlayRequest]:
            for _ in range(2):  # seat 0 reveals, then reveals again out of turn
                yield ms.PlayRequest(act=ms.ActRequest(match_id=match_id, jungle_speed=reveal()))

        call = client.Play(requests(), metadata=bearer(tokens[0]))
        answers = [answer async for answer in call]
        # A token of another match is no seat of this one: refused, not kept.
        with pytest.raises(grpc.aio.AioRpcError):
            await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer("nobody")
            )
        version = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        # Kept after the answer: the next applied command's save carries it at the latest.
        await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[1])
        )
    assert [a.WhichOneof("outcome") for a in answers] == ["applied", "refused"]
    found = read_refusals(server.app, UUID(match_id))
    assert [(r.receive, r.seat, r.version, r.rule) for r in found.refusals] == [
        (2, 0, version, "JS-3.1")
    ]
    assert found.refusals[0].message == answers[1].refused.message.removeprefix("JS-3.1: ")
    assert found.refusals[0].stamp["on_stream"] is True
    assert found.quota == 100 and found.not_kept == {} and found.problems == []


async def test_js_4_2_grabs_sent_at_once_some_refused_leave_every_receive_number_once(
    server: RunningServer,
) -> None:
    """Six seats grab at once in an inward-arrows race (JS-6.1), three of them naming a
    version nobody has seen: refused while the others are applied, in one receive order
    that numbers them all."""
    players = 6
    channel, client = stub(server.port)
    async with channel:
        deck = deal_for(players, {0: [INWARD]})
        match_id, _, tokens = await create_and_join(
            client, players, prearranged_deal=deck, turn_timeout_ms=0
        )
        opened = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
        )
        channels = [stub(server.port) for _ in tokens]
        try:
            answers = await asyncio.gather(
                *(
                    grabber.Act(
                        ms.ActRequest(
                            match_id=match_id,
                            seen_version=999 if seat % 2 else 0,
                            jungle_speed=grab(),
                        ),
                        metadata=bearer(token),
                    )
                    for seat, ((_, grabber), token) in enumerate(zip(channels, tokens, strict=True))
                ),
                return_exceptions=True,
            )
        finally:
            for grab_channel, _ in channels:
                await grab_channel.close()
        # An applied command after them: its save carries every refusal not saved yet.
        turn = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).jungle_speed.turn
        await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[turn])
        )
    refused = [a for a in answers if isinstance(a, grpc.aio.AioRpcError)]
    assert len(refused) == 3 and all(a.code() is grpc.StatusCode.INVALID_ARGUMENT for a in refused)
    found = read_refusals(server.app, UUID(match_id))
    assert sorted(r.seat for r in found.refusals) == [1, 3, 5]
    assert all(r.version >= opened.version for r in found.refusals)
    events = server.app.events_after(UUID(match_id))
    # A tie's contenders are numbered in its deciding event (JS-4.2a).
    stamps = [s for e in events for s in stamps_of(vars(e))]
    numbered = sorted({s.receive for s in stamps if s.receive})
    kept = [r.receive for r in found.refusals]
    # The reveal, six grabs and the last reveal: 1 to 8, each once, events or refusals.
    assert sorted(numbered + kept) == list(range(1, 9))
    assert numbers_accounted(numbered, found) == []
