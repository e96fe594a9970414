"""Village phase 1, the village (VI-2.1, VI-6.1, VI-7.8): housing the family."""

from __future__ import annotations

from domain_support import refused
from village_support import act, awaiting, drive, fire, last, new_village, to_decision

from domain.kernel import InvalidArgument
from domain.village import Arrange, ChooseSpells, model

YW, YM, MW, MM, ELDER = "young_woman", "young_man", "mature_woman", "mature_man", "elder"


def test_vi_2_1_each_family_houses_all_its_members_at_most_six_a_cottage() -> None:
    match, stamps = new_village(4)
    assert awaiting(match, "arrange", 1)
    decision = match.decision
    assert decision is not None and decision.parties == (0,)
    good = [{YW: 1, YM: 1, ELDER: 1}, {YW: 1, YM: 1}, {MW: 1, MM: 1}]
    error = refused(
        match,
        "VI-2.1",
        match.act,
        0,
        Arrange(0, [{YW: 2, YM: 2, MW: 1, MM: 1, ELDER: 1}, {}, {}]),
        stamps(),
    )
    assert isinstance(error, InvalidArgument)  # a cottage above 6
    refused(match, "VI-2.1", match.act, 0, Arrange(0, good[:2]), stamps())
    refused(
        match,
        "VI-2.1",
        match.act,
        0,
        Arrange(0, [{YW: 1, YM: 1}, {YW: 1, YM: 1}, {MW: 1, MM: 1}]),
        stamps(),
    )
    refused(
        match,
        "VI-2.1",
        match.act,
        0,
        Arrange(0, [{YW: 3, ELDER: 1}, {YM: 1}, {MW: 1, MM: 1}]),
        stamps(),
    )
    refused(match, "VI-2.1", match.act, 0, Arrange(0, [{"wolf": 1}, {}, {}]), stamps())
    refused(match, "VI-2.1", match.act, 0, Arrange(0, [{YW: -1}, {}, {}]), stamps())
    act(match, stamps, Arrange(0, good))
    arranged = last(match, "Arranged")
    assert arranged.cottages == [model.counts(c) for c in good]
    assert arranged.discarded == model.empty() and not arranged.by_default
    assert match.cottages[0] == [model.counts(c) for c in good]


def test_a_decision_out_of_phase_is_refused_naming_its_rule() -> None:
    match, stamps = new_village(4)
    refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, []), stamps())
    to_decision(match, stamps, "choose", 2)
    refused(match, "VI-2.1", match.act, 0, Arrange(0, [{}, {}, {}]), stamps())


def test_vi_2_1_above_18_the_family_discards_the_surplus_choosing_whom() -> None:
    match, stamps = new_village(3)
    drive(match, stamps, lambda m: m.round == 2 and awaiting(m, "arrange"))
    decision = match.decision
    assert decision is not None and decision.parties == (1,)
    big = [model.counts({YW: 6, ELDER: 1}), model.counts({YM: 6}), model.counts({MW: 4, MM: 3})]
    match.cottages[1] = big  # 20 members (staged)
    match.newcomers[1] = [model.empty() for _ in range(3)]
    # Housing all 20 is impossible; housing fewer than 18 is not allowed.
    refused(match, "VI-2.1", match.act, 1, Arrange(1, [{YW: 6}, {YM: 6}, {MW: 4, MM: 1}]), stamps())
    act(match, stamps, Arrange(1, [{YW: 6}, {YM: 6}, {MW: 4, MM: 2}]))
    arranged = last(match, "Arranged")
    assert arranged.discarded == model.counts({ELDER: 1, MM: 1})
    assert match.size(1) == 18


def test_vi_7_8_default_keeps_the_cottages_new_members_to_the_first_with_room() -> None:
    match, stamps = new_village(3)
    drive(match, stamps, lambda m: m.round == 2 and awaiting(m, "arrange"))
    match.cottages[1] = [
        model.counts({YW: 3, MW: 1, YM: 2, "girl": 0}),
        model.counts({MM: 1, ELDER: 1, YW: 2}),
        model.counts({}),
    ]
    # The two young women of cottage 1 were children at the last generation change.
    match.newcomers[1] = [model.empty(), model.counts({YW: 2}), model.empty()]
    cottages, discarded = match.default_arrangement(1)
    assert cottages == [
        model.counts({YW: 3, MW: 1, YM: 2}),
        model.counts({MM: 1, ELDER: 1, YW: 2}),
        model.empty(),
    ]
    assert discarded == model.empty()
    match.cottages[1][0][YW] += 2
    match.newcomers[1] = [model.counts({YW: 2}), model.counts({YW: 2}), model.empty()]
    cottages, _ = match.default_arrangement(1)
    # Cottage 0 keeps its six; its two new women go to the first cottage with room (1).
    assert [model.total(c) for c in cottages] == [6, 6, 0]
    assert cottages[1][YW] == 4
    fire(match, stamps)
    assert last(match, "Arranged").by_default


def test_vi_7_8_default_discards_the_surplus_youngest_first_new_members_first() -> None:
    match, stamps = new_village(3)
    drive(match, stamps, lambda m: m.round == 2 and awaiting(m, "arrange"))
    match.cottages[1] = [
        model.counts({YW: 4, YM: 2, "girl": 1}),
        model.counts({MM: 4, ELDER: 2, YW: 1}),
        model.counts({MW: 4, YM: 2, "boy": 1}),
    ]
    match.newcomers[1] = [
        model.counts({YW: 1, "girl": 1}),
        model.counts({YW: 1}),
        model.counts({YM: 2, "boy": 1}),
    ]  # 21 members: 3 too many
    cottages, discarded = match.default_arrangement(1)
    assert discarded == model.counts({"girl": 1, "boy": 1, YW: 1})
    assert sum(map(model.total, cottages)) == 18
    assert all(model.total(c) <= model.COTTAGE_CAPACITY for c in cottages)


def test_vi_6_1_no_cottage_above_six_once_phase_1_is_over() -> None:
    match, stamps = new_village(4, prearranged_sexes=["girl"] * 500)
    for _ in range(6):
        drive(match, stamps, lambda m: awaiting(m, "choose", 2))
        for f in match.families:
            assert all(model.total(c) <= 6 for c in match.cottages[f])
            assert model.total(match.pool[f]) == 0
        fire(match, stamps)
