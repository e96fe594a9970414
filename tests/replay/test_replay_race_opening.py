"""``explain`` names the event that opened a race (JS-4.7, JS-5.1) and labels each grab of
it: winner, lost, late or wrong grab (JS-4.2, JS-5.2, JS-5.3, JS-6.1).

A duel or an inward-arrows race stays open while reveals go on, as long as none of its
cards is covered (JS-4.7): the reveal right before a grab is then not the one that opened
the race, and a judge weighing what each contender "had seen" (JS-5.1) must be told the
one that did."""

from __future__ import annotations

from pathlib import Path

from test_replay_explain import explained, grab_stamp, run, save, scripted_match

from replay.explain import race_evidence
from replay.source import load
from tests.service.helpers import DECK, INWARD, deal_for, symbol

#: Versions of a scripted match of three: created, three joins, the deal; then reveals.
FIRST_REVEAL = 6


def test_js_4_7_js_5_1_a_duel_left_open_by_a_later_reveal_is_opened_by_the_earlier_one(
    tmp_path: Path,
) -> None:
    """Seats 0 and 1 show the same shape at v7; seat 2's reveal at v8 covers neither card,
    so the duel stays open (JS-4.7). Both grabs say they had seen v7: the race was opened
    by the reveal at v7, not by v8, and neither grab was sent before it (JS-5.1). A third
    grab says it had seen only v6: it was sent before the race opened."""
    db = tmp_path / "t.db"
    deal = deal_for(3, {0: [symbol(3, 0)], 1: [symbol(3, 1)], 2: [symbol(5, 0)]})
    match = scripted_match(db, deal)
    match.reveal(0, grab_stamp(10, 0))
    match.reveal(1, grab_stamp(11, 10))
    opened = match.version
    match.reveal(2, grab_stamp(12, 20))
    assert match.open_duels() == [[0, 1]]
    match.grab(1, grab_stamp(13, 300, seen=opened, sent_ms=12))
    won = match.version
    match.grab(0, grab_stamp(14, 300.5, seen=opened, sent_ms=12))
    match.grab(0, grab_stamp(15, 301, seen=opened - 1, sent_ms=11))
    save(db, match)
    assert (opened, won) == (FIRST_REVEAL + 1, FIRST_REVEAL + 3)

    data = explained(db, match.id, won)
    assert data["facts"][0] == f"race opened by the Revealed event at version {opened}"
    assert "no card of it was covered (JS-4.7)" in data["facts"][1]
    assert "JS-4.7" in data["rules"]
    assert data["race"]["opened"] == opened and data["race"]["opened_by"] == "Revealed"
    assert data["race"]["left_open_by"] == [opened + 1]
    assert [c["before_opening"] for c in data["contenders"]] == [False, False, True]
    text = run(db, "explain", match.id, won).output
    assert f"race opened by the Revealed event at version {opened}\n" in text
    assert f"still open after the reveal at version {opened + 1}:" in text
    rows = [line for line in text.splitlines() if "recv #" in line]
    assert ["SENT BEFORE THE OPENING" in row for row in rows] == [False, False, True]


def test_js_4_7_a_covered_card_closes_the_race_and_the_next_duel_opens_anew(
    tmp_path: Path,
) -> None:
    """Seat 0's card of the duel opened at v7 is covered at v9 by another card of the same
    shape: that duel is over (JS-4.7) and the one grabbed for was opened at v9."""
    db = tmp_path / "t.db"
    deal = deal_for(3, {0: [symbol(3, 0), symbol(3, 2)], 1: [symbol(3, 1)], 2: [symbol(5, 0)]})
    match = scripted_match(db, deal)
    for seat, at_ms in ((0, 0), (1, 10), (2, 20), (0, 30)):
        match.reveal(seat, grab_stamp(10 + seat, at_ms))
    covered = match.version
    assert match.open_duels() == [[0, 1]]
    match.grab(0, grab_stamp(20, 400, seen=covered))
    save(db, match)

    race = explained(db, match.id, match.version)["race"]
    assert (race["opened"], race["left_open_by"]) == (covered, [])


def test_js_6_1_js_4_7_an_arrows_race_is_opened_by_the_inward_arrows_reveal(
    tmp_path: Path,
) -> None:
    """Inward arrows revealed at v6, a symbol revealed at v7: the race stays open (JS-4.7)
    and was opened by v6 (JS-6.1)."""
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {0: [INWARD], 1: [symbol(2, 0)]}))
    match.reveal(0, grab_stamp(10, 0))
    match.reveal(1, grab_stamp(11, 10))
    match.grab(2, grab_stamp(12, 200, seen=FIRST_REVEAL))
    save(db, match)

    race = race_evidence(load(str(db), str(match.id)).records, match.version)
    assert race is not None and race.kind == "arrows"
    assert (race.opened, race.opened_by, race.left_open_by) == (
        FIRST_REVEAL,
        "Revealed",
        [FIRST_REVEAL + 1],
    )


def test_js_4_2_js_5_3_js_5_2_each_grab_is_labelled_for_what_it_was(tmp_path: Path) -> None:
    """Seat 1 wins the duel (winner, JS-4.2); seat 0, its loser, grabs after (lost); seat 1
    grabs again (late: the decision did not go against it, JS-5.3); after the next reveal
    seat 2 grabs with no race open (wrong grab, JS-5.2), labelled so and never winner."""
    db = tmp_path / "t.db"
    deal = deal_for(3, {0: [symbol(3, 0)], 1: [symbol(3, 1)], 2: [symbol(5, 0)]})
    match = scripted_match(db, deal)
    match.reveal(0, grab_stamp(10, 0))
    match.reveal(1, grab_stamp(11, 10))
    match.grab(1, grab_stamp(12, 300))
    won = match.version
    match.grab(0, grab_stamp(13, 310))
    match.grab(1, grab_stamp(14, 320))
    match.reveal(match.turn or 0, grab_stamp(15, 400))
    match.grab(2, grab_stamp(16, 500))
    wrong = match.version
    save(db, match)

    race = race_evidence(load(str(db), str(match.id)).records, won)
    assert race is not None and race.winner == 1
    assert [(c.seat, c.label) for c in race.contenders] == [
        (1, "winner"),
        (0, "lost"),
        (1, "late"),
    ]
    assert explained(db, match.id, won + 2)["contenders"] == [c.to_dict() for c in race.contenders]
    data = explained(db, match.id, wrong)
    assert [(c["seat"], c["label"]) for c in data["contenders"]] == [(2, "wrong grab")]
    assert data["race"]["kind"] == "wrong" and data["race"]["winner"] is None


def test_js_6_3_js_4_7_a_duel_by_colour_is_opened_by_the_coloured_arrows(tmp_path: Path) -> None:
    """Seats 0 and 1 show two shapes of one colour: no duel (JS-4.1). Seat 2's coloured
    arrows at v8 make colours duel (JS-6.3, ES): the duel opens there; seat 3's reveal at
    v9 covers neither card and leaves it open (JS-4.7)."""
    db = tmp_path / "t.db"
    coloured = next(c.id for c in DECK.cards if c.kind.value == "COLOURED_ARROWS")
    deal = deal_for(4, {0: [symbol(3, 0)], 1: [symbol(4, 0)], 2: [coloured], 3: [symbol(5, 1)]})
    match = scripted_match(db, deal, players=4)
    for seat in range(3):
        match.reveal(seat, grab_stamp(10 + seat, 10 * seat))
        assert bool(match.open_duels()) == (seat == 2)
    opened = match.version
    match.reveal(3, grab_stamp(13, 30))
    match.grab(1, grab_stamp(14, 300, seen=opened))
    save(db, match)

    race = explained(db, match.id, match.version)["race"]
    assert (race["opened"], race["left_open_by"]) == (opened, [opened + 1])
