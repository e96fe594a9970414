"""One entry point per format (TO-2.3, TO-3.6, TO-3.7, TO-4.2)."""

from __future__ import annotations

from tournament_support import byes_of, seats_of

from domain.tournament import Format, default_rounds, pair_round

SIX = list("ABCDEF")


def test_to_2_3_to_3_7_to_4_2_default_rounds() -> None:
    assert default_rounds(Format.ROUND_ROBIN, SIX) == 5
    assert default_rounds(Format.ROUND_ROBIN, SIX[:5]) == 5
    assert default_rounds(Format.SWISS, SIX) == 3
    assert default_rounds(Format.SINGLE_ELIMINATION, SIX) == 3


def test_to_3_6_pair_round_leaves_out_the_withdrawn_in_swiss() -> None:
    r = pair_round(Format.SWISS, SIX, 1, withdrawn={"B": 1})
    # Still in: A C D E F; F, the lowest, has the bye; A-D, C-E.
    assert seats_of(r) == [("A", "D"), ("C", "E")]
    assert byes_of(r) == ["F"]


def test_pair_round_hands_each_format_its_entrants() -> None:
    assert seats_of(pair_round(Format.ROUND_ROBIN, SIX[:4], 1)) == [("A", "D"), ("B", "C")]
    elimination = pair_round(Format.SINGLE_ELIMINATION, SIX, 1, withdrawn={"F": 1})
    assert seats_of(elimination) == [("D", "E")]
    assert byes_of(elimination) == ["A", "B", "C"]
