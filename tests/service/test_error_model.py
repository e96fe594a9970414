"""A clean error model: every request is checked, values a client sent are echoed only
cut short, and nothing unforeseen reaches a client as exception text (only as INTERNAL
with an incident id that finds the details in the server's log)."""

from __future__ import annotations

import logging
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server import codec
from server.serve import SERVICE_NAME, RunningServer
from storage.arena import MATCH_LOG_ID
from tests.service.helpers import bearer, create_and_join, organiser, stub
from tests.service.test_bad_input import refusal, rule_of, stored
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms

#: Every unary method of the MatchService, as the contract declares them.
UNARY = tuple(
    method.name
    for method in ms.DESCRIPTOR.services_by_name["MatchService"].methods
    if not method.server_streaming
)
#: What a client may see for a request the server cannot use; never UNKNOWN (the
#: server's own words lost) nor INTERNAL (an error nobody foresaw).
EXPECTED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
}


def raw_unary(channel: grpc.aio.Channel, method: str) -> Any:
    return channel.unary_unary(
        f"/{SERVICE_NAME}/{method}",
        request_serializer=lambda data: data,
        response_deserializer=lambda data: data,
    )


async def raw_status(channel: grpc.aio.Channel, method: str, data: bytes) -> grpc.StatusCode:
    try:
        if method == "Watch":
            call = channel.unary_stream(
                f"/{SERVICE_NAME}/Watch",
                request_serializer=lambda b: b,
                response_deserializer=lambda b: b,
            )(data, timeout=5)
            async for _ in call:
                break  # a stream that opens is a request the server could use
            call.cancel()
            return grpc.StatusCode.OK
        await raw_unary(channel, method)(data, timeout=5)
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


@pytest.mark.parametrize("method", [*UNARY, "Watch"])
async def test_request_bytes_that_are_not_the_message_are_invalid_arguments(
    server: RunningServer, method: str
) -> None:
    channel, _ = stub(server.port)
    async with channel:
        before = stored(server)
        try:
            call = raw_unary(channel, method) if method != "Watch" else None
            if call is not None:
                await call(b"\xff\xff\xff", timeout=5)
            else:
                async for _ in channel.unary_stream(
                    f"/{SERVICE_NAME}/Watch",
                    request_serializer=lambda b: b,
                    response_deserializer=lambda b: b,
                )(b"\xff\xff\xff", timeout=5):
                    pass
        except grpc.aio.AioRpcError as error:
            assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert f"not a valid {method} request" in (error.details() or "")
        else:
            raise AssertionError("undecodable bytes were accepted")
        assert stored(server) == before


async def test_an_unforeseen_error_is_internal_with_an_incident_id_and_no_text(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, _ = await create_and_join(client, 2)

        def broken(match: Any) -> Any:
            raise RuntimeError("the seed is 1234abcd")

        monkeypatch.setattr(codec, "listed_summary", broken)
        with caplog.at_level(logging.ERROR, logger="server.service"):
            error = await refusal(
                client.GetMatch(ms.GetMatchRequest(match_id=match_id), metadata=bearer(referee))
            )
    assert error.code() is grpc.StatusCode.INTERNAL
    details = error.details() or ""
    assert "1234abcd" not in details and "RuntimeError" not in details
    number = details.split("incident ")[1].split(":")[0]
    assert len(number) == 12
    logged = [r for r in caplog.records if number in r.getMessage()]
    assert logged and logged[0].exc_info is not None


async def test_the_match_logs_own_id_is_no_match(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        await create_and_join(client, 2)
        error = await refusal(client.GetMatch(ms.GetMatchRequest(match_id=str(MATCH_LOG_ID))))
        assert error.code() is grpc.StatusCode.NOT_FOUND
        watch = client.Watch(ms.WatchRequest(match_id=str(MATCH_LOG_ID)))
        error = await refusal(watch.read())
        assert error.code() is grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("token", ["-1", "1_0", "٣", " 1", "9" * 19, "x"])
async def test_page_tokens_are_only_those_the_server_gives(
    server: RunningServer, token: str
) -> None:
    channel, client = stub(server.port)
    async with channel:
        error = await refusal(client.ListMatches(ms.ListMatchesRequest(page_token=token)))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "page_token" in (error.details() or "")


async def test_an_unknown_status_filter_is_refused(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        error = await refusal(client.ListMatches(ms.ListMatchesRequest(status=99)))  # type: ignore[arg-type]
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "status" in (error.details() or "")


@pytest.mark.parametrize("after", [2**63 - 1, 2**63, 2**64 - 1])
async def test_huge_after_versions_are_out_of_range(server: RunningServer, after: int) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, _ = await create_and_join(client, 2)
        watch = client.Watch(ms.WatchRequest(match_id=match_id, after_version=after))
        error = await refusal(watch.read())
    assert error.code() is grpc.StatusCode.OUT_OF_RANGE


async def test_a_huge_match_id_is_echoed_cut_short(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        error = await refusal(client.GetMatch(ms.GetMatchRequest(match_id="x" * 1_000_000)))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert len(error.details() or "") < 200
    assert "1000000 characters" in (error.details() or "")


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(method=st.sampled_from([*UNARY, "Watch"]), data=st.binary(max_size=64))
async def test_fuzzed_requests_never_end_unknown_or_internal(
    server: RunningServer, method: str, data: bytes
) -> None:
    """Random bytes to every RPC: a clear status each time, and the server stays healthy."""
    channel, _ = stub(server.port)
    async with channel:
        code = await raw_status(channel, method, data)
        assert code in EXPECTED, (method, data, code)
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize(
    "name",
    ["\x1b[31mred", "left\u202eright", "two\nlines", "nul\x00", "\u200b", "tab\there", "a\u2028b"],
)
async def test_names_with_control_format_or_invisible_characters_are_refused(
    server: RunningServer, name: str
) -> None:
    """JS-1.5: a seat is taken under a name every screen shows as it is."""
    channel, client = stub(server.port)
    async with channel:
        created = await client.CreateMatch(
            ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED), metadata=organiser()
        )
        before = stored(server)
        error = await refusal(
            client.JoinMatch(
                ms.JoinMatchRequest(match_id=created.match_id, name=name, any_seat=True)
            )
        )
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert rule_of(error) == "JS-1.5"
    assert "printable" in (error.details() or "") and name not in (error.details() or "")
    assert stored(server) == before


async def test_names_in_any_script_are_welcome(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        created = await client.CreateMatch(
            ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED), metadata=organiser()
        )
        for name in ("Zoë", "Алёна", "José María", "山田"):
            await client.JoinMatch(
                ms.JoinMatchRequest(match_id=created.match_id, name=name, any_seat=True)
            )
