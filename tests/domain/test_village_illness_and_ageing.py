"""Village phase 6, illness (VI-2.7), and phase 7, the generation change with youth
(VI-2.8, VI-7.4)."""

from __future__ import annotations

from typing import Any

from domain_support import Stamps, refused
from village_support import (
    act,
    all_of,
    cast,
    drive_past,
    fire,
    last,
    new_village,
    stage,
    to_decision,
)

from domain.village import RevealSpells, SpareFromAge, Village, model

SICK = {"young_woman": 2, "mature_woman": 1, "girl": 2, "boy": 1, "elder": 1}
MEN = {"young_man": 2, "mature_man": 1, "elder": 1}


def illness_with(spells: list[tuple[str, int, int]], caster: int = 0) -> Any:
    """Family 0's cottage 0 holds SICK (its men live apart); ``caster`` casts
    ``spells``; returns the IllnessStruck event, or None."""
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    stage(match, 0, [SICK, MEN, {}])
    match.poles[caster] = 6
    seen = len(all_of(match, "PhaseBegan"))
    cast(match, stamps, {caster: spells})
    drive_past(match, stamps, "Aged")
    struck = [
        e
        for e in all_of(match, "IllnessStruck")
        if e.originator_version > all_of(match, "PhaseBegan")[seen - 1].originator_version
    ]
    return struck[0] if struck else None


def test_vi_2_7_illness_kills_everyone_in_the_cottage() -> None:
    struck = illness_with([("illness", 0, 0)], caster=2)
    assert struck.deaths == [{"family": 0, "cottage": 0, "killed": model.counts(SICK)}]


def test_vi_2_7_big_cure_protects_everyone() -> None:
    struck = illness_with([("illness", 0, 0), ("big_cure", 0, 0)])
    assert struck.deaths == [{"family": 0, "cottage": 0, "killed": model.empty()}]


def test_vi_2_7_little_cure_spares_adults_only() -> None:
    struck = illness_with([("illness", 0, 0), ("little_cure", 0, 0)], caster=1)
    assert struck.deaths == [
        {"family": 0, "cottage": 0, "killed": model.counts({"girl": 2, "boy": 1})}
    ]


def test_vi_2_7_illness_acts_only_on_its_cottage_and_only_revealed() -> None:
    assert illness_with([("illness", 0, 2)]) is None  # an empty cottage
    match, stamps = new_village(4)
    cast(match, stamps, {0: [("illness", 1, 0)]})
    to_decision(match, stamps, "reveal", 6)
    act(match, stamps, RevealSpells(0, []))
    assert not all_of(match, "IllnessStruck")


# ---- generation change (VI-2.8) --------------------------------------------------------


def test_vi_2_8_everyone_ages_one_step_elders_die() -> None:
    cottage = {
        "girl": 1,
        "boy": 2,
        "young_woman": 3,
        "young_man": 1,
        "mature_woman": 1,
        "mature_man": 2,
        "elder": 4,
    }
    aged, died = model.aged(cottage, {})
    assert aged == model.counts(
        {"young_woman": 1, "young_man": 2, "mature_woman": 3, "mature_man": 1, "elder": 3}
    )
    assert died == 4


def youth_scene(
    youth_from: list[int], cottage: dict[str, int] | None = None
) -> tuple[Village, Stamps]:
    """Family 0's cottage 0 holds ``cottage``; each family in ``youth_from`` casts youth on
    it; stops when family 0 must choose whom youth spares."""
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    stage(
        match,
        0,
        [
            cottage or {"young_woman": 1, "mature_woman": 1, "elder": 1, "girl": 1},
            {"young_man": 1, "mature_man": 1},
            {"young_woman": 1},
        ],
    )
    cast(match, stamps, {f: [("youth", 0, 0)] for f in youth_from})
    to_decision(match, stamps, "youth", 7)
    return match, stamps


def test_vi_2_8_several_youth_spells_in_one_cottage_spare_one_each() -> None:
    match, stamps = youth_scene([0, 1, 3])
    decision = match.decision
    assert decision is not None and decision.parties == (0,)
    assert decision.detail["needs"] == [3, 0, 0]
    refused(match, "VI-2.8", match.act, 0, SpareFromAge(0, [(0, "girl")]), stamps())
    refused(match, "VI-2.8", match.act, 0, SpareFromAge(0, [(0, "girl")] * 3), stamps())
    refused(match, "VI-2.2", match.act, 1, SpareFromAge(0, [(0, "girl")] * 3), stamps())  # VI-7.9
    spared = [(0, "girl"), (0, "elder"), (0, "young_woman")]
    act(match, stamps, SpareFromAge(0, spared))
    aged = last(match, "Aged")
    assert aged.spared == [{"family": 0, "cottage": c, "kind": k} for c, k in spared]
    # VI-7.4: the spared elder does not die; the mature woman becomes an elder.
    assert match.cottages[0][0] == model.counts({"girl": 1, "young_woman": 1, "elder": 2})


def test_vi_7_4_the_youth_default_never_picks_an_elder() -> None:
    match, stamps = youth_scene([0, 2], {"mature_woman": 2, "young_man": 1, "elder": 1})
    fire(match, stamps)
    chosen = last(match, "YouthChosen")
    assert chosen.by_default
    assert chosen.spared == [
        {"cottage": 0, "kind": "mature_woman"},
        {"cottage": 0, "kind": "mature_woman"},
    ]
    assert model.default_spared({"elder": 3}, 2) == []
    assert model.default_spared({"boy": 1, "girl": 1, "mature_man": 1}, 3) == [
        "mature_man",
        "girl",
        "boy",
    ]


def test_vi_7_4_a_cottage_of_elders_may_spare_one_or_none() -> None:
    match, stamps = youth_scene([1], {"elder": 2})
    decision = match.decision
    assert decision is not None and decision.detail["needs"] == [1, 0, 0]
    assert match.youth_minimum(0) == [0, 0, 0]
    act(match, stamps, SpareFromAge(0, [(0, "elder")]))
    assert match.cottages[0][0]["elder"] == 1


def test_vi_7_11_youth_spares_at_most_the_members_present_in_its_cottage() -> None:
    """VI-7.11: three youth spells on a cottage of two spare two, not three."""
    match, stamps = youth_scene([0, 1, 3], {"mature_woman": 1, "girl": 1})
    decision = match.decision
    assert decision is not None and decision.detail["needs"] == [2, 0, 0]
    assert match.youth_needs(0) == [2, 0, 0] and match.youth_minimum(0) == [2, 0, 0]
    three = [(0, "mature_woman"), (0, "girl"), (0, "girl")]
    refused(match, "VI-2.8", match.act, 0, SpareFromAge(0, three), stamps())
    error = refused(match, "VI-2.8", match.act, 0, SpareFromAge(0, three[:1]), stamps())
    assert error.message == "youth spares 2 people in cottage 0 of family 0"
    fire(match, stamps)
    chosen = last(match, "YouthChosen")
    assert chosen.spared == [
        {"cottage": 0, "kind": "mature_woman"},
        {"cottage": 0, "kind": "girl"},
    ]
    assert match.cottages[0][0] == model.counts({"mature_woman": 1, "girl": 1})
    # Four spells on a lone elder: one at most, and sparing them is the family's choice.
    match, stamps = youth_scene([0, 1, 2, 3], {"elder": 1})
    assert match.youth_needs(0) == [1, 0, 0] and match.youth_minimum(0) == [0, 0, 0]
    two = [(0, "elder"), (0, "elder")]
    refused(match, "VI-2.8", match.act, 0, SpareFromAge(0, two), stamps())
    act(match, stamps, SpareFromAge(0, [(0, "elder")]))
    assert match.cottages[0][0] == model.counts({"elder": 1})


def test_vi_2_8_children_become_young_adults() -> None:
    match, stamps = new_village(3, prearranged_sexes=["girl", "boy"] * 20)
    born = drive_past(match, stamps, "Born")
    assert match.round == 2 and match.phase == 1  # nobody starved or fell ill
    girls = sum(c["girls"] for c in born.children)
    boys = sum(c["boys"] for c in born.children)
    newcomers = [model.added(*match.newcomers[f]) for f in match.families]
    assert sum(n["young_woman"] for n in newcomers) == girls
    assert sum(n["young_man"] for n in newcomers) == boys
