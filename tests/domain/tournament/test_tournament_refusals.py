"""Commands the rules refuse: each names its rule and records nothing (TO-8 to TO-11)."""

from __future__ import annotations

import hashlib
from fractions import Fraction
from typing import Any
from uuid import NAMESPACE_URL, uuid5

import pytest
from tournament_support import (
    NO_SHOW_MS,
    ORGANISER,
    REFEREE,
    SEED,
    WINDOW_MS,
    finish,
    match_ids_for,
    new_tournament,
    refused_by,
    start,
    token_hash,
)

from domain.kernel.errors import InvalidArgument, NotPermitted, RuleViolation
from domain.tournament import (
    Format,
    Penalise,
    ReplaceWith,
    ReplayFrom,
    Stands,
    TieBreak,
    Tournament,
)

FOUR = list("ABCD")


def played_round(
    format: Format = Format.SWISS, rounds: int | None = 2
) -> tuple[Tournament, list[str]]:
    """A tournament of four whose first round has ended at 100 ms."""
    options: dict[str, Any] = {} if rounds is None else {"rounds": rounds}
    t = new_tournament(format, FOUR, **options)
    _, ids = start(t, 0)
    finish(t, 100)
    return t, ids


# ---- the four the tournament must refuse -------------------------------------------------


def test_to_10_1_a_dispute_after_the_window_is_refused() -> None:
    t, ids = played_round()
    deadline = 100 + WINDOW_MS
    refused_by(t, "TO-10.1", t.file_dispute, "A", ids[0], 3, "too late", deadline + 1)
    assert t.file_dispute("A", ids[0], 3, "just in time", deadline) == 1


def test_to_10_2_a_ruling_by_a_non_referee_is_refused() -> None:
    t, ids = played_round()
    d = t.file_dispute("A", ids[0], 3, "a dispute", 200)
    error = refused_by(t, "TO-10.2", t.rule, "A", d, Stands(), "I win", 300)
    assert isinstance(error, NotPermitted)
    refused_by(t, "TO-10.2", t.rule, "nobody", d, Stands(), "it stands", 300)
    t.rule(REFEREE, d, Stands(), "it stands", 300)
    # A dispute is ruled on once.
    refused_by(t, "TO-10.2", t.rule, REFEREE, d, Stands(), "again", 400)
    refused_by(t, "TO-10.2", t.rule, REFEREE, 9, Stands(), "no such dispute", 400)


def test_to_9_4_a_result_for_an_unknown_match_is_refused() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=2)
    start(t, 0)
    stranger = str(uuid5(NAMESPACE_URL, "/not/a/table"))
    error = refused_by(t, "TO-9.4", t.record_result, stranger, {"A": 1, "C": 2}, "a" * 64, 9, 50)
    assert isinstance(error, InvalidArgument)
    refused_by(t, "TO-9.4", t.record_result, "not a uuid", {"A": 1}, "a" * 64, 9, 50)


def test_to_9_1_starting_a_round_before_the_last_ended_is_refused() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=2)
    _, ids = start(t, 0)
    t.record_result(ids[0], {"A": 1, "C": 2}, "a" * 64, 9, 50)
    ids2 = match_ids_for(2, 2, "next")
    error = refused_by(t, "TO-9.1", t.start_round, 10**9, ids2)
    assert isinstance(error, RuleViolation)
    refused_by(t, "TO-9.1", t.pairing, 10**9)


# ---- TO-9: rounds ------------------------------------------------------------------------


def test_to_9_1_the_next_round_waits_for_the_dispute_window_and_the_rulings() -> None:
    t, ids = played_round()
    assert t.next_round_due_ms() == 100 + WINDOW_MS
    ids2 = match_ids_for(2, 2, "next")
    refused_by(t, "TO-9.1", t.start_round, 100 + WINDOW_MS - 1, ids2)
    d = t.file_dispute("C", ids[0], 0, "a dispute", 200)
    refused_by(t, "TO-9.1", t.start_round, 100 + WINDOW_MS, ids2)
    t.rule(REFEREE, d, Stands(), "it stands", 300)
    t.start_round(100 + WINDOW_MS, ids2)


def test_to_9_1_no_round_beyond_the_tournaments_rounds() -> None:
    t, _ = played_round(rounds=1)
    assert t.next_round_due_ms() is None
    refused_by(t, "TO-9.1", t.start_round, 10**9, match_ids_for(2, 2, "x"))


def test_to_9_2_one_new_match_per_table() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=2)
    ids = match_ids_for(1, 2, "x")
    refused_by(t, "TO-9.2", t.start_round, 0, ids[:1])
    refused_by(t, "TO-9.2", t.start_round, 0, [ids[0], ids[0]])
    t.start_round(0, ids)
    finish(t, 100)
    refused_by(t, "TO-9.2", t.start_round, 100 + WINDOW_MS, [ids[1], *match_ids_for(2, 1, "y")])


def test_to_9_3_nobody_is_absent_before_the_start_deadline() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=2)
    start(t, 0)
    refused_by(t, "TO-9.3", t.record_no_show, "A", NO_SHOW_MS - 1)
    refused_by(t, "TO-9.3", t.record_no_show, "Z", NO_SHOW_MS)
    t.record_no_show("A", NO_SHOW_MS)
    refused_by(t, "TO-9.3", t.record_no_show, "A", NO_SHOW_MS)
    finish(t, NO_SHOW_MS + 1)
    refused_by(t, "TO-9.3", t.record_no_show, "B", NO_SHOW_MS + 2)


def test_to_9_4_a_result_places_the_seats_that_played_once() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=2)
    _, ids = start(t, 0)
    digest = "a" * 64
    refused_by(t, "TO-9.4", t.record_result, ids[0], {"A": 1}, digest, 9, 50)
    refused_by(t, "TO-9.4", t.record_result, ids[0], {"A": 1, "B": 2}, digest, 9, 50)
    refused_by(t, "TO-9.4", t.record_result, ids[0], {"A": 1, "C": 3}, digest, 9, 50)
    refused_by(t, "TO-9.4", t.record_result, ids[0], {"A": 1, "C": 2}, "nope", 9, 50)
    refused_by(t, "TO-9.4", t.record_result, ids[0], {"A": 1, "C": 2}, digest, 0, 50)
    t.record_result(ids[0], {"A": 1, "C": 2}, digest, 9, 50)
    refused_by(t, "TO-9.4", t.record_result, ids[0], {"A": 2, "C": 1}, digest, 9, 60)


# ---- TO-8: the tournament and its entrants -----------------------------------------------


def create(**changes: Any) -> Tournament:
    arguments: dict[str, Any] = {
        "organiser_token_hash": ORGANISER,
        "game": "tribes",
        "options": {},
        "format": Format.SWISS,
        "table_size": 2,
        "seed": SEED,
    }
    return Tournament.create(**(arguments | changes))


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ({"organiser_token_hash": "not a hash"}, "TO-8.1"),
        ({"game": ""}, "TO-8.1"),
        ({"table_size": 5}, "TO-8.1"),
        ({"table_size": 3, "max_seats": 2}, "TO-8.1"),
        ({"format": Format.SINGLE_ELIMINATION, "table_size": 3}, "TO-4.1"),
        ({"format": Format.ROUND_ROBIN, "rounds": 3}, "TO-8.1"),
        ({"rounds": 0}, "TO-8.1"),
        ({"rounds": 65}, "TO-8.1"),
        ({"tie_breaks": [TieBreak.BUCHHOLZ, TieBreak.BUCHHOLZ]}, "TO-7.1"),
        ({"tie_breaks": [TieBreak.SEED]}, "TO-7.1"),
        ({"dispute_window_ms": -1}, "TO-8.1"),
        ({"no_show_ms": 8 * 24 * 3600 * 1000}, "TO-8.1"),
        ({"seed": b"short"}, "TO-8.1"),
        ({"title": "x" * 81}, "TO-8.1"),
        ({"options": {"deal": object()}}, "TO-8.1"),
    ],
)
def test_to_8_1_bad_creations_are_refused(changes: dict[str, Any], rule: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        create(**changes)
    assert info.value.rule == rule


def test_to_8_1_the_seed_is_committed_and_the_options_recorded() -> None:
    t = create(options={"extended": True}, title=" Spring cup ")
    created = t.pending_events[0]
    assert (created.game, created.options, created.title) == (
        "tribes",
        {"extended": True},
        "Spring cup",
    )
    assert t.seed_commitment == hashlib.sha256(SEED).hexdigest()


def test_to_8_2_entries_are_checked_and_close_with_the_first_round() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=1)
    refused_by(t, "TO-8.2", t.add_entrant, "a", token_hash("another A"))
    refused_by(t, "TO-8.2", t.add_entrant, "E", token_hash("A"))
    refused_by(t, "TO-8.2", t.add_entrant, "E", ORGANISER)
    refused_by(t, "TO-8.2", t.add_entrant, "E", "plain token")
    refused_by(t, "TO-8.2", t.add_entrant, "", token_hash("E"))
    refused_by(t, "TO-8.2", t.add_entrant, "x" * 41, token_hash("E"))
    refused_by(t, "TO-8.2", t.add_entrant, "E\u202e", token_hash("E"))
    start(t, 0)
    refused_by(t, "TO-8.2", t.add_entrant, "E", token_hash("E"))


def test_to_8_3_nobody_is_both_an_entrant_and_a_referee() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=1)
    refused_by(t, "TO-8.3", t.appoint_referee, "A", token_hash("another"))
    refused_by(t, "TO-8.3", t.appoint_referee, "Sam", token_hash("A"))
    refused_by(t, "TO-8.3", t.appoint_referee, REFEREE.upper(), token_hash("another"))
    refused_by(t, "TO-8.3", t.add_entrant, REFEREE, token_hash("another"))
    refused_by(t, "TO-8.2", t.add_entrant, "Sam", token_hash(REFEREE))


def test_to_8_4_only_an_entrant_withdraws_and_only_once() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=1)
    refused_by(t, "TO-8.4", t.withdraw, "Z", 0)
    t.withdraw("A", 0)
    refused_by(t, "TO-8.4", t.withdraw, "A", 0)


def test_to_8_5_a_tournament_starts_with_two_entrants_or_more() -> None:
    t = new_tournament(Format.SWISS, ["A", "B"], rounds=1)
    t.withdraw("B", 0)
    refused_by(t, "TO-8.5", t.start_round, 0, [])


# ---- TO-10: disputes and rulings ---------------------------------------------------------


def test_to_10_1_a_dispute_names_a_table_the_entrant_sat_at_and_a_version_of_its_match() -> None:
    t, ids = played_round()
    refused_by(t, "TO-10.1", t.file_dispute, "B", ids[0], 3, "not my table", 200)
    refused_by(t, "TO-10.1", t.file_dispute, "Z", ids[0], 3, "not an entrant", 200)
    refused_by(t, "TO-10.1", t.file_dispute, "A", ids[0], 41, "beyond the end", 200)
    refused_by(t, "TO-10.1", t.file_dispute, "A", ids[0], -1, "before the start", 200)
    refused_by(t, "TO-10.1", t.file_dispute, "A", ids[0], 3, "", 200)
    refused_by(t, "TO-10.1", t.file_dispute, "A", ids[0], 3, "two\nlines", 200)
    stranger = str(uuid5(NAMESPACE_URL, "/stranger"))
    refused_by(t, "TO-10.1", t.file_dispute, "A", stranger, 3, "unknown match", 200)
    t.file_dispute("A", ids[0], 3, "one open dispute", 200)
    refused_by(t, "TO-10.1", t.file_dispute, "A", ids[0], 4, "a second one", 200)


def test_to_10_1_no_dispute_before_the_result() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=1)
    _, ids = start(t, 0)
    refused_by(t, "TO-10.1", t.file_dispute, "A", ids[0], 3, "too early", 10)


def test_to_10_3_a_verdict_must_fit_the_table() -> None:
    t, ids = played_round()
    d = t.file_dispute("A", ids[0], 3, "a dispute", 200)
    fresh = str(uuid5(NAMESPACE_URL, "/fork"))
    for verdict in (
        ReplaceWith({"A": 1}),
        ReplaceWith({"A": 1, "C": 3}),
        ReplaceWith({"A": 1, "C": 2}, frozenset({"B"})),
        ReplayFrom(0, fresh),
        ReplayFrom(41, fresh),
        ReplayFrom(5, ids[1]),
        Penalise("Z", Fraction(1)),
        Penalise("A", Fraction(0)),
        Penalise("A", Fraction(101)),
    ):
        refused_by(t, "TO-10.3", t.rule, REFEREE, d, verdict, "a reason", 300)
    refused_by(t, "TO-10.2", t.rule, REFEREE, d, Stands(), " ", 300)


def test_to_10_3_no_replay_of_a_table_decided_without_a_match() -> None:
    t = new_tournament(Format.SWISS, FOUR, rounds=1)
    _, ids = start(t, 0)
    t.record_no_show("C", NO_SHOW_MS)
    t.record_result(ids[0], {"A": 1}, "", 0, NO_SHOW_MS)
    d = t.file_dispute("C", ids[0], 0, "I was there", NO_SHOW_MS + 1)
    replay = ReplayFrom(1, str(uuid5(NAMESPACE_URL, "/fork")))
    refused_by(t, "TO-10.3", t.rule, REFEREE, d, replay, "replay it", NO_SHOW_MS + 2)


# ---- TO-11: the end ----------------------------------------------------------------------


def test_to_11_1_the_end_waits_for_every_round_the_window_and_the_rulings() -> None:
    t, ids = played_round(rounds=1)
    refused_by(t, "TO-11.1", t.end, 100 + WINDOW_MS - 1)
    d = t.file_dispute("C", ids[0], 0, "a dispute", 200)
    refused_by(t, "TO-11.1", t.end, 100 + WINDOW_MS)
    t.rule(REFEREE, d, Stands(), "it stands", 300)
    t.end(100 + WINDOW_MS)
    # Nothing is recorded after the end.
    refused_by(t, "TO-11.1", t.end, 10**9)
    refused_by(t, "TO-11.1", t.withdraw, "A", 10**9)
    refused_by(t, "TO-11.1", t.file_dispute, "A", ids[0], 0, "late", 10**9)
    refused_by(t, "TO-11.1", t.start_round, 10**9, [])
    refused_by(t, "TO-11.1", t.appoint_referee, "Sam", token_hash("Sam"))


def test_to_11_1_not_before_all_rounds_have_been_played() -> None:
    t, _ = played_round(rounds=2)
    refused_by(t, "TO-11.1", t.end, 10**9)
