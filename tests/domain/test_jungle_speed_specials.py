"""Special cards and the last face-down card: JS-6.1 … JS-6.3 and JS-7.1 … JS-7.4.

The JS-7 tests use ten seats and a deck with only the special cards they need, so that a
player reaches their last face-down card after a few rounds of reveals
(``ending_deck`` gives every seat distinct shapes in the last rounds: no stray duels).
"""

from __future__ import annotations

import pytest
from domain_support import (
    COLOURED,
    INWARD,
    OUTWARD,
    Stamps,
    arranged,
    check_pending_steps,
    ending_deck,
    event_names,
    events_since,
    new_match,
    refused,
    reveal_until,
    sym,
)

from domain.jungle_speed import JungleSpeed
from domain.kernel import InvalidArgument, MatchStatus

A, B, C, D, E, F = (sym(7 + i, 0) for i in range(6))
S = 17

VARIANTS = pytest.mark.parametrize("variant", ["ES", "RU"])


def ru_pot(n: int) -> list[int]:
    return [sym(16, c) for c in range(80 % n)]


# ---- JS-6.1 inward arrows -----------------------------------------------------------------


@VARIANTS
def test_js_6_1_inward_arrows_anyone_wins_the_race_pile_to_pot_and_plays_next(
    variant: str,
) -> None:
    tops = [[A, B], [C, INWARD[0]], [D, E]]
    pot = ru_pot(3) if variant == "RU" else None
    match, stamps = new_match(3, variant, arranged(3, tops, variant, pot=pot))
    for seat in (0, 1, 2, 0, 1):
        match.reveal(seat, stamps())
    assert match.open_arrows() == [INWARD[0]]
    pot_before, pile = list(match.pot), list(match.up[2])
    assert pile == [D]
    # Seat 2 is in no duel and did not reveal the arrows: its grab is not wrong.
    assert match.grab(2, stamps()) == "arrows"
    assert event_names(match.pending_events[-1:]) == ["ArrowsWon"]
    assert match.pot == pot_before + pile
    assert match.up[2] == []
    assert match.turn == 2
    assert match.open_arrows() == []
    assert match.visible()[1] == INWARD[0]  # still visible, but its race is over


@VARIANTS
def test_js_6_1_and_js_4_7_the_race_stays_open_until_its_card_is_covered(variant: str) -> None:
    tops = [[INWARD[0], A], [B, C], [D, E]]
    pot = ru_pot(3) if variant == "RU" else None
    match, stamps = new_match(3, variant, arranged(3, tops, variant, pot=pot))
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    match.reveal(2, stamps())
    assert match.open_arrows() == [INWARD[0]]
    match.reveal(0, stamps())  # covered
    assert match.open_arrows() == []
    assert match.grab(1, stamps()) == "wrong"


def test_js_6_1_es_duel_and_arrows_at_once_default_is_the_duel_for_a_duellist() -> None:
    tops = [[A], [sym(S, 0)], [sym(S, 1)], [INWARD[0]]]
    match, stamps = new_match(4, "ES", arranged(4, tops))
    for seat in range(4):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[1, 2]] and match.open_arrows() == [INWARD[0]]
    assert match.grab(2, stamps()) == "duel"
    won = match.pending_events[-1]
    assert (won.winner, won.losers, won.arrows_annulled) == (2, [1], True)
    # The arrows race is annulled: its card stays visible, the race is not open.
    assert match.visible()[3] == INWARD[0]
    assert match.open_arrows() == []


def test_js_6_1_es_duel_and_arrows_at_once_default_is_the_arrows_for_others() -> None:
    tops = [[A], [sym(S, 0)], [sym(S, 1)], [INWARD[0]]]
    match, stamps = new_match(4, "ES", arranged(4, tops))
    for seat in range(4):
        match.reveal(seat, stamps())
    assert match.grab(0, stamps()) == "arrows"
    won = match.pending_events[-1]
    assert (type(won).__name__, won.winner, won.annulled) == ("ArrowsWon", 0, [1, 2])
    # The duel is annulled: both cards still show shape S but do not duel.
    assert match.visible()[1] == sym(S, 0) and match.visible()[2] == sym(S, 1)
    assert match.open_duels() == []
    assert match.pot == [A]


def test_js_6_1_es_a_duellist_may_choose_the_arrows() -> None:
    tops = [[A], [sym(S, 0)], [sym(S, 1)], [INWARD[0]]]
    match, stamps = new_match(4, "ES", arranged(4, tops))
    for seat in range(4):
        match.reveal(seat, stamps())
    assert match.grab(1, stamps(), target="arrows") == "arrows"
    assert match.pot == [sym(S, 0)]
    assert match.open_duels() == []
    assert match.turn == 1


def test_js_6_1_es_an_explicit_duel_choice() -> None:
    tops = [[A], [sym(S, 0)], [sym(S, 1)], [INWARD[0]]]
    match, stamps = new_match(4, "ES", arranged(4, tops))
    for seat in range(4):
        match.reveal(seat, stamps())
    assert match.grab(1, stamps(), target="duel") == "duel"
    assert match.open_arrows() == []


def test_js_6_1_ru_has_no_choice_field() -> None:
    tops = [[A], [sym(S, 0)], [sym(S, 1)], [INWARD[0]]]
    match, stamps = new_match(4, "RU", arranged(4, tops, "RU"))
    for seat in range(4):
        match.reveal(seat, stamps())
    for target in ("duel", "arrows"):
        err = refused(match, "JS-6.1", match.grab, 1, stamps(), target)
        assert isinstance(err, InvalidArgument)
    assert match.grab(1, stamps()) == "duel"


# ---- JS-6.2 outward arrows -----------------------------------------------------------------


@VARIANTS
def test_js_6_2_outward_arrows_everyone_reveals_at_once_in_one_event(variant: str) -> None:
    tops = [[OUTWARD[0], sym(S, 0)], [B], [sym(S, 1)]]
    pot = ru_pot(3) if variant == "RU" else None
    match, stamps = new_match(3, variant, arranged(3, tops, variant, pot=pot))
    version = match.version
    match.reveal(0, stamps())
    revealed, outward = events_since(match, version)
    assert revealed.card == OUTWARD[0]
    assert type(outward).__name__ == "OutwardReveal"
    assert outward.triggered_by == 0
    assert outward.reveals == [[0, sym(S, 0)], [1, B], [2, sym(S, 1)]]
    assert match.up == [[OUTWARD[0], sym(S, 0)], [B], [sym(S, 1)]]
    assert match.open_duels() == [[0, 2]]


def test_js_6_2_es_no_duel_play_goes_on_clockwise() -> None:
    tops = [[OUTWARD[0], A], [B], [C]]
    match, stamps = new_match(3, "ES", arranged(3, tops))
    match.reveal(0, stamps())
    assert match.open_duels() == []
    assert match.turn == 1


def test_js_6_2_ru_no_duel_the_revealer_of_the_outward_arrows_continues() -> None:
    tops = [[OUTWARD[0], A, D], [B], [C]]
    match, stamps = new_match(3, "RU", arranged(3, tops, "RU", pot=ru_pot(3)))
    match.reveal(0, stamps())
    assert match.open_duels() == []
    assert match.turn == 0
    match.reveal(0, stamps())
    assert match.up[0][-1] == D


def test_js_6_2_ru_a_duel_opened_no_continuation_for_the_revealer() -> None:
    tops = [[OUTWARD[0], sym(S, 0)], [sym(S, 1)], [C]]
    match, stamps = new_match(3, "RU", arranged(3, tops, "RU", pot=ru_pot(3)))
    match.reveal(0, stamps())
    assert match.open_duels() == [[0, 1]]
    assert match.turn != 0


def test_js_6_2_es_chain_waits_for_the_grab_that_settles_the_open_duels() -> None:
    # The simultaneous reveal opens a duel (0/1) and shows another outward card (seat 2).
    tops = [[OUTWARD[0], sym(S, 0), A], [sym(S, 1), B], [OUTWARD[1], C]]
    match, stamps = new_match(3, "ES", arranged(3, tops))
    match.reveal(0, stamps())
    assert match.open_duels() == [[0, 1]]
    assert match.pending_outward == 2
    assert match.turn is not None
    refused(match, "JS-6.2", match.reveal, match.turn, stamps())
    version = match.version
    assert match.grab(1, stamps()) == "duel"
    won, chained = events_since(match, version)
    assert (type(won).__name__, type(chained).__name__) == ("DuelWon", "OutwardReveal")
    assert chained.triggered_by == 2
    # Seat 0 lost: both face-up piles went under its face-down pile, A is still on top.
    assert chained.reveals == [[0, A], [1, B], [2, C]]
    assert match.pending_outward is None


def test_js_4_6_js_6_2_es_after_the_grab_that_annuls_the_other_duel_the_reveal_is_owed() -> None:
    # The simultaneous reveal opens two duels (0/1 on shape S, 3/4 on shape T) and shows
    # another outward card (seat 2). The grab that wins 0/1 annuls 3/4 (JS-4.6) and lets
    # the chained reveal follow at once: the state between the two events owes it, so
    # that a fork there is refused like any state inside a command (domain.kernel.fork).
    T = 16
    tops = [
        [OUTWARD[0], sym(S, 0), A],
        [sym(S, 1), B],
        [OUTWARD[1], C],
        [sym(T, 0), D],
        [sym(T, 1), E],
    ]
    match, stamps = new_match(5, "ES", arranged(5, tops))
    ended = {e.originator_version for e in match.pending_events}  # creation, each join
    match.reveal(0, stamps())
    ended.add(match.version)
    assert match.open_duels() == [[0, 1], [3, 4]]
    assert match.pending_outward == 2
    assert match.pending_step() is None  # it waits for a grab
    version = match.version
    assert match.grab(1, stamps(), "duel") == "duel"
    won, chained = events_since(match, version)
    assert (type(won).__name__, type(chained).__name__) == ("DuelWon", "OutwardReveal")
    assert match.open_duels() == []  # the chained reveal covered every card of 3/4
    check_pending_steps(match, ended | {match.version})


def test_js_6_2_js_6_3_ru_the_chained_reveal_is_owed_though_the_grab_opened_a_duel() -> None:
    # RU: coloured arrows match duels by colour until the totem is grabbed (JS-6.3). The
    # simultaneous reveal shows them (seat 3), a colour duel (0/1), another outward card
    # (seat 2), and two cards of one shape in two colours (4/5). The grab that wins 0/1
    # ends the colour rule, so 4/5 now duel by shape; the chained reveal follows at once
    # all the same, and the state between the two events owes it.
    U, T = 15, 14
    tops = [
        [OUTWARD[0], sym(S, 0), A],
        [sym(U, 0), B],
        [OUTWARD[1], C],
        [COLOURED[0], D],
        [sym(T, 1), E],
        [sym(T, 2), F],
    ]
    match, stamps = new_match(6, "RU", arranged(6, tops, "RU", pot=ru_pot(6)))
    ended = {e.originator_version for e in match.pending_events}  # creation, each join
    match.reveal(0, stamps())
    ended.add(match.version)
    assert match.open_duels() == [[0, 1]]
    assert match.pending_outward == 2
    version = match.version
    assert match.grab(1, stamps()) == "duel"
    won, chained = events_since(match, version)
    assert (type(won).__name__, type(chained).__name__) == ("DuelWon", "OutwardReveal")
    rebuilt = None
    for evt in match.pending_events[: won.originator_version]:
        rebuilt = evt.mutate(rebuilt)
    assert rebuilt is not None and rebuilt.open_duels() == [[4, 5]]
    check_pending_steps(match, ended | {match.version})


def test_js_6_2_es_chain_without_an_open_duel_happens_at_once() -> None:
    tops = [[OUTWARD[0], A, D], [B, E], [OUTWARD[1], C]]
    match, stamps = new_match(3, "ES", arranged(3, tops))
    version = match.version
    match.reveal(0, stamps())
    assert event_names(events_since(match, version)) == [
        "Revealed",
        "OutwardReveal",
        "OutwardReveal",
    ]
    assert match.visible() == {0: D, 1: E, 2: C}
    assert match.pending_outward is None


def test_js_6_2_the_timer_makes_a_waiting_simultaneous_reveal() -> None:
    tops = [[OUTWARD[0], sym(S, 0), A], [sym(S, 1), B], [OUTWARD[1], C]]
    match, stamps = new_match(3, "ES", arranged(3, tops), turn_timeout_ms=1_000)
    match.reveal(0, stamps())
    version = match.version
    match.fire_timer(stamps(after_ms=1_000))
    (chained,) = events_since(match, version)
    assert type(chained).__name__ == "OutwardReveal"
    assert chained.reveals == [[0, A], [1, B], [2, C]]


def test_js_6_2_a_chained_reveal_nobody_can_make_waits_and_the_timer_still_acts() -> None:
    # ES, two seats, a 75-card deck: outward arrows 72 and 73, coloured arrows 74 (seat
    # 0's first card, harmless). Seat 0 holds 38 cards, seat 1 holds 37. Seat 0's 37th
    # card is outward: the simultaneous reveal shows seat 0's last card and seat 1's
    # last card, outward again (JS-7.2 ES: into the pot). The chained reveal it calls for
    # cannot happen: nobody has face-down cards. The turn timer must still act, as a
    # recorded event: it turns the piles over (JS-3.4) and the waiting simultaneous
    # reveal then happens.
    deck = ending_deck(2, "ES", 75, {0: [72, A], 1: [sym(1, 0), 73]}, tops={0: [74]})
    match, stamps = new_match(2, "ES", deck, inward_arrows=0, outward_arrows=2, coloured_arrows=1)
    reveal_until(match, stamps, 0, 2)
    match.reveal(0, stamps())
    assert match.down == [[], []]
    assert match.pot == [73]
    assert match.visible() == {0: A, 1: sym(1, 0)}
    assert match.turn is None and match.pending_outward == 1
    refused(match, "JS-3.4", match.fire_timer, stamps(after_ms=9_999))
    ups = [list(p) for p in match.up]
    version = match.version
    match.fire_timer(stamps(after_ms=1))
    recycled, chained = events_since(match, version)
    assert (type(recycled).__name__, type(chained).__name__) == ("PilesRecycled", "OutwardReveal")
    assert chained.triggered_by == 1
    # The recycled piles are shuffled (JS-3.4, decided here); each seat reveals the top
    # of its new pile.
    tops = [ups[seat][order[0]] for seat, order in enumerate(recycled.orders)]
    assert chained.reveals == [[0, tops[0]], [1, tops[1]]]
    assert [sorted(o) for o in recycled.orders] == [list(range(len(p))) for p in ups]
    assert match.pending_outward is None
    assert match.card_count() == 75


# ---- JS-6.3 coloured arrows ------------------------------------------------------------------


@VARIANTS
def test_js_6_3_coloured_arrows_duels_match_by_colour(variant: str) -> None:
    orange_a, orange_b = sym(3, 2), sym(5, 2)
    tops = [[COLOURED[0]], [orange_a], [orange_b], [sym(4, 0)], [sym(4, 1)]]
    match, stamps = new_match(5, variant, arranged(5, tops, variant))
    for seat in range(5):
        match.reveal(seat, stamps())
    assert match.coloured_mode
    # Same colour, different shapes: a duel. Same shape, different colours: none.
    assert match.open_duels() == [[1, 2]]


def test_js_6_3_es_only_while_the_coloured_card_stays_visible() -> None:
    tops = [[COLOURED[0], sym(7, 0)], [sym(3, 2)], [sym(5, 2)]]
    match, stamps = new_match(3, "ES", arranged(3, tops))
    for seat in range(3):
        match.reveal(seat, stamps())
    assert match.open_duels() == [[1, 2]]
    match.reveal(0, stamps())  # covers the coloured arrows
    assert not match.coloured_mode
    assert match.open_duels() == []


def test_js_6_3_ru_outlives_its_card_until_the_totem_is_grabbed() -> None:
    tops = [[COLOURED[0], sym(7, 0)], [sym(3, 2)], [sym(5, 2)]]
    match, stamps = new_match(3, "RU", arranged(3, tops, "RU", pot=ru_pot(3)))
    for seat in range(3):
        match.reveal(seat, stamps())
    match.reveal(0, stamps())  # covers the coloured arrows: RU keeps colour mode
    assert match.coloured_mode
    assert match.open_duels() == [[1, 2]]
    assert match.grab(2, stamps()) == "duel"
    assert not match.coloured_mode


def test_js_6_3_ru_ends_with_another_special_card_es_does_not() -> None:
    tops = [[COLOURED[0]], [sym(3, 2)], [sym(5, 2)], [INWARD[0]]]
    for variant, colour_mode in (("ES", True), ("RU", False)):
        match, stamps = new_match(4, variant, arranged(4, tops, variant))
        for seat in range(3):
            match.reveal(seat, stamps())
        assert match.open_duels() == [[1, 2]]
        match.reveal(3, stamps())  # another special card; the coloured one stays visible
        assert match.coloured_mode is colour_mode
        assert match.open_duels() == ([[1, 2]] if colour_mode else [])


@pytest.mark.parametrize(
    ("first", "last", "colour_mode"),
    [(COLOURED[0], INWARD[0], False), (INWARD[0], COLOURED[0], True)],
)
def test_js_6_3_ru_in_a_simultaneous_reveal_the_last_special_card_in_seat_order_decides(
    first: int, last: int, colour_mode: bool
) -> None:
    """JS-6.3 RU with JS-6.2 (decided here): the cards of one simultaneous reveal count in
    seat order, seat 0 first, not clockwise from the revealer of the outward arrows; the
    last special card in that order decides whether duels match by colour."""
    orange_a, orange_b = sym(3, 2), sym(5, 2)
    tops = [[A, first], [B, orange_a], [C, orange_b], [OUTWARD[0], D], [last]]
    match, stamps = new_match(5, "RU", arranged(5, tops, "RU"))
    for seat in range(4):
        match.reveal(seat, stamps())
    outward = match.pending_events[-1]
    assert type(outward).__name__ == "OutwardReveal" and outward.triggered_by == 3
    assert [s for s, _ in outward.reveals] == [0, 1, 2, 3, 4]  # JS-6.2: seat order
    assert match.visible() == {0: first, 1: orange_a, 2: orange_b, 3: D, 4: last}
    assert match.coloured_mode is colour_mode
    assert match.open_duels() == ([[1, 2]] if colour_mode else [])


def test_js_6_3_ru_a_wrong_grab_also_ends_colour_mode() -> None:
    tops = [[COLOURED[0]], [sym(3, 2)], [sym(5, 1)]]
    match, stamps = new_match(3, "RU", arranged(3, tops, "RU", pot=ru_pot(3)))
    for seat in range(3):
        match.reveal(seat, stamps())
    assert match.coloured_mode and match.open_duels() == []
    assert match.grab(0, stamps()) == "wrong"
    assert not match.coloured_mode


# ---- JS-7 the last face-down card --------------------------------------------------------------

#: Options for a deck without special cards; tests add the ones they need.
ONE_SPECIAL = {"inward_arrows": 0, "outward_arrows": 0, "coloured_arrows": 0}


def last_card_match(variant: str, kind: str) -> tuple[JungleSpeed, Stamps]:
    """Two seats, a 74-card deck: inward arrows 72, and 73 of the ``kind`` under test.

    Seat 1 wins an early duel, so seat 0 holds six more cards; seat 0 then wins an
    inward-arrows race, so the pot holds [72]. Returned when it is seat 1's turn with
    one face-down card left, 73, while seat 0 still has face-down cards.
    """
    deck = ending_deck(
        2,
        variant,
        74,
        {1: [sym(1, 0), 73]},
        tops={0: [A, B, sym(S, 0), 72], 1: [C, D, sym(S, 1)]},
    )
    options = dict(ONE_SPECIAL, inward_arrows=1)
    options[kind] += 1
    match, stamps = new_match(2, variant, deck, **options)
    for seat in (0, 1, 0, 1, 0, 1):
        match.reveal(seat, stamps())
    assert match.grab(1, stamps()) == "duel"
    match.reveal(0, stamps())
    assert match.grab(0, stamps()) == "arrows"
    assert match.pot == [72]
    reveal_until(match, stamps, 1, 1)
    assert match.down[1] == [73]
    assert len(match.down[0]) > 1
    assert match.open_duels() == []
    return match, stamps


def everything_clockwise(ups: list[list[int]], seat: int, pot: list[int]) -> list[int]:
    """All face-up piles from ``seat``'s left round to ``seat``, then the pot (JS-5.2)."""
    n = len(ups)
    order = [(seat + 1 + i) % n for i in range(n)]
    return [c for s in order for c in ups[s]] + pot


@VARIANTS
def test_js_7_1_last_card_inward_arrows_lost_race_takes_everything(variant: str) -> None:
    match, stamps = last_card_match(variant, "inward_arrows")
    match.reveal(1, stamps())
    assert match.down[1] == [] and match.open_arrows() == [73]
    pot = list(match.pot)
    assert pot == [72]  # JS-7.4: the pot is collected too
    ups = [list(p) for p in match.up]
    assert match.grab(0, stamps()) == "arrows"
    # The winner's pile goes to the pot first (JS-6.1); then seat 1 takes every face-up
    # pile and the pot (as JS-5.2): there is only its own left, then the pot.
    assert match.down[1] == ups[1] + pot + ups[0]
    assert match.up == [[], []]
    assert match.pot == []
    assert match.active(1)
    assert match.status is MatchStatus.PLAYING
    assert match.card_count() == 74


@VARIANTS
def test_js_7_1_after_a_lost_last_card_race_the_race_winner_plays_next(variant: str) -> None:
    """JS-7.1 (decided here) with JS-6.1: the player who lost the race on their last card
    takes every pile as JS-5.2 says, but the race's winner still plays next; "as JS-5.2"
    names how the cards are taken, not who starts."""
    match, stamps = last_card_match(variant, "inward_arrows")
    match.reveal(1, stamps())
    assert match.grab(0, stamps()) == "arrows"
    assert match.down[0] and match.down[1]
    assert match.turn == 0
    refused(match, "JS-3.1", match.reveal, 1, stamps())
    match.reveal(0, stamps())
    assert match.turn == 1


@VARIANTS
def test_js_7_1_last_card_inward_arrows_won_race_finishes_the_player(variant: str) -> None:
    match, stamps = last_card_match(variant, "inward_arrows")
    match.reveal(1, stamps())
    pile = list(match.up[1])
    pot = list(match.pot)
    assert match.grab(1, stamps()) == "arrows"
    assert match.pot == pot + pile
    assert not match.active(1)
    # RU: the first to finish wins; ES: a match of two ends when one finishes (JS-8.2).
    assert match.status is MatchStatus.ENDED
    assert match.result == [{"seat": 1, "place": 1}, {"seat": 0, "place": 2}]


def test_js_7_2_es_last_card_outward_goes_to_the_pot_and_the_reveal_still_happens() -> None:
    # ES, ten seats, 73 cards: seat 0 holds 8, its last card is the outward arrows (72).
    deck = ending_deck(10, "ES", 73, {0: [sym(0, 0), 72]})
    match, stamps = new_match(10, "ES", deck, **dict(ONE_SPECIAL, outward_arrows=1))
    reveal_until(match, stamps, 0, 1)
    # Only seats 1 and 2 still hold a face-down card (their 8th).
    assert [len(p) for p in match.down] == [1, 1, 1] + [0] * 7
    pile = list(match.up[0])
    version = match.version
    match.reveal(0, stamps())
    revealed, outward = events_since(match, version)
    assert revealed.card == 72
    assert match.pot == [72]
    assert match.up[0] == pile  # the rest of its face-up pile stays: not finished
    assert match.active(0)
    assert type(outward).__name__ == "OutwardReveal"
    assert outward.reveals == [[1, sym(1, 1)], [2, sym(2, 1)]]
    assert match.down == [[] for _ in range(10)]


def test_js_7_2_ru_last_card_outward_finishes_the_player_at_once() -> None:
    # RU, ten seats, 73 cards: 7 each and 3 in the pot. Seat 9's last card is 72.
    deck = ending_deck(10, "RU", 73, {9: [sym(9, 0), 72]})
    match, stamps = new_match(10, "RU", deck, **dict(ONE_SPECIAL, outward_arrows=1))
    reveal_until(match, stamps, 9, 1)
    pot = list(match.pot)
    pile = list(match.up[9])
    version = match.version
    match.reveal(9, stamps())
    names = event_names(events_since(match, version))
    assert names == ["Revealed", "PlayerFinished", "MatchEnded"]  # no simultaneous reveal
    assert match.pot == pot + pile + [72]
    assert match.up[9] == [] and match.down[9] == []
    assert match.status is MatchStatus.ENDED
    assert match.result[0] == {"seat": 9, "place": 1}
    assert all(r["place"] == 2 for r in match.result[1:])


@VARIANTS
def test_js_7_3_last_card_coloured_takes_everything_and_play_continues(variant: str) -> None:
    """JS-7.3 (decided here): the revealer of a last-card coloured arrows takes every
    face-up pile and the pot, and play continues with the next player clockwise from
    the revealer, as after any reveal (not with the collector); the card has left the
    table, so RU colour mode (JS-6.3) ends with it."""
    match, stamps = last_card_match(variant, "coloured_arrows")
    pot = list(match.pot)
    ups = [list(p) for p in match.up]
    match.reveal(1, stamps())
    ups[1].append(73)
    assert pot == [72]  # JS-7.4: the pot is collected too
    assert match.down[1] == everything_clockwise(ups, 1, pot)
    assert match.up == [[], []] and match.pot == []
    assert not match.coloured_mode
    assert match.status is MatchStatus.PLAYING
    assert match.turn == 0  # play continues with the next seat


def test_js_7_3_in_a_simultaneous_reveal_the_coloured_card_takes_all_cards_revealed_with_it() -> (
    None
):
    """JS-6.2 + JS-7.3: everyone reveals at once, so a player whose last card is the
    coloured arrows takes every face-up pile including the cards revealed with it, by
    seats after it as well as before it."""
    # ES, ten seats, 74 cards (outward 72, coloured 73): seats 0-3 hold 8, the others 7.
    # Seat 2's 7th card is the outward arrows; seat 4's 7th and last is the coloured.
    deck = ending_deck(10, "ES", 74, {2: [72, sym(2, 1)], 4: [sym(4, 0), 73]})
    options = dict(ONE_SPECIAL, outward_arrows=1, coloured_arrows=1)
    match, stamps = new_match(10, "ES", deck, **options)
    reveal_until(match, stamps, 2, 2)
    assert match.down[4] == [73]
    ups = [list(p) for p in match.up]
    version = match.version
    match.reveal(2, stamps())
    outward = events_since(match, version)[1]
    assert type(outward).__name__ == "OutwardReveal"
    assert [s for s, _ in outward.reveals] == list(range(10))
    ups[2].append(72)
    for seat, card in outward.reveals:
        ups[seat].append(card)
    # Seat 4 took every pile clockwise from its left (5 … 9, 0 … 3), then its own.
    assert match.down[4] == everything_clockwise(ups, 4, [])
    assert match.up == [[] for _ in range(10)]
    assert match.card_count() == 74
