"""The TournamentService over the web port: the same calls, answers and refusals as on
the gRPC port (the same work, server.tournament_service.TournamentCalls), on the same
port as the MatchService, WatchTournament included."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
import httpx
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf import json_format
from google.protobuf.message import Message

from server.serve import RunningServer
from tests.service.helpers import ORGANISER_TOKEN
from tests.service.web_helpers import TOURNAMENTS, authorised, serving_web, web_url
from totem.v1 import common_pb2, tournament_service_connect, tournament_service_pb2_grpc
from totem.v1 import tournament_service_pb2 as tp

M = TypeVar("M", bound=Message)
BOUND = 60.0


@pytest.fixture
async def web_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    async with serving_web(store_env) as running:
        yield running


async def call(
    http: httpx.AsyncClient, method: str, request: Message, answer: type[M], token: str | None
) -> M:
    got = await http.post(
        f"{TOURNAMENTS}/{method}",
        json=json_format.MessageToDict(request),
        headers=authorised(token),
    )
    assert got.status_code == 200, got.text
    return json_format.Parse(got.text, answer())


async def refusal(
    http: httpx.AsyncClient, method: str, request: Message, token: str | None
) -> dict[str, Any]:
    got = await http.post(
        f"{TOURNAMENTS}/{method}",
        json=json_format.MessageToDict(request),
        headers=authorised(token),
    )
    assert got.status_code != 200, got.text
    error: dict[str, Any] = got.json()
    return error


async def test_a_tournament_is_run_over_the_web_as_over_grpc(web_server: RunningServer) -> None:
    async with (
        httpx.AsyncClient(base_url=web_url(web_server)) as http,
        tournament_service_connect.TournamentServiceClient(web_url(web_server)) as web,
    ):
        created = await call(
            http,
            "CreateTournament",
            tp.CreateTournamentRequest(
                game=common_pb2.GAME_TRIBES,
                format=tp.TOURNAMENT_FORMAT_ROUND_ROBIN,
                table_size=2,
                title="Web open",
            ),
            tp.CreateTournamentResponse,
            ORGANISER_TOKEN,
        )
        tournament_id = created.tournament_id
        tokens = {}
        for name in ("ada", "bo"):
            added = await call(
                http,
                "AddEntrant",
                tp.AddEntrantRequest(tournament_id=tournament_id, name=name),
                tp.AddEntrantResponse,
                ORGANISER_TOKEN,
            )
            tokens[name] = added.entrant_token
        referee = await call(
            http,
            "AppointReferee",
            tp.AppointRefereeRequest(tournament_id=tournament_id, name="judge"),
            tp.AppointRefereeResponse,
            ORGANISER_TOKEN,
        )
        assert referee.referee_token
        started = await call(
            http,
            "StartRound",
            tp.StartRoundRequest(tournament_id=tournament_id),
            tp.StartRoundResponse,
            ORGANISER_TOKEN,
        )
        seated = await asyncio.gather(
            *(
                call(
                    http,
                    "TakeSeat",
                    tp.TakeSeatRequest(tournament_id=tournament_id),
                    tp.TakeSeatResponse,
                    token,
                )
                for token in tokens.values()
            )
        )
        assert {s.match_id for s in seated} == {started.round.tables[0].match_id}
        assert sorted(s.seat for s in seated) == [0, 1]
        listed = await call(
            http, "ListTournaments", tp.ListTournamentsRequest(), tp.ListTournamentsResponse, None
        )
        assert [t.tournament_id for t in listed.tournaments] == [tournament_id]
        standings = await call(
            http,
            "GetStandings",
            tp.GetStandingsRequest(tournament_id=tournament_id),
            tp.GetStandingsResponse,
            None,
        )
        assert sorted(row.entrant for row in standings.standings) == ["ada", "bo"]
        disputes = await call(
            http,
            "ListDisputes",
            tp.ListDisputesRequest(tournament_id=tournament_id),
            tp.ListDisputesResponse,
            referee.referee_token,
        )
        assert list(disputes.disputes) == []

        # The binary Connect client, and the same answer as the gRPC port's.
        got = await web.get_tournament(tp.GetTournamentRequest(tournament_id=tournament_id))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{web_server.port}") as channel:
            stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)
            assert got == await stub.GetTournament(
                tp.GetTournamentRequest(tournament_id=tournament_id)
            )
            grpc_events = stub.WatchTournament(
                tp.WatchTournamentRequest(tournament_id=tournament_id)
            )
            over_grpc = [await grpc_events.read() for _ in range(got.tournament.summary.version)]
            grpc_events.cancel()
        assert got.tournament.summary.rounds_started == 1

        # WatchTournament: the stored events, then it follows the tournament live.
        events: list[tp.TournamentEvent] = []
        stream = web.watch_tournament(tp.WatchTournamentRequest(tournament_id=tournament_id))
        async for event in stream:
            events.append(event)
            if event.version == got.tournament.summary.version:
                break
        assert events == over_grpc
        await call(
            http,
            "AppointReferee",
            tp.AppointRefereeRequest(tournament_id=tournament_id, name="second judge"),
            tp.AppointRefereeResponse,
            ORGANISER_TOKEN,
        )
        live = await asyncio.wait_for(anext(aiter(stream)), BOUND)
        assert live.version == got.tournament.summary.version + 1
        assert "second judge" in live.fields_json


async def test_tournament_refusals_over_the_web_are_those_of_grpc(
    web_server: RunningServer,
) -> None:
    async with (
        httpx.AsyncClient(base_url=web_url(web_server)) as http,
        tournament_service_connect.TournamentServiceClient(web_url(web_server)) as web,
    ):
        bad_id = await refusal(
            http, "GetTournament", tp.GetTournamentRequest(tournament_id="nope"), None
        )
        no_organiser = await refusal(
            http,
            "CreateTournament",
            tp.CreateTournamentRequest(
                game=common_pb2.GAME_TRIBES, format=tp.TOURNAMENT_FORMAT_SWISS, table_size=2
            ),
            None,
        )
        with pytest.raises(ConnectError) as missing:
            async for _ in web.watch_tournament(
                tp.WatchTournamentRequest(tournament_id="00000000-0000-4000-8000-000000000000")
            ):
                pass
    assert bad_id == bad_id | {
        "code": "invalid_argument",
        "message": "tournament_id 'nope' is not a tournament id",
    }
    assert no_organiser["code"] in ("permission_denied", "unauthenticated")
    assert missing.value.code is Code.NOT_FOUND
