"""Village phase 8, the census (VI-2.9), the checks after every phase (VI-3), restarts
(VI-2.1, VI-7.2), and the end (VI-4, VI-7.1, VI-7.3, VI-7.5)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from domain_support import Stamps
from village_support import (
    all_of,
    arrange_all_default,
    awaiting,
    drive,
    drive_past,
    fire,
    last,
    new_village,
    stage,
    to_decision,
)

from domain.kernel import MatchStatus, Viewer
from domain.village import Village, model
from domain.village.model import census_awards
from domain.village.views import state_view

# ---- the census ties (VI-2.9) -----------------------------------------------------------


@pytest.mark.parametrize(
    "sizes,pieces,birds",
    [
        ([12, 9, 7, 3], [0, 1], []),  # the largest and the second largest
        ([9, 12, 12, 3], [1, 2], []),  # exactly two share the largest: only they
        ([12, 12, 12, 12], [], [0, 1, 2, 3]),  # four share the largest: a bird each
        ([12, 12, 5, 12], [], [0, 1, 3]),  # three share the largest: a bird each
        ([14, 9, 9, 3], [0], [1, 2]),  # one largest, tied seconds: a bird each
        ([14, 9, 9, 9], [0], [1, 2, 3]),
    ],
)
def test_vi_2_9_four_families_census_and_its_ties(
    sizes: list[int], pieces: list[int], birds: list[int]
) -> None:
    assert census_awards(sizes, totem_b=False) == (pieces, birds)


@pytest.mark.parametrize(
    "sizes,pieces",
    [
        ([12, 9, 7, 3], [0, 1]),
        ([9, 12, 12, 3], [1, 2]),  # exactly two: only they, as without totem_b
        ([12, 12, 12, 12], [0, 1, 2, 3]),  # three or four largest: all of them
        ([12, 12, 5, 12], [0, 1, 3]),
        ([14, 9, 9, 3], [0, 1, 2]),  # one largest, tied seconds: all of them
    ],
)
def test_vi_2_9_totem_b_ties_all_build(sizes: list[int], pieces: list[int]) -> None:
    assert census_awards(sizes, totem_b=True) == (pieces, [])


@pytest.mark.parametrize(
    "sizes,pieces",
    [([12, 9, 7], [0]), ([12, 12, 7], [0, 1]), ([8, 8, 8], [0, 1, 2]), ([3, 9, 9], [1, 2])],
)
@pytest.mark.parametrize("totem_b", [False, True])
def test_vi_2_9_three_families_only_the_largest_ties_all(
    sizes: list[int], pieces: list[int], totem_b: bool
) -> None:
    assert census_awards(sizes, totem_b) == (pieces, [])


def steady(size: int, elder: bool = True) -> list[dict[str, int]]:
    """A family of ``size`` (at least 5) that keeps ``size - 1`` members through a round
    (``size`` without its elder): no couple shares a cottage, so nobody is born; the
    young become mature and the mature adults the next elders; the elder dies of age."""
    women = (size - 3) // 2
    men = size - women - (1 if elder else 0) - 2
    return [
        {"young_woman": women, "elder": 1 if elder else 0},
        {"young_man": men, "mature_man": 1},
        {"mature_woman": 1},
    ]


def census_scene(
    staged: dict[int, list[dict[str, int]]],
    players: int = 4,
    poles: dict[int, int] | None = None,
    birds: dict[int, int] | None = None,
    **options: Any,
) -> tuple[Village, Stamps, Any]:
    match, stamps = new_village(players, **options)
    to_decision(match, stamps, "choose", 2)
    for f, cottages in staged.items():
        stage(match, f, cottages)
    for f, n in (poles or {}).items():
        match.poles[f] = n
    for f, n in (birds or {}).items():
        match.birds[f] = n
    census = drive_past(match, stamps, "CensusTaken")
    return match, stamps, census


def test_vi_2_9_the_largest_and_second_build_through_the_aggregate() -> None:
    match, _, census = census_scene({0: steady(14), 1: steady(12), 2: steady(9), 3: steady(7)})
    assert census.sizes == [13, 11, 8, 6]  # each elder died of age
    assert census.pieces == [0, 1] and census.birds == [] and census.blocked == []
    assert match.poles == [2, 2, 1, 1]


def test_vi_2_9_solace_birds_for_tied_seconds() -> None:
    _, _, census = census_scene(
        {0: steady(14), 1: steady(9), 2: steady(9), 3: steady(7)}, birds={f: 5 for f in range(4)}
    )
    assert census.pieces == [0] and census.birds == [1, 2]


def test_vi_2_9_a_pole_never_exceeds_six() -> None:
    match, _, census = census_scene(
        {0: steady(14), 1: steady(12), 2: steady(9), 3: steady(9)}, poles={0: 6, 1: 6}
    )
    assert census.pieces == []  # the match ended already: they were both at six
    assert max(match.poles) == model.POLE_MAX


# ---- the checks after every phase (VI-3) ------------------------------------------


def test_vi_3_1_a_family_unable_to_multiply_is_wiped_out_and_restarts() -> None:
    """VI-3.1 after phase 2 (any phase), then the restart of VI-2.1 and VI-7.2."""
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    stage(match, 1, [{"young_woman": 3, "girl": 2, "elder": 1}, {"boy": 4}, {}])
    match.poles[1] = 4
    match.birds[1] = 2
    fire(match, stamps)
    wiped = last(match, "WipedOut")
    assert (wiped.family, wiped.phase) == (1, 2)
    assert wiped.lost == model.counts({"young_woman": 3, "girl": 2, "elder": 1, "boy": 4})
    drive(match, stamps, lambda m: m.round == 2)
    began = last(match, "RoundBegan")
    assert began.restarts == [1]
    # VI-2.1, VI-7.2: the restart kit; the pen set to 5, not added to; the pole reset to 1.
    assert match.pool[1] == model.counts(
        {"young_woman": 1, "young_man": 1, "mature_woman": 1, "mature_man": 1, "elder": 1}
    )
    assert match.birds[1] == 5 and match.poles[1] == 1 and not match.wiped[1]
    arrange_all_default(match, stamps)
    assert model.total(match.cottages[1][0]) == 5


def test_vi_3_1_children_are_not_fertile() -> None:
    """VI-3.1, decided here: children do not count as fertile."""
    assert not model.can_multiply(model.counts({"girl": 3, "boy": 3, "mature_man": 1}))
    assert model.can_multiply(model.counts({"young_woman": 1, "mature_man": 1}))


def test_vi_2_1_village_variation_restart_without_an_elder() -> None:
    match, stamps = new_village(4, village=True)
    to_decision(match, stamps, "choose", 2)
    stage(match, 2, [{"girl": 1}, {}, {}])
    drive(match, stamps, lambda m: m.round == 2)
    assert match.pool[2] == model.counts(
        {"young_woman": 1, "young_man": 1, "mature_woman": 1, "mature_man": 1}
    )
    assert match.birds[2] == 3 and match.poles[2] == 1
    # No elder: it loses its phase 8 piece each round (VI-7.3), its pole stays at one.
    to_decision(match, stamps, "choose", 2)
    dismantled = last(match, "Dismantled")
    assert (dismantled.family, dismantled.phase, dismantled.pole) == (2, 1, 1)


def test_vi_3_2_no_elder_dismantles_a_piece_never_the_last_and_blocks_building() -> None:
    """VI-3.2: one piece, the first time in the round, never the last; no piece in phase 8."""
    match, _, census = census_scene(
        {0: steady(14, elder=False), 1: steady(12), 2: steady(9), 3: steady(7)},
        poles={0: 3},
    )
    dismantled = [e for e in all_of(match, "Dismantled") if e.family == 0]
    assert [(e.phase, e.pole) for e in dismantled] == [(2, 2)]  # once in the round
    # The largest still counts in the census but cannot build; the second builds.
    assert census.sizes[0] == 14 and census.blocked == [0] and census.pieces == [1]
    assert match.poles[0] == 2
    match, _, census = census_scene(
        {0: steady(14, elder=False), 1: steady(12), 2: steady(9), 3: steady(7)},
        poles={0: 1},
    )
    assert [e.pole for e in all_of(match, "Dismantled") if e.family == 0] == [1]


def test_vi_3_2_blocked_family_still_gets_a_solace_bird() -> None:
    """VI-3.2: a family without an elder still counts in the census (VI-2.9 birds)."""
    _, _, census = census_scene(
        {0: steady(14), 1: steady(8, elder=False), 2: steady(9), 3: steady(7)},
        birds={f: 5 for f in range(4)},
    )
    assert census.birds == [1, 2] and census.pieces == [0]


def test_vi_3_2_totem_a_the_whole_pole_goes() -> None:
    """VI-3.2 with totem_a: down to 0 (VI-6.2 allows it)."""
    match, _, _ = census_scene(
        {0: steady(14, elder=False), 1: steady(12), 2: steady(9), 3: steady(7)},
        poles={0: 4},
        totem_a=True,
    )
    assert [e.pole for e in all_of(match, "Dismantled") if e.family == 0] == [0]
    assert match.poles[0] == 0


def test_vi_7_3_a_family_that_stays_without_an_elder_loses_a_piece_each_round() -> None:
    match, stamps, _ = census_scene(
        {0: steady(14, elder=False), 1: steady(12), 2: steady(9), 3: steady(7)},
        poles={0: 5},
    )
    # Keep family 0 without an elder: the mature adults of next round are gone too.
    stage(match, 0, [{"young_woman": 3}, {"young_man": 3}, {}])
    drive_past(match, stamps, "CensusTaken")
    assert [e.pole for e in all_of(match, "Dismantled") if e.family == 0] == [4, 3]


def test_vi_7_5_a_wiped_out_family_counts_with_zero_and_never_builds() -> None:
    _, _, census = census_scene(
        {0: [{"girl": 1}, {}, {}], 1: steady(12), 2: steady(9), 3: steady(7)}
    )
    assert census.sizes[0] == 0
    assert census.pieces == [1, 2]
    _, _, census = census_scene(
        {0: [{"girl": 1}, {}, {}], 1: steady(12), 2: steady(12), 3: steady(12)}, totem_b=True
    )
    assert census.pieces == [1, 2, 3]
    # Four families where three are wiped out: the largest builds, the tied "seconds"
    # with 0 get their solace bird.
    _, _, census = census_scene(
        {0: [{"girl": 1}, {}, {}], 1: steady(12), 2: [{}, {}, {}], 3: [{"boy": 1}, {}, {}]}
    )
    assert census.pieces == [1] and census.birds == [0, 2, 3]


# ---- the end (VI-4) -----------------------------------------------------------------------


def test_vi_4_1_a_family_with_six_pieces_wins() -> None:
    """VI-4.1: checked after phase 8; the match ends with the winner's seat first."""
    match, _, _ = census_scene(
        {0: steady(14), 1: steady(12), 2: steady(9), 3: steady(7)}, poles={1: 5}
    )
    assert match.status is MatchStatus.ENDED
    done = last(match, "TotemCompleted")
    assert (done.contenders, done.winner, done.winning_seats) == ([1], 1, [1])
    assert match.result == [
        {"seat": 0, "place": 2},
        {"seat": 1, "place": 1},
        {"seat": 2, "place": 2},
        {"seat": 3, "place": 2},
    ]
    names = [type(e).__name__ for e in match.pending_events]
    assert names[-4:] == ["CensusTaken", "RoundEnded", "TotemCompleted", "MatchEnded"]


def test_vi_4_1_several_at_six_the_largest_wins() -> None:
    """VI-4.1: several reach 6 in the same round: the largest family wins."""
    match, _, _ = census_scene(
        {0: steady(14), 1: steady(12), 2: steady(9), 3: steady(7)}, poles={0: 5, 1: 5}
    )
    done = last(match, "TotemCompleted")
    assert (done.contenders, done.tied, done.winner) == ([0, 1], [], 0)


def test_vi_4_1_then_the_most_birds_then_no_winner() -> None:
    """VI-4.1: then the most birds; otherwise no winner (a draw)."""
    match, _, _ = census_scene(
        {0: steady(12), 1: steady(12), 2: steady(9), 3: steady(7)},
        poles={0: 5, 1: 5},
        birds={0: 10, 1: 2},
    )
    done = last(match, "TotemCompleted")
    assert (done.tied, done.winner) == ([], 0)
    assert done.birds[0] > done.birds[1]
    match, _, _ = census_scene(
        {0: steady(12), 1: steady(12), 2: steady(9), 3: steady(7)},
        poles={0: 5, 1: 5},
        birds={0: 10, 1: 10},
    )
    done = last(match, "TotemCompleted")
    assert (done.tied, done.winner, done.winning_seats) == ([0, 1], None, [0, 1])
    # No winner: a draw between them.
    assert [r["place"] for r in match.result] == [1, 1, 2, 2]


def test_vi_4_2_with_two_players_the_family_wins_for_its_player() -> None:
    """VI-4.2: with two players, the player whose family wins wins."""
    match, _, _ = census_scene(
        {0: steady(9), 1: steady(7), 2: steady(14), 3: steady(12)}, players=2, poles={2: 5}
    )
    done = last(match, "TotemCompleted")
    assert (done.winner, done.winning_seats) == (2, [0])
    assert match.result == [{"seat": 0, "place": 1}, {"seat": 1, "place": 2}]


def test_vi_7_1_a_draw_between_two_families_of_one_player_is_that_players_win() -> None:
    match, _, _ = census_scene(
        {0: steady(12), 1: steady(7), 2: steady(12), 3: steady(9)},
        players=2,
        poles={0: 5, 2: 5},
        birds={0: 10, 2: 10},
    )
    done = last(match, "TotemCompleted")
    assert (done.tied, done.winner, done.winning_seats) == ([0, 2], None, [0])
    assert match.result == [{"seat": 0, "place": 1}, {"seat": 1, "place": 2}]
    assert awaiting(match, "arrange") is False


@pytest.mark.parametrize(
    ("staged", "poles", "birds", "tied", "winner"),
    [
        # One family at six: it wins, nothing is tied.
        ({0: steady(14), 1: steady(12), 2: steady(9), 3: steady(7)}, {1: 5}, {}, [], 1),
        # Two at six, the larger wins: a lone winner after the tie-break is no tie.
        ({0: steady(14), 1: steady(12), 2: steady(9), 3: steady(7)}, {0: 5, 1: 5}, {}, [], 0),
        # Same size, more birds: no tie either.
        (
            {0: steady(12), 1: steady(12), 2: steady(9), 3: steady(7)},
            {0: 5, 1: 5},
            {0: 10, 1: 2},
            [],
            0,
        ),
        # Same size, same birds: the two are tied.
        (
            {0: steady(12), 1: steady(12), 2: steady(9), 3: steady(7)},
            {0: 5, 1: 5},
            {0: 10, 1: 10},
            [0, 1],
            None,
        ),
    ],
)
def test_vi_7_11_a_tie_field_is_empty_unless_two_or_more_families_are_tied(
    staged: dict[int, list[dict[str, int]]],
    poles: dict[int, int],
    birds: dict[int, int],
    tied: list[int],
    winner: int | None,
) -> None:
    """VI-7.11: in the event and the outcome of every view, ``tied`` holds the tied
    families only when two or more are; a lone winner is ``winner``."""
    match, _, _ = census_scene(staged, poles=poles, birds=birds)
    done = last(match, "TotemCompleted")
    assert (done.tied, done.winner) == (tied, winner)
    for viewer in (Viewer.spectator(), Viewer.player(0), Viewer.referee()):
        outcome = state_view(match, viewer)["outcome"]
        assert (outcome["tied"], outcome["winner"]) == (tied, winner)


def test_vi_7_11_a_lone_winner_recorded_in_the_tie_field_is_shown_as_no_tie() -> None:
    """Matches recorded before VI-7.11 hold the lone winner in ``tied``: replayed, their
    outcome shows no tie."""
    match, _, _ = census_scene(
        {0: steady(14), 1: steady(12), 2: steady(9), 3: steady(7)}, poles={1: 5}
    )
    done = last(match, "TotemCompleted")
    older = dataclasses.replace(done, tied=[1])
    older.apply(match)
    assert match.outcome == {"winner": 1, "tied": [], "seats": [1]}
