"""Jungle Speed components and setup: JS-1 (deck, players) and JS-2 (deal, first turn)."""

from __future__ import annotations

from typing import Any

import pytest
from domain_support import INWARD, SEED, Stamps, arranged, deal_for, new_match, refused, sym

from domain.jungle_speed import Deck, JungleSpeed, Kind, Options
from domain.jungle_speed.cards import COLOURS, FAMILIES, SHAPES
from domain.kernel import InvalidArgument, MatchStatus

# ---- JS-1 components ----------------------------------------------------------------


def test_js_1_1_deck_has_80_cards_each_shape_colour_pair_once() -> None:
    deck = Deck()
    assert len(deck) == 80
    symbols = [c for c in deck.cards if c.kind is Kind.SYMBOL]
    assert len(symbols) == 72
    assert len(SHAPES) == 18 and len(set(SHAPES)) == 18
    assert COLOURS == ("PURPLE", "GREEN", "ORANGE", "YELLOW")
    pairs = {(c.shape, c.colour) for c in symbols}
    assert pairs == {(s, c) for s in SHAPES for c in COLOURS}
    # Wire identity: id = 4 * shape index + colour index, then the specials.
    for card in symbols:
        assert card.id == 4 * SHAPES.index(card.shape) + COLOURS.index(card.colour)
    assert [c.id for c in deck.cards] == list(range(80))


def test_js_1_2_six_families_of_three_look_alike_shapes() -> None:
    """JS-1.2: the 18 shapes are 6 families of 3 look-alikes; each shape's wire name
    says its family, so that clients can draw the near-misses."""
    assert len(FAMILIES) == 6
    assert all(len(set(variants)) == 3 for variants in FAMILIES.values())
    assert len(SHAPES) == 18 and len(set(SHAPES)) == 18
    for i, shape in enumerate(SHAPES):
        assert shape.split("_")[0] == list(FAMILIES)[i // 3]


def test_js_1_2_only_identical_shapes_duel_not_family_look_alikes() -> None:
    """JS-1.2: look-alikes of one family never duel; only identical shapes do."""
    # Shapes 0 and 1 are two variants of the same family; shape 0 twice is a duel.
    assert SHAPES[0].split("_")[0] == SHAPES[1].split("_")[0]
    deck = arranged(2, [[sym(0, 0), sym(0, 3)], [sym(1, 0), sym(0, 1)]])
    match, stamps = new_match(2, deck=deck)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.open_duels() == []  # look-alikes, same colour: no duel
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.open_duels() == [[0, 1]]  # identical shape, colours differ: duel


def test_js_1_3_default_specials_and_their_ids() -> None:
    deck = Deck()
    kinds = [deck[i].kind for i in range(72, 80)]
    assert (
        kinds == [Kind.INWARD_ARROWS] * 3 + [Kind.OUTWARD_ARROWS] * 3 + [Kind.COLOURED_ARROWS] * 2
    )
    for card in deck.cards[72:]:
        assert card.is_special
        assert card.shape is None and card.colour is None
        assert card.key(by_colour=False) is None and card.key(by_colour=True) is None


def test_js_1_3_special_counts_are_an_option() -> None:
    opts = Options(inward_arrows=1, outward_arrows=0, coloured_arrows=4).validate()
    deck = opts.deck()
    assert len(deck) == 77
    assert [deck[i].kind for i in range(72, 77)] == [Kind.INWARD_ARROWS] + [
        Kind.COLOURED_ARROWS
    ] * 4
    match = JungleSpeed.create(Options(max_players=2, inward_arrows=0), SEED)
    stamps = Stamps()
    match.join("a", b"", "h", stamps())
    match.join("b", b"", "h", stamps())
    assert match.card_count() == 77


def test_js_1_3_two_special_cards_never_duel() -> None:
    deck = arranged(3, [[72], [73], [75]])
    match, stamps = new_match(3, deck=deck)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.open_duels() == []
    deck = arranged(2, [[78], [79]])
    match, stamps = new_match(2, deck=deck)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.open_duels() == []


def test_js_1_4_the_pot_starts_empty_in_es() -> None:
    """JS-1.4 with JS-2.1: in ES every card is dealt, so nothing lies under the totem."""
    match, _ = new_match(3)
    assert match.pot == []


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_1_4_the_pot_is_one_pile_under_the_one_totem(variant: str) -> None:
    """JS-1.4: one totem, and the pot is the one pile of cards under it. Cards put under
    the totem join that pile in order (RU: the dealt remainder first, JS-2.1; then the
    pile of an inward-arrows winner, JS-6.1), and the duel decided by the next grab of
    the totem gives the whole pile to the loser (JS-4.3), leaving nothing under it."""
    pot = [sym(16, 0), sym(16, 1)] if variant == "RU" else None
    tops = [[sym(0, 0), INWARD[0], sym(4, 0)], [sym(1, 0), sym(2, 0)], [sym(3, 0), sym(2, 1)]]
    match, stamps = new_match(3, variant, arranged(3, tops, variant, pot=pot))
    assert match.pot == (pot or [])
    for seat in (0, 1, 2, 0):
        match.reveal(seat, stamps())
    assert match.open_arrows() == [INWARD[0]]
    assert match.grab(2, stamps()) == "arrows"
    assert match.pot == [*(pot or []), sym(3, 0)]
    under_the_totem = list(match.pot)
    for seat in (2, 0, 1):  # the winner of the race plays next (JS-6.1)
        match.reveal(seat, stamps())
    assert match.open_duels() == [[1, 2]]
    down = list(match.down[2])
    assert match.grab(1, stamps()) == "duel"
    winner_pile, own_pile = [sym(1, 0), sym(2, 0)], [sym(2, 1)]
    assert match.down[2] == down + winner_pile + own_pile + under_the_totem
    assert match.pot == []


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("max_players", 1, "JS-1.5"),
        ("max_players", 11, "JS-1.5"),
        ("variant", "FR", "JS-2.1"),
        ("turn_timeout_ms", -1, "JS-3.4"),
        ("min_reveal_interval_ms", 3_600_001, "JS-3.4"),
        ("inward_arrows", 9, "JS-1.3"),
        ("coloured_arrows", -1, "JS-1.3"),
        ("prearranged_deal", list(range(79)), "JS-2.4"),
        ("prearranged_deal", [0, *range(1, 79), 1], "JS-2.4"),
        ("prearranged_deal", list(range(1, 81)), "JS-2.4"),
    ],
)
def test_js_1_5_and_options_are_validated_at_creation(field: str, value: Any, rule: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        JungleSpeed.create(Options(**{field: value}), SEED)
    assert info.value.rule == rule


def test_js_1_5_two_to_ten_players_default_eight() -> None:
    assert Options().max_players == 8
    for n in (2, 10):
        match, _ = new_match(n)
        assert match.status is MatchStatus.PLAYING
        assert len(match.down) == n


# ---- JS-2 setup ----------------------------------------------------------------------


def test_js_2_1_es_deals_all_80_one_at_a_time_clockwise_from_seat_0() -> None:
    match, _ = new_match(3, "ES", deck=list(range(80)))
    # Card k goes to seat k mod 3; the first card received is on top of the pile.
    assert match.down[0] == list(range(0, 80, 3))
    assert match.down[1] == list(range(1, 80, 3))
    assert match.down[2] == list(range(2, 80, 3))
    # 80 mod 3 = 2: the first two seats get one more.
    assert [len(p) for p in match.down] == [27, 27, 26]
    assert match.pot == []
    assert match.up == [[], [], []]


def test_js_2_1_es_seven_players_first_three_get_one_more() -> None:
    match, _ = new_match(7, "ES", deck=list(range(79, -1, -1)))
    assert [len(p) for p in match.down] == [12, 12, 12, 11, 11, 11, 11]
    assert match.down[3][:3] == [76, 69, 62]
    assert match.pot == []


def test_js_2_1_ru_deals_floor_80_over_n_and_the_remainder_goes_face_up_to_the_pot() -> None:
    match, _ = new_match(3, "RU", deck=list(range(80)))
    assert [len(p) for p in match.down] == [26, 26, 26]
    assert match.down[1] == list(range(1, 78, 3))
    # The remainder is the last two cards of the deck order, face up under the totem.
    assert match.pot == [78, 79]
    assert match.up == [[], [], []]


def test_js_2_1_ru_seven_players() -> None:
    match, _ = new_match(7, "RU", deck=list(range(80)))
    assert [len(p) for p in match.down] == [11] * 7
    assert match.pot == [77, 78, 79]
    assert match.down[6] == list(range(6, 77, 7))


def test_js_2_1_ru_even_split_leaves_the_pot_empty() -> None:
    match, _ = new_match(4, "RU", deck=list(range(80)))
    assert [len(p) for p in match.down] == [20] * 4
    assert match.pot == []


def test_deal_for_helper_matches_the_rule() -> None:
    """The test helper builds the deck order for chosen piles; check it against JS-2.1."""
    piles = [[10, 11, 12], [20, 21, 22], [30, 31]]
    assert deal_for(piles) == [10, 20, 30, 11, 21, 31, 12, 22]
    deck = arranged(3, [[5, 6], [7], []], "RU", pot=[1, 2])
    match, _ = new_match(3, "RU", deck=deck)
    assert match.down[0][:2] == [5, 6]
    assert match.down[1][0] == 7
    assert match.pot == [1, 2]


def test_js_2_2_face_up_piles_start_empty_and_only_the_top_card_counts() -> None:
    # Seat 0's first card (shape 0) is covered before seat 1 shows shape 0: no duel.
    deck = arranged(2, [[sym(0, 0), sym(2, 0)], [sym(1, 1), sym(0, 1)]])
    match, stamps = new_match(2, deck=deck)
    assert match.up == [[], []]
    assert match.visible() == {}
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.up == [[sym(0, 0), sym(2, 0)], [sym(1, 1), sym(0, 1)]]
    assert match.visible() == {0: sym(2, 0), 1: sym(0, 1)}
    assert match.open_duels() == []


def test_js_2_3_seat_0_reveals_first() -> None:
    """JS-2.3: after the deal the turn is seat 0's, in both variants; every other reveal
    is refused (JS-3.1)."""
    for variant in ("ES", "RU"):
        match, stamps = new_match(4, variant)
        assert match.turn == 0
        for seat in (1, 2, 3):
            refused(match, "JS-3.1", match.reveal, seat, stamps())
        match.reveal(0, stamps())
        assert match.turn == 1


def test_js_2_4_a_prearranged_deal_is_used_as_given() -> None:
    deck = list(range(80))
    deck[0], deck[79] = deck[79], deck[0]
    match, _ = new_match(2, deck=deck)
    dealt = next(e for e in match.pending_events if type(e).__name__ == "Dealt")
    assert dealt.deck == deck
    assert match.down[0][0] == 79
    assert match.down[1][-1] == 0
