"""Grabs the server refused during a race are race evidence (docs/replay.md, "Refused
grabs in a race"): `explain`, `disputes`, the HTML page and the ruling sheet show them
among the contenders in receive order, labelled refused with their rule and reason,
timed like the others, never changing the winner (JS-4.2, JS-5.1, JS-5.3, JS-6.1); a
bundle carries them; `verify` checks their log and the receive numbers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from replay_support import Store, delete_row, open_store, stored_state, write_state
from test_replay_explain import grab_stamp, run, save, scripted_match

from domain.kernel import ReceiveStamp
from domain.kernel.refusals import Refusal, RefusalLog, refusal_log_id
from replay import explain
from replay.evidence import race_pages
from replay.source import load
from replay.step import Stepper
from tests.service.helpers import INWARD, deal_for

RATE = "seat 1 sent more than 20 commands a second; this one was not applied"
UNSEEN = "seen_version 999 is beyond the match's version: it must be a version the client has seen"


@dataclasses.dataclass
class Scene:
    db: Path
    match_id: str
    #: The version of the reveal that opened the race, and of the grab that won it.
    opened: int
    won: int


def numbered(stamp: ReceiveStamp, receive: int) -> ReceiveStamp:
    return dataclasses.replace(stamp, receive=receive)


def refusal(
    receive: int, version: int, stamp: ReceiveStamp, code: str, rule: str, why: str
) -> Refusal:
    command = "jungle_speed {grab { }}"
    data = numbered(stamp, receive).to_dict()
    return Refusal(receive, version, 1, "jungle_speed.grab", command, code, rule, why, data)


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    """An inward-arrows race (JS-6.1), its commands numbered 1 to 6 in receive order:
    #1 seat 0 reveals the arrows; #2 seat 1 grabs, refused (rate limit), 2 ms after the
    reveal reached it, received before anyone else; #3 seat 2 grabs and wins; #4 seat 1
    grabs again, refused (a version it never saw, JS-5.1); #5 seat 0 grabs late
    (JS-5.3); #6 seat 0 asks for a reveal, refused: no grab, never a contender."""
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {0: [INWARD]}))
    match.reveal(0, numbered(grab_stamp(10, 0), 1))
    opened = match.version
    first = grab_stamp(21, 30, seen=opened, sent_ms=28)
    match.grab(2, numbered(grab_stamp(22, 40, seen=opened, sent_ms=37), 3))
    won = match.version
    again = grab_stamp(23, 45, seen=999)
    match.grab(0, numbered(grab_stamp(24, 60, seen=opened, sent_ms=10), 5))
    save(db, match)
    log = RefusalLog.open(match.id, quota=5)
    log.keep(refusal(2, opened, first, "RESOURCE_EXHAUSTED", "", RATE))
    log.keep(refusal(4, won, again, "INVALID_ARGUMENT", "JS-5.1", UNSEEN))
    reveal = numbered(grab_stamp(25, 70), 6).to_dict()
    log.keep(
        Refusal(
            6,
            match.version,
            0,
            "jungle_speed.reveal",
            "reveal",
            "FAILED_PRECONDITION",
            "JS-3.1",
            "not your turn",
            reveal,
        )
    )
    arena = open_store(db)
    try:
        arena.save(*log.collect_events())
    finally:
        arena.close()
    return Scene(db, str(match.id), opened, won)


def explained(scene: Scene, source: object = None) -> dict[str, Any]:
    shown = run(scene.db, "explain", source or scene.match_id, scene.won, "--json")
    assert shown.exit_code == 0, shown.output
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def test_js_4_2_explain_shows_refused_grabs_in_receive_order_and_the_winner_stays(
    scene: Scene,
) -> None:
    data = explained(scene)
    contenders = data["contenders"]
    assert [(c["seat"], c["label"], c["receive"]) for c in contenders] == [
        (1, "refused", 2),
        (2, "winner", 3),
        (1, "refused", 4),
        (0, "lost", 5),
    ]
    assert data["race"]["winner"] == 2 and "won by seat 2 (p2)" in data["title"]
    refused, winner, unseen, _ = contenders
    # Timed like the others: the gap to the first received, the reaction, the marks.
    assert winner["gap_ms"] == pytest.approx(10.0) and unseen["gap_ms"] == pytest.approx(15.0)
    assert refused["reaction_ms"] == pytest.approx(2.0) and refused["suspect"] is True
    assert refused["version"] == scene.opened and unseen["version"] == scene.won
    assert refused["reason"] == f"RESOURCE_EXHAUSTED: {RATE}" and refused["rule"] == ""
    assert unseen["rule"] == "JS-5.1" and unseen["reason"] == f"INVALID_ARGUMENT: {UNSEEN}"
    assert data["refusals"] == {"in_evidence": True, "problems": []}

    text = run(scene.db, "explain", scene.match_id, scene.won).stdout
    lines = [line for line in text.splitlines() if line.startswith("  ") and "recv #" in line]
    assert [line.split()[0] for line in lines] == ["refused", "winner", "refused", "lost"]
    assert (
        f"REFUSED {'RESOURCE_EXHAUSTED'}: {RATE}  (refused at v{scene.opened}, recv #2" in lines[0]
    )
    assert "SUSPECT" in lines[0]
    assert f"REFUSED under JS-5.1: INVALID_ARGUMENT: {UNSEEN}" in lines[2]
    assert "A refused grab was not applied: it changes nothing in the race" in text


def test_js_5_1_disputes_counts_refused_grabs_in_the_race_and_the_reactions(scene: Scene) -> None:
    shown = run(scene.db, "disputes", scene.match_id, "--json")
    assert shown.exit_code == 0, shown.output
    (data,) = [json.loads(line) for line in shown.stdout.splitlines()]
    (race,) = data["races"]
    assert race["winner"] == 2 and race["refused"] == [1, 1] and race["gap_ms"] == pytest.approx(10)
    assert data["counts"]["refused"] == 2
    seat1 = next(s for s in data["reactions"] if s["seat"] == 1)
    assert seat1["grabs"] == 2 and seat1["timed"] == 1 and seat1["suspect"] == 1
    # A match in play: its refused grabs as the public sees them (no message).
    assert [c["reason"] for c in race["contenders"] if c["label"] == "refused"] == [
        "RESOURCE_EXHAUSTED",
        "INVALID_ARGUMENT",
    ]
    text = run(scene.db, "disputes", scene.match_id).stdout.splitlines()
    assert text[0].endswith("0 wrong grabs, 2 refused grabs")
    assert text[1].startswith(f"v{scene.won}  inward-arrows race won by seat 2 (p2)")
    assert "seat 1 (p1)" in text[2] and text[2].split()[0] == "refused"


def test_a_bundle_carries_the_refusals_bound_to_its_header(scene: Scene, tmp_path: Path) -> None:
    bundle = tmp_path / "m.jsonl"
    assert run(scene.db, "export", scene.match_id, "-o", bundle).exit_code == 0
    lines = [json.loads(line) for line in bundle.read_text().splitlines()]
    assert lines[0]["refusals"] == 4  # Opened and three records
    assert [line.get("log") for line in lines[-4:]] == ["refusals"] * 4
    assert explained(scene, bundle)["contenders"] == explained(scene)["contenders"]
    events = run(scene.db, "events", bundle).stdout
    assert events.count("REFUSED") == 3
    verified = run(scene.db, "verify", bundle)
    assert verified.exit_code == 0, verified.output
    assert (
        "refusals:        OK  receive numbers 1 to 6 each held once: 3 by applied "
        "commands, 3 by kept refusals" in verified.stdout
    )

    # A refusal line taken out, the header left as it was.
    cut = tmp_path / "cut.jsonl"
    cut.write_text(
        "".join(
            line + "\n"
            for i, line in enumerate(bundle.read_text().splitlines())
            if i != len(lines) - 2
        )
    )
    failed = run(scene.db, "verify", cut)
    assert failed.exit_code == 1
    assert "the bundle's header counts 4 refusal lines, but the bundle holds 3" in failed.stdout


def test_a_bundle_without_refusals_says_they_are_not_in_the_evidence(
    scene: Scene, tmp_path: Path
) -> None:
    bundle = tmp_path / "m.jsonl"
    assert run(scene.db, "export", scene.match_id, "-o", bundle).exit_code == 0
    kept = [json.loads(line) for line in bundle.read_text().splitlines()]
    header = {k: v for k, v in kept[0].items() if k != "refusals"}
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(line) + "\n" for line in [header, *kept[1:-4]]))
    data = explained(scene, old)
    assert [c["label"] for c in data["contenders"]] == ["winner", "lost"]
    assert data["refusals"]["in_evidence"] is False
    text = run(scene.db, "explain", old, scene.won).stdout
    assert (
        "Refused grabs: the refused commands are not in the evidence: this bundle holds "
        "the match's events only" in text
    )
    disputes = run(scene.db, "disputes", old).stdout
    assert "refused grabs: the refused commands are not in the evidence" in disputes
    verified = run(scene.db, "verify", old)
    assert verified.exit_code == 0, verified.output
    assert (
        "refusals:        not applicable  not in the evidence: the bundle holds no refused commands"
        in verified.stdout
    )


def test_verify_checks_the_refusals_of_the_store(scene: Scene) -> None:
    verified = run(scene.db, "verify", scene.match_id)
    assert verified.exit_code == 0, verified.output
    assert "refusals:        OK  receive numbers 1 to 6 each held once" in verified.stdout


def test_a_refusal_deleted_from_the_store_fails_verify(scene: Scene) -> None:
    # The log's last record (#6) has no event after it; #4's is the middle one.
    log_id = refusal_log_id(UUID(scene.match_id))
    delete_row(scene.db, log_id, 3)
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 1
    assert (
        f"refusals: FAILED version {scene.won}: receive number 4 on: the log of refused "
        "commands fails (refusal log event 3 is missing)"
    ) in " ".join(result.stdout.split())


def test_the_last_refusal_before_an_event_deleted_leaves_its_number_missing(
    scene: Scene,
) -> None:
    """A record deleted at the end of the log keeps its chain whole: the receive number
    the events go on with shows it."""
    log_id = refusal_log_id(UUID(scene.match_id))
    delete_row(scene.db, log_id, 4)  # #6, after every event: nothing shows it
    assert run(scene.db, "verify", scene.match_id).exit_code == 0
    delete_row(scene.db, log_id, 3)  # #4: the late grab #5 was received after it
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 1
    assert (
        f"receive number 4 is held by no event and no kept refusal: the command received "
        f"after version {scene.won} left no trace: its record was deleted from the store's "
        "log of refused commands, or never saved"
    ) in " ".join(result.stdout.split())


def test_an_edited_refusal_fails_verify_and_is_warned_of(scene: Scene) -> None:
    log_id = refusal_log_id(UUID(scene.match_id))
    state = stored_state(scene.db, log_id, 2)
    write_state(scene.db, log_id, 2, state.replace(b"RESOURCE_EXHAUSTED", b"INVALID_ARGUMENT__"))
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 1
    out = " ".join(result.stdout.split())
    assert "refusals: FAILED version" in out
    assert (
        "receive number 2 on: the log of refused commands fails (refusal log event 2 does "
        "not match its digest or the event before it)" in out
    )
    explain = run(scene.db, "explain", scene.match_id, scene.won)
    assert explain.exit_code == 1
    assert "warning: the log of refused commands fails: refusal log event 2" in explain.output


def test_the_html_page_and_the_ruling_sheet_show_refused_grabs(
    scene: Scene, tmp_path: Path
) -> None:
    page = tmp_path / "m.html"
    assert run(scene.db, "export", scene.match_id, "--html", "-o", page).exit_code == 0
    text = page.read_text(encoding="utf-8")
    assert text.count('data-seat="1" data-sequence="21" data-label="refused"') == 2  # won, late
    assert "refused at v" + str(scene.opened) in text
    sheet = tmp_path / "ruling.html"
    made = run(scene.db, "ruling", scene.match_id, scene.won, "-o", sheet, "--referee")
    assert made.exit_code == 0, made.output
    ruled = sheet.read_text(encoding="utf-8")
    assert ruled.count('data-label="refused"') == 2
    assert "under JS-5.1: INVALID_ARGUMENT: seen_version 999" in ruled


def test_verify_all_takes_a_refusal_log_for_no_match_and_checks_it(scene: Scene) -> None:
    """The refusal log is a stream beside its match, not a match with no log entry."""
    verified = run(scene.db, "verify", "--all")
    assert verified.exit_code == 0, verified.output
    assert "OK 1 matches verified: 1 OK, 0 failed" in verified.stdout
    delete_row(scene.db, refusal_log_id(UUID(scene.match_id)), 3)
    failed = run(scene.db, "verify", "--all")
    assert failed.exit_code == 1
    assert (
        f"FAILED match {scene.match_id}: refusals: version {scene.won}: receive number 4 on: "
        "the log of refused commands fails (refusal log event 3 is missing)"
    ) in " ".join(failed.stdout.split())


def test_the_pages_read_every_race_of_a_match_with_one_replay(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export --html` and `ruling` read the races once per match, not one replay per
    grab event (each about 35 ms): one Stepper for all, the same races `explain` reads."""
    records = load(str(store.db), str(store.ended.id)).records
    made: list[int] = []

    class Counted(Stepper):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(explain, "Stepper", Counted)
    pages = race_pages(records, None)
    assert len(made) == 1
    grabs = [v for v, race in pages.items() if race["contenders"]]
    assert len(grabs) > 5  # the ended match has many races
    for version in grabs[:3]:
        alone = explain.explain_records(records, version)[1]
        assert alone is not None
        assert pages[version]["contenders"] == alone.to_dict()["contenders"]
        assert pages[version]["title"] == alone.title
