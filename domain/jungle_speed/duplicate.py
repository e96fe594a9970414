"""The luck of a duplicate table (TO-12.1): the deal, drawn from the round's seed.

A tournament's duplicate round gives every table the same deck order, so that results
compare players, not deals. The order is the shuffle a match would draw (JS-9.1), drawn
from the round's seed instead of the match's, and given to the match as its prearranged
deal (JS-2.4): hidden from the players until it happens, re-derived by anyone once the
tournament's seed is revealed. What play decides (the recyclings of the piles, the draws
among simultaneous grabs) stays each table's own.
"""

from __future__ import annotations

from dataclasses import replace

from domain.jungle_speed.match import shuffled_deck
from domain.jungle_speed.options import Options


def duplicate_luck(options: Options, round_seed: bytes, seats: int) -> Options:
    """``options`` for a table of ``seats`` of a duplicate round whose seed is
    ``round_seed``: the round's deal prearranged, exactly ``seats`` players."""
    deal = shuffled_deck(round_seed, len(options.deck()))
    return replace(options, max_players=seats, prearranged_deal=deal)
