"""JS-4.2a in the judge's tool: grabs of one race received within the tie window after the
first are simultaneous, the winner drawn from the match's committed randomness, and the
deciding event records every contender and the draw.

`verify` re-derives each draw once the seed is revealed and checks the contenders and
the winner at any time; the receive-number check counts every contender's number, and
a grab refused while the race was held sits between them; `explain`, `disputes`,
`events`, the HTML page and the ruling sheet show the window, each contender and the
draw, the others labelled as having lost it."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from replay_support import Stamps, forge, open_store, relog
from test_replay_explain import explained, run

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import ReceiveStamp
from domain.kernel.refusals import Refusal, RefusalLog
from domain.kernel.ties import tie_draw
from replay.audit import METADATA
from replay.jungle_speed import check_draws
from replay.refusal_check import numbers_of
from replay.source import load
from tests.service.helpers import deal_for, symbol

MS = 1_000_000
T0 = 5_000 * MS
#: The match's tie windows (JS-4.2a): 200 µs after a grab read on an open stream, 2 ms
#: after one stamped when its call was admitted.
WINDOWS = {"tie_window_us": 200, "call_tie_window_us": 2000}
#: The creator's entropy: with it the stored match's draw picks the second contender,
#: the one received 150 µs after the first (so the first received lost the draw).
ENTROPY = b"\x01"
STOP = "stopped by the referee after the tie"
#: The version of the stored tie's DuelWon: created, three joins, the deal, three reveals.
WON = 9


def stamp(sequence: int, at_ms: float, receive: int, seen: int = 0, **more: Any) -> ReceiveStamp:
    """A command read on an open stream at ``at_ms``, numbered ``receive`` in its match."""
    mono = T0 + round(at_ms * MS)
    return ReceiveStamp(
        sequence,
        mono,
        1_700_000_000_000 * MS + mono,
        seen,
        mono - 3 * MS if seen else 0,
        on_stream=True,
        receive=receive,
        **more,
    )


@dataclasses.dataclass
class Scene:
    db: Path
    match: JungleSpeed
    #: The versions of the reveal that opened the duel, of the DuelWon that decided the
    #: tie, and of the late grab after it.
    opened: int
    won: int
    late: int

    @property
    def match_id(self) -> str:
        return str(self.match.id)

    def tie(self) -> dict[str, Any]:
        """The tie as stored in the deciding event."""
        return dict(self.fields(self.won)["tie"])

    def fields(self, version: int) -> dict[str, Any]:
        records = load(str(self.db), self.match_id).records
        event = records[version - 1].event
        return {k: v for k, v in vars(event).items() if k not in METADATA}


def tie_match(entropy: bytes = ENTROPY, seed: bytes | None = None) -> JungleSpeed:
    """Seats 0 and 1 show the same shape, seat 2 another (JS-4.1): commands #1 to #3 are
    the reveals, the duel open after #2."""
    deal = deal_for(3, {0: [symbol(3, 0)], 1: [symbol(3, 1)], 2: [symbol(5, 0)]})
    options = Options(
        variant="ES", max_players=3, prearranged_deal=deal, turn_timeout_ms=0, **WINDOWS
    )
    match = JungleSpeed.create(options, seed or bytes(range(32)), entropy)
    joins = Stamps()
    for seat in range(3):
        match.join(f"p{seat}", bytes([seat]), f"hash-{seat}", joins())
    for seat in range(3):
        match.reveal(seat, stamp(10 + seat, 10 * seat, seat + 1))
    assert match.open_duels() == [[0, 1]]
    return match


def race(match: JungleSpeed) -> None:
    """#4 seat 1 grabs at 300 ms; #5 (refused, not here) at +50 µs; #6 seat 0 grabs at
    +150 µs, within the window: both held, then drawn; #7 seat 1 grabs again at 301 ms,
    late (JS-5.3)."""
    seen = match.version
    assert match.grab(1, stamp(13, 300, 4, seen)) == "held"
    assert match.grab(0, stamp(15, 300.15, 6, seen)) == "held"
    match.settle_held()
    assert match.grab(1, stamp(16, 301, 7, seen)) == "late"


def refused_grab(version: int) -> Refusal:
    """Seat 2's grab #5, refused while the race was held (at ``version``)."""
    data = stamp(14, 300.05, 5, version).to_dict()
    return Refusal(
        5,
        version,
        2,
        "jungle_speed.grab",
        "jungle_speed {grab { }}",
        "RESOURCE_EXHAUSTED",
        "",
        "seat 2 sent more than 20 commands a second; this one was not applied",
        data,
    )


def store_scene(tmp_path: Path, *, end: bool = True, refused_at: int | None = None) -> Scene:
    """The tie stored as the server stores a match, with its refusal log: the refused
    grab #5 at the version the match had while the race was held (``refused_at``: at
    another version), and the match stopped by the referee (``end``), its seed
    revealed."""
    db = tmp_path / "ties.db"
    arena = open_store(db)
    try:
        created = arena.create_match(lambda seed: tie_match(seed=seed))
        assert isinstance(created, JungleSpeed)
        match = created
        opened = match.version - 1  # seat 1's reveal; seat 2's left the duel open
        held_at = match.version
        race(match)
        won, late = held_at + 1, held_at + 2
        if end:
            match.stop(STOP)
        arena.save(match)
        log = RefusalLog.open(match.id, quota=5)
        log.keep(refused_grab(held_at if refused_at is None else refused_at))
        arena.save(*log.collect_events())
    finally:
        arena.close()
    return Scene(db, match, opened, won, late)


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    return store_scene(tmp_path)


def recorded(match: JungleSpeed) -> list[tuple[int, str, dict[str, Any]]]:
    """A match's events as ``verify`` reads them: ``(version, name, own fields)``."""
    return [
        (
            e.originator_version,
            type(e).__name__,
            {k: v for k, v in vars(e).items() if k not in METADATA},
        )
        for e in match.collect_events()
    ]


def ended_tie() -> tuple[list[tuple[int, str, dict[str, Any]]], int]:
    """The events of a tie in a match ended, not stored, and the deciding version."""
    match = tie_match()
    version = match.version + 1
    race(match)
    match.stop(STOP)
    return recorded(match), version


def tie_problems(events: list[tuple[int, str, dict[str, Any]]]) -> list[tuple[int, str]]:
    problems, _ = check_draws(events)
    return [(v, reason) for v, reason in problems if "JS-4.2a" in reason]


# ---- the scene -----------------------------------------------------------------------


def test_js_4_2a_the_scene_is_a_tie_whose_second_contender_was_drawn(scene: Scene) -> None:
    """What the other tests rely on: the event at ``won`` decided a tie of seats 1 and 0
    (receive order), the draw is the match's, and it picked the second received."""
    assert (scene.opened, scene.won, scene.late) == (WON - 2, WON, WON + 1)
    tie = scene.tie()
    assert [(c["seat"], c["stamp"]["receive"]) for c in tie["contenders"]] == [(1, 4), (0, 6)]
    drawn = tie_draw(scene.match.effective_seed(), "jungle_speed", scene.won, 2)
    assert tie["drawn"] == drawn == 1
    won = scene.fields(scene.won)
    assert (won["winner"], won["losers"]) == (0, [1])


# ---- verify: the draw, the contenders, the winner (JS-4.2a) ---------------------------


def test_js_4_2a_verify_re_derives_the_draw_of_a_tie(scene: Scene) -> None:
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 0, result.output
    assert "random draws:    OK" in result.stdout
    assert (
        "1 tie (JS-4.2a): each draw re-derived from the revealed seed, its winner the "
        "contender drawn" in result.stdout
    )


def test_js_4_2a_a_draw_forged_with_its_winner_fails_verify_citing_the_rule(
    scene: Scene,
) -> None:
    """The whole decision rewritten to the other contender (drawn, winner, loser and the
    winner's stamp agreeing) and the chain and the log rewritten after it: only the
    draw, re-derived from the seed, shows it."""
    tie = scene.tie()
    other = 1 - tie["drawn"]
    chosen = tie["contenders"][other]
    forged = dict(tie, drawn=other)
    forge(
        scene.db,
        UUID(scene.match_id),
        scene.won,
        tie=forged,
        winner=chosen["seat"],
        losers=[tie["contenders"][tie["drawn"]]["seat"]],
        stamp=chosen["stamp"],
    )
    relog(scene.db, UUID(scene.match_id))
    result = run(scene.db, "verify", scene.match_id, "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["checks"]["chain"]["status"] == "ok"
    draws = report["checks"]["random draws"]
    assert draws["status"] == "failed"
    assert draws["detail"] == (
        f"version {scene.won}: JS-4.2a: the draw is not the one re-derived from the revealed "
        f"seed: the tie records contender 0 (seat 1) drawn, the stream "
        f"jungle_speed/tie/{scene.won} gives contender 1 (seat 0) of 2"
    )
    assert report["first_bad_version"] == scene.won


def test_js_4_2a_a_tampered_drawn_index_fails_verify(scene: Scene) -> None:
    """Only ``drawn`` rewritten (the chain after it too): the winner the event names is
    no longer the contender drawn, and the draw is not the seed's."""
    tie = scene.tie()
    forge(scene.db, UUID(scene.match_id), scene.won, tie=dict(tie, drawn=0))
    relog(scene.db, UUID(scene.match_id))
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 1
    out = " ".join(result.stdout.split())
    assert f"FAILED match {scene.match_id}: first bad version {scene.won}:" in out
    assert "JS-4.2a: the contender drawn, 0, is seat 1, but DuelWon names seat 0 the winner" in out
    assert "JS-4.2a: the draw is not the one re-derived from the revealed seed" in out
    # Every command showing the match warns of it.
    shown = run(scene.db, "explain", scene.match_id, scene.won)
    assert shown.exit_code == 1
    assert f"fails verification at version {scene.won}: JS-4.2a" in shown.output


def _reorder(tie: dict[str, Any]) -> None:
    tie["contenders"].reverse()
    tie["drawn"] = 1 - tie["drawn"]


def _outside(tie: dict[str, Any]) -> None:
    tie["contenders"][1]["stamp"]["monotonic_ns"] += 60_000  # 210 µs after the first


def _two_instances(tie: dict[str, Any]) -> None:
    tie["contenders"][1]["stamp"]["instance"] = "b"


def _same_seat(tie: dict[str, Any]) -> None:
    tie["contenders"][0]["seat"] = tie["contenders"][1]["seat"]


def _wider(tie: dict[str, Any]) -> None:
    tie["window_us"] = 1000


def _winner_stamp(tie: dict[str, Any]) -> None:
    tie["contenders"][tie["drawn"]]["stamp"]["sequence"] += 100


def _alone(tie: dict[str, Any]) -> None:
    del tie["contenders"][0]
    tie["drawn"] = 0


def _unreadable(tie: dict[str, Any]) -> None:
    tie["drawn"] = "first"


TAMPERED = {
    "not in receive order": (
        _reorder,
        "JS-4.2a: the contenders are not in receive order: contender 1 (recv #13, in match "
        "#4) was received before contender 0 (recv #15, in match #6)",
    ),
    "outside the window": (
        _outside,
        "JS-4.2a: contender 1 was received 210 µs after the first, outside the tie window of "
        "200 µs: not simultaneous with it",
    ),
    "another instance": (
        _two_instances,
        "JS-4.2a: contender 1 was received by server instance 'b', the first by '': stamps "
        "of two instances are never simultaneous",
    ),
    "one seat twice": (_same_seat, "JS-4.2a: seat 0 is a contender of the tie twice"),
    "a window not the options'": (
        _wider,
        "JS-4.2a: the tie applies a window of 1000 µs, but the match's options give 200 µs "
        "after a first grab read on an open stream",
    ),
    "the winner's stamp": (
        _winner_stamp,
        "JS-4.2a: the winner's receive stamp in DuelWon is not the stamp of the contender drawn, 1",
    ),
    "a tie of one": (_alone, "JS-4.2a: DuelWon records a tie of 1 contender: a tie has two"),
    "unreadable": (
        _unreadable,
        "JS-4.2a: the tie DuelWon records cannot be read: its drawn index 'first' is not a number",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_js_4_2a_a_tie_that_is_not_simultaneous_or_not_its_winners_fails(case: str) -> None:
    events, version = ended_tie()
    assert tie_problems(events) == []
    tamper, reason = TAMPERED[case]
    at = version - 1
    fields = copy.deepcopy(events[at][2])
    tamper(fields["tie"])
    events[at] = (version, "DuelWon", fields)
    found = tie_problems(events)
    assert found and found[0][0] == version
    assert any(r.startswith(reason) for _, r in found), found


def test_js_4_2a_while_the_seed_is_secret_the_draw_cannot_be_checked_yet(
    tmp_path: Path,
) -> None:
    scene = store_scene(tmp_path, end=False)
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 0, result.output
    assert "random draws:    not applicable  the seed is not revealed" in result.stdout
    assert (
        "1 tie (JS-4.2a): contenders and winner checked; the draw of the winner cannot be "
        "re-derived until the seed is revealed at the end" in result.stdout
    )


def test_js_4_2a_before_the_end_the_contenders_and_the_winner_are_still_checked() -> None:
    """The seed is secret, so the draw waits; a winner that is not the contender drawn
    does not."""
    match = tie_match()
    version = match.version + 1
    race(match)
    events = recorded(match)
    assert events[-1][1] == "LateGrab"
    fields = copy.deepcopy(events[version - 1][2])
    fields["tie"]["drawn"] = 1 - fields["tie"]["drawn"]
    events[version - 1] = (version, "DuelWon", fields)
    problems, notes = check_draws(events)
    assert problems == [
        (version, "JS-4.2a: the contender drawn, 0, is seat 1, but DuelWon names seat 0 the winner")
    ]
    assert "seed not revealed yet: the draws cannot be re-derived until the end" in notes


# ---- the receive numbers (docs/audit.md, "Refused commands") --------------------------


def test_js_4_2a_every_contenders_receive_number_is_held_by_the_tie(scene: Scene) -> None:
    records = load(str(scene.db), scene.match_id).records
    base, held = numbers_of(records)
    assert base == 0
    assert {n: v for n, v in held.items() if v == scene.won} == {4: scene.won, 6: scene.won}
    assert sorted(held) == [1, 2, 3, 4, 6, 7]


def test_js_4_2a_a_grab_refused_while_the_race_was_held_sits_between_the_contenders(
    scene: Scene,
) -> None:
    """#5 was refused at the version before the tie's, while #4 was held: the numbers
    check accepts it, and holds every number once."""
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 0, result.output
    assert (
        "refusals:        OK  receive numbers 1 to 7 each held once: 6 by applied commands, "
        "1 by kept refusals" in result.stdout
    )


def test_js_4_2a_a_refusal_after_the_tie_was_decided_is_still_out_of_place(
    tmp_path: Path,
) -> None:
    """The same refusal recorded at the tie's own version came after the race was
    decided: a number below #6 is then out of its place."""
    scene = store_scene(tmp_path, refused_at=WON)
    assert scene.won == WON
    result = run(scene.db, "verify", scene.match_id)
    assert result.exit_code == 1
    assert (
        f"receive number 5 was refused at version {scene.won}, but the event at version "
        f"{scene.won} holds number 6: the refusal is out of its place among the events"
    ) in " ".join(result.stdout.split())


# ---- explain, disputes, events, the pages ---------------------------------------------


def test_js_4_2a_explain_shows_the_tie_and_its_draw(scene: Scene) -> None:
    data = explained(scene.db, scene.match_id, scene.won)
    assert "duel won by seat 0 (p0)" in data["title"]
    assert data["rules"][:3] == ["JS-4.1", "JS-4.2", "JS-4.2a"]
    tie = data["race"]["tie"]
    assert (tie["window_us"], tie["drawn"], tie["winner"]) == (200, 1, 0)
    assert [
        (c["index"], c["seat"], c["target"], c["receive"], c["after_first_us"], c["drawn"])
        for c in tie["contenders"]
    ] == [(0, 1, "default", 4, 0, False), (1, 0, "default", 6, 150, True)]
    # In receive order: the tie's first, the grab refused meanwhile, the drawn, the late.
    contenders = data["contenders"]
    assert [(c["seat"], c["label"], c["receive"], c["tie_index"]) for c in contenders] == [
        (1, "lost draw", 4, 0),
        (2, "refused", 5, None),
        (0, "winner", 6, 1),
        (1, "lost", 7, None),
    ]
    assert [c["gap_ms"] for c in contenders] == pytest.approx([0, 0.05, 0.15, 1])
    facts = data["facts"]
    assert (
        "JS-4.2a: 2 grabs received within the tie window of 200 µs after the first were "
        "simultaneous; the winner was drawn from the match's committed randomness: "
        "contender 1 of 2 (in receive order, from 0), seat 0 (p0)" in facts
    )
    assert (
        "tie contender 0: seat 1 (p1), target default, recv #13, in match #4, +0 µs after "
        "the first: lost the draw (JS-4.2a)" in facts
    )
    assert (
        "tie contender 1: seat 0 (p0), target default, recv #15, in match #6, +150 µs after "
        "the first: drawn: the winner" in facts
    )
    # The late grab belongs to the same race: the same reading.
    assert explained(scene.db, scene.match_id, scene.late)["race"]["tie"] == tie

    text = run(scene.db, "explain", scene.match_id, scene.won).stdout
    rows = [line for line in text.splitlines() if line.startswith("  ") and " recv #" in line]
    rows = [row for row in rows if not row.startswith("  - ")]  # the facts
    assert [row.split()[0] for row in rows] == ["lost", "refused", "winner", "lost"]
    assert "LOST THE DRAW (JS-4.2a, tie contender 0)" in rows[0]
    assert "DRAWN (JS-4.2a, tie contender 1)" in rows[2]
    assert "JS-4.2a" not in rows[3]
    assert "Simultaneous grabs (JS-4.2a):" in text
    assert "whose winner was drawn among the simultaneous grabs applied (JS-4.2a)" in text


def test_js_4_2a_a_race_won_alone_shows_no_tie(tmp_path: Path) -> None:
    """The fields a tie adds are there, empty, for a race the first grab won alone."""
    db = tmp_path / "alone.db"
    arena = open_store(db)
    try:
        created = arena.create_match(lambda seed: tie_match(seed=seed))
        assert isinstance(created, JungleSpeed)
        seen = created.version
        assert created.grab(1, stamp(13, 300, 4, seen)) == "held"
        created.settle_held()
        arena.save(created)
    finally:
        arena.close()
    data = explained(db, created.id, created.version)
    assert data["race"]["tie"] is None and "JS-4.2a" not in data["rules"]
    assert [(c["label"], c["tie_index"]) for c in data["contenders"]] == [("winner", None)]


def test_js_4_2a_disputes_names_the_drawn_winner_and_the_tie(scene: Scene) -> None:
    shown = run(scene.db, "disputes", scene.match_id, "--json")
    assert shown.exit_code == 0, shown.output
    (data,) = [json.loads(line) for line in shown.stdout.splitlines()]
    (entry,) = data["races"]
    assert entry["winner"] == 0 and entry["lost_draw"] == [1] and entry["refused"] == [2]
    assert entry["tie"]["drawn"] == 1 and entry["tie"]["window_us"] == 200
    assert sum(1 for race in data["races"] if race["tie"] is not None) == 1
    lines = run(scene.db, "disputes", scene.match_id).stdout.splitlines()
    assert lines[0].endswith("1 refused grab, 1 tie drawn (JS-4.2a)")
    # The head names the winner drawn, not the first grab received, which lost the draw.
    assert lines[1].startswith(f"v{scene.won}  duel won by seat 0 (p0)")
    assert lines[1].endswith("TIE drawn (JS-4.2a)")
    assert lines[2] == (
        "  tie (JS-4.2a): 2 simultaneous grabs within 200 µs, contender 1 drawn from the "
        "match's committed randomness; the others lost the draw"
    )
    assert "tie contender 0: seat 1 (p1)" in lines[3] and "lost the draw (JS-4.2a)" in lines[3]


def test_js_4_2a_events_show_the_window_each_contender_and_the_draw(scene: Scene) -> None:
    text = run(scene.db, "events", scene.match_id).stdout
    (line,) = [row for row in text.splitlines() if row.startswith(f"{scene.won:>5}  ")]
    assert (
        "seat 0 (p0) wins the duel against seat 1 (p1); JS-4.2a tie within 200 µs, "
        "contender 1 of 2 drawn: seat 1 (p1) (target default, in match #4) +0 µs: lost the "
        "draw; seat 0 (p0) (target default, in match #6) +150 µs: drawn [recv #15, in match #6]"
    ) in line
    lines = [
        json.loads(row)
        for row in run(scene.db, "events", scene.match_id, "--json").stdout.splitlines()
    ]
    (won,) = [row for row in lines if row.get("version") == scene.won]
    assert won["view"]["tie"] == scene.tie()


def test_js_4_2a_the_html_page_and_the_ruling_sheet_show_the_tie(
    scene: Scene, tmp_path: Path
) -> None:
    page = tmp_path / "m.html"
    made = run(scene.db, "export", scene.match_id, "--html", "-o", page)
    assert made.exit_code == 0, made.output
    text = page.read_text(encoding="utf-8")
    # The race shows at the tie's version and at the late grab's: twice.
    assert text.count('<div class="tie" data-drawn="1" data-winner="0">') == 2
    assert text.count('data-tie-index="0" data-seat="1" data-drawn="false"') == 2
    assert text.count('data-tie-index="1" data-seat="0" data-drawn="true"') == 2
    assert "window of 200 µs after the first; contender 1 of 2" in text
    assert text.count('data-seat="1" data-sequence="13" data-label="lost draw"') == 2
    assert "+150 µs" in text
    sheet = tmp_path / "ruling.html"
    made = run(scene.db, "ruling", scene.match_id, scene.won, "-o", sheet)
    assert made.exit_code == 0, made.output
    ruled = sheet.read_text(encoding="utf-8")
    assert ruled.count('<div class="tie"') == 1
    assert '<strong class="lost-draw">lost the draw</strong> (JS-4.2a, contender 0)' in ruled
