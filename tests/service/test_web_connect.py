"""The MatchService over Connect (``totem serve --web``), called as a browser would: plain
HTTP with JSON, and the generated Connect client for binary calls and the Watch stream.
The answers are those of the gRPC port: the same use cases, codec and refusals."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator

import httpx
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.protobuf import json_format
from google.rpc import error_details_pb2
from pyqwest import Client, HTTPTransport, HTTPVersion

from server.serve import RunningServer, start
from tests.service.helpers import (
    NO_SPECIALS,
    act,
    bearer,
    create_and_join,
    reveal,
    stub,
)
from totem.v1 import common_pb2, match_service_connect
from totem.v1 import match_service_pb2 as ms

JSON = {"content-type": "application/json", "connect-protocol-version": "1"}


@pytest.fixture
async def web_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    """A real server with its gRPC port and its web port, both on loopback."""
    running = await start("127.0.0.1:0", store_env, web="127.0.0.1:0")
    try:
        yield running
    finally:
        await running.stop(grace=None)


def web_url(server: RunningServer) -> str:
    assert server.web is not None
    return f"http://127.0.0.1:{server.web.port}"


async def stopped_match(server: RunningServer, reveals: int = 4) -> tuple[str, str]:
    """A two-player Jungle Speed match with a few reveals, then stopped by its referee."""
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_and_join(
            client, 2, specials=NO_SPECIALS, turn_timeout_ms=0
        )
        for turn in range(reveals):
            await act(client, match_id, tokens[turn % 2], reveal())
        await stop(client, match_id, referee)
    return match_id, referee


async def stop(client: object, match_id: str, referee: str) -> None:
    request = ms.ActRequest(match_id=match_id, stop=ms.StopMatch(statement="time is up"))
    await client.Act(request, metadata=bearer(referee))  # type: ignore[attr-defined]


async def grpc_events(server: RunningServer, match_id: str) -> list[ms.MatchEvent]:
    channel, client = stub(server.port)
    async with channel:
        return [event async for event in client.Watch(ms.WatchRequest(match_id=match_id))]


async def test_list_and_get_answer_json_as_the_grpc_port_does(web_server: RunningServer) -> None:
    match_id, _ = await stopped_match(web_server)
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        listed = await http.post("/totem.v1.MatchService/ListMatches", json={}, headers=JSON)
        got = await http.post(
            "/totem.v1.MatchService/GetMatch", json={"matchId": match_id}, headers=JSON
        )
    assert listed.status_code == 200, listed.text
    assert listed.headers["content-type"] == "application/json"
    page = json_format.Parse(listed.text, ms.ListMatchesResponse())
    assert [summary.match_id for summary in page.matches] == [match_id]
    assert got.status_code == 200, got.text
    match = json_format.Parse(got.text, ms.GetMatchResponse())
    channel, client = stub(web_server.port)
    async with channel:
        over_grpc = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
    assert match == over_grpc
    assert match.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert match.role == common_pb2.VIEWER_ROLE_SPECTATOR


async def test_refusals_carry_the_status_and_error_info_in_connect_json(
    web_server: RunningServer,
) -> None:
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        bad = await http.post(
            "/totem.v1.MatchService/GetMatch", json={"matchId": "nope"}, headers=JSON
        )
        missing = await http.post(
            "/totem.v1.MatchService/GetMatch",
            json={"matchId": "00000000-0000-4000-8000-000000000000"},
            headers=JSON,
        )
        too_many = await http.post(
            "/totem.v1.MatchService/ListMatches", json={"pageSize": 1000}, headers=JSON
        )
        act = await http.post("/totem.v1.MatchService/Act", json={}, headers=JSON)
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_argument")
    assert bad.json()["message"] == "match_id 'nope' is not a match id"
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    assert too_many.json()["code"] == "invalid_argument"
    assert act.json() | {"details": []} == {
        "code": "invalid_argument",
        "message": "match_id '' is not a match id",
        "details": [],
    }
    [detail] = missing.json()["details"]
    assert detail["type"] == "google.rpc.ErrorInfo"
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(detail["value"] + "=="))
    assert (info.reason, info.domain) == ("NOT_FOUND", "totem.v1")


async def test_watch_streams_a_stopped_match_to_its_end_in_binary(
    web_server: RunningServer,
) -> None:
    match_id, referee = await stopped_match(web_server)
    async with match_service_connect.MatchServiceClient(web_url(web_server)) as web:
        events = [e async for e in web.watch(ms.WatchRequest(match_id=match_id))]
        refereed = [
            e
            async for e in web.watch(
                ms.WatchRequest(match_id=match_id, after_version=3),
                headers={"authorization": f"Bearer {referee}"},
            )
        ]
        got = await web.get_match(ms.GetMatchRequest(match_id=match_id))
    assert [e.version for e in events] == list(range(1, got.summary.version + 1))
    assert events[-1].WhichOneof("event") == "match_ended"
    assert events == await grpc_events(web_server, match_id)
    assert [e.version for e in refereed] == list(range(4, got.summary.version + 1))


async def test_watch_follows_a_live_match_until_the_referee_stops_it(
    web_server: RunningServer,
) -> None:
    channel, client = stub(web_server.port)
    async with (
        channel,
        match_service_connect.MatchServiceClient(web_url(web_server)) as web,
    ):
        match_id, referee, tokens = await create_and_join(
            client, 2, specials=NO_SPECIALS, turn_timeout_ms=0
        )
        seen: list[ms.MatchEvent] = []
        started = asyncio.Event()

        async def watch() -> None:
            async for event in web.watch(ms.WatchRequest(match_id=match_id)):
                seen.append(event)
                started.set()

        watching = asyncio.create_task(watch())
        await asyncio.wait_for(started.wait(), 30)  # the stored events came first
        for turn in range(6):
            await act(client, match_id, tokens[turn % 2], reveal())
        await stop(client, match_id, referee)
        await asyncio.wait_for(watching, 30)  # the stream ends after MatchEnded
    assert [e.version for e in seen] == list(range(1, len(seen) + 1))
    assert seen[-1].WhichOneof("event") == "match_ended"
    assert seen[-1].match_ended.reason == common_pb2.END_REASON_STOPPED


async def test_watch_refusal_is_a_connect_error(web_server: RunningServer) -> None:
    async with match_service_connect.MatchServiceClient(web_url(web_server)) as web:
        with pytest.raises(ConnectError) as refused:
            async for _ in web.watch(
                ms.WatchRequest(match_id="00000000-0000-4000-8000-000000000000")
            ):
                pass
    assert refused.value.code is Code.NOT_FOUND


async def test_http2_with_prior_knowledge_serves_unary_json_and_the_watch_stream(
    web_server: RunningServer,
) -> None:
    match_id, _ = await stopped_match(web_server)
    async with httpx.AsyncClient(base_url=web_url(web_server), http1=False, http2=True) as http:
        got = await http.post(
            "/totem.v1.MatchService/GetMatch", json={"matchId": match_id}, headers=JSON
        )
    assert (got.http_version, got.status_code) == ("HTTP/2", 200)
    async with (
        HTTPTransport(http_version=HTTPVersion.HTTP2) as transport,
        match_service_connect.MatchServiceClient(
            web_url(web_server), http_client=Client(transport)
        ) as web,
    ):
        events = [e async for e in web.watch(ms.WatchRequest(match_id=match_id))]
    assert events == await grpc_events(web_server, match_id)


async def test_grpc_web_serves_the_same_calls_and_refusals(web_server: RunningServer) -> None:
    match_id, _ = await stopped_match(web_server)
    async with match_service_connect.MatchServiceClient(
        web_url(web_server), protocol=ProtocolType.GRPC_WEB
    ) as web:
        events = [e async for e in web.watch(ms.WatchRequest(match_id=match_id))]
        page = await web.list_matches(ms.ListMatchesRequest())
        with pytest.raises(ConnectError) as refused:
            await web.get_match(ms.GetMatchRequest(match_id="nope"))
    assert events == await grpc_events(web_server, match_id)
    assert [summary.match_id for summary in page.matches] == [match_id]
    assert refused.value.code is Code.INVALID_ARGUMENT
    assert [detail.type_name for detail in refused.value.details] == ["google.rpc.ErrorInfo"]
