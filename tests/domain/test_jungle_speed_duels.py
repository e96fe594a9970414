"""Duels and grabbing the totem: JS-4.1 … JS-4.7 and JS-5.1 … JS-5.4.

Card placement: ``arranged`` puts chosen cards on top of each face-down pile; the tests
only reveal cards they placed. Shapes used for duels are named by index (``sym(shape,
colour)``).
"""

from __future__ import annotations

import inspect

import pytest
from domain_support import (
    COLOURED,
    INWARD,
    OUTWARD,
    arranged,
    event_names,
    events_since,
    new_match,
    refused,
    state_of,
    sym,
)

from domain.jungle_speed import JungleSpeed

A, B, C, D, E, F, G, H = (sym(7 + i, 0) for i in range(8))  # eight more distinct shapes
S = 17  # the shape that duels


def pot_for(variant: str, n: int) -> list[int] | None:
    """The RU remainder for ``n`` seats: symbol cards of shape 16 (none for 4 seats)."""
    return [sym(16, c) for c in range(80 % n)] if variant == "RU" else None


# ---- JS-4.1 what is a duel --------------------------------------------------------------


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_4_1_same_shape_any_colour_is_a_duel(variant: str) -> None:
    deck = arranged(3, [[sym(S, 0)], [A], [sym(S, 3)]], variant, pot=pot_for(variant, 3))
    match, stamps = new_match(3, variant, deck)
    match.reveal(0, stamps())
    assert match.open_duels() == []
    match.reveal(1, stamps())
    match.reveal(2, stamps())
    assert match.open_duels() == [[0, 2]]


def test_js_4_1_same_colour_different_shape_is_no_duel() -> None:
    deck = arranged(2, [[sym(3, 1)], [sym(4, 1)]])
    match, stamps = new_match(2, deck=deck)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.open_duels() == []


def test_js_4_1_three_players_sharing_a_symbol_are_one_duel() -> None:
    deck = arranged(4, [[sym(S, 0)], [sym(S, 1)], [A], [sym(S, 2)]])
    match, stamps = new_match(4, deck=deck)
    for seat in range(4):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[0, 1, 3]]


def test_js_4_1_two_symbols_in_pairs_are_two_duels() -> None:
    deck = arranged(4, [[sym(S, 0)], [sym(5, 0)], [sym(S, 1)], [sym(5, 1)]])
    match, stamps = new_match(4, deck=deck)
    for seat in range(4):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[0, 2], [1, 3]]


# ---- JS-4.2 the first grab by a participant wins --------------------------------------


def test_js_4_2_the_first_grab_received_by_a_participant_wins() -> None:
    deck = arranged(3, [[sym(S, 0)], [sym(S, 1)], [A]])
    match, stamps = new_match(3, deck=deck)
    for seat in range(3):
        match.reveal(seat, stamps())
    version = match.version
    assert match.grab(1, stamps()) == "duel"
    (won,) = events_since(match, version)
    assert type(won).__name__ == "DuelWon"
    assert (won.winner, won.losers) == (1, [0])
    assert match.grab(0, stamps()) == "late"


def test_js_4_2_and_js_5_4_receive_order_decides_not_the_clocks() -> None:
    """JS-5.4: no hands, fingers or knocked totems: the order the server received the
    grabs in (the order of the calls) is all that counts, whatever the stamps' clocks."""
    deck = arranged(2, [[sym(S, 0)], [sym(S, 1)]])
    match, stamps = new_match(2, deck=deck)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    first = stamps(after_ms=50)
    earlier_clock = stamps.__class__(wall_ms=1)()  # an earlier wall time, received later
    assert match.grab(1, first) == "duel"
    assert match.grab(0, earlier_clock) == "late"
    assert match.pending_events[-2].winner == 1
    # The grab command has no parameter for any physical tie-break.
    params = set(inspect.signature(JungleSpeed.grab).parameters)
    assert params == {"self", "seat", "stamp", "target"}


# ---- JS-4.3 two participants -------------------------------------------------------------


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_4_3_two_player_duel_loser_takes_winner_pile_own_pile_then_pot(variant: str) -> None:
    # Three seats; seat 2 watches. First an inward-arrows race won by seat 2 puts its
    # card H into the pot (JS-6.1) after RU's two dealt pot cards. Then seats 0 and 1
    # build face-up piles whose third cards duel.
    tops = [
        [A, B, C, sym(S, 0)],
        [INWARD[0], D, E, sym(S, 1)],
        [H, F, G, sym(15, 0)],
    ]
    dealt_pot = [sym(16, 0), sym(16, 1)] if variant == "RU" else []
    match, stamps = new_match(3, variant, arranged(3, tops, variant, pot=dealt_pot or None))
    assert match.pot == dealt_pot
    for seat in range(3):
        match.reveal(seat, stamps())
    assert match.grab(2, stamps()) == "arrows"
    assert match.pot == [*dealt_pot, H]
    assert match.turn == 2
    for seat in (2, 0, 1, 2, 0, 1, 2, 0, 1):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[0, 1]]
    assert match.up[0] == [A, B, C, sym(S, 0)] and match.up[1] == [INWARD[0], D, E, sym(S, 1)]
    winner_pile, loser_pile, pot = list(match.up[0]), list(match.up[1]), list(match.pot)
    loser_down, winner_down, watcher_up = list(match.down[1]), list(match.down[0]), match.up[2]
    assert match.grab(0, stamps()) == "duel"
    # Under the loser's face-down pile: the winner's pile, then their own, then the pot;
    # each face-up pile turned over whole, so its first-revealed card comes up first, and
    # the pot in the order its cards went in.
    assert match.down[1] == loser_down + winner_pile + loser_pile + pot
    assert match.down[0] == winner_down
    assert match.up[0] == [] and match.up[1] == [] and match.pot == []
    assert match.up[2] == watcher_up  # not in the duel: untouched
    assert match.turn == 1  # JS-4.5


# ---- JS-4.4 / JS-4.5 three or more participants ------------------------------------------


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_4_4_winner_pile_then_pot_dealt_clockwise_from_the_winners_left(variant: str) -> None:
    # Five seats (RU deals all 80 too). Seat 3 first wins an inward-arrows race: its card
    # goes to the pot. Then seats 1, 2 and 4 show shape S and seat 2 wins; the losers
    # clockwise from its left are seat 4 (seat 3 is not in the duel), then seat 1.
    tops = [[A, B], [C, sym(S, 0)], [D, sym(S, 1)], [INWARD[0], E], [F, sym(S, 2)]]
    match, stamps = new_match(5, variant, arranged(5, tops, variant))
    for seat in range(5):
        match.reveal(seat, stamps())
    assert match.grab(3, stamps()) == "arrows"
    assert match.pot == [INWARD[0]]
    for seat in (3, 4, 0, 1, 2):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[1, 2, 4]]
    ups = [list(p) for p in match.up]
    downs = [list(p) for p in match.down]
    assert match.grab(2, stamps()) == "duel"
    won = match.pending_events[-1]
    assert (won.winner, sorted(won.losers)) == (2, [1, 4])
    # Each loser first takes their own pile; then the winner's pile (as turned over:
    # first revealed first) and then the pot are dealt one at a time: 4, 1, 4.
    assert ups[2] == [D, sym(S, 1)]
    assert match.down[4] == downs[4] + [F, sym(S, 2)] + [D, INWARD[0]]
    assert match.down[1] == downs[1] + [C, sym(S, 0)] + [sym(S, 1)]
    assert match.down[2] == downs[2]
    assert match.up[1] == match.up[2] == match.up[4] == []
    assert match.up[0] == ups[0] and match.up[3] == ups[3]
    assert match.pot == []
    assert match.turn == 4  # JS-4.5: the first loser clockwise from the winner's left


def test_js_4_4_seven_seats_ru_pot_is_dealt_after_the_winner_pile() -> None:
    # RU, 7 seats: 11 cards each and a 3-card pot. Seats 0, 3 and 5 duel; seat 5 wins.
    tops = [[sym(S, 0)], [A], [B], [sym(S, 1)], [C], [sym(S, 2)], [D]]
    pot = [sym(16, 0), sym(16, 1), sym(16, 2)]
    match, stamps = new_match(7, "RU", arranged(7, tops, "RU", pot=pot))
    for seat in range(7):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[0, 3, 5]]
    downs = [list(p) for p in match.down]
    assert match.grab(5, stamps()) == "duel"
    # From seat 5's left: 6 (out), 0, 1 (out), 2 (out), 3. Cards: S2 → 0, pot[0] → 3, …
    assert match.down[0] == downs[0] + [sym(S, 0), sym(S, 2), pot[1]]
    assert match.down[3] == downs[3] + [sym(S, 1), pot[0], pot[2]]
    assert match.turn == 0


def test_js_4_5_the_loser_starts_the_next_turn() -> None:
    # Seat 2 reveals last; seat 1 loses, so seat 1 plays next (not seat 0).
    deck = arranged(3, [[A], [sym(S, 0)], [sym(S, 1)]])
    match, stamps = new_match(3, deck=deck)
    for seat in range(3):
        match.reveal(seat, stamps())
    assert match.turn == 0
    match.grab(2, stamps())
    assert match.turn == 1
    refused(match, "JS-3.1", match.reveal, 0, stamps())
    match.reveal(1, stamps())


# ---- JS-4.6 independent duels ---------------------------------------------------------------


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_4_6_independent_duels_the_grabbers_is_resolved_others_annulled(variant: str) -> None:
    # Seat 0's outward arrows make everyone reveal: 0/1 show shape 5, 2/3 show shape 6.
    tops = [
        [OUTWARD[0], sym(5, 0), sym(5, 2)],
        [sym(5, 1), A],
        [sym(6, 0), B],
        [sym(6, 1), C],
    ]
    match, stamps = new_match(4, variant, arranged(4, tops, variant))
    match.reveal(0, stamps())
    assert event_names(match.pending_events[-2:]) == ["Revealed", "OutwardReveal"]
    assert match.open_duels() == [[0, 1], [2, 3]]
    assert match.grab(2, stamps()) == "duel"
    won = match.pending_events[-1]
    assert (won.winner, won.losers, won.annulled) == (2, [3], [0, 1])
    # The annulled pair's cards are still visible but they do not duel again …
    assert match.visible()[0] == sym(5, 0) and match.visible()[1] == sym(5, 1)
    assert match.open_duels() == []
    assert match.turn == 3
    match.reveal(3, stamps())
    assert match.open_duels() == []
    # … until one of them is covered: seat 0 covers its card with another shape-5 card.
    match.reveal(0, stamps())
    assert match.open_duels() == [[0, 1]]


def test_js_4_6_an_annulled_pair_does_not_duel_again_inside_a_larger_duel() -> None:
    """After 0/1's duel is annulled, seat 3 shows the same shape: 0 and 1 each duel with
    3, but not with each other. When 0 wins, only 3 loses; 1 keeps its card."""
    tops = [
        [OUTWARD[0], sym(5, 0)],
        [sym(5, 1), A],
        [sym(6, 0), B],
        [sym(6, 1), sym(5, 2)],
    ]
    match, stamps = new_match(4, "ES", arranged(4, tops))
    match.reveal(0, stamps())
    assert match.grab(2, stamps()) == "duel"  # 0/1 annulled
    assert match.turn == 3
    match.reveal(3, stamps())
    assert match.open_duels() == [[0, 1, 3]]
    winner_pile, loser_pile, down3 = list(match.up[0]), list(match.up[3]), list(match.down[3])
    assert match.grab(0, stamps()) == "duel"
    won = match.pending_events[-1]
    assert (won.winner, won.losers) == (0, [3])
    assert match.up[1] == [sym(5, 1)]
    assert match.down[3] == down3 + winner_pile + loser_pile
    assert match.turn == 3


def test_js_4_6_a_grab_by_an_annulled_duellist_is_wrong_not_a_win() -> None:
    tops = [[OUTWARD[0], sym(5, 0)], [sym(5, 1)], [sym(6, 0)], [sym(6, 1)]]
    match, stamps = new_match(4, "ES", arranged(4, tops))
    match.reveal(0, stamps())
    match.grab(3, stamps())
    assert match.grab(0, stamps()) == "wrong"


# ---- JS-4.7 nobody has to grab ------------------------------------------------------------


def test_js_4_7_an_open_duel_stays_open_until_one_of_its_cards_is_covered() -> None:
    deck = arranged(3, [[sym(S, 0), A], [sym(S, 1), B], [C, D]])
    match, stamps = new_match(3, deck=deck)
    for seat in range(3):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[0, 1]]
    match.reveal(0, stamps())  # covers seat 0's card
    assert match.open_duels() == []
    assert match.grab(1, stamps()) == "wrong"


def test_js_4_7_reveals_go_on_while_a_duel_is_open() -> None:
    deck = arranged(3, [[A, sym(S, 0)], [B, sym(S, 1)], [sym(S, 2), C]])
    match, stamps = new_match(3, deck=deck)
    for seat in range(3):
        match.reveal(seat, stamps())
    match.reveal(0, stamps())
    assert match.open_duels() == [[0, 2]]
    match.reveal(1, stamps())  # seat 1 joins the shape
    assert match.open_duels() == [[0, 1, 2]]
    match.reveal(2, stamps())  # seat 2 covers its card; 0 and 1 still duel
    assert match.open_duels() == [[0, 1]]


@pytest.mark.parametrize("variant", ["ES", "RU"])
@pytest.mark.parametrize("grabber", [1, 0])
def test_js_4_7_one_grab_annuls_every_other_open_duel_and_race_in_both_variants(
    variant: str, grabber: int
) -> None:
    """JS-4.7 (decided here for RU too): one grab takes the totem; whatever it resolves,
    a duel (seat 1) or the inward-arrows race (seat 0), every other duel and race open at
    that moment is annulled, their cards staying visible, in both variants."""
    tops = [[INWARD[0]], [sym(S, 0)], [sym(S, 1)], [sym(5, 0)], [sym(5, 1)]]
    match, stamps = new_match(5, variant, arranged(5, tops, variant))
    for seat in range(5):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[1, 2], [3, 4]]
    assert match.open_arrows() == [INWARD[0]]
    version = match.version
    assert match.grab(grabber, stamps()) == ("duel" if grabber == 1 else "arrows")
    (decided,) = events_since(match, version)
    if grabber == 1:
        assert (decided.winner, decided.losers) == (1, [2])
        assert (decided.annulled, decided.arrows_annulled) == ([3, 4], True)
        assert match.visible() == {0: INWARD[0], 3: sym(5, 0), 4: sym(5, 1)}
    else:
        assert (type(decided).__name__, decided.annulled) == ("ArrowsWon", [1, 2, 3, 4])
        assert match.visible() == {s: tops[s][0] for s in (1, 2, 3, 4)}
    assert match.open_duels() == [] and match.open_arrows() == []


# ---- JS-5 grabbing ----------------------------------------------------------------------------


def test_js_5_1_every_grab_records_its_receive_stamp() -> None:
    deck = arranged(2, [[sym(S, 0)], [sym(S, 1)]])
    match, stamps = new_match(2, deck=deck)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    seen = match.version
    grab = stamps(after_ms=7, seen=seen)
    late = stamps(after_ms=3, seen=seen)
    match.grab(1, grab)
    match.grab(0, late)
    won, late_evt = match.pending_events[-2:]
    assert won.stamp == {
        "sequence": grab.sequence,
        "monotonic_ns": grab.monotonic_ns,
        "wall_ns": grab.wall_ns,
        "seen_version": seen,
        "seen_sent_monotonic_ns": 0,
    }
    assert type(late_evt).__name__ == "LateGrab"
    assert late_evt.stamp == late.to_dict()


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_5_2_wrong_grab_takes_all_piles_from_the_left_then_own_then_pot(variant: str) -> None:
    tops = [[A, B], [C, D], [E, F]]
    pot = [sym(16, 0), sym(16, 1)] if variant == "RU" else None
    match, stamps = new_match(3, variant, arranged(3, tops, variant, pot=pot))
    for _ in range(2):
        for seat in range(3):
            match.reveal(seat, stamps())
    match.reveal(0, stamps())
    assert match.open_duels() == [] and match.open_arrows() == []
    ups = [list(p) for p in match.up]
    down1, pot_before = list(match.down[1]), list(match.pot)
    assert match.turn == 1
    assert match.grab(1, stamps()) == "wrong"
    assert event_names(match.pending_events[-1:]) == ["WrongGrab"]
    # Seat 1's left is seat 2, then seat 0; then its own pile; then the pot.
    assert match.down[1] == down1 + ups[2] + ups[0] + ups[1] + pot_before
    assert match.up == [[], [], []]
    assert match.pot == []
    assert match.turn == 1


def test_js_5_2_a_grab_by_someone_outside_the_open_duel_is_wrong() -> None:
    deck = arranged(3, [[sym(S, 0)], [sym(S, 1)], [A]])
    match, stamps = new_match(3, deck=deck)
    for seat in range(3):
        match.reveal(seat, stamps())
    ups = [list(p) for p in match.up]
    down2 = list(match.down[2])
    assert match.grab(2, stamps()) == "wrong"
    assert match.down[2] == down2 + ups[0] + ups[1] + ups[2]
    assert match.open_duels() == []
    assert match.turn == 2


def test_js_5_2_wrong_grab_turn_goes_to_the_grabber_who_starts() -> None:
    deck = arranged(3, [[A], [B], [C]])
    match, stamps = new_match(3, deck=deck)
    match.reveal(0, stamps())
    match.grab(2, stamps())
    assert match.turn == 2


def test_js_5_3_a_late_grab_from_a_duellist_is_recorded_and_changes_nothing() -> None:
    deck = arranged(3, [[sym(S, 0), A], [sym(S, 1), B], [C, D]])
    match, stamps = new_match(3, deck=deck)
    for seat in range(3):
        match.reveal(seat, stamps())
    match.grab(0, stamps())
    decided_at = match.version
    before = {k: v for k, v in vars(match).items() if k not in ("_pending_events",)}
    down = [list(p) for p in match.down]
    assert match.grab(1, stamps()) == "late"
    late = match.pending_events[-1]
    assert type(late).__name__ == "LateGrab"
    assert (late.seat, late.decided_at_version) == (1, decided_at)
    assert match.down == down
    assert match.turn == before["turn"]
    # The winner grabbing again is late too.
    assert match.grab(0, stamps()) == "late"
    # A non-participant's grab is simply wrong.
    assert match.grab(2, stamps()) == "wrong"


def test_js_5_3_a_grab_after_a_later_reveal_is_not_late() -> None:
    deck = arranged(3, [[sym(S, 0), A], [sym(S, 1), B], [C, D]])
    match, stamps = new_match(3, deck=deck)
    for seat in range(3):
        match.reveal(seat, stamps())
    match.grab(0, stamps())
    assert match.turn == 1
    match.reveal(1, stamps())
    assert match.grab(1, stamps()) == "wrong"


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_5_3_a_grab_by_a_participant_whose_pair_with_the_winner_was_annulled_is_late(
    variant: str,
) -> None:
    """JS-5.3 with JS-4.1 and JS-4.6: a participant is every player whose visible card
    shared the duel's symbol when it was resolved, including one whose pair with the
    winner had been annulled and who therefore did not lose. Its grab right after is
    late and changes nothing; it is not a wrong grab taking every pile (JS-5.2)."""
    tops = [
        [OUTWARD[0], sym(1, 0)],
        [sym(1, 1), sym(2, 0)],
        [sym(2, 1)],
        [sym(2, 2)],
    ]
    match, stamps = new_match(4, variant, arranged(4, tops, variant))
    match.reveal(0, stamps())  # everyone reveals at once (JS-6.2)
    assert match.open_duels() == [[0, 1], [2, 3]]
    assert match.grab(0, stamps()) == "duel"  # shape 1 resolved, the 2-3 duel annulled
    assert match.turn == 1
    match.reveal(1, stamps())  # shape 2: seats 1, 2 and 3, but the 2-3 pair is annulled
    assert match.open_duels() == [[1, 2, 3]]
    assert match.grab(2, stamps()) == "duel"
    won = match.pending_events[-1]
    assert (won.winner, won.losers) == (2, [1])
    decided_at = match.version
    # Seat 3's card still shows shape 2, the symbol of the duel just resolved.
    assert match.visible() == {3: sym(2, 2)}
    before = state_of(match)
    assert match.grab(3, stamps()) == "late"
    late = match.pending_events[-1]
    assert type(late).__name__ == "LateGrab"
    assert (late.seat, late.decided_at_version) == (3, decided_at)
    after = state_of(match)
    assert {k for k in after if after[k] != before[k]} <= {"_version", "_modified_on", "digest"}
    # The loser and the winner are participants too; seat 0 was not in this duel.
    assert match.grab(1, stamps()) == "late"
    assert match.grab(2, stamps()) == "late"
    assert match.grab(0, stamps()) == "wrong"


def test_js_5_3_every_duel_decided_since_the_last_reveal_makes_its_players_late() -> None:
    """JS-5.3 with JS-6.3 RU: a grab ends colour mode, which can open a duel by shape
    right away; once a second grab decides it, a player of the first duel (decided by
    colour) who grabs now, before any reveal, is still late, not wrong."""
    orange_a, orange_b = sym(3, 2), sym(5, 2)
    tops = [[COLOURED[0]], [orange_a], [orange_b], [sym(4, 0)], [sym(4, 1)]]
    match, stamps = new_match(5, "RU", arranged(5, tops, "RU"))
    for seat in range(5):
        match.reveal(seat, stamps())
    assert match.coloured_mode and match.open_duels() == [[1, 2]]
    assert match.grab(1, stamps()) == "duel"
    first = match.version
    assert not match.coloured_mode and match.open_duels() == [[3, 4]]
    assert match.grab(3, stamps()) == "duel"
    second = match.version
    assert match.grab(2, stamps()) == "late"
    assert match.pending_events[-1].decided_at_version == first
    assert match.grab(4, stamps()) == "late"
    assert match.pending_events[-1].decided_at_version == second
    assert match.grab(0, stamps()) == "wrong"  # in neither duel


def test_js_5_3_any_grab_after_an_arrows_race_was_won_is_late() -> None:
    deck = arranged(3, [[A], [INWARD[0]], [B]])
    match, stamps = new_match(3, deck=deck)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.grab(2, stamps()) == "arrows"
    won_at = match.version
    state = {k: v for k, v in vars(match).items() if k != "_pending_events"}
    pot = list(match.pot)
    for seat in (0, 1, 2):
        assert match.grab(seat, stamps()) == "late"
        assert match.pending_events[-1].decided_at_version == won_at
    assert match.pot == pot
    assert match.turn == state["turn"]


def test_js_5_grab_refusals() -> None:
    deck = arranged(2, [[A], [B]])
    match, stamps = new_match(2, deck=deck)
    refused(match, "JS-1.5", match.grab, 5, stamps())
    refused(match, "JS-6.1", match.grab, 0, stamps(), "elbow")
