"""Helpers for Tribes over a live server, with the raw generated stubs."""

from __future__ import annotations

from tests.service.helpers import bearer, organiser
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms
from totem.v1 import tribes_pb2 as tr

Stub = match_service_pb2_grpc.MatchServiceStub


def tribes_options(**fields: object) -> tr.TribesOptions:
    return tr.TribesOptions(**fields)  # type: ignore[arg-type]


def in_order(players: int) -> list[tr.TribesCards]:
    """Prearranged Cards of Truth giving every round the turn order 0, 1, 2 …"""
    return [tr.TribesCards(cards=list(range(1, players + 1)))]


async def create_tribes(
    client: Stub, players: int, **options: object
) -> tuple[str, str, list[str]]:
    """Create a Tribes match (seat order every round unless cards are given), fill every
    seat; return id, referee token, seat tokens."""
    options.setdefault("prearranged_cards", in_order(players))
    created = await client.CreateMatch(
        ms.CreateMatchRequest(
            game=common_pb2.GAME_TRIBES,
            tribes=tribes_options(max_players=players, **options),
        ),
        metadata=organiser(),
    )
    tokens = []
    for seat in range(players):
        joined = await client.JoinMatch(
            ms.JoinMatchRequest(match_id=created.match_id, name=f"player {seat}", any_seat=True)
        )
        tokens.append(joined.player_token)
    return created.match_id, created.referee_token, tokens


def place(destination: int, size: int | None = None, **fields: object) -> tr.TribesCommand:
    command = tr.TribesPlace(destination=destination, **fields)  # type: ignore[arg-type]
    if size is not None:
        command.size = size
    return tr.TribesCommand(place=command)


def lift(space: int) -> tr.TribesCommand:
    return tr.TribesCommand(lift=tr.TribesLift(space=space))


def penalise(seat: int) -> tr.TribesCommand:
    return tr.TribesCommand(penalise=tr.TribesPenalise(seat=seat))


async def act(client: Stub, match_id: str, token: str, command: tr.TribesCommand) -> ms.ActResponse:
    request = ms.ActRequest(match_id=match_id, tribes=command)
    response: ms.ActResponse = await client.Act(request, metadata=bearer(token))
    return response


async def state(client: Stub, match_id: str, token: str | None = None) -> tr.TribesState:
    view = await client.GetMatch(
        ms.GetMatchRequest(match_id=match_id), metadata=bearer(token) if token else None
    )
    return view.tribes


def tribes_event(event: ms.MatchEvent) -> str:
    """The name of a Tribes event's field, or of the common event."""
    kind = event.WhichOneof("event")
    if kind == "tribes":
        return str(event.tribes.WhichOneof("event"))
    return str(kind)


async def play_first_legal(client: Stub, match_id: str, tokens: list[str]) -> ms.ActResponse:
    """One command for the seat whose turn it is: the first place its legal actions offer
    (a lift when none), exactly as a client that trusts the legal actions would."""
    turn = (await state(client, match_id)).turn
    legal = (await state(client, match_id, tokens[turn])).legal
    if not legal.places:
        return await act(client, match_id, tokens[turn], lift(legal.lifts[0]))
    option = legal.places[0]
    destination = option.destinations[0]
    if option.source == tr.TRIBES_PLACE_SOURCE_MAT:
        return await act(client, match_id, tokens[turn], place(destination, option.totem.size))
    if option.source == tr.TRIBES_PLACE_SOURCE_BESIDE:
        command = place(destination, special=option.totem.kind)
        return await act(client, match_id, tokens[turn], command)
    return await act(client, match_id, tokens[turn], place(destination))
