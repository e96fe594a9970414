"""The result sheet's writer (``storage.sheets``, which the server also calls) and
``tournament verify ID`` on every store the server runs on, PostgreSQL included
(TO-11.2)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from tournament_store import swiss_cup, under_way, wrong_luck

from entrypoints.totem_replay import main
from storage.arena import Arena
from storage.sheets import FORMAT, SheetError, sheet_document


def test_verify_by_id_reads_the_tournament_and_its_matches_from_the_store(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    """On SQLite and on PostgreSQL: an honest tournament verifies by its id; one whose
    table had other luck fails, naming it (TO-12.1)."""
    arena = Arena(store_env)
    try:
        cup, luck = swiss_cup(arena), wrong_luck(arena)
    finally:
        arena.close()
    db = store_env.get("SQLITE_DBNAME", str(tmp_path / "ignored.db"))
    runner = CliRunner()
    honest = runner.invoke(main, ["--db", db, "tournament", "verify", str(cup.id)], env=store_env)
    faulty = runner.invoke(
        main, ["--db", db, "tournament", "verify", str(luck.id), "--json"], env=store_env
    )
    assert honest.exit_code == 0, honest.output
    assert faulty.exit_code == 1, faulty.output
    found = json.loads(faulty.stdout)
    assert found["first_failure"]["check"] == "duplicate luck"


def test_the_writer_gives_the_header_and_one_line_per_event(tmp_path: Path) -> None:
    arena = Arena(
        {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    )
    try:
        played = wrong_luck(arena)
        events = list(arena.events.get(played.id))
    finally:
        arena.close()
    now = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
    text = sheet_document(played.id, events, now)
    lines = [json.loads(line) for line in text.splitlines()]
    assert text.endswith("\n") and len(lines) == len(events) + 1
    assert lines[0] == {
        "format": FORMAT,
        "tournament_id": str(played.id),
        "game": "jungle_speed",
        "events": len(events),
        "exported_at": now.isoformat(),
    }
    assert [line["version"] for line in lines[1:]] == list(range(1, len(events) + 1))
    assert lines[-1]["name"] == "TournamentEnded" and lines[-1]["unhashed"]["signature"]
    assert "token_hash" not in json.dumps([line["view"] for line in lines[1:]])
    assert sheet_document(played.id, events, now) == text


def test_the_writer_refuses_what_is_no_result_sheet(tmp_path: Path) -> None:
    """Not ended (its events hold the secret seed, TO-8.1), not whole, not this
    tournament's."""
    arena = Arena(
        {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    )
    try:
        still, other = under_way(arena), wrong_luck(arena)
        events = list(arena.events.get(still.id))
        others = list(arena.events.get(other.id))
    finally:
        arena.close()
    with pytest.raises(SheetError, match="has not ended"):
        sheet_document(still.id, events)
    assert sheet_document(still.id, events, unended=True).count("\n") == len(events) + 1
    with pytest.raises(SheetError, match="not versions 1 to"):
        sheet_document(other.id, others[1:])
    with pytest.raises(SheetError, match="not of tournament"):
        sheet_document(still.id, others)
    with pytest.raises(SheetError, match="no events"):
        sheet_document(still.id, [])
