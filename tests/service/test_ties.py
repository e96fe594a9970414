"""Simultaneous grabs over real gRPC (JS-4.2a): the server holds a race open for its tie
window, takes the grabs received within it as contenders, draws the winner and saves and
answers them together.

The receive clock is the test's own: each stamp's ``monotonic_ns`` is set from its
sequence number, so "inside" and "just outside" the window do not depend on how fast the
machine reads the streams. A race is held until every grab the test sent is stamped and
queued (the actor's wait for the window is wrapped), which the real wait does not
promise on a loaded machine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from uuid import UUID

import grpc
import pytest

from domain.jungle_speed import JungleSpeed
from domain.kernel.ties import stamps_of, tie_draw
from replay.refusals import numbers_accounted, read_refusals
from server.actors import MatchActor
from server.serve import RunningServer
from tests.service.helpers import (
    bearer,
    check_race,
    create_and_join,
    deal_for,
    grab,
    js_event,
    race_verdict,
    reveal,
    stub,
    symbol,
    watch_until,
)
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc

BOUND = 60


@dataclasses.dataclass
class Race:
    """The test's hold on the server's receive clock and on its races."""

    #: How far apart (ns) consecutive receive stamps are on the server's clock.
    gap_ns: int = 1_000
    #: Stamps taken so far.
    stamps: int = 0
    #: A race held open is decided only once this many stamps have been taken.
    decide_after: int = 0


@pytest.fixture
def race(server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> Race:
    """Stamps whose ``monotonic_ns`` follows their sequence number, ``gap_ns`` apart, and
    races held open until every grab the test sent is stamped and queued (the actor's
    wait for the window, wrapped)."""
    held = Race()
    stamper = server.actors.stamper
    real_stamp = stamper.stamp
    base = time.monotonic_ns()

    def stamp(seen_version: int = 0, on_stream: bool = False) -> Any:
        made = real_stamp(seen_version, on_stream)
        held.stamps += 1
        return dataclasses.replace(made, monotonic_ns=base + made.sequence * held.gap_ns)

    monkeypatch.setattr(stamper, "stamp", stamp)
    real_gather: Callable[[MatchActor, int], Awaitable[int]] = MatchActor._gather

    async def gather(actor: MatchActor, deadline_ns: int) -> int:
        while held.stamps < held.decide_after:  # noqa: ASYNC110 (the test's own wait)
            await asyncio.sleep(0.001)
        return await real_gather(actor, deadline_ns)

    monkeypatch.setattr(MatchActor, "_gather", gather)
    return held


async def _play_one(
    client: match_service_pb2_grpc.MatchServiceStub, token: str, request: ms.PlayRequest
) -> ms.PlayResponse:
    async def sent() -> AsyncIterator[ms.PlayRequest]:
        yield request

    answers = [a async for a in client.Play(sent(), metadata=bearer(token))]
    assert len(answers) == 1
    return answers[0]


async def _duel(client: match_service_pb2_grpc.MatchServiceStub) -> tuple[str, str, list[str], int]:
    """A two-seat match whose duel between seats 0 and 1 is open (JS-4.1)."""
    deck = deal_for(3, {0: [symbol(0, 0)], 1: [symbol(0, 1)]})
    match_id, referee, tokens = await create_and_join(
        client, 3, prearranged_deal=deck, turn_timeout_ms=0
    )
    version = 0
    for seat in (0, 1):
        answer = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[seat])
        )
        version = answer.version
    return match_id, referee, tokens, version


def _grab(match_id: str, seen: int) -> ms.PlayRequest:
    return ms.PlayRequest(
        act=ms.ActRequest(match_id=match_id, jungle_speed=grab(), seen_version=seen)
    )


async def _two_grabs(
    server: RunningServer, race: Race, gap_ns: int
) -> tuple[str, list[ms.PlayResponse], list[ms.MatchEvent]]:
    """Both duellists grab at once, each on a Play stream of its own, ``gap_ns`` apart
    on the receive clock: the match, the two answers and the match's events."""
    race.gap_ns = gap_ns
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens, seen = await _duel(client)
        race.decide_after = race.stamps + 2
        answers = await asyncio.wait_for(
            asyncio.gather(*(_play_one(client, t, _grab(match_id, seen)) for t in tokens[:2])),
            BOUND,
        )
        last = max(a.applied.version for a in answers)
        events = await asyncio.wait_for(watch_until(client, match_id, last, referee), BOUND)
    return match_id, list(answers), events


async def test_js_4_2a_two_grabs_inside_the_window_are_a_tie_drawn_from_the_seed(
    server: RunningServer, race: Race
) -> None:
    """Two duellists' grabs read 1 µs apart on the receive clock (the window is 0.2 ms):
    one DuelWon records both as contenders, in receive order, and the index drawn from
    the match's committed randomness; both are answered with it; no grab is late."""
    match_id, answers, events = await _two_grabs(server, race, 1_000)

    won, contenders, lates = race_verdict(events, "duel_won")
    check_race(won, contenders, lates)
    assert sorted(c.seat for c in contenders) == [0, 1] and lates == []
    assert won.tie.window_us == 200
    assert all(c.stamp.on_stream for c in contenders)
    decided = next(e for e in events if js_event(e) == "duel_won")
    match = server.app.load(UUID(match_id))
    assert won.tie.drawn == tie_draw(match.effective_seed(), "jungle_speed", decided.version, 2)
    for answer in answers:
        assert [e.jungle_speed.WhichOneof("event") for e in answer.applied.events] == ["duel_won"]
        assert answer.applied.version == decided.version


async def test_js_4_2a_a_grab_just_outside_the_window_is_late(
    server: RunningServer, race: Race
) -> None:
    """The same race with the grabs 0.3 ms apart on the receive clock: the first received
    wins alone, as JS-4.2 says, and the second is late (JS-5.3)."""
    _, _, events = await _two_grabs(server, race, 300_000)

    won, contenders, lates = race_verdict(events, "duel_won")
    assert contenders == [] and not won.HasField("tie")
    assert len(lates) == 1 and lates[0].stamp.sequence > won.stamp.sequence
    assert {won.winner, lates[0].seat} == {0, 1}
    gap = lates[0].stamp.monotonic_ns - won.stamp.monotonic_ns
    assert gap > 200_000


async def test_js_4_2a_a_command_refused_inside_a_held_race_is_kept_and_numbered(
    server: RunningServer, race: Race
) -> None:
    """Three grabs within the window, the third from a spectator's seat naming a version
    nobody has seen: refused with its own answer and kept in the refusal log, while the
    two others tie; every receive number is accounted for once."""
    race.gap_ns = 1_000
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens, seen = await _duel(client)
        race.decide_after = race.stamps + 3
        requests = [
            (tokens[0], _grab(match_id, seen)),
            (tokens[1], _grab(match_id, seen)),
            (tokens[2], _grab(match_id, 999)),
        ]
        answers = await asyncio.wait_for(
            asyncio.gather(*(_play_one(client, t, r) for t, r in requests)), BOUND
        )
        applied = [a for a in answers if a.HasField("applied")]
        refused = [a for a in answers if a.HasField("refused")]
        assert len(applied) == 2 and len(refused) == 1
        assert refused[0].refused.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
        last = max(a.applied.version for a in applied)
        # A later applied command: its save carries any refusal not saved yet.
        turn = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).jungle_speed.turn
        await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[turn])
        )
        events = await asyncio.wait_for(watch_until(client, match_id, last, referee), BOUND)

    _, contenders, _ = race_verdict(events, "duel_won")
    assert sorted(c.seat for c in contenders) == [0, 1]
    found = read_refusals(server.app, UUID(match_id))
    assert [r.seat for r in found.refusals] == [2]
    stored = server.app.events_after(UUID(match_id))
    # The winner's stamp is the event's and a contender's: one number.
    numbers = [n for e in stored for n in {s.receive for s in stamps_of(vars(e))}]
    assert numbers_accounted(numbers, found) == []
    receives = sorted([n for n in numbers if n] + [r.receive for r in found.refusals])
    assert receives == sorted(set(receives))  # each number once


async def test_js_4_2a_a_match_records_the_servers_tie_windows_when_created(
    server: RunningServer,
) -> None:
    """The windows are the server's setting, recorded in the match's options (and
    shown in its views) when it is created; a creator cannot choose them."""
    channel, client = stub(server.port)
    async with channel:
        match_id, _, _ = await create_and_join(client, 2, tie_window_us=5, call_tie_window_us=7)
        view = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
    options = view.jungle_speed.options
    assert (options.tie_window_us, options.call_tie_window_us) == (200, 2000)
    match = server.app.load(UUID(match_id))
    assert isinstance(match, JungleSpeed)
    assert (match.options.tie_window_us, match.options.call_tie_window_us) == (200, 2000)
