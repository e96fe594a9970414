"""Bad input gets the right status, names the rule, and writes nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from uuid import uuid4

import grpc
import pytest

from server.serve import RunningServer
from tests.service.helpers import (
    act,
    bearer,
    create_and_join,
    grab,
    organiser,
    reveal,
    rule_of,
    stub,
)
from totem.v1 import common_pb2
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms


async def refusal(call: Awaitable[Any]) -> grpc.aio.AioRpcError:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the call was accepted")


def stored(server: RunningServer) -> int:
    """How many events the store holds, over every match."""
    return sum(
        len(server.app.events_after(entry.match_id)) for entry in server.app.logged_matches()
    )


@pytest.fixture
async def match(server: RunningServer) -> Any:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_and_join(client, 3, turn_timeout_ms=0)
        yield client, match_id, referee, tokens


Check = Callable[[Any, str, str, list[str]], Awaitable[Any]]

REFUSALS: dict[str, tuple[Check, grpc.StatusCode, str]] = {
    "out-of-turn reveal": (
        lambda c, m, r, t: act(c, m, t[1], reveal()),
        grpc.StatusCode.FAILED_PRECONDITION,
        "JS-3.1",
    ),
    "reveal with no token": (
        lambda c, m, r, t: c.Act(ms.ActRequest(match_id=m, jungle_speed=reveal())),
        grpc.StatusCode.UNAUTHENTICATED,
        "",
    ),
    "reveal with a wrong token": (
        lambda c, m, r, t: act(c, m, "not-a-token", reveal()),
        grpc.StatusCode.UNAUTHENTICATED,
        "",
    ),
    "acting for another seat": (
        lambda c, m, r, t: c.Act(
            ms.ActRequest(match_id=m, seat=0, jungle_speed=reveal()), metadata=bearer(t[1])
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "",
    ),
    "referee acting for a seat": (
        lambda c, m, r, t: act(c, m, r, reveal()),
        grpc.StatusCode.PERMISSION_DENIED,
        "",
    ),
    "unknown match": (
        lambda c, m, r, t: act(c, str(uuid4()), t[0], reveal()),
        grpc.StatusCode.NOT_FOUND,
        "",
    ),
    "malformed match id": (
        lambda c, m, r, t: act(c, "match-1", t[0], reveal()),
        grpc.StatusCode.INVALID_ARGUMENT,
        "",
    ),
    "no command": (
        lambda c, m, r, t: c.Act(ms.ActRequest(match_id=m), metadata=bearer(t[0])),
        grpc.StatusCode.INVALID_ARGUMENT,
        "",
    ),
    "empty Jungle Speed command": (  # a malformed request: no rule says anything of it
        lambda c, m, r, t: act(c, m, t[0], js.JungleSpeedCommand()),
        grpc.StatusCode.INVALID_ARGUMENT,
        "",
    ),
    "unknown grab target": (
        lambda c, m, r, t: act(c, m, t[0], grab(target=7)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "JS-6.1",
    ),
    "joining a full match": (
        lambda c, m, r, t: c.JoinMatch(ms.JoinMatchRequest(match_id=m, name="late", any_seat=True)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "JS-1.5",
    ),
    "starting a started match": (
        lambda c, m, r, t: act(c, m, t[0], js.JungleSpeedCommand(start=js.JungleSpeedStart())),
        grpc.StatusCode.FAILED_PRECONDITION,
        "JS-1.5",
    ),
    "oversized entropy": (
        lambda c, m, r, t: c.JoinMatch(
            ms.JoinMatchRequest(match_id=m, name="x", any_seat=True, entropy=b"x" * 65)
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "JS-1.5",  # as for the creator's entropy (BAD_CREATIONS)
    ),
    "joining with no seat chosen": (
        lambda c, m, r, t: c.JoinMatch(ms.JoinMatchRequest(match_id=m, name="typo")),
        grpc.StatusCode.INVALID_ARGUMENT,
        "",
    ),
    "seen_version beyond the match": (
        lambda c, m, r, t: c.Act(
            ms.ActRequest(match_id=m, seen_version=2**64 - 1, jungle_speed=reveal()),
            metadata=bearer(t[0]),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "",
    ),
    "a player reissuing a token": (
        lambda c, m, r, t: c.ReissueToken(
            ms.ReissueTokenRequest(match_id=m, seat=1), metadata=bearer(t[0])
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "",
    ),
    "a spectator reissuing a token": (
        lambda c, m, r, t: c.ReissueToken(ms.ReissueTokenRequest(match_id=m, seat=1)),
        grpc.StatusCode.PERMISSION_DENIED,
        "",
    ),
    "reissuing the token of a seat nobody took": (
        lambda c, m, r, t: c.ReissueToken(
            ms.ReissueTokenRequest(match_id=m, seat=7), metadata=bearer(r)
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "JS-1.5",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
async def test_refused_commands_name_the_rule_and_write_nothing(
    server: RunningServer, match: Any, case: str
) -> None:
    client, match_id, referee, tokens = match
    check, code, rule = REFUSALS[case]
    before = stored(server)
    error = await refusal(check(client, match_id, referee, tokens))
    assert error.code() is code, error.details()
    assert error.details()
    assert rule_of(error) == rule  # "": a refusal that no rule decides cites none
    if rule:
        assert (error.details() or "").startswith(f"{rule}: ")
    else:
        assert not (error.details() or "").startswith(("JS-", ":"))
    assert stored(server) == before


def create(**options: Any) -> ms.CreateMatchRequest:
    return ms.CreateMatchRequest(
        game=common_pb2.GAME_JUNGLE_SPEED, jungle_speed=js.JungleSpeedOptions(**options)
    )


BAD_CREATIONS: dict[str, tuple[ms.CreateMatchRequest, str]] = {
    "too many players": (create(max_players=11), "JS-1.5"),
    "too few players": (create(max_players=1), "JS-1.5"),
    "unknown variant": (create(variant=9), "JS-2.1"),
    "turn timeout too long": (create(turn_timeout_ms=10**9), "JS-3.4"),
    "too many special cards": (
        create(specials=js.JungleSpeedSpecials(inward_arrows=9)),
        "JS-1.3",
    ),
    "deal missing a card": (create(prearranged_deal=list(range(79))), "JS-2.4"),
    "deal with a repeated card": (create(prearranged_deal=[0, *range(79)]), "JS-2.4"),
    "no game": (ms.CreateMatchRequest(), ""),
    "oversized creator entropy": (
        ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED, entropy=b"x" * 65),
        "JS-1.5",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CREATIONS))
async def test_bad_match_options_are_invalid_arguments(server: RunningServer, case: str) -> None:
    request, rule = BAD_CREATIONS[case]
    channel, client = stub(server.port)
    async with channel:
        error = await refusal(client.CreateMatch(request, metadata=organiser()))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    if rule:
        assert rule_of(error) == rule
    assert list(server.app.logged_matches()) == []


async def test_list_matches_page_size_is_bounded(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        error = await refusal(client.ListMatches(ms.ListMatchesRequest(page_size=101)))
        token_error = await refusal(client.ListMatches(ms.ListMatchesRequest(page_token="x")))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert token_error.code() is grpc.StatusCode.INVALID_ARGUMENT


async def test_watch_beyond_the_match_version_is_out_of_range(
    server: RunningServer, match: Any
) -> None:
    client, match_id, _, _ = match
    view = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
    call = client.Watch(ms.WatchRequest(match_id=match_id, after_version=view.summary.version + 1))
    error = await refusal(call.read())
    assert error.code() is grpc.StatusCode.OUT_OF_RANGE
    assert f"after_version {view.summary.version + 1}" in (error.details() or "")


async def test_watch_of_an_unknown_match_is_not_found(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        call = client.Watch(ms.WatchRequest(match_id=str(uuid4())))
        error = await refusal(call.read())
    assert error.code() is grpc.StatusCode.NOT_FOUND


async def test_errors_never_reveal_hidden_cards(server: RunningServer, match: Any) -> None:
    client, match_id, referee, tokens = match
    view = await client.GetMatch(ms.GetMatchRequest(match_id=match_id), metadata=bearer(referee))
    hidden = {c.id for seat in view.jungle_speed.seats for c in seat.face_down}
    errors = [await refusal(act(client, match_id, tokens[s], reveal())) for s in (1, 2)]
    for error in errors:
        text = error.details() or ""
        assert not any(f"#{card} " in text for card in hidden)
