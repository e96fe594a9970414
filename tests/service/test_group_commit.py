"""Group commit (server/commits.py): matches whose saves wait at the same time are saved
in one transaction; a lone save is made at once, handed to a store thread before ``save``
returns; a match that conflicts in a batch fails alone; every actor gets its own events
back; shutdown lets a save under way finish.

The match actors run in this process on a real store (SQLite or PostgreSQL), without
gRPC. Transactions are counted by wrapping the application's ``save``, which can hold
one transaction in its store thread: the saves that arrive meanwhile must then wait, and
go together in the next one. Nothing here measures time.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import IntegrityError

from domain.jungle_speed import JungleSpeed
from domain.kernel.match import MatchAggregate
from server import codec, commits
from server.actors import Actors, Outcome
from server.hub import EventHub
from server.stamps import Stamper
from storage.arena import Arena
from tests.service.limits_helpers import until
from totem.v1 import common_pb2
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms

#: Seats of each match: every join is a command with one event, none starts the match.
SEATS = 10
#: The most a held transaction waits for the test to let it go (a guard against hanging).
HOLD_S = 60.0


class Saves:
    """Wraps ``Arena.save``: notes the matches of every transaction and whether it
    committed, and can hold the next one in its store thread until released."""

    def __init__(self, app: Arena) -> None:
        self._save = app.save
        self.calls: list[tuple[list[UUID], bool]] = []
        self._hold = False
        self.entered = threading.Event()
        self.released = threading.Event()

    def hold_next(self) -> None:
        self._hold = True
        self.entered.clear()
        self.released.clear()

    def __call__(self, *objs: Any, **kwargs: Any) -> list[Any]:
        if self._hold:
            self._hold = False
            self.entered.set()
            self.released.wait(HOLD_S)
        ids = [o.id for o in objs if isinstance(o, MatchAggregate)]
        try:
            recordings = self._save(*objs, **kwargs)
        except Exception:
            self.calls.append((ids, False))
            raise
        self.calls.append((ids, True))
        return recordings

    async def until_held(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, HOLD_S), "no save was held"


@dataclass
class Server:
    app: Arena
    actors: Actors
    saves: Saves
    stamper: Stamper


@pytest.fixture
async def served(
    store_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Server]:
    app = Arena(store_env)
    stamper = Stamper()
    actors = Actors(app, EventHub(codec.encoded_event), stamper)
    saves = Saves(app)
    monkeypatch.setattr(app, "save", saves)
    try:
        yield Server(app, actors, saves, stamper)
    finally:
        saves.released.set()
        await actors.close()
        await actors.threads.close()
        app.close()


def new_match(app: Arena) -> UUID:
    """A waiting Jungle Speed match of ``SEATS`` seats, saved."""
    game = codec.codec_for("jungle_speed")
    options = game.options_from_request(
        ms.CreateMatchRequest(
            game=common_pb2.GAME_JUNGLE_SPEED,
            jungle_speed=js.JungleSpeedOptions(max_players=SEATS, turn_timeout_ms=0),
        )
    )
    match: MatchAggregate = app.create_match(
        lambda seed: JungleSpeed.create(options, seed, b"", "0" * 64)
    )
    return match.id


def names() -> Iterator[str]:
    n = 0
    while True:
        n += 1
        yield f"player {n}"


NAMES = names()


def join(stamper: Stamper) -> Any:
    """The work of one command: a player takes the next seat (one event)."""
    name = next(NAMES)
    return lambda match: match.join(name, b"", "1" * 64, stamper.stamp())


async def loaded(server: Server, ids: list[UUID]) -> None:
    """Every match's actor holds its match (read work, nothing saved)."""
    await asyncio.gather(*(server.actors.run(m, lambda match: None, writes=False) for m in ids))


async def behind_a_held_save(
    server: Server, first: UUID, others: list[UUID]
) -> tuple[asyncio.Future[Outcome[Any]], list[asyncio.Future[Outcome[Any]]]]:
    """A seat joins ``first`` and its save is held; seats join ``others`` meanwhile, and
    once all their saves wait, the held one is let go. The futures of the commands."""
    server.saves.hold_next()
    held = asyncio.ensure_future(server.actors.run(first, join(server.stamper)))
    await server.saves.until_held()
    waiting = [server.actors.submit(m, join(server.stamper)) for m in others]
    count = len(others)
    await until(lambda: server.actors.committer.waiting() == count, f"{count} saves wait")
    server.saves.released.set()
    return held, waiting


def assert_own(server: Server, match_id: UUID, outcome: Outcome[Any], before: int) -> None:
    """``outcome`` holds exactly the events of ``match_id`` stored after version
    ``before``, in order."""
    assert outcome.events, "the command's event came back"
    assert all(e.originator_id == match_id for e in outcome.events)
    stored = server.app.events_after(match_id, before)
    assert [e.digest for e in outcome.events] == [e.digest for e in stored]
    assert [e.originator_version for e in outcome.events] == list(
        range(before + 1, before + 1 + len(outcome.events))
    )


async def test_saves_waiting_together_share_one_transaction(served: Server) -> None:
    ids = [new_match(served.app) for _ in range(6)]
    await loaded(served, ids)
    served.saves.calls.clear()
    versions = {m: served.app.load(m).version for m in ids}

    # The first command's save is held; the five others decide meanwhile and wait.
    first, rest = await behind_a_held_save(served, ids[0], ids[1:])
    outcomes = [await first, *[await f for f in rest]]

    assert served.saves.calls == [([ids[0]], True), (ids[1:], True)]
    assert len(served.saves.calls) < len(ids)
    for match_id, outcome in zip(ids, outcomes, strict=True):
        assert_own(served, match_id, outcome, versions[match_id])
        assert len(outcome.events) == 1
    assert served.actors.committer.idle


async def test_a_batch_holds_at_most_max_batch_matches(
    served: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``MAX_BATCH`` waiting saves, the rest go in the next transaction."""
    monkeypatch.setattr(commits, "MAX_BATCH", 2)
    ids = [new_match(served.app) for _ in range(6)]
    await loaded(served, ids)
    served.saves.calls.clear()
    first, rest = await behind_a_held_save(served, ids[0], ids[1:])
    await first
    for future in rest:
        await future
    assert served.saves.calls == [
        ([ids[0]], True),
        (ids[1:3], True),
        (ids[3:5], True),
        (ids[5:], True),
    ]


async def test_a_lone_command_is_saved_at_once(served: Server) -> None:
    match_id = new_match(served.app)
    await loaded(served, [match_id])
    served.saves.calls.clear()
    before = served.app.load(match_id).version
    assert served.actors.committer.idle

    # Nothing else is submitted: were the save to wait for company, this would not end.
    outcome = await asyncio.wait_for(served.actors.run(match_id, join(served.stamper)), HOLD_S)

    assert served.saves.calls == [([match_id], True)]
    assert_own(served, match_id, outcome, before)
    assert served.actors.committer.idle


async def test_a_lone_save_is_in_its_store_thread_before_its_caller_goes_on(
    served: Server,
) -> None:
    """The save must have reached a store thread when ``save`` returns, not on a later
    turn of the event loop."""
    match = served.app.load(new_match(served.app))
    before = match.version
    match.join(next(NAMES), b"", "1" * 64, served.stamper.stamp())
    served.saves.calls.clear()
    served.saves.hold_next()

    saving = served.actors.committer.save(match)
    # Blocks the event loop: a save begun on the loop's next turn would never arrive.
    assert served.saves.entered.wait(HOLD_S), "the save was not handed to a thread at once"
    served.saves.released.set()
    recordings = await saving

    assert [r.domain_event.originator_version for r in recordings] == [before + 1]
    assert served.saves.calls == [([match.id], True)]


async def test_a_conflict_in_a_batch_fails_only_that_match(
    served: Server, store_env: dict[str, str]
) -> None:
    ids = [new_match(served.app) for _ in range(4)]
    held, ok_a, conflicted, ok_b = ids
    await loaded(served, ids)
    # Another server instance on the same store writes the next version of one match:
    # this server's actor holds that match as it was before.
    other = Arena(store_env)
    try:
        theirs = other.load(conflicted)
        theirs.join("elsewhere", b"", "2" * 64, Stamper().stamp())
        other.save(theirs)
    finally:
        other.close()
    versions = {m: served.app.load(m).version for m in ids}
    served.saves.calls.clear()

    batch = [ok_a, conflicted, ok_b]
    first, futures = await behind_a_held_save(served, held, batch)
    await first
    outcomes = dict(zip(batch, [await f for f in futures], strict=True))

    calls = served.saves.calls
    assert calls[:2] == [([held], True), (batch, False)]  # the batch failed as a whole
    # Then each alone: the two others committed, the conflicting one failed by itself,
    # and its actor loaded the match again and decided again.
    assert calls[2:] == [
        ([ok_a], True),
        ([conflicted], False),
        ([ok_b], True),
        ([conflicted], True),
    ]
    for match_id in (ok_a, ok_b):
        assert_own(served, match_id, outcomes[match_id], versions[match_id])
    assert_own(served, conflicted, outcomes[conflicted], versions[conflicted])
    assert "elsewhere" in served.app.load(conflicted).players


async def test_only_the_conflicting_save_gets_the_integrity_error(
    served: Server, store_env: dict[str, str]
) -> None:
    ids = [new_match(served.app) for _ in range(3)]
    matches = [served.app.load(m) for m in ids]
    other = Arena(store_env)
    try:
        theirs = other.load(ids[1])
        theirs.join("elsewhere", b"", "2" * 64, Stamper().stamp())
        other.save(theirs)
    finally:
        other.close()
    before = {m.id: m.version for m in matches}
    for match in matches:
        match.join(next(NAMES), b"", "1" * 64, served.stamper.stamp())
    blocker = served.app.load(new_match(served.app))
    blocker.join(next(NAMES), b"", "1" * 64, served.stamper.stamp())
    served.saves.calls.clear()
    committer = served.actors.committer

    served.saves.hold_next()
    first = asyncio.ensure_future(committer.save(blocker))
    await served.saves.until_held()
    saves = [asyncio.ensure_future(committer.save(m)) for m in matches]
    await until(lambda: committer.waiting() == 3, "three saves wait")
    served.saves.released.set()
    await first
    results = await asyncio.gather(*saves, return_exceptions=True)

    assert isinstance(results[1], IntegrityError)
    for match_id, result in ((ids[0], results[0]), (ids[2], results[2])):
        assert isinstance(result, list)
        assert [r.domain_event.originator_id for r in result] == [match_id]
        assert [r.domain_event.digest for r in result] == [
            e.digest for e in served.app.events_after(match_id, before[match_id])
        ]
    assert served.saves.calls[1] == (ids, False)


async def test_shutdown_lets_the_save_under_way_finish(served: Server) -> None:
    match_id = new_match(served.app)
    await loaded(served, [match_id])
    before = served.app.load(match_id).version

    served.saves.hold_next()
    command = asyncio.ensure_future(served.actors.run(match_id, join(served.stamper)))
    await served.saves.until_held()
    closing = asyncio.ensure_future(served.actors.close())
    served.saves.released.set()
    await closing
    outcome = await command  # answered, not cancelled: the save was let finish

    assert_own(served, match_id, outcome, before)
