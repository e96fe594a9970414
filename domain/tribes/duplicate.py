"""The luck of a duplicate table (TO-12.1): the Cards of Truth and the die, drawn from
the round's seed.

Every table of a tournament's duplicate round is given the same prearranged Cards of
Truth for each of its rounds (TR-2.1) and, in the extended game, the same die rolls
(TR-5.1): the draws a match would make, drawn from the round's seed instead of the
match's. A match that plays more rounds or rolls more often than prearranged starts the
sequence again (see :class:`domain.tribes.options.Options`).
"""

from __future__ import annotations

from dataclasses import replace

from domain.tribes.match import die_roll, truth_cards
from domain.tribes.options import Options

#: How many rounds' cards and how many rolls a duplicate table is given: more than a
#: match plays, yet a small created event.
DRAWS = 100


def duplicate_luck(options: Options, round_seed: bytes, seats: int) -> Options:
    """``options`` for a table of ``seats`` of a duplicate round whose seed is
    ``round_seed``: every seat filled (the cards are a permutation of the seats), the
    cards and, in the extended game, the die prearranged."""
    cards = [truth_cards(round_seed, k, seats) for k in range(DRAWS)]
    dice = [die_roll(round_seed, k, options.dice_faces) for k in range(DRAWS)]
    return replace(
        options,
        max_players=seats,
        prearranged_cards=cards,
        prearranged_dice=dice if options.extended else None,
    )
