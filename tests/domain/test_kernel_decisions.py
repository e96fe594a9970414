"""The kernel's awaited decisions and parties: who owes a decision, by when, and which
sides a seat plays."""

from __future__ import annotations

from domain_support import new_match

from domain.kernel import Decision, ReceiveStamp


def stamp_at(wall_ms: int) -> ReceiveStamp:
    return ReceiveStamp(1, 0, wall_ms * 1_000_000)


def test_a_decision_runs_from_its_opening_and_shrinks_as_parties_answer() -> None:
    decision = Decision.open("choose", "VI-2.2", [2, 0, 1], stamp_at(5_000), 1_500, {"x": [1]})
    assert (decision.opened_ms, decision.deadline_ms) == (5_000, 6_500)
    assert decision.owed_by(0) and not decision.owed_by(3)
    assert not decision.due(stamp_at(6_499)) and decision.due(stamp_at(6_500))
    rest = decision.answered(0)
    assert rest is not None and rest.parties == (2, 1) and rest.deadline_ms == 6_500
    assert rest.answered(2) is not None
    last = rest.answered(2)
    assert last is not None and last.answered(1) is None


def test_a_decision_is_plain_data_both_ways() -> None:
    decision = Decision.open("reveal", "VI-2.3", [1], stamp_at(10), 0, {"phase": 3})
    data = decision.to_dict()
    assert data == {
        "kind": "reveal",
        "rule": "VI-2.3",
        "parties": [1],
        "opened_ms": 10,
        "deadline_ms": 10,
        "detail": {"phase": 3},
    }
    assert Decision.from_dict(data) == decision


def test_by_default_a_seat_plays_itself() -> None:
    match, _ = new_match(3)
    assert match.parties_of(2) == [2]
    assert match.party_owner(1) == 1
