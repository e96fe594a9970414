"""The client library against a real server: matches, seats, views, lists and commands."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from tests.client.support import BOUND, deal_with_tops, kind, symbol
from totem.v1 import common_pb2, jungle_speed_pb2
from totem_client import Client, TotemError


async def test_create_join_and_get(client: Client) -> None:
    created = await client.create_match(variant="RU", max_players=3, turn_timeout_ms=0)
    assert uuid.UUID(created.match_id)
    assert created.referee_token
    assert len(created.seed_commitment) == 32

    alice = await client.join(created.match_id, "alice", entropy=b"alice's dice")
    bob = await client.join(created.match_id, "bob", seat=1)
    watcher = client.spectate(created.match_id)
    assert (alice.seat, bob.seat, watcher.seat) == (0, 1, None)
    assert alice.token and bob.token and alice.token != bob.token
    assert watcher.token == ""
    assert (alice.role, watcher.role) == (
        common_pb2.VIEWER_ROLE_PLAYER,
        common_pb2.VIEWER_ROLE_SPECTATOR,
    )
    assert alice.is_player and not watcher.is_player

    view = await bob.get()
    assert view.role == common_pb2.VIEWER_ROLE_PLAYER
    assert view.seat == 1
    assert view.summary.status == common_pb2.MATCH_STATUS_WAITING
    assert view.summary.variant == "RU"
    assert view.summary.max_players == 3
    assert [(p.seat, p.name) for p in view.summary.players] == [(0, "alice"), (1, "bob")]
    assert bob.seen_version == view.summary.version == 3  # created, two joins

    spectator_view = await client.get(created.match_id)
    assert spectator_view.role == common_pb2.VIEWER_ROLE_SPECTATOR
    assert not spectator_view.HasField("seat")

    referee_view = await client.referee(created).get()
    assert referee_view.role == common_pb2.VIEWER_ROLE_REFEREE
    assert len(referee_view.jungle_speed.seed) == 32  # the referee sees the secret seed
    assert spectator_view.jungle_speed.seed == b""


async def test_a_session_can_be_rebuilt_from_its_token(client: Client) -> None:
    created = await client.create_match(max_players=2)
    joined = await client.join(created.match_id, "alice")
    again = client.session(created.match_id, joined.token)
    view = await again.get()
    assert (view.role, view.seat, again.seat) == (common_pb2.VIEWER_ROLE_PLAYER, 0, 0)


async def test_refusals_carry_code_rule_and_message(client: Client) -> None:
    created = await client.create_match(max_players=2, turn_timeout_ms=0)
    await client.join(created.match_id, "alice")
    with pytest.raises(TotemError) as refused:
        await client.join(created.match_id, "bob", seat=0)
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.rule == "JS-1.5"
    assert refused.value.message.startswith("seat 0 is not the next free seat")
    assert "JS-1.5: seat 0" in str(refused.value)

    with pytest.raises(TotemError) as not_found:
        await client.get(str(uuid.uuid4()))
    assert not_found.value.code == grpc.StatusCode.NOT_FOUND
    assert not_found.value.rule == ""

    with pytest.raises(TotemError) as bad_options:
        await client.create_match(max_players=11)
    assert bad_options.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_options.value.rule == "JS-1.5"

    with pytest.raises(ValueError):
        await client.create_match(variant="FR")


async def test_list_matches_pages_through_every_match(client: Client) -> None:
    ids = [(await client.create_match(max_players=2)).match_id for _ in range(5)]
    await client.join(ids[0], "alice")
    await client.join(ids[0], "bob")  # the match is full: it starts

    pages = [page async for page in client.list_matches(page_size=2)]
    assert [len(p.matches) for p in pages] == [2, 2, 1]
    assert [bool(p.next_page_token) for p in pages] == [True, True, False]
    listed = [m.match_id for p in pages for m in p.matches]
    assert sorted(listed) == sorted(ids)

    # A listing that fills its last page exactly ends there.
    exact = [len(p.matches) async for p in client.list_matches(page_size=5)]
    assert exact == [5]
    nothing = [p async for p in client.list_matches(status=common_pb2.MATCH_STATUS_ENDED)]
    assert [(p.matches, p.next_page_token) for p in nothing] == [([], "")]

    # A page token resumes the listing where it left off.
    rest = [p async for p in client.list_matches(page_size=2, page_token=pages[0].next_page_token)]
    assert [m.match_id for p in rest for m in p.matches] == listed[2:]

    playing = [
        m.match_id
        for p in [
            page async for page in client.list_matches(status=common_pb2.MATCH_STATUS_PLAYING)
        ]
        for m in p.matches
    ]
    assert playing == [ids[0]]

    with pytest.raises(TotemError) as too_big:
        async for _ in client.list_matches(page_size=101):
            pass
    assert too_big.value.code == grpc.StatusCode.INVALID_ARGUMENT


async def test_acting_through_a_session(client: Client) -> None:
    # Both first cards have the same shape, so the first two reveals open a duel (JS-4.1).
    deal = deal_with_tops(2, [symbol(0, 0), symbol(0, 1)])
    created = await client.create_match(max_players=2, turn_timeout_ms=0, prearranged_deal=deal)
    alice = await client.join(created.match_id, "alice")
    bob = await client.join(created.match_id, "bob")

    view = await alice.get()
    assert view.summary.status == common_pb2.MATCH_STATUS_PLAYING
    assert view.jungle_speed.turn == 0
    seen = alice.seen_version
    assert seen == view.summary.version

    with pytest.raises(TotemError) as not_your_turn:
        await bob.reveal()
    assert not_your_turn.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert not_your_turn.value.rule == "JS-3.1"
    assert not_your_turn.value.is_rule_refusal

    answer = await alice.reveal()
    assert [kind(e) for e in answer.events] == ["revealed"]
    revealed = answer.events[0].jungle_speed.revealed
    assert revealed.seat == 0 and revealed.card.id == symbol(0, 0)
    assert revealed.stamp.seen_version == seen  # the session reported what it had seen
    assert alice.seen_version == answer.version

    await bob.reveal()
    duel = await bob.get()
    assert [list(d.seats) for d in duel.jungle_speed.open_duels] == [[0, 1]]

    won = await bob.grab()
    assert [kind(e) for e in won.events] == ["duel_won"]
    assert won.events[0].jungle_speed.duel_won.winner == 1
    late = await alice.grab()
    assert [kind(e) for e in late.events] == ["late_grab"]  # JS-5.3: no effect

    # An explicit seen_version is sent as given.
    answer = await alice.act(
        jungle_speed_pb2.JungleSpeedCommand(reveal=jungle_speed_pb2.JungleSpeedReveal()),
        seen_version=1,
    )
    assert answer.events[0].jungle_speed.revealed.stamp.seen_version == 1


async def test_start_with_the_seats_taken_so_far(client: Client) -> None:
    created = await client.create_match(max_players=4, turn_timeout_ms=0)
    alice = await client.join(created.match_id, "alice")
    with pytest.raises(TotemError) as alone:
        await alice.start()
    assert alone.value.rule == "JS-1.5"
    await client.join(created.match_id, "bob")
    started = await alice.start()
    assert [kind(e) for e in started.events] == ["dealt"]
    view = await client.get(created.match_id)
    assert view.summary.status == common_pb2.MATCH_STATUS_PLAYING
    assert [s.face_down_count for s in view.jungle_speed.seats] == [40, 40]


async def test_only_players_act(client: Client) -> None:
    created = await client.create_match(max_players=2, turn_timeout_ms=0)
    await client.join(created.match_id, "alice")
    watcher = client.spectate(created.match_id)
    with pytest.raises(TotemError) as anonymous:
        await watcher.reveal()
    assert anonymous.value.code == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(TotemError) as referee:
        await client.referee(created).start()
    assert referee.value.code == grpc.StatusCode.PERMISSION_DENIED


async def test_a_ru_grab_cannot_choose_its_target(client: Client) -> None:
    created = await client.create_match(variant="RU", max_players=2, turn_timeout_ms=0)
    alice = await client.join(created.match_id, "alice")
    await client.join(created.match_id, "bob")
    with pytest.raises(TotemError) as refused:
        await asyncio.wait_for(alice.grab(target="arrows"), BOUND)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.rule == "JS-6.1"


def test_a_rule_id_with_a_letter_is_read_from_the_message() -> None:
    # TR-2.2a: rule ids may end in a letter; the sentence then drops its prefix.
    error = TotemError.from_rpc_error(
        grpc.aio.AioRpcError(
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.aio.Metadata(),
            grpc.aio.Metadata(("totem-rule", "TR-2.2a")),
            details="TR-2.2a: a lifted totem cannot go back to its own space",
        )
    )
    assert (error.rule, error.message) == (
        "TR-2.2a",
        "a lifted totem cannot go back to its own space",
    )


async def test_js_8_3_the_referee_session_stops_a_match(client: Client) -> None:
    created = await client.create_match(max_players=2, turn_timeout_ms=0)
    for name in ("alice", "bob"):
        await client.join(created.match_id, name)
    answer = await client.referee(created).stop("a draw, as both agreed", {0: 1, 1: 1})
    end = answer.events[-1].match_ended
    assert end.statement == "a draw, as both agreed"
    assert [(p.seat, p.place) for p in end.result] == [(0, 1), (1, 1)]
    view = await client.get(created.match_id)
    assert view.summary.status == common_pb2.MATCH_STATUS_ENDED
