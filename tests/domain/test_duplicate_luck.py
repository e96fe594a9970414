"""Duplicate tables (TO-12.1): every table of a tournament's round plays the same luck,
drawn from the round's seed, whatever each match's own seed and its players' entropy.

Each game registers how its luck is prearranged (``domain.games.Game.duplicate_luck``);
these tests hold every registered game to it, and play Jungle Speed's and Tribes' first
draws at two tables of different seeds to show the luck is the same.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest
from domain_support import Stamps

from domain.games import GAMES
from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.jungle_speed.match import shuffled_deck
from domain.kernel.match import MatchStatus
from domain.tournament.duplicate import duplicate_seed
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.tribes.match import truth_cards
from domain.village import Options as VillageOptions

TOURNAMENT_SEED = bytes(range(32))
ROUND_1 = duplicate_seed(TOURNAMENT_SEED, 1)
ROUND_2 = duplicate_seed(TOURNAMENT_SEED, 2)

#: Each game's options as an organiser might give them to a tournament.
OPTIONS: dict[str, Any] = {
    "jungle_speed": JungleSpeedOptions(turn_timeout_ms=0),
    "tribes": TribesOptions(turn_timeout_ms=0, extended=True),
    "village": VillageOptions(),
}


def test_every_registered_game_has_options_here() -> None:
    assert set(OPTIONS) == set(GAMES)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_to_12_1_every_table_of_a_round_is_given_the_same_luck(game: str) -> None:
    luck = GAMES[game].duplicate_luck
    first, second = luck(OPTIONS[game], ROUND_1, 3), luck(OPTIONS[game], ROUND_1, 3)
    assert first == second
    first.validate()  # options a match accepts
    assert first.max_players == 3
    # Another round, another luck; the organiser's own options kept.
    assert luck(OPTIONS[game], ROUND_2, 3) != first
    assert _own(first) == _own(OPTIONS[game])


def _own(options: Any) -> dict[str, Any]:
    """The options a duplicate table keeps as the organiser gave them."""
    return {
        k: v
        for k, v in asdict(options).items()
        if k != "max_players" and not k.startswith("prearranged")
    }


def _started(cls: Any, options: Any, seed: bytes, seats: int) -> Any:
    match = cls.create(options, seed, entropy=seed[:8])
    stamps = Stamps()
    for seat in range(seats):
        match.join(f"p{seat}", seed[seat : seat + 4], f"hash-{seed[0]}-{seat}", stamps())
    assert match.status is MatchStatus.PLAYING
    return match


def test_to_12_1_jungle_speed_tables_of_a_round_are_dealt_alike() -> None:
    options = GAMES["jungle_speed"].duplicate_luck(OPTIONS["jungle_speed"], ROUND_1, 4)
    tables = [_started(JungleSpeed, options, bytes([n]) * 32, 4) for n in (1, 2)]
    deals = [[e.deck for e in t.pending_events if type(e).__name__ == "Dealt"] for t in tables]
    assert deals[0] == deals[1] == [shuffled_deck(ROUND_1, 80)]
    assert tables[0].down == tables[1].down
    # The matches' own seeds differ: without the prearranged deal they would not.
    assert tables[0].effective_seed() != tables[1].effective_seed()


def test_to_12_1_tribes_tables_of_a_round_draw_the_same_cards() -> None:
    options = GAMES["tribes"].duplicate_luck(OPTIONS["tribes"], ROUND_1, 3)
    tables = [_started(Tribes, options, bytes([n]) * 32, 3) for n in (1, 2)]
    assert tables[0].cards == tables[1].cards == truth_cards(ROUND_1, 0, 3)
    assert options.prearranged_dice is not None and len(set(options.prearranged_dice)) > 1
