"""Helpers for the replay tests: real Jungle Speed matches stored in a real event store,
and ways to damage a stored event the way a tamperer with the database file would."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from click.testing import Result

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import MatchStatus, ReceiveStamp
from domain.kernel.chain import stored_event_digest
from domain.kernel.match import event_name
from domain.kernel.randomness import commitment
from domain.kernel.signing import signed_message
from storage.arena import MATCH_LOG_ID, TRANSPARENCY_LOG_ID, Arena, store_env
from storage.keys import ServerKey

SEED = bytes(range(32))


@dataclass
class Store:
    """A store holding three matches (see the ``store`` fixture)."""

    db: Path
    ended: JungleSpeed
    playing: JungleSpeed
    waiting: JungleSpeed


#: ``run(*args, db=None, env=None)``: ``totem-replay --db DB ARGS`` through Click's runner.
Run = Callable[..., Result]


class Stamps:
    """Receive stamps with increasing sequence numbers and wall time."""

    def __init__(self, wall_ms: int = 1_700_000_000_000) -> None:
        self.sequence = 0
        self.wall_ms = wall_ms

    def __call__(self, after_ms: int = 40) -> ReceiveStamp:
        self.sequence += 1
        self.wall_ms += after_ms
        return ReceiveStamp(self.sequence, self.wall_ms * 1_000_000, self.wall_ms * 1_000_000)


def play(match: JungleSpeed, stamps: Stamps, rng: random.Random, max_events: int) -> None:
    """Play legal moves (reveals, grabs, timer firings) until the match ends or has
    ``max_events`` events, whichever comes first."""
    while match.status is MatchStatus.PLAYING and match.version < max_events:
        duels, luck = match.open_duels(), rng.random()
        if duels and luck < 0.7:
            match.grab(rng.choice(duels[0]), stamps())
        elif match.open_arrows():
            match.grab(rng.randrange(len(match.players)), stamps())
        elif luck < 0.03:  # a grab with no race open: wrong, or late
            seat = rng.choice([s for s in range(len(match.players)) if match.active(s)])
            match.grab(seat, stamps())
        elif match.turn is not None and luck > 0.05:
            match.reveal(match.turn, stamps())
        else:
            deadline = match.timer_deadline_ms()
            assert deadline is not None
            match.fire_timer(stamps(after_ms=deadline - stamps.wall_ms))


def store_match(
    arena: Arena,
    *,
    players: int = 3,
    variant: str = "ES",
    max_events: int = 100_000,
    seats_taken: int | None = None,
    prearranged: list[int] | None = None,
    moves_seed: int = 1,
) -> JungleSpeed:
    """Create, join and play a match through the application, and save it."""
    stamps = Stamps()
    options = Options(variant=variant, max_players=players, prearranged_deal=prearranged)
    created = arena.create_match(lambda seed: JungleSpeed.create(options, seed, b"\x01\x02"))
    assert isinstance(created, JungleSpeed)
    match = created
    for seat in range(players if seats_taken is None else seats_taken):
        match.join(f"player{seat}", bytes([seat, 7, 7]), f"token-hash-{seat}", stamps())
    play(match, stamps, random.Random(moves_seed), max_events)
    arena.save(match)
    return match


def open_store(db: Path, environ: Mapping[str, str] | None = None) -> Arena:
    return Arena(store_env(str(db), environ or {}), seed_source=lambda: SEED)


# ---- damage done directly to the SQLite file ---------------------------------------


def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


def stored_state(db: Path, match_id: UUID, version: int) -> bytes:
    with _connect(db) as conn:
        row = conn.execute(
            "SELECT state FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            (match_id.hex, version),
        ).fetchone()
    assert row is not None, f"no stored event at version {version}"
    return bytes(row[0])


def write_state(db: Path, match_id: UUID, version: int, state: bytes) -> None:
    with _connect(db) as conn:
        changed = conn.execute(
            "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = ?",
            (state, match_id.hex, version),
        ).rowcount
    assert changed == 1


def change_byte(db: Path, match_id: UUID, version: int, at: int, new: int) -> None:
    """Replace the single byte at offset ``at`` of one event's stored state."""
    state = bytearray(stored_state(db, match_id, version))
    assert state[at] != new
    state[at] = new
    write_state(db, match_id, version, bytes(state))


def digit_offset(state: bytes, key: str) -> int:
    """The offset of the first digit of the number (or list of numbers) under ``"key":``."""
    at = state.index(f'"{key}":'.encode()) + len(key) + 3
    at += state[at] == ord("[")
    assert chr(state[at]).isdigit(), state[at - 10 : at + 10]
    return at


def delete_row(db: Path, match_id: UUID, version: int) -> None:
    with _connect(db) as conn:
        deleted = conn.execute(
            "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            (match_id.hex, version),
        ).rowcount
    assert deleted == 1


def truncate(db: Path, match_id: UUID, keep: int, *, summary_too: bool = False) -> None:
    """Delete every event after version ``keep``; with ``summary_too``, rewrite the
    match's summary row to match, as a tamperer who knows the projection would."""
    with _connect(db) as conn:
        conn.execute(
            "DELETE FROM stored_events WHERE originator_id = ? AND originator_version > ?",
            (match_id.hex, keep),
        )
        if summary_too:
            changed = conn.execute(
                "UPDATE match_summaries SET version = ?, status = 'playing', result = '[]', "
                "end_reason = NULL WHERE match_id = ?",
                (keep, match_id.hex),
            ).rowcount
            assert changed == 1


def delete_logged(db: Path, match_id: UUID) -> None:
    """Delete the ``MatchLogged`` event that lists the match in the store's log."""
    arena = open_store(db)
    try:
        entry = next(e for e in arena.logged_matches() if e.match_id == match_id)
    finally:
        arena.close()
    with _connect(db) as conn:
        deleted = conn.execute(
            "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            (MATCH_LOG_ID.hex, entry.originator_version),
        ).rowcount
    assert deleted == 1


def swap_versions(db: Path, match_id: UUID, a: int, b: int) -> None:
    """Exchange the versions of two stored events (their order in the match)."""
    with _connect(db) as conn:
        for old, new in ((a, -1), (b, a), (-1, b)):
            conn.execute(
                "UPDATE stored_events SET originator_version = ? "
                "WHERE originator_id = ? AND originator_version = ?",
                (new, match_id.hex, old),
            )


def forge(db: Path, match_id: UUID, version: int, **changes: object) -> None:
    """Change fields of one event AND rewrite the hash chain from it to the end, as a
    tamperer who knows the chain would: the chain then holds, the content is false."""
    arena = open_store(db)
    try:
        stored = list(arena.recorder.select_events(match_id))
        previous = None
        for record in stored:
            event = arena.mapper.to_domain_event(record)
            if record.originator_version < version:
                previous = event.digest  # type: ignore[attr-defined]
                continue
            state = vars(event)
            if record.originator_version == version:
                state.update(changes)
            if previous is not None:
                state["prev_digest"] = previous
            state["digest"] = stored_event_digest(event)
            previous = state["digest"]
            again = arena.mapper.to_stored_event(event)
            write_state(db, match_id, record.originator_version, bytes(again.state))
    finally:
        arena.close()


def execute(db: Path, statement: str, *params: object) -> int:
    """Run one SQL statement on the store's file; the number of rows it changed."""
    with _connect(db) as conn:
        return conn.execute(statement, params).rowcount


def forge_stamp(db: Path, match_id: UUID, nth: int = 5) -> None:
    """The ``nth`` reveal's receive stamp one millisecond later, and the chain rewritten
    after it (the end's signature then no longer holds)."""
    arena = open_store(db)
    try:
        events = arena.events_after(match_id)
    finally:
        arena.close()
    event = [e for e in events if event_name(e) == "Revealed"][nth]
    stamp = dict(event.stamp, wall_ns=event.stamp["wall_ns"] + 1_000_000)
    forge(db, match_id, event.originator_version, stamp=stamp)


def re_sign(db: Path, match_id: UUID, key: ServerKey) -> None:
    """Sign the match's end again with ``key`` (another key, or the store's own), over
    the match digest it now has, naming that key in the event."""
    arena = open_store(db)
    try:
        ended = arena.events_after(match_id)[-1]
    finally:
        arena.close()
    message = signed_message(match_id, ended.originator_version, ended.digest)
    forge(
        db,
        match_id,
        ended.originator_version,
        signature=key.private.sign(message).hex(),
        public_key=key.public_bytes.hex(),
    )


def delete_match(db: Path, match_id: UUID) -> None:
    """Every trace of a match: its events, its summary and its entry in the list."""
    assert execute(db, "DELETE FROM stored_events WHERE originator_id = ?", match_id.hex) > 0
    execute(db, "DELETE FROM match_summaries WHERE match_id = ?", match_id.hex)
    assert (
        execute(
            db,
            "DELETE FROM stored_events WHERE originator_id = ? AND instr(state, ?) > 0",
            MATCH_LOG_ID.hex,
            match_id.hex.encode(),
        )
        == 1
    )


def replace_match(db: Path, key: ServerKey, victim: UUID, source: UUID) -> None:
    """Put another played match's events under ``victim``'s id, chain rewritten, the end
    re-signed with ``key`` (the store's own) and the victim's summary row rewritten to
    agree: the forgery a key beside the store allows."""
    execute(db, "DELETE FROM stored_events WHERE originator_id = ?", victim.hex)
    copied = "status, players, version, result, end_reason"
    execute(
        db,
        f"UPDATE match_summaries SET ({copied}) = (SELECT {copied} FROM match_summaries "
        "WHERE match_id = ?) WHERE match_id = ?",
        source.hex,
        victim.hex,
    )
    execute(
        db,
        "INSERT INTO stored_events (originator_id, originator_version, topic, state) "
        "SELECT ?, originator_version, topic, state FROM stored_events WHERE originator_id = ?",
        victim.hex,
        source.hex,
    )
    forge(db, victim, 1)  # the chain recomputed under the victim's id
    re_sign(db, victim, key)


def relog(db: Path, match_id: UUID) -> None:
    """Rewrite the transparency log's leaves of ``match_id`` to what its (forged) events
    now give, as a tamperer who knows the log would (the log's root then changes)."""
    arena = open_store(db)
    try:
        events = arena.events_after(match_id)
        for logged in arena.logged_leaves():
            if logged.match_id != match_id:
                continue
            event = events[0] if logged.kind == "created" else events[-1]
            state = vars(logged)
            state["digest"] = event.digest
            if logged.kind == "ended":
                state["version"] = event.originator_version
                state["signature"] = event.signature
            else:
                state["seed_commitment"] = commitment(bytes.fromhex(event.seed))
            stored = arena.mapper.to_stored_event(logged)
            write_state(db, TRANSPARENCY_LOG_ID, logged.originator_version, bytes(stored.state))
    finally:
        arena.close()


def unlog_end(db: Path, match_id: UUID) -> None:
    """Remove the leaf of the match's end from the transparency log and renumber the
    leaves after it, so the log has no gap: what a tamperer who cut the match's end off
    does to the log."""
    arena = open_store(db)
    try:
        (index,) = [
            leaf.originator_version
            for leaf in arena.logged_leaves()
            if leaf.match_id == match_id and leaf.kind == "ended"
        ]
        size = len(list(arena.logged_leaves()))
    finally:
        arena.close()
    log = TRANSPARENCY_LOG_ID.hex
    where = "WHERE originator_id = ? AND originator_version = ?"
    assert execute(db, f"DELETE FROM stored_events {where}", log, index) == 1
    for version in range(index + 1, size + 1):
        renumber = f"UPDATE stored_events SET originator_version = ? {where}"
        assert execute(db, renumber, version - 1, log, version) == 1


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


#: Commands that show a live match's hidden facts only with --referee.
REFEREE_COMMANDS = frozenset({"at", "events", "step", "explain", "export"})
VIEWER_OPTIONS = frozenset({"--seat", "--spectator", "--referee", "--help"})


def as_referee(args: Sequence[object]) -> list[str]:
    """``totem-replay`` arguments as a judge with the referee's right gives them: a command
    that shows a match's hidden facts gets --referee unless a viewer is named (the tests
    of the default, a live match seen as a spectator, call the tool without this)."""
    argv = [str(a) for a in args]
    if argv and argv[0] in REFEREE_COMMANDS and not VIEWER_OPTIONS & set(argv):
        argv.append("--referee")
    return argv
