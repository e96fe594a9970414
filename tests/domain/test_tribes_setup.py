"""Components, options and the start of every round (TR-1, TR-2.1)."""

from __future__ import annotations

from typing import Any

import pytest
from domain_support import Stamps, refused
from tribes_support import SEED, every, last, new_tribes, play, win_round_for_seat_0

from domain.kernel import InvalidArgument, MatchStatus
from domain.tribes import Options, Tribes
from domain.tribes.match import truth_cards, turn_order
from domain.tribes.pieces import BADGES, CHIEF, lines


@pytest.mark.parametrize("players", [2, 3, 4])
def test_tr_1_1_each_tribe_has_five_totems_of_sizes_1_to_5(players: int) -> None:
    match, _ = new_tribes(players)
    assert match.mats == [[1, 2, 3, 4, 5] for _ in range(players)]
    assert CHIEF == 5  # the Grand Chief is the size-5 totem


@pytest.mark.parametrize("players", [1, 5])
def test_tr_1_1_two_to_four_players(players: int) -> None:
    with pytest.raises(InvalidArgument) as info:
        Tribes.create(Options(max_players=players), SEED)
    assert info.value.rule == "TR-1.1"


def test_tr_1_1_a_fifth_seat_does_not_exist_and_two_can_start_early() -> None:
    stamps = Stamps()
    match = Tribes.create(Options(max_players=4), SEED)
    match.join("ann", b"", "h0", stamps())
    refused(match, "TR-1.1", match.start, 0, stamps())  # one player is not enough
    match.join("bob", b"", "h1", stamps())
    match.start(1, stamps())
    assert match.status is MatchStatus.PLAYING
    assert match.size == 3  # TR-1.2: two players at the start: 3×3


@pytest.mark.parametrize(("players", "size"), [(2, 3), (3, 4), (4, 4)])
def test_tr_1_2_board_size_by_player_count(players: int, size: int) -> None:
    match, _ = new_tribes(players)
    assert match.size == size
    assert len(match.board) == size * size
    assert all(stack == [] for stack in match.board)


@pytest.mark.parametrize("size", [3, 4, 5])
def test_tr_1_2_board_size_option(size: int) -> None:
    match, _ = new_tribes(2, board_size=size)
    assert match.size == size


@pytest.mark.parametrize("size", [2, 6])
def test_tr_1_2_board_size_out_of_range(size: int) -> None:
    with pytest.raises(InvalidArgument) as info:
        Tribes.create(Options(board_size=size), SEED)
    assert info.value.rule == "TR-1.2"


def test_tr_1_2_only_the_top_of_a_stack_is_visible() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "1@4", "3@4")
    assert match.board[4] == [0, 7]  # seat 0's 1 under seat 1's 3
    assert match.top(4) == 7


def test_tr_1_3_the_mat_holds_the_totems_not_on_the_board() -> None:
    """TR-1.3: a tribe's Identity Mat holds its totems that are not on the board."""
    match, stamps = new_tribes(2)
    play(match, stamps, "2@0", "5@8", "4@1")
    assert match.mats == [[1, 3, 5], [1, 2, 3, 4]]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_tr_1_4_cards_of_truth_are_1_to_n(players: int) -> None:
    """TR-1.4: the Cards of Truth are numbered 1 to n for n players."""
    match, _ = new_tribes(players, cards=[])
    assert sorted(match.cards) == list(range(1, players + 1))


def test_tr_1_5_four_badges_in_order_then_the_feathers() -> None:
    assert BADGES == ("wisdom", "loyalty", "boldness", "tenacity")
    match, stamps = new_tribes(2)
    win_round_for_seat_0(match, stamps)
    assert match.badges[0] == ["wisdom"]


def test_tr_2_1_cards_drawn_from_the_seed_on_their_own_stream_and_recorded() -> None:
    match, stamps = new_tribes(3, cards=[], board_size=3)
    started = every(match, "RoundStarted")
    assert len(started) == 1
    seed = match.effective_seed()
    assert started[0].cards == truth_cards(seed, 0, 3) == match.cards
    assert started[0].order == turn_order(match.cards)
    # Turn order is ascending card number.
    assert [match.cards[s] for s in match.order] == [1, 2, 3]
    assert match.turn == match.order[0]
    # Every round draws again, from the next stream (tribes/cards/1).
    play(match, stamps, *_three_player_round_won_by_first(match))
    started = every(match, "RoundStarted")
    assert len(started) == 2 and started[1].round == 2
    assert started[1].cards == truth_cards(seed, 1, 3)


def _three_player_round_won_by_first(match: Tribes) -> list[str]:
    """Moves for a 3×3 round in any order of three: the first seat takes row 0, the
    others put totems on rows 1 and 2 without making a line."""
    return ["1@0", "1@3", "1@6", "2@1", "2@4", "2@8", "3@2"]


def test_tr_2_1_every_round_starts_with_an_empty_board_and_full_mats() -> None:
    match, stamps = new_tribes(2)
    win_round_for_seat_0(match, stamps)
    assert match.round == 2
    assert all(stack == [] for stack in match.board)
    assert match.mats == [[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]
    assert match.lifted is None and match.moves == 0


def test_tr_2_1_prearranged_cards_are_used_in_order_and_again_from_the_start() -> None:
    match, stamps = new_tribes(2, cards=[[2, 1], [1, 2]])
    assert match.cards == [2, 1] and match.turn == 1
    for expected in ([1, 2], [2, 1]):
        if match.turn == 1:
            play(match, stamps, "1@0", "1@6", "2@1", "2@7", "3@2")  # seat 1 wins
        else:
            win_round_for_seat_0(match, stamps)
        assert match.cards == expected
    assert [e.cards for e in every(match, "RoundStarted")] == [[2, 1], [1, 2], [2, 1]]


def test_tr_2_1_prearranged_cards_must_fit_the_seats() -> None:
    with pytest.raises(InvalidArgument) as info:
        Tribes.create(Options(max_players=3, prearranged_cards=[[1, 2]]), SEED)
    assert info.value.rule == "TR-2.1"
    # An early start with fewer players than the prearranged cards is refused.
    stamps = Stamps()
    match = Tribes.create(Options(max_players=3, prearranged_cards=[[1, 2, 3]]), SEED)
    match.join("ann", b"", "h0", stamps())
    match.join("bob", b"", "h1", stamps())
    assert match.legal_actions(0)["start"] is False
    refused(match, "TR-2.1", match.start, 0, stamps())


BAD_OPTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "timer too long": ({"turn_timeout_ms": 3_600_001}, "TR-2.2"),
    "no move limit": ({"round_move_limit": 0}, "TR-2.5"),
    "a die with no face": ({"dice_faces": []}, "TR-5.1"),
    "an unknown face": ({"dice_faces": ["blank", "purple"]}, "TR-5.1"),
    "prearranged rolls in the base game": ({"prearranged_dice": ["blank"]}, "TR-5.1"),
    "a prearranged roll not on the die": (
        {"extended": True, "dice_faces": ["blank"], "prearranged_dice": ["large"]},
        "TR-5.1",
    ),
    "salvation spaces without a board size": ({"salvation_spaces": [0]}, "TR-5.6"),
    "a salvation space off the board": ({"board_size": 3, "salvation_spaces": [9]}, "TR-5.6"),
    "a salvation space twice": ({"board_size": 3, "salvation_spaces": [1, 1]}, "TR-5.6"),
    "a card twice": ({"max_players": 2, "prearranged_cards": [[1, 1]]}, "TR-2.1"),
    "no prearranged round": ({"prearranged_cards": []}, "TR-2.1"),
}


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_bad_options_name_their_rule(case: str) -> None:
    fields, rule = BAD_OPTIONS[case]
    with pytest.raises(InvalidArgument) as info:
        Tribes.create(Options(**fields), SEED)
    assert info.value.rule == rule


def test_defaults_are_the_rules_decisions() -> None:
    options = Options()
    assert options.max_players == 4
    assert options.board_size is None
    assert options.turn_timeout_ms == 60_000
    assert options.round_move_limit == 200
    assert options.extended is False
    assert options.dice_faces == ["blank"] * 4 + ["large", "small"]
    assert options.salvation_spaces is None


def test_tr_3_1_lines_on_every_board_size() -> None:
    assert len(lines(3)) == 8
    # 4×4: 2 per row and column (16), and 4 + 4 diagonal triples.
    assert len(lines(4)) == 24
    assert (0, 1, 2) in lines(4) and (1, 2, 3) in lines(4) and (1, 6, 11) in lines(4)
    assert len(lines(5)) == 48


def test_the_round_event_carries_the_draw_and_the_first_turn() -> None:
    match, _ = new_tribes(4, cards=[[3, 1, 4, 2]])
    started = last(match, "RoundStarted")
    assert started.order == [1, 3, 0, 2]
    assert match.turn == 1
