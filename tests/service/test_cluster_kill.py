"""An instance killed mid-match (SIGKILL) while its players move to another instance on
the same PostgreSQL store: nothing acknowledged is lost, the match's turn timer goes on
firing through the instance left, and no deadline gives two timer events (JS-3.4)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import grpc
import pytest

from bench.crash import Report, check_answers
from bench.harness import Server
from storage.arena import Arena
from tests.conftest import postgres_store
from tests.service.helpers import (
    ORGANISER_TOKEN,
    act,
    create_and_join,
    deal_for,
    reveal,
    stub,
    watch_until,
)
from tests.service.test_cluster import timer_reveals
from totem.v1 import match_service_pb2 as ms

pytestmark = pytest.mark.postgres

TIMEOUT_MS = 400


async def reveal_on_turn(
    client: object, match_id: str, tokens: list[str], answers: list[tuple[int, list[ms.MatchEvent]]]
) -> None:
    """The seat whose turn it is reveals; a turn the timer took first is no failure."""
    state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))  # type: ignore[attr-defined]
    seat = state.jungle_speed.turn
    try:
        answer = await act(client, match_id, tokens[seat], reveal())  # type: ignore[arg-type]
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
            raise
        return
    answers.append((seat, list(answer.events)))


async def test_players_move_to_the_instance_left_and_nothing_acknowledged_is_lost(
    tmp_path: Path,
) -> None:
    with postgres_store() as env:
        a = Server(env, tmp_path, instance="a")
        b = Server(env, tmp_path, instance="b")
        for server in (a, b):  # the tests' organiser, not the benchmark's
            server.env["TOTEM_ORGANISER_TOKEN"] = ORGANISER_TOKEN
        a.start()
        b.start()
        try:
            answers: list[tuple[int, list[ms.MatchEvent]]] = []
            channel_a, client_a = stub(a.port)
            channel_b, client_b = stub(b.port)
            async with channel_a, channel_b:
                match_id, _, tokens = await create_and_join(
                    client_a, 2, turn_timeout_ms=TIMEOUT_MS, prearranged_deal=deal_for(2, {})
                )
                await client_b.GetMatch(ms.GetMatchRequest(match_id=match_id))
                for _ in range(6):
                    await reveal_on_turn(client_a, match_id, tokens, answers)
                # Killed with a command on its way: its outcome is unknown to the client.
                pending = asyncio.ensure_future(reveal_on_turn(client_a, match_id, tokens, answers))
                await asyncio.sleep(0)
                a.kill()
                with pytest.raises(grpc.aio.AioRpcError):
                    await pending
                for _ in range(6):  # the players go on through b
                    await reveal_on_turn(client_b, match_id, tokens, answers)
                last = (await client_b.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary
                # Nobody acts any more: b's timer reveals for them.
                events = await asyncio.wait_for(
                    watch_until(client_b, match_id, last.version + 4, token=tokens[0]), 30
                )
        finally:
            a.stop()
            b.stop()
        assert [e.version for e in events] == list(range(1, last.version + 5))
        timed = timer_reveals(events, TIMEOUT_MS)
        assert [r.stamp.instance for r in timed[-4:]] == ["b"] * 4
        stamped = {
            e.jungle_speed.revealed.stamp.instance
            for _, acked in answers
            for e in acked
            if e.jungle_speed.WhichOneof("event") == "revealed"
        }
        assert stamped >= {"a", "b"}
        arena = Arena(env)
        try:
            report = Report("PostgreSQL")
            check_answers(arena, uuid.UUID(match_id), answers, report)
        finally:
            arena.close()
        assert report.problems == []
        assert report.acknowledged_events >= 12
