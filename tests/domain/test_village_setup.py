"""Village: players and families, components, the start, the round and its phases
(VI-1, VI-2, VI-7.1), options and the timers that keep a match going."""

from __future__ import annotations

import pytest
from domain_support import Stamps, refused
from village_support import (
    SECRET,
    SEED,
    act,
    all_of,
    arrange_all_default,
    awaiting,
    drive,
    drive_past,
    fire,
    names,
    new_village,
    to_decision,
)

from domain.kernel import InvalidArgument, MatchStatus, NotPermitted
from domain.village import Arrange, ChooseSpells, Options, Village, model


def test_vi_1_1_two_to_four_players() -> None:
    with pytest.raises(InvalidArgument) as info:
        Village.create(Options(max_players=5), SEED, secret=SECRET)
    assert info.value.rule == "VI-1.1"
    with pytest.raises(InvalidArgument):
        Village.create(Options(max_players=1), SEED, secret=SECRET)
    match = Village.create(Options(max_players=4), SEED, secret=SECRET)
    stamps = Stamps()
    match.join("a", b"", "h0", stamps())
    refused(match, "VI-1.1", match.start, 0, stamps())  # one player cannot start
    match.join("b", b"", "h1", stamps())
    match.join("c", b"", "h2", stamps())
    match.start(0, stamps())  # three of four: three families
    assert match.family_count == 3
    assert match.status is MatchStatus.PLAYING


@pytest.mark.parametrize("players,families", [(2, 4), (3, 3), (4, 4)])
def test_vi_1_1_one_family_per_player_two_each_with_two(players: int, families: int) -> None:
    match, _ = new_village(players)
    assert match.family_count == families
    assert [match.party_owner(f) for f in match.families] == [f % players for f in range(families)]


def test_vi_7_1_with_two_players_seat_0_plays_families_0_and_2() -> None:
    match, stamps = new_village(2)
    assert match.parties_of(0) == [0, 2]
    assert match.parties_of(1) == [1, 3]
    # Turn order and the start player move over the families 0, 1, 2, 3.
    assert match.turn_order() == [0, 1, 2, 3]
    starts = []
    for _ in range(4):
        starts.append(match.start_family)
        round_ = match.round
        drive(match, stamps, lambda m, r=round_: m.round > r)  # type: ignore[misc]
    assert starts == [0, 1, 2, 3]


def test_vi_7_1_a_seat_decides_for_its_own_families_only() -> None:
    match, stamps = new_village(2)
    to_decision(match, stamps, "arrange")
    assert match.decision is not None and match.decision.parties == (0,)
    cottages, _ = match.default_arrangement(0)
    refused(match, "VI-2.2", match.act, 1, Arrange(0, cottages), stamps())  # VI-7.9
    match.act(0, Arrange(0, cottages), stamps())


def test_vi_1_2_kinds_fertility_hunters() -> None:
    """VI-1.2: seven kinds; young and mature adults are fertile; boys and men hunt."""
    assert model.KINDS == (
        "girl",
        "boy",
        "young_woman",
        "young_man",
        "mature_woman",
        "mature_man",
        "elder",
    )
    assert model.FERTILE_WOMEN == ("young_woman", "mature_woman")
    assert model.FERTILE_MEN == ("young_man", "mature_man")
    assert model.HUNTERS == ("boy", "young_man", "mature_man")
    # An elder's sex plays no part: one kind.
    assert "elder" in model.KINDS and "grandmother" not in model.KINDS


def test_vi_1_3_a_family_starts_with_seven_six_birds_one_piece() -> None:
    """VI-1.3: 2 young women, 2 young men, a mature woman and man, an elder; 6 birds."""
    match, _ = new_village(3)
    for f in match.families:
        assert match.members(f) == model.counts(
            {
                "young_woman": 2,
                "young_man": 2,
                "mature_woman": 1,
                "mature_man": 1,
                "elder": 1,
            }
        )
        assert match.birds[f] == 6
        assert match.poles[f] == 1
        assert len(match.cottages[f]) == 3


def test_vi_1_4_supplies_are_unlimited() -> None:
    """VI-1.4: sixty girls born at once; no marker or bird runs out."""
    match, stamps = new_village(4, prearranged_sexes=["girl"] * 200)
    to_decision(match, stamps, "choose", 2)
    for f in match.families:
        match.cottages[f] = [model.counts({"young_woman": 5, "young_man": 1}) for _ in range(3)]
    born = drive_past(match, stamps, "Born")
    assert sum(c["girls"] for c in born.children) == 4 * 3 * 5


def test_vi_2_phases_in_order_start_player_moves_left() -> None:
    match, stamps = new_village(3)
    phases: list[tuple[int, int]] = []
    while match.round < 4:
        before = (match.round, match.phase)
        if not phases or phases[-1] != before:
            phases.append(before)
        fire(match, stamps)
    began = [(e.round, e.phase) for e in all_of(match, "PhaseBegan")]
    for r in (1, 2, 3):
        assert [p for rr, p in began if rr == r] == [2, 3, 4, 5, 6, 7, 8]
    assert [e.start_family for e in all_of(match, "RoundBegan")] == [0, 1, 2, 0]


def test_vi_2_families_act_in_turn_order_from_the_start_player() -> None:
    match, stamps = new_village(4)
    drive(match, stamps, lambda m: m.round == 2 and awaiting(m, "arrange"))
    order = []
    while awaiting(match, "arrange"):
        decision = match.decision
        assert decision is not None
        order.append(decision.parties[0])
        fire(match, stamps)
    assert order == [1, 2, 3, 0]


def test_every_decision_has_a_deadline_and_silent_players_reach_the_end() -> None:
    match, stamps = new_village(4, seed=b"\x02" * 32)
    drive(match, stamps, lambda m: m.status is MatchStatus.ENDED, limit=100_000)
    assert names(match.pending_events)[-1] == "MatchEnded"
    assert all(e.by_default for e in all_of(match, "Arranged"))


def test_the_deadline_option_sets_each_kind_of_deadline() -> None:
    match, stamps = new_village(3, arrange_timeout_ms=5_000, choose_timeout_ms=7_000)
    decision = match.decision
    assert decision is not None and decision.kind == "arrange"
    assert decision.deadline_ms - decision.opened_ms == 5_000
    refused(match, "VI-2.1", match.fire_timer, stamps.at(decision.deadline_ms - 1))
    arrange_all_default(match, stamps)
    decision = match.decision
    assert decision is not None and decision.kind == "choose"
    assert decision.deadline_ms == stamps.wall_ms + 7_000
    assert match.timer_deadline_ms() == decision.deadline_ms


def test_options_validate_each_field_naming_its_rule() -> None:
    for bad, rule in [
        (Options(arrange_timeout_ms=-1), "VI-2.1"),
        (Options(choose_timeout_ms=10**9), "VI-2.2"),
        (Options(reveal_timeout_ms=-5), "VI-2.3"),
        (Options(victims_timeout_ms=-5), "VI-2.6"),
        (Options(youth_timeout_ms=-5), "VI-2.8"),
        (Options(prearranged_sexes=["girl", "cat"]), "VI-2.4"),
    ]:
        with pytest.raises(InvalidArgument) as info:
            bad.validate()
        assert info.value.rule == rule
    with pytest.raises(InvalidArgument):
        Village.create(Options(), SEED, secret=b"short")


def test_commands_before_the_start_and_after_the_end_are_refused() -> None:
    match = Village.create(Options(max_players=2), SEED, secret=SECRET)
    stamps = Stamps()
    match.join("a", b"", "h0", stamps())
    # Refusals cite the rule that starts or ended the match, not the command's own.
    refused(match, "VI-1.3", match.act, 0, ChooseSpells(0, []), stamps())
    match.join("b", b"", "h1", stamps())
    drive(match, stamps, lambda m: m.status is MatchStatus.ENDED, limit=100_000)
    refused(match, "VI-4.1", match.act, 0, ChooseSpells(0, []), stamps())
    refused(match, "VI-4.1", match.fire_timer, stamps(after_ms=10**7))


def test_a_decision_for_a_family_that_does_not_exist_is_refused() -> None:
    match, stamps = new_village(3)
    error = refused(match, "VI-2.1", match.act, 0, Arrange(7, [{}, {}, {}]), stamps())
    assert isinstance(error, InvalidArgument)
    act(match, stamps, Arrange(0, match.default_arrangement(0)[0]))


def test_vi_7_9_a_command_for_a_family_the_seat_does_not_play_is_not_permitted() -> None:
    """VI-7.9: refused like a command for another seat (PERMISSION_DENIED), naming VI-2.2
    whatever the decision, before the decision itself is looked at."""
    match, stamps = new_village(3)
    error = refused(match, "VI-2.2", match.act, 1, Arrange(0, [{}, {}, {}]), stamps())
    assert isinstance(error, NotPermitted)
    assert error.message == "seat 1 does not play family 0: it cannot act for it"
    # A family the seat does not play and that owes nothing now: still not permitted.
    error = refused(match, "VI-2.2", match.act, 0, ChooseSpells(2, []), stamps())
    assert isinstance(error, NotPermitted)
    # With two players, seat 0 plays families 0 and 2, not 1 and 3 (VI-7.1).
    match, stamps = new_village(2)
    to_decision(match, stamps, "choose", 2)
    for family in (1, 3):
        error = refused(match, "VI-2.2", match.act, 0, ChooseSpells(family, []), stamps())
        assert isinstance(error, NotPermitted)
    match.act(0, ChooseSpells(2, []), stamps())  # its own second family: accepted
    # After the end too, as a command for another seat is (its own family: VI-4.1).
    drive(match, stamps, lambda m: m.status is MatchStatus.ENDED, limit=100_000)
    error = refused(match, "VI-2.2", match.act, 0, ChooseSpells(1, []), stamps())
    assert isinstance(error, NotPermitted)
    refused(match, "VI-4.1", match.act, 0, ChooseSpells(0, []), stamps())
