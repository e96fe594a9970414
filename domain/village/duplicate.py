"""The luck of a duplicate table (TO-12.1): the children's sexes, drawn from the round's
seed.

Village's only draw is the sex of each child born (VI-2.4). Every table of a tournament's
duplicate round is given the same prearranged sequence of sexes, drawn from the round's
seed on a stream of its own; a match born past its end draws from its own seed again.
Each match keeps its own secret (VI-2.2): a shared one would give every table the same
spell commitments.
"""

from __future__ import annotations

from dataclasses import replace

from domain.kernel.randomness import SeededRandom
from domain.village.births import sex_of
from domain.village.options import Options

#: How many sexes a duplicate table is given: more children than a match sees born.
DRAWS = 500


def duplicate_luck(options: Options, round_seed: bytes, seats: int) -> Options:
    """``options`` for a table of ``seats`` of a duplicate round whose seed is
    ``round_seed``: the sexes of its children prearranged, exactly ``seats`` families."""
    rng = SeededRandom(round_seed, "village/births/duplicate")
    sexes = [sex_of(rng.randbelow(2)) for _ in range(DRAWS)]
    return replace(options, max_players=seats, prearranged_sexes=sexes)
