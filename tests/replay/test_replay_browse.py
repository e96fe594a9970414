"""``totem-replay list/show/events/at`` on real matches stored in a real SQLite store."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from replay_support import SEED, Run, Store, change_byte, json_lines, open_store, store_match

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed.views import state_view
from domain.kernel.chain import GENESIS_DIGEST, event_digest
from domain.kernel.match import event_name
from domain.kernel.views import Viewer


def stored_events(store: Store, match_id: UUID) -> list[Any]:
    arena = open_store(store.db)
    try:
        return arena.events_after(match_id)
    finally:
        arena.close()


def loaded_at(store: Store, match_id: UUID, version: int) -> JungleSpeed:
    arena = open_store(store.db)
    try:
        match = arena.load_at(match_id, version)
    finally:
        arena.close()
    assert isinstance(match, JungleSpeed)
    return match


# ---- list ----------------------------------------------------------------------------


def test_list_has_one_line_per_match_with_its_facts(run: Run, store: Store) -> None:
    result = run("list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    by_id = {line.split()[0]: line for line in lines}
    ended = by_id[str(store.ended.id)]
    assert " jungle_speed " in ended and " ES " in ended and "ended (completed)" in ended
    assert "3/3 players: player0, player1, player2" in ended
    assert f" {store.ended.version} events" in ended
    winner = next(r["seat"] for r in store.ended.result if r["place"] == 1)
    assert f"result: 1st seat {winner} (player{winner})" in ended
    playing = by_id[str(store.playing.id)]
    assert " RU " in playing and " playing " in playing and "result" not in playing
    assert f" {store.playing.version} events" in playing
    waiting = by_id[str(store.waiting.id)]
    assert " waiting " in waiting and "1/4 players: player0" in waiting and " 2 events" in waiting


def test_list_of_an_empty_store(tmp_path: Path, run: Run) -> None:
    open_store(tmp_path / "empty.db").close()
    result = run("list", db=tmp_path / "empty.db")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "no matches in this store"


def test_db_comes_from_totem_db_when_not_given(store: Store) -> None:
    from click.testing import CliRunner

    from entrypoints.totem_replay import main

    result = CliRunner().invoke(main, ["list"], env={"TOTEM_DB": str(store.db)})
    assert result.exit_code == 0, result.output
    assert str(store.ended.id) in result.stdout


# ---- show ----------------------------------------------------------------------------


def test_show_an_ended_match(run: Run, store: Store) -> None:
    match = store.ended
    result = run("show", str(match.id)[:8])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"Match:           {match.id}" in out
    assert "jungle_speed, variant ES" in out
    assert 'variant="ES" max_players=3 turn_timeout_ms=10000' in out
    assert "prearranged_deal=no" in out
    assert "Status:          ended (completed)" in out
    assert "seat 0 (player0); seat 1 (player1); seat 2 (player2)" in out
    assert f"Events:          {match.version} " in out
    assert f"Match digest:    {match.digest} (digest of version {match.version})" in out
    assert f"Seed commitment: {hashlib.sha256(SEED).hexdigest()}" in out
    assert f"Seed:            {SEED.hex()} (revealed at version {match.version})" in out


def test_show_keeps_the_seed_of_a_match_in_play_secret(run: Run, store: Store) -> None:
    result = run("show", store.playing.id)
    assert result.exit_code == 0, result.output
    assert "Status:          playing" in result.stdout
    assert "Result:          none yet" in result.stdout
    assert "not revealed" in result.stdout
    assert SEED.hex() not in result.stdout
    assert hashlib.sha256(SEED).hexdigest() in result.stdout


def test_a_prefix_may_keep_dashes_and_any_case(run: Run, store: Store) -> None:
    prefix = str(store.waiting.id)[:13].upper()
    assert "-" in prefix
    result = run("show", prefix)
    assert result.exit_code == 0, result.output
    assert str(store.waiting.id) in result.stdout
    assert "1/4" not in result.stdout and "seat 0 (player0)" in result.stdout


# ---- events --------------------------------------------------------------------------


def test_events_has_one_line_per_event_in_order(run: Run, store: Store) -> None:
    match = store.ended
    events = stored_events(store, match.id)
    result = run("events", match.id)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == len(events) == match.version
    for line, event in zip(lines, events, strict=True):
        version, day, time, name = line.split()[:4]
        assert int(version) == event.originator_version
        assert name == event_name(event)
        stamp = datetime.fromisoformat(f"{day}T{time}+00:00")
        assert abs((stamp - event.timestamp).total_seconds()) < 0.001
    # Cards are named as the deck names them, from the referee's view.
    pairs = zip(lines, events, strict=True)
    revealed = [(line, e) for line, e in pairs if event_name(e) == "Revealed"]
    assert revealed
    for line, event in revealed:
        card = match.card(event.card)
        assert f"seat {event.seat} (player{event.seat}) reveals {card}" in line
    assert "Dealt" in lines[4] and "80 cards dealt face down" in lines[4]
    assert "MatchEnded" in lines[-1] and SEED.hex() in lines[-1]


def test_every_event_of_a_match_has_a_written_summary(run: Run, store: Store) -> None:
    """No event falls back to a field dump: each kind has words."""
    result = run("events", store.ended.id)
    assert result.exit_code == 0
    for line in result.stdout.splitlines():
        assert "={" not in line and "=[" not in line, line


def test_events_from_and_to(run: Run, store: Store) -> None:
    result = run("events", store.ended.id, "--from", 6, "--to", 9)
    assert result.exit_code == 0, result.output
    assert [int(line.split()[0]) for line in result.stdout.splitlines()] == [6, 7, 8, 9]


def test_events_json_is_a_verifiable_export(run: Run, store: Store) -> None:
    match = store.ended
    result = run("events", match.id, "--json")
    assert result.exit_code == 0, result.output
    records = json_lines(result.stdout)
    assert [r["version"] for r in records] == list(range(1, match.version + 1))
    previous = GENESIS_DIGEST
    for record in records:
        assert set(record) >= {"version", "name", "timestamp", "digest", "prev_digest", "view"}
        assert record["prev_digest"] == previous
        hashed = dict(record["hashed"])
        hashed.update(
            originator_id=record["match_id"],
            originator_version=record["version"],
            timestamp=record["timestamp"],
            prev_digest=record["prev_digest"],
        )
        assert event_digest(str(record["name"]), hashed) == record["digest"]
        previous = str(record["digest"])
    assert previous == match.digest
    dealt = records[4]
    assert dealt["name"] == "Dealt"
    deck = dealt["view"]["deck"]
    assert [c["id"] for c in deck] == dealt["hashed"]["deck"]
    assert records[0]["view"]["seed"] == SEED.hex()


# ---- at ------------------------------------------------------------------------------


def test_at_shows_the_referee_state_rebuilt_event_by_event(run: Run, store: Store) -> None:
    match = store.ended
    for version in (1, 4, 5, 6, 20, 57, match.version - 1, match.version):
        loaded = loaded_at(store, match.id, version)
        result = run("at", match.id, version, "--json")
        assert result.exit_code == 0, result.output
        view = json.loads(result.stdout)
        assert view == state_view(loaded, Viewer.referee())
        for s, seat in enumerate(view["seats"]):
            down = loaded.down[s] if loaded.down else []
            up = loaded.up[s] if loaded.up else []
            assert seat["face_down_count"] == len(down)
            assert [c["id"] for c in seat["face_down"]] == down
            assert [c["id"] for c in seat["face_up"]] == up
        assert [c["id"] for c in view["pot"]] == loaded.pot

        text = run("at", str(match.id)[:6], version)
        assert text.exit_code == 0, text.output
        out = text.stdout
        assert f"at version {version} of {match.version}" in out
        for s in range(len(loaded.players) if loaded.down else 0):
            assert (
                f"seat {s} (player{s}): {len(loaded.down[s])} face down, "
                f"{len(loaded.up[s])} face up"
            ) in out
            top_first = ", ".join(str(loaded.card(c)) for c in loaded.down[s]) or "none"
            assert f"face down (top first): {top_first}" in out or not loaded.down[s]
        assert f"Pot ({len(loaded.pot)})" in out
        turn = "nobody" if loaded.turn is None else f"seat {loaded.turn} (player{loaded.turn})"
        assert f"Turn: {turn}" in out
        assert f"status {loaded.status.value}" in out


def test_at_shows_open_duels_and_arrows(run: Run, store: Store) -> None:
    """Find positions where a duel or an arrows race is open and check they are shown."""
    match = store.ended
    seen_duel = seen_arrows = False
    for version in range(5, match.version + 1, 3):
        loaded = loaded_at(store, match.id, version)
        if not loaded.open_duels() and not loaded.open_arrows():
            continue
        out = run("at", match.id, version).stdout
        for duel in loaded.open_duels():
            seen_duel = True
            assert ", ".join(f"seat {s} (player{s})" for s in duel) in out
        if loaded.open_arrows():
            seen_arrows = True
            assert "Arrows race: open" in out
        else:
            assert "Arrows race: none" in out
    assert seen_duel and seen_arrows


def test_at_as_a_seat_hides_face_down_cards(run: Run, store: Store) -> None:
    match = store.playing
    version = match.version
    loaded = loaded_at(store, match.id, version)
    result = run("at", match.id, version, "--seat", 1, "--json")
    assert result.exit_code == 0, result.output
    view = json.loads(result.stdout)
    assert view == state_view(loaded, Viewer.player(1))
    assert all("face_down" not in seat for seat in view["seats"])
    assert "seed" not in view

    text = run("at", match.id, version, "--seat", 1).stdout
    assert "Seen by the player of seat 1 (player1)" in text
    assert "face down (top first)" not in text
    assert f"face down: {len(loaded.down[0])} cards, hidden from this viewer" in text
    assert SEED.hex() not in text

    spectator = run("at", match.id, version, "--spectator")
    assert spectator.exit_code == 0
    assert "Seen by a spectator" in spectator.stdout
    assert "face down (top first)" not in spectator.stdout

    referee = run("at", match.id, version, "--referee").stdout
    assert "face down (top first)" in referee and SEED.hex() in referee


def test_at_rejects_positions_and_seats_that_do_not_exist(run: Run, store: Store) -> None:
    beyond = run("at", store.ended.id, store.ended.version + 1)
    assert beyond.exit_code == 2
    assert f"has {store.ended.version} events: there is no version" in beyond.stderr
    assert run("at", store.ended.id, 0).exit_code == 2
    seat = run("at", store.waiting.id, 2, "--seat", 1)
    assert seat.exit_code == 2 and "seat 1 is not taken at version 2" in seat.stderr
    both = run("at", store.ended.id, 5, "--seat", 0, "--spectator")
    assert both.exit_code == 2 and "choose one of --seat, --spectator and --referee" in both.stderr


def test_at_a_waiting_match(run: Run, store: Store) -> None:
    result = run("at", store.waiting.id, 2)
    assert result.exit_code == 0, result.output
    assert "status waiting" in result.stdout
    assert "seat 0 (player0): 0 face down, 0 face up" in result.stdout


# ---- errors --------------------------------------------------------------------------


def test_a_missing_db_file_is_an_error_and_is_not_created(tmp_path: Path, run: Run) -> None:
    missing = tmp_path / "nowhere.db"
    for args in (["list"], ["show", "abc"], ["verify", "abc"]):
        result = run(*args, db=missing)
        assert result.exit_code == 2, result.output
        assert "does not exist" in result.stderr
        assert "Traceback" not in result.output
    assert not missing.exists()


def test_a_file_that_is_not_a_store_is_an_error(tmp_path: Path, run: Run) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    result = run("list", db=junk)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ")
    assert "Traceback" not in result.output
    assert junk.read_bytes() == b"this is not a database" * 100


def test_unknown_and_malformed_match_ids(run: Run, store: Store) -> None:
    ids = {str(m.id) for m in (store.ended, store.playing, store.waiting)}
    absent = next(c for c in "0123456789abcdef" if not any(i.startswith(c) for i in ids))
    unknown = run("show", absent)
    assert unknown.exit_code == 2 and f"no match id begins with '{absent}'" in unknown.stderr
    bad = run("events", "not-an-id")
    assert bad.exit_code == 2 and "is not a match id" in bad.stderr
    full = run("show", "00000000-0000-4000-8000-000000000000")
    assert full.exit_code == 2 and "no match 00000000-0000-4000-8000-000000000000" in full.stderr


def test_an_ambiguous_prefix_names_the_candidates(tmp_path: Path, run: Run) -> None:
    db = tmp_path / "many.db"
    arena = open_store(db)
    try:
        # 17 ids: by the pigeonhole principle two begin with the same hex digit.
        ids = [str(store_match(arena, players=2, seats_taken=0).id) for _ in range(17)]
    finally:
        arena.close()
    first = next(c for c in "0123456789abcdef" if sum(i.startswith(c) for i in ids) > 1)
    result = run("show", first, db=db)
    assert result.exit_code == 2
    assert f"match id prefix '{first}' is ambiguous" in result.stderr
    assert "Traceback" not in result.output


def test_reading_never_changes_the_store(run: Run, store: Store) -> None:
    before = store.db.read_bytes()
    for args in (["list"], ["show", store.ended.id], ["events", store.ended.id, "--json"]):
        assert run(*args).exit_code == 0
    assert run("at", store.ended.id, 9).exit_code == 0
    assert run("verify", store.ended.id).exit_code == 0
    assert store.db.read_bytes() == before


def test_list_carries_on_past_a_damaged_match(run: Run, store: Store) -> None:
    change_byte(store.db, store.playing.id, 3, 0, ord("!"))
    result = run("list")
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert "unreadable: the event at version 3 cannot be read" in lines[str(store.playing.id)]
    assert "ended (completed)" in lines[str(store.ended.id)]
    assert "waiting" in lines[str(store.waiting.id)]


@pytest.mark.parametrize("command", ["show", "events", "at"])
def test_damaged_events_are_reported_not_raised(run: Run, store: Store, command: str) -> None:
    change_byte(store.db, store.ended.id, 7, 0, ord("!"))
    args = [command, store.ended.id] + (["30"] if command == "at" else [])
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "version 7 cannot be read" in result.stderr
    assert "totem-replay verify" in result.stderr
    assert "Traceback" not in result.output
