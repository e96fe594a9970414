"""Village phase 5, the feast (VI-2.6), its variations feast_a and feast_b (VI-7.7)."""

from __future__ import annotations

from typing import Any

from domain_support import Stamps, refused
from village_support import (
    act,
    all_of,
    awaiting,
    drive,
    drive_past,
    fire,
    last,
    new_village,
    stage,
    to_decision,
)

from domain.kernel import InvalidArgument
from domain.village import ChooseVictims, Village, model

#: 21 people and no children to come: women, elders and girls apart from the one man.
TWENTY_ONE = [
    {"young_woman": 6, "elder": 1},
    {"mature_woman": 6, "elder": 1},
    {"mature_man": 1, "girl": 6},
]


def starving(
    cottages: list[dict[str, int]], birds: int, players: int = 4, **options: Any
) -> tuple[Village, Stamps]:
    """Family 0 holds ``cottages`` and ``birds`` at the magic phase (the one man's catch
    adds a bird); the others are small and fed. Stops at the first decision of the feast,
    or wherever the match waits after it."""
    match, stamps = new_village(players, **options)
    to_decision(match, stamps, "choose", 2)
    stage(match, 0, cottages)
    match.birds[0] = birds
    for f in match.families[1:]:
        stage(match, f, [{"young_woman": 1, "mature_man": 1, "elder": 2}, {"girl": 1}, {}])
    seen = len(all_of(match, "Feasted"))
    drive_past(match, stamps, "Feasted", seen)
    return match, stamps


def test_vi_2_6_worked_example_twenty_one_people_three_birds_lose_two() -> None:
    match, stamps = starving(TWENTY_ONE, birds=2)
    meal = last(match, "Feasted").meals
    mine = next(m for m in meal if m["family"] == 0)
    assert (mine["members"], mine["need"], mine["eaten"], mine["missing"]) == (21, 5, 3, 2)
    assert mine["deaths"] == 2
    assert match.birds[0] == 0  # all birds are eaten
    decision = match.decision
    assert decision is not None and decision.kind == "victims" and decision.parties == (0,)
    assert decision.detail["deaths"] == 2
    act(match, stamps, ChooseVictims(0, [(2, "girl"), (1, "mature_woman")]))
    chosen = last(match, "VictimsChosen")
    assert (chosen.starving, chosen.family, chosen.by_default) == (0, 0, False)
    assert chosen.victims == [
        {"cottage": 2, "kind": "girl"},
        {"cottage": 1, "kind": "mature_woman"},
    ]


def test_vi_2_6_the_owner_chooses_never_an_elder_bad_names_refused() -> None:
    match, stamps = starving(TWENTY_ONE, birds=2)
    refused(match, "VI-2.6", match.act, 0, ChooseVictims(0, [(0, "elder"), (2, "girl")]), stamps())
    refused(match, "VI-2.6", match.act, 0, ChooseVictims(0, [(2, "girl")]), stamps())
    refused(match, "VI-2.6", match.act, 0, ChooseVictims(0, [(0, "boy"), (2, "girl")]), stamps())
    refused(match, "VI-2.6", match.act, 0, ChooseVictims(0, [(2, "mature_man")] * 2), stamps())
    error = refused(match, "VI-2.6", match.act, 0, ChooseVictims(0, [(3, "girl")] * 2), stamps())
    assert isinstance(error, InvalidArgument)
    refused(match, "VI-2.6", match.act, 0, ChooseVictims(0, [(0, "wolf")] * 2), stamps())
    # Another family's owner may not choose (VI-7.1 with four players: seat 1 plays 1),
    # and is refused as for another seat (VI-7.9).
    refused(match, "VI-2.2", match.act, 1, ChooseVictims(0, [(2, "girl")] * 2), stamps())


def test_vi_2_6_timeout_default_by_kind_highest_cottage_first() -> None:
    cottages = [
        {"young_woman": 6, "elder": 1},
        {"mature_woman": 5, "girl": 1, "elder": 1},
        {"mature_man": 1, "girl": 5, "boy": 1},
    ]
    match, stamps = starving(cottages, birds=0)  # 21 members, 1 bird: 4 die
    assert match.decision is not None and match.decision.detail["deaths"] == 4
    fire(match, stamps)
    chosen = last(match, "VictimsChosen")
    assert chosen.by_default
    assert [(v["cottage"], v["kind"]) for v in chosen.victims] == [
        (2, "girl"),
        (2, "girl"),
        (2, "girl"),
        (2, "girl"),
    ]
    assert model.default_victims(cottages, 8, elders=False) == [
        *[(2, "girl")] * 5,
        (1, "girl"),
        (2, "boy"),
        (0, "young_woman"),
    ]


def test_vi_2_6_if_only_elders_remain_the_rest_are_spared() -> None:
    cottages = [{"young_woman": 1, "elder": 6}, {"young_man": 1, "elder": 6}, {}]
    match, stamps = starving(cottages, birds=0)  # 14: need 3, 1 bird from the catch
    meal = next(m for m in last(match, "Feasted").meals if m["family"] == 0)
    assert (meal["missing"], meal["deaths"]) == (2, 2)
    match, stamps = starving([{"young_woman": 1, "elder": 6}, {"young_man": 1, "elder": 12}, {}], 0)
    meal = next(m for m in last(match, "Feasted").meals if m["family"] == 0)
    assert (meal["missing"], meal["deaths"]) == (3, 2)  # 20 need 4: 3 missing, 2 non-elders
    fire(match, stamps)
    chosen = last(match, "VictimsChosen")
    assert chosen.victims == [
        {"cottage": 0, "kind": "young_woman"},
        {"cottage": 1, "kind": "young_man"},
    ]


def test_vi_2_6_after_the_feast_a_pen_holds_at_most_five() -> None:
    match, _ = starving([{"young_woman": 1, "mature_man": 1, "elder": 1}, {}, {}], birds=12)
    meal = next(m for m in last(match, "Feasted").meals if m["family"] == 0)
    assert meal["eaten"] == 1 and meal["discarded"] == 7
    assert model.PEN_LIMIT == 13 - 1 - 7  # 12 birds and one caught


def test_vi_2_6_feast_a_the_others_choose_one_each_elders_allowed() -> None:
    match, stamps = starving(TWENTY_ONE, birds=0, feast_a=True)  # 4 birds missing
    choosers = []
    while awaiting(match, "victims"):
        decision = match.decision
        assert decision is not None
        assert decision.detail["starving"] == 0 and decision.detail["elders"]
        chooser = decision.parties[0]
        choosers.append(chooser)
        # The starving family's owner cannot choose for itself.
        refused(match, "VI-2.6", match.act, 0, ChooseVictims(0, [(0, "elder")]), stamps())
        refused(
            match,
            "VI-2.6",
            match.act,
            chooser,
            ChooseVictims(chooser, [(0, "elder")] * 2),
            stamps(),
        )
        victim = [(min(len(choosers) - 1, 1), "elder")] if chooser == 1 else [(2, "girl")]
        act(match, stamps, ChooseVictims(chooser, victim))
    assert choosers == [1, 2, 3, 1]
    chosen = all_of(match, "VictimsChosen")[-4:]
    assert [(e.family, e.victims[0]["kind"]) for e in chosen] == [
        (1, "elder"),
        (2, "girl"),
        (3, "girl"),
        (1, "elder"),
    ]


def test_vi_7_7_feast_a_default_goes_on_to_elders() -> None:
    cottages = [{"young_woman": 1, "elder": 6}, {"young_man": 1, "elder": 6}, {}]
    match, stamps = starving(cottages, birds=0, feast_a=True)  # 14: need 3, 1 caught
    assert match.decision is not None and match.decision.detail["remaining"] == 2
    fire(match, stamps)
    fire(match, stamps)
    chosen = [e for e in all_of(match, "VictimsChosen")][-2:]
    assert [v["kind"] for e in chosen for v in e.victims] == ["young_woman", "young_man"]
    assert model.default_victims(cottages, 3, elders=True)[-1] == (1, "elder")
    assert model.default_victims(cottages, 3, elders=False) == [
        (0, "young_woman"),
        (1, "young_man"),
    ]


def test_vi_2_6_feast_b_shares_dealt_in_turn_names_secret_then_revealed_together() -> None:
    match, stamps = starving(TWENTY_ONE, birds=0, feast_b=True)  # 4 deaths, 3 others
    decision = match.decision
    assert decision is not None and decision.kind == "name_victims"
    assert decision.parties == (1, 2, 3)
    assert decision.detail["shares"] == [[1, 2], [2, 1], [3, 1]]
    refused(match, "VI-2.6", match.act, 1, ChooseVictims(1, [(0, "elder")]), stamps())
    act(match, stamps, ChooseVictims(2, [(0, "elder")]))
    act(match, stamps, ChooseVictims(1, [(2, "girl"), (0, "elder")]))
    assert match.size(0) == 21  # nothing happens before the last name
    act(match, stamps, ChooseVictims(3, [(1, "elder")]))
    revealed = last(match, "VictimsRevealed")
    # Family 1 names first (turn order): its elder of cottage 0 dies; family 2 named the
    # same one, who no longer exists: the youngest of cottage 0, a young woman, dies.
    assert revealed.deaths == [
        {"cottage": 2, "kind": "girl"},
        {"cottage": 0, "kind": "elder"},
        {"cottage": 0, "kind": "young_woman"},
        {"cottage": 1, "kind": "elder"},
    ]
    assert [n["family"] for n in revealed.names] == [1, 2, 3]


def test_vi_7_7_feast_b_defaults_name_distinct_victims() -> None:
    match, stamps = starving(TWENTY_ONE, birds=0, feast_b=True)
    fire(match, stamps)
    revealed = last(match, "VictimsRevealed")
    assert [d["kind"] for d in revealed.deaths] == ["girl"] * 4
    assert all(e.by_default for e in all_of(match, "VictimsNamed"))


def test_vi_7_10_feast_a_with_feast_b_plays_as_feast_b() -> None:
    """VI-7.10: the same scene as feast_b alone, with the same names, gives the same
    decision, shares and deaths: secret names revealed together, elders allowed."""
    outcomes = []
    for variations in ({"feast_b": True}, {"feast_a": True, "feast_b": True}):
        match, stamps = starving(TWENTY_ONE, birds=0, **variations)
        decision = match.decision
        assert decision is not None and decision.kind == "name_victims"
        assert decision.parties == (1, 2, 3)
        assert decision.detail["shares"] == [[1, 2], [2, 1], [3, 1]]
        act(match, stamps, ChooseVictims(2, [(0, "elder")]))
        act(match, stamps, ChooseVictims(1, [(2, "girl"), (0, "elder")]))
        assert match.size(0) == 21  # secret until the last name
        act(match, stamps, ChooseVictims(3, [(1, "elder")]))
        outcomes.append(last(match, "VictimsRevealed").deaths)
    assert outcomes[0] == outcomes[1]
    # feast_a alone would have asked one family for one victim at a time, in the open.
    match, _ = starving(TWENTY_ONE, birds=0, feast_a=True)
    assert match.decision is not None and match.decision.kind == "victims"


def test_vi_2_6_with_two_players_every_other_family_chooses() -> None:
    match, stamps = starving(TWENTY_ONE, birds=0, players=2, feast_a=True)
    decision = match.decision
    assert decision is not None and decision.parties == (1,)
    act(match, stamps, ChooseVictims(1, [(2, "girl")]))
    decision = match.decision
    assert decision is not None and decision.parties == (2,)
    # Family 2 is seat 0's, like the starving family: seat 0 chooses for it.
    match.act(0, ChooseVictims(2, [(2, "girl")]), stamps())
    drive(match, stamps, lambda m: not awaiting(m, "victims"))
