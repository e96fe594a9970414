"""The MatchService's commands over the web port (``totem serve --web``): created, joined,
played, reissued and forked as on the gRPC port, by the same use cases and with the same
refusals; Act and JoinMatch stamped on arrival, before their body is read, from the same
sequence as the gRPC port's (JS-5.1)."""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import textwrap
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import httpx
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from server.serve import RunningServer
from server.web import PLAY_ON_GRPC_ONLY, WebMatchService
from tests.service.helpers import (
    NO_SPECIALS,
    ORGANISER_TOKEN,
    bearer,
    create_and_join,
    js_options,
    reveal,
    stub,
)
from tests.service.limits_helpers import until
from tests.service.web_helpers import (
    MATCHES,
    SplitRequest,
    authorised,
    serving_web,
    web_url,
)
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms

M = TypeVar("M", bound=Message)
BOUND = 60.0


@pytest.fixture
async def web_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    async with serving_web(store_env) as running:
        yield running


def as_json(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message)


async def call(
    http: httpx.AsyncClient, method: str, request: Message, answer: type[M], token: str | None
) -> M:
    """A Connect unary call in JSON that must succeed, its answer parsed."""
    got = await http.post(f"{MATCHES}/{method}", json=as_json(request), headers=authorised(token))
    assert got.status_code == 200, got.text
    return json_format.Parse(got.text, answer())


async def refused(
    http: httpx.AsyncClient, method: str, request: Message, token: str | None
) -> dict[str, Any]:
    """A Connect unary call in JSON that must be refused: its error."""
    got = await http.post(f"{MATCHES}/{method}", json=as_json(request), headers=authorised(token))
    assert got.status_code != 200, got.text
    error: dict[str, Any] = got.json()
    return error


def reveal_request(match_id: str, seen_version: int = 0) -> ms.ActRequest:
    return ms.ActRequest(match_id=match_id, jungle_speed=reveal(), seen_version=seen_version)


async def web_match(http: httpx.AsyncClient, players: int = 2) -> tuple[str, str, list[str]]:
    """A Jungle Speed match created and filled over the web port."""
    created = await call(
        http,
        "CreateMatch",
        ms.CreateMatchRequest(
            game=common_pb2.GAME_JUNGLE_SPEED,
            jungle_speed=js_options(max_players=players, specials=NO_SPECIALS, turn_timeout_ms=0),
        ),
        ms.CreateMatchResponse,
        ORGANISER_TOKEN,
    )
    tokens = []
    for seat in range(players):
        joined = await call(
            http,
            "JoinMatch",
            ms.JoinMatchRequest(match_id=created.match_id, name=f"web {seat}", any_seat=True),
            ms.JoinMatchResponse,
            None,
        )
        assert (joined.seat, joined.role) == (seat, common_pb2.VIEWER_ROLE_PLAYER)
        tokens.append(joined.player_token)
    return created.match_id, created.referee_token, tokens


async def test_a_match_is_created_joined_played_reissued_and_forked_over_the_web(
    web_server: RunningServer,
) -> None:
    channel, client = stub(web_server.port)
    async with channel, httpx.AsyncClient(base_url=web_url(web_server)) as http:
        match_id, referee, tokens = await web_match(http)
        acted = await call(http, "Act", reveal_request(match_id), ms.ActResponse, tokens[0])
        # The answer is the gRPC port's codec: the events a Watch shows this seat.
        watched = client.Watch(
            ms.WatchRequest(match_id=match_id, omit_state=True), metadata=bearer(tokens[0])
        )
        events = [await watched.read() for _ in range(acted.version)]
        watched.cancel()
        assert list(acted.events) == events[-len(acted.events) :]
        assert acted.events[-1].jungle_speed.WhichOneof("event") == "revealed"
        assert acted.receipt.version == acted.version

        reissued = await call(
            http,
            "ReissueToken",
            ms.ReissueTokenRequest(match_id=match_id, seat=1),
            ms.ReissueTokenResponse,
            referee,
        )
        stale = await refused(http, "Act", reveal_request(match_id), tokens[1])
        assert stale["code"] == "unauthenticated"
        acted = await call(
            http, "Act", reveal_request(match_id), ms.ActResponse, reissued.player_token
        )

        forked = await call(
            http,
            "ForkMatch",
            ms.ForkMatchRequest(match_id=match_id, version=acted.version),
            ms.ForkMatchResponse,
            referee,
        )
        got = await client.GetMatch(
            ms.GetMatchRequest(match_id=forked.match_id), metadata=bearer(forked.referee_token)
        )
        assert got.summary.status == common_pb2.MATCH_STATUS_PLAYING
        assert len(forked.player_tokens) == 2

        key = await call(
            http, "GetServerKey", ms.GetServerKeyRequest(), ms.GetServerKeyResponse, None
        )
        assert key == await client.GetServerKey(ms.GetServerKeyRequest())
        checkpoint = await call(
            http, "GetCheckpoint", ms.GetCheckpointRequest(), ms.GetCheckpointResponse, None
        )
        over_grpc = await client.GetCheckpoint(ms.GetCheckpointRequest())
        assert (checkpoint.tree_size, checkpoint.root_hash) == (
            over_grpc.tree_size,
            over_grpc.root_hash,
        )
        assert checkpoint.tree_size > 0


async def test_commands_are_refused_over_the_web_as_on_grpc(web_server: RunningServer) -> None:
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        match_id, _, tokens = await web_match(http)
        no_token = await refused(http, "Act", reveal_request(match_id), None)
        unplaced = await refused(http, "JoinMatch", ms.JoinMatchRequest(match_id=match_id), None)
        full = await refused(
            http,
            "JoinMatch",
            ms.JoinMatchRequest(match_id=match_id, name="late", any_seat=True),
            None,
        )
        not_organiser = await refused(
            http,
            "CreateMatch",
            ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED),
            tokens[0],
        )
        out_of_turn = await refused(http, "Act", reveal_request(match_id), tokens[1])
        no_fork = await refused(
            http, "ForkMatch", ms.ForkMatchRequest(match_id=match_id, version=2), tokens[0]
        )
    assert no_token["code"] == "unauthenticated"
    assert no_token["message"].startswith("acting needs a player token from JoinMatch")
    assert unplaced["code"] == "invalid_argument"
    assert unplaced["message"].startswith("set any_seat or seat to take a seat")
    assert full["code"] == "failed_precondition"
    assert full["message"].startswith("JS-1.5: ")
    assert not_organiser["code"] == "permission_denied"
    assert out_of_turn["code"] == "failed_precondition"
    assert out_of_turn["message"].startswith("JS-3.1: ")
    assert no_fork["code"] == "permission_denied"
    for error in (full, out_of_turn):
        [detail] = error["details"]
        assert detail["type"] == "google.rpc.ErrorInfo"


async def test_play_is_answered_unimplemented_with_a_sentence(web_server: RunningServer) -> None:
    """A browser cannot send a request stream; Play stays on the gRPC port."""
    async with httpx.AsyncClient(base_url=web_url(web_server), http1=False, http2=True) as http:
        got = await http.post(
            f"{MATCHES}/Play",
            content=b"",
            headers={"content-type": "application/connect+json", "authorization": "Bearer x"},
        )
    # A Connect stream's end message: an envelope flagged 0x02 holding the error.
    assert got.status_code == 200, got.text
    flags, length = got.content[0], int.from_bytes(got.content[1:5], "big")
    assert flags & 0x02
    end = json.loads(got.content[5 : 5 + length])
    assert end["error"] == {"code": "unimplemented", "message": PLAY_ON_GRPC_ONLY}


def _body(function: Any) -> list[ast.stmt]:
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    assert isinstance(node, ast.AsyncFunctionDef)
    body = node.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


def _calls(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
        for n in ast.walk(node)
    )


def test_js_5_1_web_race_handlers_take_their_arrival_stamp_first_and_submit_before_awaiting() -> (
    None
):
    """As the gRPC handlers do (test_receive_order.py): the stamp first, then nothing
    awaited until the work is handed to the match's actor."""
    for handler, hands_on in (
        (WebMatchService.act, "_submit_act"),
        (WebMatchService.join_match, "join"),
    ):
        first, *rest = _body(handler)
        assert isinstance(first, ast.Assign) and _calls(first, "on_arrival"), handler.__name__
        statements = [
            s for block in rest for s in (block.body if isinstance(block, ast.With) else [block])
        ]
        for statement in statements:
            if _calls(statement, hands_on):
                break
            assert not any(isinstance(n, ast.Await) for n in ast.walk(statement)), ast.unparse(
                statement
            )
        else:
            raise AssertionError(f"{handler.__name__} never hands its work on")


async def test_js_5_1_a_web_act_is_stamped_when_its_headers_arrive_not_when_its_body_does(
    web_server: RunningServer,
) -> None:
    """The first Act sends its headers, then holds its body back while a second Act is
    sent and answered: the first was received first, and its stamp says so."""
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        first_match, _, first_tokens = await web_match(http)
        second_match, _, second_tokens = await web_match(http)
        stamper = web_server.actors.stamper
        assert not stamper.arriving_by(time.monotonic_ns())
        held = SplitRequest(
            web_server.web.port if web_server.web else 0,
            f"{MATCHES}/Act",
            json.dumps(as_json(reveal_request(first_match))).encode(),
            authorised(first_tokens[0]),
        )
        first = asyncio.create_task(held())
        await until(
            lambda: stamper.arriving_by(time.monotonic_ns()), "the held Act stamped on arrival"
        )
        second = await call(
            http, "Act", reveal_request(second_match), ms.ActResponse, second_tokens[0]
        )
        assert not first.done()  # its body is still held back
        held.release.set()
        status, body = await asyncio.wait_for(first, BOUND)
    assert status == 200, body
    answered = json_format.Parse(body, ms.ActResponse())
    first_stamp = answered.events[-1].jungle_speed.revealed.stamp
    second_stamp = second.events[-1].jungle_speed.revealed.stamp
    assert 0 < first_stamp.sequence < second_stamp.sequence
    assert first_stamp.monotonic_ns < second_stamp.monotonic_ns


async def test_js_5_1_acts_over_the_web_and_grpc_are_stamped_from_one_sequence(
    web_server: RunningServer,
) -> None:
    channel, client = stub(web_server.port)
    async with channel, httpx.AsyncClient(base_url=web_url(web_server)) as http:
        match_id, _, tokens = await create_and_join(
            client, 2, specials=NO_SPECIALS, turn_timeout_ms=0
        )
        sequences = []
        for turn in range(6):
            request = reveal_request(match_id)
            token = tokens[turn % 2]
            if turn % 2:
                answer = await call(http, "Act", request, ms.ActResponse, token)
            else:
                answer = await client.Act(request, metadata=bearer(token))
            sequences.append(answer.events[-1].jungle_speed.revealed.stamp.sequence)
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    # Nothing else was stamped in between: the joins took the sequences before.
    assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
