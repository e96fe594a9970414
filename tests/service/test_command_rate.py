"""Commands per seat per second are bounded: a token bucket per match and seat; beyond
it, RESOURCE_EXHAUSTED with a retry hint, and nothing is written."""

from __future__ import annotations

import dataclasses
from uuid import uuid4

import grpc
import pytest

from server.limits import CommandRates, TokenBucket
from tests.service.helpers import bearer, grab, retry_delay_ms, stub
from tests.service.limits_helpers import LOOSE, decided_race, serving
from totem.v1 import match_service_pb2 as ms

SECOND_NS = 1_000_000_000


def test_a_bucket_gives_its_burst_then_its_rate_and_says_when() -> None:
    bucket = TokenBucket(rate=10.0, burst=3, now_ns=0)
    assert [bucket.take(0) for _ in range(3)] == [None, None, None]
    assert bucket.take(0) == 100  # one token comes back every 100 ms
    assert bucket.take(SECOND_NS // 20) == 50
    assert bucket.take(SECOND_NS // 10) is None
    assert [bucket.take(10 * SECOND_NS) for _ in range(4)][-1] == 100  # never beyond burst


def test_each_seat_of_each_match_has_its_own_bucket_forgotten_with_the_match() -> None:
    rates = CommandRates(rate=1.0, burst=1)
    first, second = uuid4(), uuid4()
    rates.take(first, 0, 0)
    rates.take(first, 1, 0)
    rates.take(first, None, 0)  # the referee's commands
    rates.take(second, 0, 0)
    with pytest.raises(Exception) as refused:
        rates.take(first, 0, 0)
    assert getattr(refused.value, "retry_after_ms", None) == 1000
    assert rates.matches() == 2
    rates.forget(first)
    assert rates.matches() == 1
    rates.take(first, 0, 0)  # a fresh bucket


async def test_a_seat_beyond_its_rate_is_refused_with_a_hint_and_nothing_is_written(
    store_env: dict[str, str],
) -> None:
    # A rate so slow that no token comes back during the test: only the burst counts.
    limits = dataclasses.replace(LOOSE, commands_per_second=0.001, command_burst=3)
    async with serving(store_env, limits) as running:
        channel, client = stub(running.port)
        async with channel:
            match_id, tokens, version = await decided_race(client)  # seat 0: two commands
            request = ms.ActRequest(match_id=match_id, jungle_speed=grab())
            for _ in range(3):
                version = (await client.Act(request, metadata=bearer(tokens[1]))).version
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.Act(request, metadata=bearer(tokens[1]))
            assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "seat 1 sent more than" in str(refused.value.details())
            assert "not applied" in str(refused.value.details())
            assert retry_delay_ms(refused.value) > 0
            state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
            assert state.summary.version == version  # nothing written
            # Another seat of the match is not held back by seat 1.
            answer = await client.Act(request, metadata=bearer(tokens[0]))
            assert answer.version == version + 1
