"""Helpers for talking to a live server with the raw generated stubs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from domain.jungle_speed.cards import Deck
from server.errors import RETRY_METADATA_KEY
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

#: The organiser of every test server (``TOTEM_ORGANISER_TOKEN`` in its environment):
#: only an organiser creates matches, and gets their referee tokens.
ORGANISER_TOKEN = "organiser-of-the-tests-0123456789abcdef0123456789abcdef"


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def organiser() -> tuple[tuple[str, str], ...]:
    """The metadata of a call made by the tests' organiser."""
    return bearer(ORGANISER_TOKEN)


def stub(port: int) -> tuple[grpc.aio.Channel, match_service_pb2_grpc.MatchServiceStub]:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    return channel, match_service_pb2_grpc.MatchServiceStub(channel)


def deal_for(players: int, tops: dict[int, Sequence[int]], deck_size: int = 80) -> list[int]:
    """An ES deck order whose face-down piles start (top first) with the given cards.

    Card k of the deck goes to seat k mod n, first received on top (JS-2.1), so the
    order interleaves the piles. The other cards fill the piles in ascending id order.
    """
    used = {c for cards in tops.values() for c in cards}
    rest = iter(c for c in range(deck_size) if c not in used)
    sizes = [deck_size // players + (1 if s < deck_size % players else 0) for s in range(players)]
    piles = [list(tops.get(s, [])) for s in range(players)]
    for s in range(players):
        while len(piles[s]) < sizes[s]:
            piles[s].append(next(rest))
    return [piles[k % players][k // players] for k in range(deck_size)]


def symbol(shape: int, colour: int) -> int:
    """The id of the symbol card of a shape and colour index (JS-1.1)."""
    return 4 * shape + colour


DECK = Deck()
INWARD = next(c.id for c in DECK.cards if c.kind.value == "INWARD_ARROWS")


#: Jungle Speed options' ``specials`` for a deck of symbol cards only: a random deal's
#: reveals then never add events (outward arrows), open a race (inward arrows) or hold
#: the next reveal back, so a test may count on what one reveal does.
NO_SPECIALS = js.JungleSpeedSpecials()


def js_options(**fields: object) -> js.JungleSpeedOptions:
    return js.JungleSpeedOptions(**fields)  # type: ignore[arg-type]


async def create_and_join(
    client: match_service_pb2_grpc.MatchServiceStub,
    players: int,
    **options: object,
) -> tuple[str, str, list[str]]:
    """Create a Jungle Speed match, fill every seat; return id, referee token, seat tokens."""
    created = await client.CreateMatch(
        ms.CreateMatchRequest(
            game=common_pb2.GAME_JUNGLE_SPEED,
            jungle_speed=js_options(max_players=players, **options),
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


def reveal() -> js.JungleSpeedCommand:
    return js.JungleSpeedCommand(reveal=js.JungleSpeedReveal())


def grab(target: int = 0) -> js.JungleSpeedCommand:
    return js.JungleSpeedCommand(grab=js.JungleSpeedGrab(target=target))  # type: ignore[arg-type]


async def watch_until(
    client: match_service_pb2_grpc.MatchServiceStub,
    match_id: str,
    version: int,
    token: str | None = None,
    after_version: int = 0,
) -> list[ms.MatchEvent]:
    """Every event after ``after_version`` up to ``version``, read from Watch."""
    events: list[ms.MatchEvent] = []
    call = client.Watch(
        ms.WatchRequest(match_id=match_id, after_version=after_version),
        metadata=bearer(token) if token else None,
    )
    try:
        async for event in call:
            events.append(event)
            if event.version >= version:
                break
    finally:
        call.cancel()
    return events


def js_event(event: ms.MatchEvent) -> str:
    """The name of a Jungle Speed event's field, or of the common event."""
    kind = event.WhichOneof("event")
    if kind == "jungle_speed":
        return str(event.jungle_speed.WhichOneof("event"))
    return str(kind)


async def act(
    client: match_service_pb2_grpc.MatchServiceStub,
    match_id: str,
    token: str,
    command: js.JungleSpeedCommand,
) -> ms.ActResponse:
    request = ms.ActRequest(match_id=match_id, jungle_speed=command)
    response: ms.ActResponse = await client.Act(request, metadata=bearer(token))
    return response


async def play_reveals(
    client: match_service_pb2_grpc.MatchServiceStub, match_id: str, tokens: list[str], count: int
) -> int:
    """Reveal ``count`` times, each by the seat whose turn it is; return the last version."""
    version = 0
    for _ in range(count):
        state = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
        version = (await act(client, match_id, tokens[state.jungle_speed.turn], reveal())).version
    return version


def rule_of(error: grpc.aio.AioRpcError) -> str:
    """The rule id, from trailing metadata, checked against the rich status details."""
    metadata = dict(error.trailing_metadata() or ())
    status = status_pb2.Status.FromString(metadata["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.metadata["rule"] == metadata["totem-rule"]
    return str(metadata["totem-rule"])


def retry_delay_ms(error: grpc.aio.AioRpcError) -> int:
    """The retry hint of a refusal: the RetryInfo detail, checked against the trailer."""
    metadata = dict(error.trailing_metadata() or ())
    status = status_pb2.Status.FromString(metadata["grpc-status-details-bin"])
    infos = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
    assert len(infos) == 1
    info = error_details_pb2.RetryInfo()
    infos[0].Unpack(info)
    delay_ms = info.retry_delay.ToMilliseconds()
    assert metadata[RETRY_METADATA_KEY] == str(delay_ms)
    return delay_ms


def race_verdict(
    events: Sequence[ms.MatchEvent], kind: str
) -> tuple[Any, list[js.JungleSpeedContender], list[js.LateGrab]]:
    """The one event of ``kind`` (``duel_won`` or ``arrows_won``) that decided a race,
    its contenders if its winner was drawn among simultaneous grabs (JS-4.2a; empty if
    not), and the late grabs recorded after it."""
    won = [getattr(e.jungle_speed, kind) for e in events if js_event(e) == kind]
    assert len(won) == 1, f"{len(won)} {kind} events"
    lates = [e.jungle_speed.late_grab for e in events if js_event(e) == "late_grab"]
    contenders = list(won[0].tie.contenders) if won[0].HasField("tie") else []
    return won[0], contenders, lates


def check_race(
    won: Any, contenders: Sequence[js.JungleSpeedContender], lates: Sequence[Any]
) -> None:
    """The verdict of a race keeps JS-4.2 and JS-4.2a: the winner is the first grab
    received, or the one drawn among the grabs received within the window after it;
    the others are late, received after the first."""
    if contenders:
        first = contenders[0].stamp
        window_ns = won.tie.window_us * 1000
        drawn = contenders[won.tie.drawn]
        assert (drawn.seat, drawn.stamp.sequence) == (won.winner, won.stamp.sequence)
        sequences = [c.stamp.sequence for c in contenders]
        assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
        assert all(c.stamp.monotonic_ns - first.monotonic_ns <= window_ns for c in contenders)
        assert len({c.seat for c in contenders}) == len(contenders)
        first_sequence = first.sequence
    else:
        first_sequence = won.stamp.sequence
    assert all(g.stamp.sequence > first_sequence for g in lates)
