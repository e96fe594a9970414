"""Calls in flight in one process are bounded: beyond, RESOURCE_EXHAUSTED with a retry
hint at once, never a bare CANCELLED."""

from __future__ import annotations

import dataclasses

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.service.helpers import retry_delay_ms, stub
from tests.service.limits_helpers import LOOSE, decided_race, serving, until
from totem.v1 import match_service_pb2 as ms


async def test_calls_beyond_the_limit_are_refused_with_a_hint(store_env: dict[str, str]) -> None:
    limits = dataclasses.replace(LOOSE, max_concurrent_calls=3)
    async with serving(store_env, limits) as running:
        channel, client = stub(running.port)
        async with channel:
            match_id, _, _ = await decided_race(client)
            streams = []
            for _ in range(3):  # a stream is a call in flight until it ends
                call = client.Watch(ms.WatchRequest(match_id=match_id))
                assert (await call.read()).version == 1
                streams.append(call)
            assert running.calls is not None
            assert running.calls.in_flight == 3
            health = health_pb2_grpc.HealthStub(channel)
            for refused_call in (
                client.GetMatch(ms.GetMatchRequest(match_id=match_id)),
                health.Check(health_pb2.HealthCheckRequest()),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await refused_call
                assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "calls under way" in str(refused.value.details())
                assert retry_delay_ms(refused.value) > 0
            streams[0].cancel()
            calls = running.calls
            await until(lambda: calls.in_flight == 2, "the cancelled stream's call ended")
            state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
            assert state.summary.match_id == match_id
            for call in streams[1:]:
                call.cancel()
            await until(lambda: calls.in_flight == 0, "every call ended")
