"""Round robin and single elimination through the aggregate, with byes, withdrawals,
no-shows, a replay and a penalty (TO-8.4, TO-8.5, TO-9.3, TO-9.4, TO-10.3)."""

from __future__ import annotations

from fractions import Fraction
from uuid import NAMESPACE_URL, uuid5

from tournament_support import (
    NO_SHOW_MS,
    REFEREE,
    WINDOW_MS,
    events_named,
    finish,
    match_digest,
    new_tournament,
    refused_by,
    replayed,
    start,
)

from domain.tournament import (
    Format,
    MatchResult,
    Penalise,
    ReplaceWith,
    ReplayFrom,
    TieBreak,
)
from domain.tournament.sheet import verify


def test_to_2_4_round_robin_of_five_with_a_withdrawal_during_a_round() -> None:
    t = new_tournament(Format.ROUND_ROBIN, list("ABCDE"))
    assert t.total_rounds() == 5
    r1, _ = start(t, 0)
    assert [x.seats for x in r1.tables] == [("B", "E"), ("C", "D")]
    assert [b.entrant for b in r1.byes] == ["A"]
    finish(t, 100)
    # A bye is recorded with the round, and scores as a win (TO-5.3).
    assert t.results()[0] == MatchResult.bye(1, "A")
    now = 100 + WINDOW_MS
    r2, _ids2 = start(t, now)
    assert [x.seats for x in r2.tables] == [("C", "A"), ("D", "E")]
    # E withdraws while seated at D-E, which has no result: E forfeits it (TO-8.4).
    t.withdraw("E", now + 10)
    (withdrew,) = events_named(t, "Withdrew")
    assert (withdrew.entrant, withdrew.first_missed, withdrew.table) == ("E", 3, 2)
    finish(t, now + 100)
    d_e = t.round_state(2).tables[1]
    # Only D played: decided without a match, E placed last (TO-9.4).
    assert d_e.result == MatchResult(2, 2, ("D", "E"), (1, 2), frozenset({"E"}))
    assert (d_e.digest, d_e.version) == ("", 0)
    now += 100 + WINDOW_MS
    r3, _ = start(t, now)
    assert [x.seats for x in r3.tables] == [("D", "B")]
    assert [(b.entrant, b.reason) for b in r3.byes] == [
        ("C", "bye: round robin, odd number of entrants, this entrant's turn to sit out"),
        ("A", "bye: round robin, opponent E withdrew"),
    ]
    for _ in range(3, 6):
        finish(t, now + 100)
        now += 100 + WINDOW_MS
        if len(t.round_states) < 5:
            start(t, now)
    t.end(now)
    seated = {e for s in t.round_states[2:] for x in s.tables for e in x.seats}
    assert "E" not in seated
    rows = t.standings()
    assert [r.entrant for r in rows if r.withdrawn] == ["E"]
    assert replayed(t).standings() == rows
    assert verify(t.pending_events) == []


def test_to_4_4_single_elimination_with_byes_and_a_withdrawal_between_rounds() -> None:
    t = new_tournament(Format.SINGLE_ELIMINATION, list("ABCDEF"))
    assert t.total_rounds() == 3
    r1, ids1 = start(t, 0)
    assert [x.seats for x in r1.tables] == [("D", "E"), ("C", "F")]
    assert [b.entrant for b in r1.byes] == ["A", "B"]
    finish(t, 100, {ids1[1]: "F"})
    # D won, then withdraws before round 2: A, who was to meet D, goes on with a bye.
    t.withdraw("D", 200)
    r2, ids2 = start(t, 100 + WINDOW_MS)
    assert [x.seats for x in r2.tables] == [("B", "F")]
    assert [(b.entrant, b.reason) for b in r2.byes] == [
        ("A", "bye: no opponent in round 2, the one due withdrew")
    ]
    finish(t, 200 + WINDOW_MS, {ids2[0]: "F"})
    r3, _ids3 = start(t, 200 + 2 * WINDOW_MS)
    assert [x.seats for x in r3.tables] == [("A", "F")]
    finish(t, 300 + 2 * WINDOW_MS)
    t.end(300 + 3 * WINDOW_MS)
    rows = t.standings()
    assert rows[0].entrant == "A"
    assert {r.entrant for r in rows if r.withdrawn} == {"D"}
    assert verify(t.pending_events) == []


def test_to_8_5_an_entrant_withdrawn_before_the_first_round_is_not_in_the_field() -> None:
    t = new_tournament(Format.SINGLE_ELIMINATION, list("ABCDE"))
    t.withdraw("C", 0)
    assert t.field() == ["A", "B", "D", "E"]
    r1, _ = start(t, 10)
    assert [x.seats for x in r1.tables] == [("A", "E"), ("B", "D")]
    assert t.total_rounds() == 2
    assert [r.entrant for r in t.standings()] == ["A", "B", "D", "E"]


def test_to_9_3_a_no_show_at_the_start_deadline_forfeits_the_table() -> None:
    """Three seats a table: the two present play their match; the absent one is last."""
    t = new_tournament(Format.SWISS, list("ABCDEF"), table_size=3, rounds=1)
    r1, ids = start(t, 1_000)
    assert [x.seats for x in r1.tables] == [("A", "B", "C"), ("D", "E", "F")]
    assert t.round_state(1).no_show_deadline_ms == 1_000 + NO_SHOW_MS
    assert t.next_round_due_ms() is None
    t.record_no_show("B", 1_000 + NO_SHOW_MS)
    (absent,) = events_named(t, "NoShow")
    assert (absent.round, absent.table, absent.entrant) == (1, 1, "B")
    t.record_result(ids[0], {"C": 1, "A": 2}, match_digest(ids[0]), 33, 50_000)
    first = t.round_state(1).tables[0].result
    assert first == MatchResult(1, 1, ("A", "B", "C"), (2, 3, 1), frozenset({"B"}))
    finish(t, 60_000)
    points = {r.entrant: r.points for r in t.standings()}
    assert (points["C"], points["A"], points["B"]) == (1, Fraction(1, 2), 0)


def test_to_9_4_a_table_with_nobody_present_is_decided_without_a_match() -> None:
    t = new_tournament(Format.SWISS, list("ABCD"), rounds=1)
    _, ids = start(t, 0)
    for who in ("A", "C"):
        t.record_no_show(who, NO_SHOW_MS)
    t.record_result(ids[0], {}, "", 0, NO_SHOW_MS + 1)
    both = t.round_state(1).tables[0].result
    assert both is not None and both.forfeited == frozenset({"A", "C"})
    assert {r.entrant: r.points for r in t.standings()}["A"] == 0


def test_to_10_3_a_replay_voids_the_result_and_reopens_the_round() -> None:
    t = new_tournament(Format.SWISS, list("ABCD"), rounds=2)
    _, ids = start(t, 0)
    finish(t, 100)
    first = t.file_dispute("C", ids[0], 7, "the wrong card was dealt at version 7", 200)
    t.rule(REFEREE, first, ReplaceWith({"A": 2, "C": 1}), "C's reveal stands", 300)
    second = t.file_dispute("A", ids[0], 5, "the reveal at version 5 was late", 400)
    fork = str(uuid5(NAMESPACE_URL, "/fork/1"))
    t.rule(REFEREE, second, ReplayFrom(5, fork), "play on from before the late reveal", 500)
    table = t.round_state(1).tables[0]
    assert (table.match_id, table.result) == (fork, None)
    assert table.voided == [{"match_id": ids[0], "digest": match_digest(ids[0]), "version": 40}]
    assert not t.round_state(1).ended
    # The earlier replacement of that table is void with it.
    assert t.rulings() == []
    assert t.start_refusal(10**9) is not None
    t.record_result(fork, {"A": 1, "C": 2}, match_digest(fork), 52, 900)
    ended = events_named(t, "RoundEnded")
    assert [(e.round, e.ended_ms) for e in ended] == [(1, 100), (1, 900)]
    start(t, 900 + WINDOW_MS)
    finish(t, 1_000 + WINDOW_MS)
    t.end(1_000 + 2 * WINDOW_MS)
    (sheet,) = events_named(t, "TournamentEnded")
    assert sheet.matches[0]["match_id"] == fork
    assert sheet.matches[0]["voided"][0]["match_id"] == ids[0]
    assert replayed(t).standings() == t.standings()
    assert verify(t.pending_events) == []


def test_to_6_2_a_penalty_ruling_takes_points_off() -> None:
    t = new_tournament(Format.SWISS, list("ABCD"), rounds=1, tie_breaks=[TieBreak.BUCHHOLZ])
    _, ids = start(t, 0)
    finish(t, 100)
    d = t.file_dispute("C", ids[0], 3, "A was coached during the match", 200)
    t.rule(REFEREE, d, Penalise("A", Fraction(1, 2)), "coaching seen by the referee", 300)
    (ruled,) = events_named(t, "Ruled")
    assert (ruled.kind, ruled.entrant, ruled.points) == ("penalty", "A", "1/2")
    assert {r.entrant: r.points for r in t.standings()}["A"] == Fraction(1, 2)


def test_to_9_3_taking_a_seat_is_recorded_once_and_is_no_absence() -> None:
    """Each entrant's coming is an event (``Arrived``), recorded once; who came is
    never recorded absent, who did not is, at the deadline."""
    t = new_tournament(Format.SWISS, list("ABCD"), rounds=1)
    start(t, 0)
    assert t.arrive("C", 10) is True
    assert t.arrive("C", 11) is False
    assert [e.entrant for e in events_named(t, "Arrived")] == ["C"]
    assert t.round_state(1).tables[0].arrived == ["C"]
    refused_by(t, "TO-9.3", t.record_no_show, "C", NO_SHOW_MS)
    t.record_no_show("A", NO_SHOW_MS)
    refused_by(t, "TO-9.3", t.arrive, "A", NO_SHOW_MS + 1)
    assert replayed(t).round_state(1).tables[0].arrived == ["C"]


def test_to_9_2_nobody_takes_a_seat_outside_a_round_under_way() -> None:
    t = new_tournament(Format.SWISS, list("ABC"), rounds=1)
    refused_by(t, "TO-9.2", t.arrive, "A", 0)
    r1, _ = start(t, 0)
    (bye,) = r1.byes
    refused_by(t, "TO-9.2", t.arrive, bye.entrant, 1)


def test_to_9_1_a_tournament_may_start_its_rounds_by_itself() -> None:
    t = new_tournament(Format.SWISS, list("ABCD"), rounds=2, auto_rounds=True)
    assert t.auto_rounds and replayed(t).auto_rounds
    assert not new_tournament(Format.SWISS, list("AB")).auto_rounds
