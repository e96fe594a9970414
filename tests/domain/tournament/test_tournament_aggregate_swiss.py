"""A whole Swiss tournament driven through the aggregate: eight entrants, three rounds,
two disputes (one ruled "stands", one "replace result"), the result sheet, and standings
recomputed by anyone from the events alone (TO-8 to TO-11)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from tournament_support import (
    REFEREE,
    WINDOW_MS,
    events_named,
    finish,
    new_tournament,
    replayed,
    start,
    token_hash,
)

from domain.kernel.chain import first_broken_link
from domain.tournament import (
    Format,
    MatchResult,
    Penalty,
    ReplaceResult,
    ReplaceWith,
    Stands,
    TieBreak,
    Tournament,
    standings,
)
from domain.tournament.aggregate import standing_fields
from domain.tournament.sheet import recompute_standings, verify

EIGHT = list("ABCDEFGH")


def played_swiss() -> tuple[Tournament, dict[str, Any]]:
    """The tournament of this module, played to its end; and what the test noted on the
    way (match ids, dispute numbers)."""
    t = new_tournament(Format.SWISS, EIGHT, rounds=3)
    noted: dict[str, Any] = {}

    # Round 1: the top half meets the bottom half; H beats D.
    r1, ids1 = start(t, 0)
    assert [x.seats for x in r1.tables] == [("A", "E"), ("B", "F"), ("C", "G"), ("D", "H")]
    finish(t, 1_000, {ids1[3]: "H"})
    # D disputes the match D-H at a position; the result stands.
    noted["stands"] = t.file_dispute("D", ids1[3], 12, "H moved twice at version 12", 2_000)
    assert [d.number for d in t.open_disputes()] == [noted["stands"]]
    t.rule(REFEREE, noted["stands"], Stands(), "the log shows one move per turn", 3_000)

    # Round 2, once round 1's window has closed: H beats B at first.
    r2, ids2 = start(t, 1_000 + WINDOW_MS)
    assert [x.seats for x in r2.tables] == [("A", "C"), ("H", "B"), ("F", "D"), ("E", "G")]
    finish(t, 70_000)
    # B disputes the result of H-B; the referee gives B the win.
    noted["replace"] = t.file_dispute("B", ids2[1], 0, "H's last move came after time", 71_000)
    t.rule(
        REFEREE,
        noted["replace"],
        ReplaceWith({"H": 2, "B": 1}),
        "the clock shows H's last move late: B wins on time",
        72_000,
    )
    noted["ids"] = [ids1, ids2]

    # Round 3: the ruling counts; A and B lead on 2 points and meet.
    r3, ids3 = start(t, 70_000 + WINDOW_MS)
    assert r3.tables[0].seats == ("B", "A")  # B has sat first less often (TO-3.3)
    finish(t, 140_000, {ids3[0]: "B"})
    noted["ids"].append(ids3)
    t.end(140_000 + WINDOW_MS)
    return t, noted


def test_to_9_2_each_round_records_its_pairing_reasons_and_match_ids() -> None:
    t, noted = played_swiss()
    started = events_named(t, "RoundStarted")
    assert [e.round for e in started] == [1, 2, 3]
    for evt, ids in zip(started, noted["ids"], strict=True):
        assert [table["match_id"] for table in evt.tables] == ids
        assert all(table["reason"].startswith("Swiss: ") for table in evt.tables)
        assert evt.byes == []
        assert evt.duplicate_seed == ""
    assert started[0].tables[0] == {
        "table": 1,
        "seats": ["A", "E"],
        "reason": "Swiss: score group 0 points, top half against bottom half",
        "match_id": noted["ids"][0][0],
    }
    # The field and the rounds were fixed by the first round (TO-8.5).
    (fixed,) = events_named(t, "FieldFixed")
    assert (fixed.entrants, fixed.rounds) == (EIGHT, 3)


def test_to_9_5_a_round_ends_with_its_last_result_and_opens_its_dispute_window() -> None:
    t, _ = played_swiss()
    ended = events_named(t, "RoundEnded")
    assert [(e.round, e.ended_ms, e.dispute_deadline_ms) for e in ended] == [
        (1, 1_000, 1_000 + WINDOW_MS),
        (2, 70_000, 70_000 + WINDOW_MS),
        (3, 140_000, 140_000 + WINDOW_MS),
    ]
    names = [type(e).__name__ for e in t.pending_events]
    # Each round's RoundEnded follows its last ResultRecorded at once.
    for i, name in enumerate(names):
        if name == "RoundEnded":
            assert names[i - 1] == "ResultRecorded"


def test_to_10_4_each_ruling_is_an_event_with_the_judge_and_the_reason() -> None:
    t, noted = played_swiss()
    stands, replaced = events_named(t, "Ruled")
    assert (stands.dispute, stands.judge, stands.kind, stands.reason) == (
        noted["stands"],
        REFEREE,
        "stands",
        "the log shows one move per turn",
    )
    assert (replaced.kind, replaced.round, replaced.table) == ("replace-result", 2, 2)
    assert (replaced.places, replaced.forfeited) == ([2, 1], [])
    assert t.open_disputes() == []
    filed = events_named(t, "DisputeFiled")
    assert [(d.entrant, d.round, d.table, d.version) for d in filed] == [
        ("D", 1, 4, 12),
        ("B", 2, 2, 0),
    ]
    # The replaced result is the one the standings read; the recorded one is unchanged.
    assert t.rulings() == [
        ReplaceResult(
            2, 2, (2, 1), frozenset(), "the clock shows H's last move late: B wins on time"
        )
    ]
    assert t.round_state(2).tables[1].result == MatchResult(2, 2, ("H", "B"), (1, 2))


def test_to_7_1_the_standings_follow_the_results_and_rulings() -> None:
    t, _ = played_swiss()
    rows = t.standings()
    assert [(r.entrant, r.points) for r in rows[:2]] == [("B", Fraction(3)), ("A", Fraction(2))]
    assert {r.entrant: r.points for r in rows}["H"] == Fraction(1)
    assert sum(r.points for r in rows) == 12  # three rounds of four tables, one point each
    # After round 2 (the ruling included), A and B lead on 2 points.
    after_two = t.standings(through_round=2)
    assert [(r.entrant, r.points) for r in after_two[:2]] == [("A", 2), ("B", 2)]


def test_to_7_6_each_row_names_what_put_it_ahead_of_the_next() -> None:
    t, _ = played_swiss()
    rows = t.standings()
    assert rows[0].separated_by is TieBreak.POINTS
    assert rows[-1].separated_by is None
    sheet = events_named(t, "TournamentEnded")[0].standings
    assert [row["separated_by"] for row in sheet] == [
        r.separated_by.value if r.separated_by else None for r in rows
    ]


def test_to_10_4_standings_recomputed_from_a_fresh_replay_equal_the_aggregates() -> None:
    t, _ = played_swiss()
    fresh = replayed(t)
    assert fresh.standings() == t.standings()
    for r in (1, 2, 3):
        assert fresh.standings(r) == t.standings(r)
    assert recompute_standings(t.pending_events) == t.standings()
    assert fresh.digest == t.digest and fresh.version == t.version


def test_to_10_4_anyone_recomputes_the_standings_from_the_events_fields_alone() -> None:
    """Without the aggregate: the field, each result and each ruling read off the events
    and handed to the standings function."""
    t, _ = played_swiss()
    (fixed,) = events_named(t, "FieldFixed")
    created = t.pending_events[0]
    results = [
        MatchResult(e.round, e.table, tuple(e.seats), tuple(e.places), frozenset(e.forfeited))
        for e in events_named(t, "ResultRecorded")
    ]
    results += [
        MatchResult.bye(e.round, b["entrant"])
        for e in events_named(t, "RoundStarted")
        for b in e.byes
    ]
    rulings: list[Any] = []
    for e in events_named(t, "Ruled"):
        if e.kind == "replace-result":
            rulings.append(ReplaceResult(e.round, e.table, tuple(e.places), frozenset(e.forfeited)))
        elif e.kind == "penalty":
            rulings.append(Penalty(e.round, e.entrant, Fraction(e.points)))
    rows = standings(
        fixed.entrants, results, rulings, tuple(TieBreak(x) for x in created.tie_breaks)
    )
    assert [(r.entrant, r.points, r.buchholz, r.separated_by) for r in rows] == [
        (r.entrant, r.points, r.buchholz, r.separated_by) for r in t.standings()
    ]


def test_to_11_2_the_result_sheet_lists_standings_matches_rulings_and_the_seed() -> None:
    t, noted = played_swiss()
    (sheet,) = events_named(t, "TournamentEnded")
    assert sheet is t.pending_events[-1]
    assert sheet.standings == [standing_fields(r) for r in t.standings()]
    assert sheet.standings[0] | {"points": "3"} == sheet.standings[0]
    every = [m for ids in noted["ids"] for m in ids]
    assert [m["match_id"] for m in sheet.matches] == every
    assert all(len(m["digest"]) == 64 and m["version"] == 40 for m in sheet.matches)
    assert [r["kind"] for r in sheet.rulings] == ["stands", "replace-result"]
    assert sheet.seed == bytes(range(32)).hex()
    assert (sheet.signature, sheet.public_key) == ("", "")  # no signer given
    assert first_broken_link(t.pending_events) is None
    assert verify(t.pending_events) == []


def test_to_8_2_an_entrant_is_known_by_their_token_hash_only() -> None:
    t, _ = played_swiss()
    assert t.entrant_of(token_hash("C")) == "C"
    assert t.referee_of(token_hash(REFEREE)) == REFEREE
    assert t.entrant_of(token_hash(REFEREE)) is None
    added = events_named(t, "EntrantAdded")
    assert [(e.entrant, e.token_hash) for e in added] == [(n, token_hash(n)) for n in EIGHT]
    # No event holds anything but the hash of a token.
    for evt in t.pending_events:
        assert "token" not in {k for k in vars(evt) if not k.endswith("token_hash")}
