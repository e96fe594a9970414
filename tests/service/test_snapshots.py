"""Snapshots: an ended or idle match is loaded from its latest snapshot and the events
after it, and is then the very match its events build.

Matches of all three games are played through the application, saved after every
command as the server saves them, with a snapshot every few events; every match loaded
with snapshots is compared, value for value and type for type, with the same match
replayed from its events alone by an application without them. How many events a load
reads is counted on the recorder, never timed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner
from eventsourcing.cryptography import AESCipher

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel import MatchStatus
from domain.kernel.match import MatchAggregate, payload
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.village import Options as VillageOptions
from domain.village import Village
from entrypoints.totem_replay import main as replay_main
from server.serve import start
from storage import keys
from storage.arena import Arena
from tests.replay.replay_support import Stamps
from tests.replay.replay_support import play as play_jungle_speed
from tests.service.helpers import stub
from totem.v1 import match_service_pb2 as ms

SEED = bytes(range(32))
#: Small, so that every match here has snapshots mid-way as well as at its end.
INTERVAL = 10

Factory = Callable[[bytes], MatchAggregate]


def jungle_speed(seed: bytes) -> MatchAggregate:
    return JungleSpeed.create(JungleSpeedOptions(variant="ES", max_players=3), seed, b"\x01")


def tribes(seed: bytes) -> MatchAggregate:
    return Tribes.create(TribesOptions(max_players=3), seed)


def village(seed: bytes) -> MatchAggregate:
    return Village.create(VillageOptions(max_players=3), seed, secret=bytes(range(100, 132)))


GAMES: dict[str, Factory] = {"jungle_speed": jungle_speed, "tribes": tribes, "village": village}


def step(match: MatchAggregate, stamps: Stamps, rng: random.Random) -> None:
    """One command of a match in play: Jungle Speed's own legal moves, or for Tribes
    and Village the timer firing (every default applies), which plays them to the end."""
    if isinstance(match, JungleSpeed):
        play_jungle_speed(match, stamps, rng, match.version + 1)
        return
    deadline = match.timer_deadline_ms()
    assert deadline is not None
    match.fire_timer(stamps(after_ms=max(1, deadline - stamps.wall_ms)))


def play_saved(
    app: Arena, factory: Factory, *, until_version: int | None = None, signed: bool = False
) -> MatchAggregate:
    """A match of 3 seats created, joined and played through ``app``, saved after every
    command, to its end (or until ``until_version``)."""
    stamps, rng = Stamps(), random.Random(7)
    match = app.create_match(factory)
    if signed:
        match.signer = keys.ephemeral().signer()  # the server's key: no snapshot holds it
    for seat in range(3):
        match.join(f"player {seat}", bytes([seat]), f"token-hash-{seat}", stamps())
        app.save(match)
    while match.status is MatchStatus.PLAYING:
        if until_version is not None and match.version >= until_version:
            break
        step(match, stamps, rng)
        assert_fields_survive_the_store(app, match)
        app.save(match)
    return match


def assert_fields_survive_the_store(app: Arena, match: MatchAggregate) -> None:
    """What lets a save snapshot the match it holds rather than reload it: every field
    of every event comes back from the store with the same value and type, so an event's
    body builds the same state live as in a replay."""
    for evt in match.pending_events:
        if type(evt).__name__ == "Forked":
            continue
        stored = app.mapper.to_domain_event(app.mapper.to_stored_event(evt))
        assert differences(vars(stored), vars(evt), type(evt).__name__) == []


def differences(a: Any, b: Any, path: str = "match") -> list[str]:
    """Where ``a`` and ``b`` differ, types included (a tuple is not a list here)."""
    if type(a) is not type(b):
        return [f"{path}: {type(a).__name__} != {type(b).__name__}"]
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(map(str, a.keys() ^ b.keys()))}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}[{k!r}]")]
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in differences(x, y, f"{path}[{i}]")]
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return differences(vars(a), vars(b), path)
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def state(match: MatchAggregate) -> dict[str, Any]:
    return {k: v for k, v in vars(match).items() if k not in MatchAggregate.TRANSIENT}


class EventsRead:
    """Counts the stored events the application's recorder returns, per match."""

    def __init__(self, app: Arena) -> None:
        self.counts: dict[UUID, int] = {}
        select = app.recorder.select_events

        def counted(originator_id: UUID, **kwargs: Any) -> Any:
            rows = select(originator_id, **kwargs)
            self.counts[originator_id] = self.counts.get(originator_id, 0) + len(rows)
            return rows

        app.recorder.select_events = counted  # type: ignore[method-assign]


@pytest.fixture
def apps(store_env: dict[str, str]) -> Iterator[tuple[Arena, Arena]]:
    """The application with snapshots (one every :data:`INTERVAL` events), and another
    on the same store without them, which replays every match from its events."""
    app = Arena(store_env, seed_source=lambda: SEED)
    app.snapshot_interval = INTERVAL
    plain = Arena({**store_env, "IS_SNAPSHOTTING_ENABLED": "n"})
    try:
        yield app, plain
    finally:
        plain.close()
        app.close()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_match_loaded_from_snapshots_is_the_match_its_events_build(
    apps: tuple[Arena, Arena], game: str
) -> None:
    app, plain = apps
    assert plain.snapshots is None
    match = play_saved(app, GAMES[game])
    assert match.status is MatchStatus.ENDED
    end = match.version
    assert app.snapshots is not None
    taken = [s.originator_version for s in app.snapshots.get(match.id)]
    assert taken[-1] == end, "the save that ends a match snapshots it"
    assert len(taken) >= 2, "and a long match has snapshots on the way"

    versions = sorted({end, end - 1, taken[0], taken[0] + 1, taken[0] + INTERVAL // 2, 3})
    for version in versions:
        loaded = app.load_at(match.id, version)
        replayed = plain.load_at(match.id, version)
        assert loaded.version == replayed.version == version
        assert differences(state(loaded), state(replayed)) == [], version
    assert differences(state(app.load(match.id)), state(match)) == []


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_match_loaded_mid_way_plays_on_as_the_replayed_one(
    apps: tuple[Arena, Arena], game: str
) -> None:
    app, plain = apps
    match = play_saved(app, GAMES[game], until_version=4 * INTERVAL + 3)
    assert match.status is MatchStatus.PLAYING
    loaded, replayed = app.load(match.id), plain.load(match.id)
    assert differences(state(loaded), state(replayed)) == []
    stamps = Stamps(wall_ms=10**13)
    for copy in (loaded, replayed):
        step(copy, Stamps(wall_ms=10**13), random.Random(3))
    step(match, stamps, random.Random(3))
    events = [[payload(e) for e in m.collect_events()] for m in (loaded, replayed, match)]
    assert events[0] == events[1] == events[2]


def test_loading_reads_only_the_events_after_the_latest_snapshot(
    apps: tuple[Arena, Arena],
) -> None:
    app, plain = apps
    ended = play_saved(app, jungle_speed)
    idle = play_saved(app, tribes, until_version=3 * INTERVAL + 4)
    assert app.snapshots is not None
    latest = [s.originator_version for s in app.snapshots.get(idle.id)][-1]
    assert 3 * INTERVAL <= latest < idle.version
    with_snapshots, without = EventsRead(app), EventsRead(plain)
    for arena in (app, plain):
        arena.load(ended.id)
        arena.load(idle.id)
    assert with_snapshots.counts == {ended.id: 0, idle.id: idle.version - latest}
    assert without.counts == {ended.id: ended.version, idle.id: idle.version}


async def test_get_match_of_an_ended_match_reads_none_of_its_events(
    store_env: dict[str, str],
) -> None:
    running = await start("127.0.0.1:0", store_env, seed_source=lambda: SEED)
    try:
        match = play_saved(running.app, jungle_speed)
        assert match.version > 2 * INTERVAL
        read = EventsRead(running.app)
        channel, client = stub(running.port)
        async with channel:
            got = await client.GetMatch(ms.GetMatchRequest(match_id=str(match.id)))
        assert got.summary.version == match.version
        assert read.counts.get(match.id, 0) == 0
    finally:
        await running.stop(grace=None)


def test_a_store_written_without_snapshots_is_read_as_before(tmp_path: Path) -> None:
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    old = Arena({**env, "IS_SNAPSHOTTING_ENABLED": "n"}, seed_source=lambda: SEED)
    match = play_saved(old, village, until_version=25)
    old.close()
    app = Arena(env)
    try:
        assert app.snapshots is not None
        assert list(app.snapshots.get(match.id)) == []
        loaded = app.load(match.id)
        assert differences(state(loaded), state(match)) == []
        loaded.stop("the snapshots test stops it")
        app.save(loaded)
        assert [s.originator_version for s in app.snapshots.get(match.id)] == [loaded.version]
    finally:
        app.close()


def test_snapshots_are_encrypted_and_never_hold_the_signer(tmp_path: Path) -> None:
    db = tmp_path / "secret.db"
    cipher = {
        "CIPHER_TOPIC": "eventsourcing.cryptography:AESCipher",
        "CIPHER_KEY": AESCipher.create_key(32),
    }
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(db), **cipher}
    app = Arena(env)
    try:
        match = play_saved(app, village, signed=True)
        assert app.snapshots is not None
        snapshot = next(iter(app.snapshots.get(match.id, desc=True, limit=1)))
        assert snapshot.originator_version == match.version
        assert match.signer is not None
        assert "signer" not in snapshot.state
        assert "signer" not in vars(app.load(match.id))
        assert "seed" in snapshot.state
        rows = app.snapshots.recorder.select_events(match.id)
        assert rows
        assert all(match.seed.encode() not in bytes(r.state) for r in rows)
        assert all(b'"seed"' not in bytes(r.state) for r in rows)
    finally:
        app.close()

    runner = CliRunner()
    verified = runner.invoke(replay_main, ["--db", str(db), "verify", "--all"], env=cipher)
    assert verified.exit_code == 0, verified.output
