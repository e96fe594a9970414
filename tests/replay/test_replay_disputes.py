"""``totem-replay disputes``: every grab race of a match (or of every match in the store)
with its gap, close calls within the stamp precision (docs/api.md), suspect reaction
times, late and wrong grabs (JS-4.2, JS-5.1, JS-5.2, JS-5.3, JS-6.1), and each seat's
reactions; read as ``explain`` reads one race."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from replay_support import Store, open_store, store_match
from test_replay_explain import explained, grab_stamp, run, save, scripted_match
from test_replay_tribes import store_tribes

from domain.jungle_speed import JungleSpeed
from domain.kernel import ReceiveStamp
from replay.explain_rules import CALL_PRECISION_MS, STREAM_PRECISION_MS
from tests.service.helpers import INWARD, deal_for, symbol


def on_stream(stamp: ReceiveStamp) -> ReceiveStamp:
    return dataclasses.replace(stamp, on_stream=True)


def two_races_and_a_wrong_grab(db: Path) -> tuple[JungleSpeed, dict[str, int]]:
    """An inward-arrows race at v7 (two grabs on open streams 0.1 ms apart: a close call;
    the winner 3 ms after the reveal reached it: suspect), a duel at v10 (two Act calls 5
    ms apart: no close call) and a wrong grab at v12 (10 ms after its event: suspect)."""
    deal = deal_for(3, {0: [INWARD, symbol(3, 1)], 2: [symbol(3, 0)]})
    match = scripted_match(db, deal)
    match.reveal(0, grab_stamp(10, 0))
    arrows = match.version
    match.grab(2, on_stream(grab_stamp(11, 40, seen=arrows, sent_ms=37)))
    arrows_won = match.version
    match.grab(1, on_stream(grab_stamp(12, 40.125, seen=arrows, sent_ms=-200)))
    match.reveal(2, grab_stamp(13, 500))
    match.reveal(0, grab_stamp(14, 510))
    duel = match.version
    assert match.open_duels() == [[0, 2]]
    match.grab(0, grab_stamp(15, 1000, seen=duel, sent_ms=850))
    duel_won = match.version
    match.grab(2, grab_stamp(16, 1005, seen=duel, sent_ms=850))
    match.grab(1, grab_stamp(17, 2000, seen=match.version, sent_ms=1990))
    wrong = match.version
    save(db, match)
    versions = dict(arrows=arrows, arrows_won=arrows_won, duel=duel, duel_won=duel_won)
    return match, dict(versions, wrong=wrong)


def disputes_json(db: Path, *args: object) -> list[dict[str, Any]]:
    shown = run(db, "disputes", *args, "--json")
    assert shown.exit_code == 0, shown.output
    return [json.loads(line) for line in shown.stdout.splitlines()]


def test_js_5_1_one_match_races_close_calls_suspects_late_and_wrong_grabs(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.db"
    match, v = two_races_and_a_wrong_grab(db)
    assert STREAM_PRECISION_MS < 5 < CALL_PRECISION_MS * 5 and STREAM_PRECISION_MS >= 0.125

    (data,) = disputes_json(db, match.id)
    assert data["match_id"] == str(match.id) and data["game"] == "jungle_speed"
    assert data["counts"] == {
        "races": 2,
        "close_calls": 1,
        "suspect": 2,
        "late": 2,
        "wrong": 1,
        "refused": 0,
    }
    arrows, duel, wrong = data["races"]
    assert (arrows["version"], arrows["kind"], arrows["winner"]) == (v["arrows_won"], "arrows", 2)
    assert (arrows["opened"], arrows["opened_by"]) == (v["arrows"], "Revealed")
    assert [(c["seat"], c["label"]) for c in arrows["contenders"]] == [(2, "winner"), (1, "lost")]
    assert arrows["gap_ms"] == pytest.approx(0.125) and arrows["close_call"]
    assert arrows["suspect"] == [2] and arrows["late"] == [1] and arrows["wrong"] == []

    assert (duel["version"], duel["kind"], duel["opened"]) == (v["duel_won"], "duel", v["duel"])
    assert [(c["seat"], c["label"]) for c in duel["contenders"]] == [(0, "winner"), (2, "lost")]
    assert duel["gap_ms"] == pytest.approx(5) and not duel["close_call"]
    assert duel["suspect"] == [] and duel["late"] == [2]

    assert (wrong["version"], wrong["kind"], wrong["winner"]) == (v["wrong"], "wrong", None)
    assert [(c["seat"], c["label"]) for c in wrong["contenders"]] == [(1, "wrong grab")]
    assert wrong["suspect"] == [1] and wrong["wrong"] == [1] and wrong["gap_ms"] is None

    # The same race reading as explain: each race's contenders are explain's.
    for race in data["races"]:
        assert explained(db, match.id, race["version"])["contenders"] == race["contenders"]

    reactions = {r["seat"]: r for r in data["reactions"]}
    assert reactions[0] == {
        "seat": 0,
        "player": "p0",
        "grabs": 1,
        "timed": 1,
        "median_ms": pytest.approx(150),
        "fastest_ms": pytest.approx(150),
        "suspect": 0,
    }
    assert (reactions[1]["grabs"], reactions[1]["suspect"]) == (2, 1)
    assert reactions[1]["median_ms"] == pytest.approx((240.125 + 10) / 2)
    assert reactions[1]["fastest_ms"] == pytest.approx(10)
    assert (reactions[2]["median_ms"], reactions[2]["fastest_ms"]) == (
        pytest.approx((3 + 155) / 2),
        pytest.approx(3),
    )

    lenient = disputes_json(db, match.id, "--human-limit-ms", 2)[0]
    assert lenient["counts"]["suspect"] == 0 and lenient["human_limit_ms"] == 2

    text = run(db, "disputes", match.id).output
    lines = text.splitlines()
    assert lines[0] == (
        f"Match {match.id}: 2 races, 1 close call, 2 suspect reactions, 2 late grabs, "
        "1 wrong grab, 0 refused grabs"
    )
    heads = [line for line in lines if line.startswith("v")]
    assert heads == [
        f"v{v['arrows_won']}  inward-arrows race won by seat 2 (p2)  opened by Revealed at "
        f"v{v['arrows']}  gap 0.125 ms  CLOSE CALL",
        f"v{v['duel_won']}  duel won by seat 0 (p0)  opened by Revealed at v{v['duel']}  "
        "gap 5.000 ms",
        f"v{v['wrong']}  wrong grab by seat 1 (p1)  last reveal: Revealed at v{v['duel']}",
    ]
    rows = [line for line in lines if "recv #" in line]
    assert [row.split()[0] for row in rows] == ["winner", "lost", "winner", "lost", "wrong"]
    assert ["SUSPECT" in row for row in rows] == [True, False, False, False, True]
    assert ["CLOSE CALL" in row for row in rows] == [False, True, False, False, False]
    seats = lines[lines.index(next(x for x in lines if x.startswith("Reactions per seat"))) + 1 :]
    assert seats[1].split() == [
        "seat", "1", "(p1)", "2", "grabs,", "2", "timed", "median", "125.062", "ms",
        "fastest", "10.000", "ms", "suspect", "1",
    ]  # fmt: skip


def test_js_5_1_a_close_call_between_act_calls_is_within_their_precision(
    tmp_path: Path,
) -> None:
    """Two Act calls 0.5 ms apart are a close call (an Act call's stamp waits for gRPC to
    admit it); the same gap between two grabs read on open streams is not."""
    gaps = {}
    for name, mark in (("calls", lambda s: s), ("streams", on_stream)):
        db = tmp_path / f"{name}.db"
        match = scripted_match(db, deal_for(3, {0: [INWARD]}))
        match.reveal(0, grab_stamp(10, 0))
        match.grab(2, mark(grab_stamp(11, 40)))
        match.grab(1, mark(grab_stamp(12, 40.5)))
        save(db, match)
        (data,) = disputes_json(db, match.id)
        gaps[name] = data["races"][0]["close_call"]
    assert gaps == {"calls": True, "streams": False}


def test_disputes_all_lists_every_jungle_speed_match_of_the_store(
    store: Store, tmp_path: Path
) -> None:
    """--all: one object per Jungle Speed match (a Tribes match has no races), each as
    the match alone gives it; the bots' random matches have races too."""
    arena = open_store(store.db)
    try:
        store_tribes(arena)
        more = store_match(arena, players=2, variant="ES", moves_seed=3)
    finally:
        arena.close()
    lines = disputes_json(store.db, "--all")
    wanted = {str(m.id) for m in (store.ended, store.playing, store.waiting, more)}
    assert {line["match_id"] for line in lines} == wanted
    assert all(line["game"] == "jungle_speed" for line in lines)
    for line in lines:
        assert disputes_json(store.db, line["match_id"]) == [line]
    ended = next(line for line in lines if line["match_id"] == str(store.ended.id))
    assert ended["counts"]["races"] > 0 and ended["reactions"]
    waiting = next(line for line in lines if line["match_id"] == str(store.waiting.id))
    assert waiting["races"] == [] and waiting["counts"]["races"] == 0

    text = run(store.db, "disputes", "--all").stdout
    heads = [line for line in text.splitlines() if line.startswith("Match ")]
    assert sorted(h.split(":")[0].split()[1] for h in heads) == sorted(wanted)


def test_disputes_needs_a_match_or_all_not_both(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {}))
    for args in ((), (str(match.id), "--all")):
        shown = run(db, "disputes", *args)
        assert shown.exit_code == 2
        assert "give a MATCH, or --all for every match, not both" in shown.output
