"""Roles: organisers create matches and see as referees; nobody who plays does.

The defect this guards against: whoever created a match got its referee token, so a
creator who also took a seat read every face-down card.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from server import auth
from server.access import Access, Organisers, OrganisersFileError, RateLimit, load_or_create
from server.serve import RunningServer, start
from tests.service.helpers import (
    ORGANISER_TOKEN,
    bearer,
    create_and_join,
    js_options,
    organiser,
    retry_delay_ms,
    stub,
)
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms

JUNGLE_SPEED = common_pb2.GAME_JUNGLE_SPEED


def create_request(players: int = 2) -> ms.CreateMatchRequest:
    return ms.CreateMatchRequest(game=JUNGLE_SPEED, jungle_speed=js_options(max_players=players))


def organisers_of(*tokens: str) -> Organisers:
    return Organisers({f"o{i}": auth.token_hash(t) for i, t in enumerate(tokens)})


@pytest.fixture
async def open_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    """Creation open to anyone, two matches a minute per client address."""
    access = Access(organisers_of(ORGANISER_TOKEN), open_creation=True, open_per_minute=2)
    running = await start("127.0.0.1:0", store_env, access=access)
    try:
        yield running
    finally:
        await running.stop(grace=None)


async def test_only_an_organiser_creates_a_match(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        for metadata in (None, bearer("not-an-organiser")):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.CreateMatch(create_request(), metadata=metadata)
            assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
            assert "organiser" in str(refused.value.details())
        listed = await client.ListMatches(ms.ListMatchesRequest())
        assert not listed.matches  # nothing was written
        created = await client.CreateMatch(create_request(), metadata=organiser())
        assert created.referee_token and created.referee_token != ORGANISER_TOKEN


async def test_an_organiser_sees_every_match_as_its_referee(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        as_organiser = await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=organiser()
        )
        as_player = await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=bearer(tokens[0])
        )
    assert as_organiser.role == common_pb2.VIEWER_ROLE_REFEREE
    assert as_organiser.jungle_speed.seed and any(
        s.face_down for s in as_organiser.jungle_speed.seats
    )
    assert as_player.role == common_pb2.VIEWER_ROLE_PLAYER
    assert not as_player.jungle_speed.seed
    assert not any(s.face_down for s in as_player.jungle_speed.seats)


async def test_the_referee_and_an_organiser_cannot_take_a_seat(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        created = await client.CreateMatch(create_request(), metadata=organiser())
        for credential in (created.referee_token, ORGANISER_TOKEN):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.JoinMatch(
                    ms.JoinMatchRequest(match_id=created.match_id, name="ref", any_seat=True),
                    metadata=bearer(credential),
                )
            assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
        view = await client.GetMatch(ms.GetMatchRequest(match_id=created.match_id))
        assert not view.summary.players  # nobody was seated


async def test_a_match_anyone_creates_has_no_referee(open_server: RunningServer) -> None:
    """The creator who takes a seat sees what any player sees, and nobody holds a
    referee token: only the organisers see the hidden facts."""
    channel, client = stub(open_server.port)
    async with channel:
        created = await client.CreateMatch(create_request())
        assert created.referee_token == ""
        seats = [
            await client.JoinMatch(
                ms.JoinMatchRequest(match_id=created.match_id, name=n, any_seat=True)
            )
            for n in ("creator", "guest")
        ]
        view = await client.GetMatch(
            ms.GetMatchRequest(match_id=created.match_id),
            metadata=bearer(seats[0].player_token),
        )
        assert view.role == common_pb2.VIEWER_ROLE_PLAYER
        assert not view.jungle_speed.seed
        assert not any(s.face_down for s in view.jungle_speed.seats)
        # The empty referee token is no credential.
        with pytest.raises(grpc.aio.AioRpcError):
            await client.ReissueToken(
                ms.ReissueTokenRequest(match_id=created.match_id, seat=1),
                metadata=(("authorization", "Bearer "),),
            )
        as_organiser = await client.GetMatch(
            ms.GetMatchRequest(match_id=created.match_id), metadata=organiser()
        )
        assert as_organiser.role == common_pb2.VIEWER_ROLE_REFEREE


async def test_open_creation_has_a_quota_per_client(open_server: RunningServer) -> None:
    channel, client = stub(open_server.port)
    async with channel:
        for _ in range(2):
            await client.CreateMatch(create_request())
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.CreateMatch(create_request())
        assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert 0 < retry_delay_ms(refused.value) <= 30_000  # one match per 30 s
        listed = await client.ListMatches(ms.ListMatchesRequest())
        assert len(listed.matches) == 2  # the refused one wrote nothing
        # An organiser's quota is its own.
        await client.CreateMatch(create_request(), metadata=organiser())


def test_a_rate_limit_refills_evenly() -> None:
    now = [0.0]
    limit = RateLimit(per_minute=6, now=lambda: now[0])
    assert [limit.take("a") for _ in range(6)] == [None] * 6
    assert limit.take("a") == 10_000  # one more in 10 s
    assert limit.take("b") is None  # each key has its own
    now[0] += 10.0
    assert limit.take("a") is None
    assert limit.take("a") is not None


def test_the_organiser_file_is_created_private_with_one_organiser(tmp_path: Path) -> None:
    path = tmp_path / "arena.organisers"
    first = load_or_create(str(path))
    assert first.new_token is not None
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert first.new_token not in path.read_text()  # only its hash is kept
    again = load_or_create(str(path))
    assert again.new_token is None  # shown once
    assert again.name_of(first.new_token) == "organiser"
    assert again.name_of("anything else") is None


def test_a_malformed_organiser_file_says_where(tmp_path: Path) -> None:
    path = tmp_path / "organisers"
    path.write_text("# comment\nalice 1234\n")
    with pytest.raises(OrganisersFileError, match="line 2"):
        load_or_create(str(path))
