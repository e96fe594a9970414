"""Forks that live: on a server up longer than ``abandon_after_ms``, a fork at every
version of one match of each game is either refused, naming the rule of the step it lies
inside and the nearest versions that can be forked, or plays on (ForkMatch, docs/api.md).

The server's presence clock is injected: it started long before the matches, as on a
server that has been up for a while, where nobody has joined a fork (its seats are
taken at birth) and no seat of it has ever been seen. Every match keeps the default
``abandon_after_ms`` (JS-8.3), far shorter than that.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from uuid import UUID

import grpc
import pytest

from domain.kernel.fork import fork_refusal
from domain.kernel.match import MatchStatus
from domain.kernel.options import DEFAULT_ABANDON_AFTER_MS
from server.access import ORGANISER_TOKEN_ENV
from server.presence import Presence, now_ms
from server.serve import RunningServer, start
from tests.service import tribes_helpers as tribes
from tests.service import village_helpers as village
from tests.service.helpers import (
    NO_SPECIALS,
    ORGANISER_TOKEN,
    act,
    bearer,
    create_and_join,
    grab,
    reveal,
    stub,
)
from tests.service.test_match_end import scripted_deck
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms

Stub = match_service_pb2_grpc.MatchServiceStub
#: How long the server has been up when the test starts: twice the default
#: ``abandon_after_ms``.
UP_MS = 2 * DEFAULT_ABANDON_AFTER_MS


class LongUp:
    """A presence clock whose first reading, the server's start, was :data:`UP_MS` ago;
    every later reading is the time now."""

    def __init__(self) -> None:
        self.started = False

    def __call__(self) -> int:
        if not self.started:
            self.started = True
            return now_ms() - UP_MS
        return now_ms()


@pytest.fixture
async def long_up(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A server alone on its store (SQLite: no other instance shares its presence), with
    the presence clock of one that started :data:`UP_MS` ago."""
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(tmp_path / "t.db"),
        ORGANISER_TOKEN_ENV: ORGANISER_TOKEN,
    }
    running = await start("127.0.0.1:0", env)
    actors = running.actors
    actors.presence = Presence(on_change=actors._presence_changed, clock=LongUp())
    assert now_ms() - actors.presence.started_ms >= UP_MS
    try:
        yield running
    finally:
        await running.stop(grace=None)


#: One command in a fork, by the seats' tokens: None once the match has ended.
Mover = Callable[[Stub, str, list[str]], Awaitable[ms.ActResponse | None]]


async def summary(client: Stub, match_id: str) -> common_pb2.MatchSummary:
    view = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
    return view.summary


async def jungle_speed_move(
    client: Stub, match_id: str, tokens: list[str]
) -> ms.ActResponse | None:
    """Reveal in turn; once nobody can, the first seat of the open duel grabs (JS-4.2)."""
    view = await client.GetMatch(ms.GetMatchRequest(match_id=match_id))
    if view.summary.status == common_pb2.MATCH_STATUS_ENDED:
        return None
    state = view.jungle_speed
    if state.HasField("turn"):
        return await act(client, match_id, tokens[state.turn], reveal())
    return await act(client, match_id, tokens[state.open_duels[0].seats[0]], grab())


async def tribes_move(client: Stub, match_id: str, tokens: list[str]) -> ms.ActResponse | None:
    if (await summary(client, match_id)).status == common_pb2.MATCH_STATUS_ENDED:
        return None
    return await tribes.play_first_legal(client, match_id, tokens)


async def village_move(client: Stub, match_id: str, tokens: list[str]) -> ms.ActResponse | None:
    """The default of the first decision a seat owes, sent as its command."""
    if (await summary(client, match_id)).status == common_pb2.MATCH_STATUS_ENDED:
        return None
    for token in tokens:
        for owed in (await village.state(client, match_id, token)).legal.decisions:
            return await village.act(client, match_id, token, owed.default)
    raise AssertionError("a decision is awaited that no seat owes")


async def every_match(client: Stub) -> list[str]:
    """The id of every match the server lists, in its order, page after page."""
    ids: list[str] = []
    token = ""
    while True:
        page = await client.ListMatches(ms.ListMatchesRequest(page_token=token))
        ids += [m.match_id for m in page.matches]
        token = page.next_page_token
        if not token:
            return ids


async def play_to_the_end(client: Stub, match_id: str, tokens: list[str], move: Mover) -> None:
    for _ in range(1_000):
        if await move(client, match_id, tokens) is None:
            return
    raise AssertionError("no end after 1000 commands")


async def new_jungle_speed(client: Stub) -> tuple[str, str, list[str]]:
    # Two seats, symbols only: every reveal is one event until the last duel (JS-8.2).
    return await create_and_join(
        client, 2, prearranged_deal=scripted_deck(), specials=NO_SPECIALS, turn_timeout_ms=0
    )


async def new_tribes(client: Stub) -> tuple[str, str, list[str]]:
    return await tribes.create_tribes(client, 2, turn_timeout_ms=0)


async def new_village(client: Stub) -> tuple[str, str, list[str]]:
    # totem_b: a short match (VI-2.9); deadlines no test waits for.
    return await village.create_village(client, 2, totem_b=True, **village.long_deadlines())


GAMES = {
    "jungle_speed": (new_jungle_speed, jungle_speed_move),
    "tribes": (new_tribes, tribes_move),
    "village": (new_village, village_move),
}

REFUSAL = re.compile(
    r"^(?P<rule>[A-Z]{2}-[\d.]+): .*; (the nearest versions? that can be forked (is|are) "
    r"(?P<nearest>\d+( and \d+)?)|no version of this match can be forked)$"
)


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_a_fork_at_every_version_plays_on_or_is_refused(
    long_up: RunningServer, game: str
) -> None:
    create, move = GAMES[game]
    app, actors = long_up.app, long_up.actors
    channel, client = stub(long_up.port)
    async with channel:
        origin, referee, tokens = await create(client)
        await play_to_the_end(client, origin, tokens, move)
        last = (await summary(client, origin)).version
        forks: dict[int, ms.ForkMatchResponse] = {}
        refused: dict[int, str] = {}
        for version in range(1, last + 1):
            try:
                forks[version] = await client.ForkMatch(
                    ms.ForkMatchRequest(match_id=origin, version=version), metadata=bearer(referee)
                )
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.FAILED_PRECONDITION, error.details()
                refused[version] = error.details()
        listed = await every_match(client)
        # Each fork lives: its seats' absence counts from its creation, not from the
        # server's start, and the seat whose turn it is (or who owes a decision) acts.
        for version, forked in forks.items():
            match = app.load(UUID(forked.match_id))
            assert match.status is MatchStatus.PLAYING, version
            deadline = actors.abandon_deadline_ms(match)
            assert deadline is not None and deadline > now_ms(), version
            moved = await move(client, forked.match_id, list(forked.player_tokens))
            assert moved is not None and moved.version >= 2, version
        # Two play on to their end, neither abandoned: the one before the last version
        # inside a command's automatic steps (the position a judge is sent back to), and
        # the last (the domain's tests play every fork to its end).
        inside = [v for v, d in refused.items() if "automatic steps" in d and v > min(forks)]
        assert inside, "no version inside a command's automatic steps was tried"
        for version in {max(v for v in forks if v < inside[-1]), max(forks)}:
            forked = forks[version]
            await play_to_the_end(client, forked.match_id, list(forked.player_tokens), move)
            ended = await summary(client, forked.match_id)
            assert ended.end_reason == common_pb2.END_REASON_COMPLETED, version
    # A refused fork writes nothing: the list holds the origin and the forks made.
    assert listed == [origin, *(f.match_id for f in forks.values())]
    # Refused exactly where the origin's state was out of play or inside a command's
    # automatic steps, naming that rule and the nearest versions that can be forked.
    states = {v: fork_refusal(app.load_at(UUID(origin), v)) for v in range(1, last + 1)}
    assert {v for v, r in states.items() if r is None} == set(forks)
    for version, details in refused.items():
        found = REFUSAL.match(details)
        assert found is not None, details
        expected = states[version]
        assert expected is not None and found["rule"] == expected.rule
        before = [v for v in forks if v < version][-1:]
        after = [v for v in forks if v > version][:1]
        assert found["nearest"] == " and ".join(str(v) for v in before + after), details


async def test_a_fork_on_a_long_up_server_is_not_abandoned_at_birth(
    long_up: RunningServer,
) -> None:
    """JS-8.3: nobody has been seen at a fork's table, and the server started long ago:
    the fork is abandoned only after ``abandon_after_ms`` from its creation."""
    channel, client = stub(long_up.port)
    async with channel:
        origin, referee, tokens = await new_jungle_speed(client)
        await act(client, origin, tokens[0], reveal())
        forked = await client.ForkMatch(
            ms.ForkMatchRequest(match_id=origin, version=5), metadata=bearer(referee)
        )
        match = long_up.app.load(UUID(forked.match_id))
        created = int(match.created_on.timestamp() * 1000)
        deadline = long_up.actors.abandon_deadline_ms(match)
        moved = await act(client, forked.match_id, forked.player_tokens[1], reveal())
        view = await client.GetMatch(ms.GetMatchRequest(match_id=forked.match_id))
    assert deadline == created + DEFAULT_ABANDON_AFTER_MS
    assert long_up.actors.abandonment(match, created + DEFAULT_ABANDON_AFTER_MS - 1) is None
    assert moved.version == 2
    assert view.summary.status == common_pb2.MATCH_STATUS_PLAYING
