"""``list --json`` and ``show --json``: every documented key, on real stored matches."""

from __future__ import annotations

import json
from pathlib import Path

from replay_support import (
    Run,
    Store,
    change_byte,
    json_lines,
    open_store,
    stored_state,
)

from domain.kernel.randomness import commitment

#: The keys docs/replay.md documents ("JSON output"), in no particular order.
LIST_KEYS = {
    "match_id",
    "game",
    "variant",
    "status",
    "end_reason",
    "players",
    "max_players",
    "events",
    "result",
    "origin",
    "error",
}
SHOW_KEYS = (LIST_KEYS - {"error"}) | {
    "options",
    "first_event_at",
    "last_event_at",
    "digest",
    "seed_commitment",
    "seed",
    "seed_revealed_at",
}


def test_list_json_has_one_object_per_match(run: Run, store: Store) -> None:
    result = run("list", "--json")
    assert result.exit_code == 0, result.output
    records = json_lines(result.stdout)
    assert [r["match_id"] for r in records] == [
        str(m.id) for m in (store.ended, store.playing, store.waiting)
    ]
    assert all(set(r) == LIST_KEYS for r in records)
    ended, playing, waiting = records
    assert ended["game"] == "jungle_speed" and ended["variant"] == "ES"
    assert ended["status"] == "ended" and ended["end_reason"] == "completed"
    assert ended["players"] == [{"seat": s, "name": f"player{s}"} for s in range(3)]
    assert ended["events"] == store.ended.version
    assert sorted(r["place"] for r in ended["result"]) == sorted(
        r["place"] for r in store.ended.result
    )
    assert ended["origin"] is None and ended["error"] is None
    assert playing["variant"] == "RU" and playing["status"] == "playing"
    assert playing["end_reason"] is None and playing["result"] == []
    assert waiting["status"] == "waiting" and waiting["max_players"] == 4
    assert waiting["events"] == 2 and len(waiting["players"]) == 1


def test_list_json_reports_an_unreadable_match_and_goes_on(run: Run, store: Store) -> None:
    state = stored_state(store.db, store.playing.id, 4)
    # Seat 0's first face-down card becomes another: its reveal cannot apply.
    at = state.index(b'"down":[[') + len(b'"down":[[')
    change_byte(store.db, store.playing.id, 4, at, ord("9") if state[at] != ord("9") else ord("8"))
    result = run("list", "--json")
    assert result.exit_code == 0, result.output
    records = json_lines(result.stdout)
    broken = records[1]
    assert set(broken) == {"match_id", "game", "error"}
    assert broken["match_id"] == str(store.playing.id) and broken["game"] == "jungle_speed"
    assert "cannot be applied" in broken["error"]
    assert records[0]["error"] is None and records[2]["error"] is None


def test_list_json_of_an_empty_store_prints_nothing(run: Run, tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    open_store(db).close()
    result = run("list", "--json", db=db)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""


def test_show_json_of_an_ended_match_reveals_its_seed(run: Run, store: Store) -> None:
    result = run("show", str(store.ended.id)[:8], "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert set(record) == SHOW_KEYS
    match = store.ended
    assert record["match_id"] == str(match.id)
    assert record["digest"] == match.digest and record["events"] == match.version
    assert record["seed_commitment"] == match.seed_commitment
    assert commitment(bytes.fromhex(record["seed"])) == match.seed_commitment
    assert record["seed_revealed_at"] == match.version
    assert record["options"]["variant"] == "ES" and record["options"]["max_players"] == 3
    assert record["options"]["prearranged_deal"] is None
    assert record["first_event_at"] <= record["last_event_at"]


def test_show_json_keeps_the_seed_of_a_match_in_play(run: Run, store: Store) -> None:
    result = run("show", str(store.playing.id), "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["status"] == "playing"
    assert record["seed"] is None and record["seed_revealed_at"] is None
    assert record["seed"] != store.playing.seed
    assert store.playing.seed not in result.stdout


def test_show_json_errors_are_one_line_with_status_2(run: Run, store: Store) -> None:
    result = run("show", "ffffffff", "--json")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["Error: no match id begins with 'ffffffff'"]
    assert result.stdout == ""
