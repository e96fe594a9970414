"""Finishing and the end of a match: JS-8.1 and JS-8.2 (ES and RU).

JS-8.3 (abandonment, a referee's stop) is in test_kernel_abandon_and_stop.py (every game
ends that way) and, for the server's side of it, tests/service/test_abandonment.py.
"""

from __future__ import annotations

from domain_support import (
    NO_SPECIALS,
    SEED,
    Stamps,
    ending_deck,
    event_names,
    events_since,
    new_match,
    refused,
    reveal_until,
    sym,
)

from domain.jungle_speed import JungleSpeed
from domain.kernel import EndReason, MatchStatus

S = 17


def four_seats_all_face_up(variant: str) -> tuple[JungleSpeed, Stamps]:
    """Four seats, 72 cards (18 each, both variants), every card revealed without a grab.

    The last cards shown: seats 0 and 1 duel on shape S; seats 2 and 3 show shapes 2, 3.
    """
    deck = ending_deck(4, variant, 72, {0: [sym(0, 0), sym(S, 0)], 1: [sym(1, 0), sym(S, 1)]})
    match, stamps = new_match(4, variant, deck, **NO_SPECIALS)
    while match.turn is not None:
        match.reveal(match.turn, stamps())
    assert match.down == [[], [], [], []]
    assert match.open_duels() == [[0, 1]]
    return match, stamps


def test_js_8_1_a_player_without_face_down_cards_is_not_finished_while_face_up_remain() -> None:
    match, _ = four_seats_all_face_up("ES")
    assert all(match.active(s) for s in range(4))
    assert match.finished == []


def test_js_8_1_and_8_2_es_finished_players_leave_play_goes_on_until_two_remain() -> None:
    match, stamps = four_seats_all_face_up("ES")
    version = match.version
    # Seat 0 wins the duel with no face-down cards left: its pile goes to seat 1.
    assert match.grab(0, stamps()) == "duel"
    names = event_names(events_since(match, version))
    assert names == ["DuelWon", "PlayerFinished"]
    assert match.pending_events[-1].seat == 0 and match.pending_events[-1].place == 1
    assert not match.active(0)
    assert match.status is MatchStatus.PLAYING  # three remain
    # A finished player can do nothing any more.
    refused(match, "JS-8.1", match.grab, 0, stamps())
    refused(match, "JS-8.1", match.reveal, 0, stamps())
    # Seat 1 (the loser) starts, then grabs wrongly: it takes every face-up pile, so
    # seats 2 and 3, with no face-down cards, finish together and share second place.
    assert match.turn == 1
    match.reveal(1, stamps())
    assert match.open_duels() == []
    version = match.version
    assert match.grab(1, stamps()) == "wrong"
    assert event_names(events_since(match, version)) == [
        "WrongGrab",
        "PlayerFinished",
        "PlayerFinished",
        "MatchEnded",
    ]
    assert match.status is MatchStatus.ENDED
    assert match.end_reason is EndReason.COMPLETED
    # The finishing order, then the remaining player in last place.
    assert match.result == [
        {"seat": 0, "place": 1},
        {"seat": 2, "place": 2},
        {"seat": 3, "place": 2},
        {"seat": 1, "place": 4},
    ]
    assert match.card_count() == 72


def test_js_8_2_ru_the_first_player_to_finish_wins_and_the_match_ends() -> None:
    match, stamps = four_seats_all_face_up("RU")
    version = match.version
    assert match.grab(0, stamps()) == "duel"
    assert event_names(events_since(match, version)) == [
        "DuelWon",
        "PlayerFinished",
        "MatchEnded",
    ]
    assert match.status is MatchStatus.ENDED
    assert match.result == [
        {"seat": 0, "place": 1},
        {"seat": 1, "place": 2},
        {"seat": 2, "place": 2},
        {"seat": 3, "place": 2},
    ]


def test_js_8_2_ru_several_finishing_at_once_share_first_the_others_second() -> None:
    """JS-8.2 RU: players who finish on the same event share first place and every other
    player shares second place (not third: RU ranks winners and the rest, nothing more)."""
    # RU, ten seats, 75 cards (outward arrows 72, 73, 74): 7 each and 5 in the pot.
    # Seat 9's 6th card is outward arrows: everyone reveals at once, which for seats 1
    # and 2 is their last card, outward arrows too, so both finish at once (JS-7.2 RU).
    deck = ending_deck(10, "RU", 75, {1: [sym(1, 0), 73], 2: [sym(2, 0), 74], 9: [72, sym(9, 1)]})
    match, stamps = new_match(10, "RU", deck, **dict(NO_SPECIALS, outward_arrows=3))
    reveal_until(match, stamps, 9, 2)
    version = match.version
    match.reveal(9, stamps())
    assert event_names(events_since(match, version)) == [
        "Revealed",
        "OutwardReveal",
        "PlayerFinished",
        "PlayerFinished",
        "MatchEnded",
    ]
    assert match.status is MatchStatus.ENDED
    assert match.result == [{"seat": 1, "place": 1}, {"seat": 2, "place": 1}] + [
        {"seat": s, "place": 2} for s in (0, *range(3, 10))
    ]


def test_js_8_2_es_three_players_end_when_one_finishes() -> None:
    deck = ending_deck(3, "ES", 72, {0: [sym(0, 0), sym(S, 0)], 2: [sym(2, 0), sym(S, 1)]})
    match, stamps = new_match(3, "ES", deck, **NO_SPECIALS)
    while match.turn is not None:
        match.reveal(match.turn, stamps())
    assert match.open_duels() == [[0, 2]]
    match.grab(2, stamps())
    assert match.status is MatchStatus.ENDED
    assert match.result == [
        {"seat": 2, "place": 1},
        {"seat": 0, "place": 2},
        {"seat": 1, "place": 2},
    ]


def test_js_8_2_match_ended_reveals_the_seed_and_every_command_is_refused_after() -> None:
    match, stamps = four_seats_all_face_up("RU")
    match.grab(0, stamps())
    ended = match.pending_events[-1]
    assert type(ended).__name__ == "MatchEnded"
    assert ended.seed == SEED.hex()
    assert ended.reason == "completed"
    assert ended.result == match.result
    # Refusals cite the rule that ended the match, not the rule of the command.
    for err in (
        refused(match, "JS-8.2", match.reveal, 1, stamps()),
        refused(match, "JS-8.2", match.grab, 1, stamps()),
        refused(match, "JS-8.2", match.fire_timer, stamps(after_ms=10**6)),
    ):
        assert err.message == "the match has ended"
    refused(match, "JS-8.2", match.join, "late", b"", "h", stamps())
    assert match.timer_deadline_ms() is None
