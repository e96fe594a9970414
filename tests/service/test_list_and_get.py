"""ListMatches pages through every match; GetMatch shows the caller's own view."""

from __future__ import annotations

from server.serve import RunningServer
from tests.service.helpers import bearer, create_and_join, organiser, stub
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms


async def test_list_matches_pages_in_creation_order_with_filters(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        full = [(await create_and_join(client, 2))[0] for _ in range(3)]
        waiting = [
            (
                await client.CreateMatch(
                    ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED), metadata=organiser()
                )
            ).match_id
            for _ in range(2)
        ]
        pages: list[list[str]] = []
        token = ""
        while True:
            page = await client.ListMatches(ms.ListMatchesRequest(page_size=2, page_token=token))
            pages.append([m.match_id for m in page.matches])
            token = page.next_page_token
            if not token:
                break
        playing = await client.ListMatches(
            ms.ListMatchesRequest(status=common_pb2.MATCH_STATUS_PLAYING)
        )
        waiting_page = await client.ListMatches(
            ms.ListMatchesRequest(status=common_pb2.MATCH_STATUS_WAITING, page_size=2)
        )
    assert [m for page in pages for m in page] == full + waiting
    assert [len(page) for page in pages] == [2, 2, 1]
    assert [m.match_id for m in playing.matches] == full
    assert [m.match_id for m in waiting_page.matches] == waiting
    # A page that ends exactly with the last match has no next page.
    assert not waiting_page.next_page_token
    summary = playing.matches[0]
    assert summary.game == common_pb2.GAME_JUNGLE_SPEED
    assert summary.variant == "ES"
    assert [p.name for p in summary.players] == ["player 0", "player 1"]
    assert summary.version == 4


async def test_get_match_tells_the_caller_its_role_and_seat(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_and_join(client, 2)
        player = await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=bearer(tokens[1])
        )
        spectator = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        judge = await client.GetMatch(
            ms.GetMatchRequest(match_id=match_id), metadata=bearer(referee)
        )
    assert player.role == common_pb2.VIEWER_ROLE_PLAYER and player.seat == 1
    assert spectator.role == common_pb2.VIEWER_ROLE_SPECTATOR and not spectator.HasField("seat")
    assert judge.role == common_pb2.VIEWER_ROLE_REFEREE
    assert [s.face_down_count for s in player.jungle_speed.seats] == [40, 40]
    assert len(judge.jungle_speed.seats[0].face_down) == 40
    assert player.jungle_speed.turn == 0
