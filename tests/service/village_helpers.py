"""Helpers for Village over a live server, with the raw generated stubs."""

from __future__ import annotations

from collections.abc import Callable

from tests.service.helpers import bearer, organiser
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms
from totem.v1 import village_pb2 as vi

Stub = match_service_pb2_grpc.MatchServiceStub
#: Chooses a command for an owed decision, or None to send the decision's default.
Policy = Callable[[vi.VillageState, vi.VillageOwedDecision], vi.VillageCommand | None]

LONG_MS = 600_000


def village_options(**fields: object) -> vi.VillageOptions:
    return vi.VillageOptions(**fields)  # type: ignore[arg-type]


def long_deadlines() -> dict[str, int]:
    """Deadlines no test waits for: every decision is answered by a command."""
    kinds = ("arrange", "choose", "place", "reveal", "victims", "youth")
    return {f"{k}_timeout_ms": LONG_MS for k in kinds}


async def create_village(
    client: Stub, players: int, **options: object
) -> tuple[str, str, list[str]]:
    """Create a Village match and fill every seat (it starts with the last); return id,
    referee token, seat tokens."""
    created = await client.CreateMatch(
        ms.CreateMatchRequest(
            game=common_pb2.GAME_VILLAGE,
            village=village_options(max_players=players, **options),
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


async def act(
    client: Stub, match_id: str, token: str, command: vi.VillageCommand
) -> ms.ActResponse:
    request = ms.ActRequest(match_id=match_id, village=command)
    response: ms.ActResponse = await client.Act(request, metadata=bearer(token))
    return response


async def state(client: Stub, match_id: str, token: str | None = None) -> vi.VillageState:
    view = await client.GetMatch(
        ms.GetMatchRequest(match_id=match_id), metadata=bearer(token) if token else None
    )
    return view.village


def village_event(event: ms.MatchEvent) -> str:
    """The name of a Village event's field, or of the common event."""
    kind = event.WhichOneof("event")
    if kind == "village":
        return str(event.village.WhichOneof("event"))
    return str(kind)


def defaults(_: vi.VillageState, __: vi.VillageOwedDecision) -> vi.VillageCommand | None:
    return None


async def drive(
    client: Stub,
    match_id: str,
    tokens: list[str],
    policy: Policy = defaults,
    until: Callable[[vi.VillageState], bool] = lambda s: False,
    limit: int = 5_000,
) -> vi.VillageState:
    """Answer every owed decision through the seats' legal actions until the match ends,
    ``until`` holds of the spectator's state, or ``limit`` commands were sent."""
    sent = 0
    while sent < limit:
        public = await state(client, match_id)
        if public.HasField("outcome") or until(public):
            return public
        acted = False
        for token in tokens:
            view = await state(client, match_id, token)
            for owed in view.legal.decisions:
                command = policy(view, owed) or owed.default
                await act(client, match_id, token, command)
                sent += 1
                acted = True
                break
            if acted:
                break
        assert acted, "a decision is awaited that no seat owes"
    raise AssertionError(f"no end after {limit} commands")
