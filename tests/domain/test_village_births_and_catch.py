"""Village phase 3, births (VI-2.4), and phase 4, the catch (VI-2.5), with the source's
worked examples."""

from __future__ import annotations

from typing import Any

from village_support import (
    all_of,
    awaiting,
    cast,
    drive,
    drive_past,
    new_village,
    stage,
    to_decision,
)

from domain.kernel import SeededRandom
from domain.village import Options, model
from domain.village.births import birth_stream, sex_of

FIVE_WOMEN_AND_A_YOUNG_MAN = {"young_woman": 3, "mature_woman": 2, "young_man": 1}


def births_with(
    spells: list[str], cottage: dict[str, int], **options: object
) -> tuple[dict[str, object], object]:
    """Family 0's cottage 0 holds ``cottage``; family 0 casts ``spells`` on it and
    reveals them; returns that cottage's births and the Born event."""
    match, stamps = new_village(4, **options)  # type: ignore[arg-type]
    to_decision(match, stamps, "choose", 2)
    stage(match, 0, [cottage, {}, {}])
    match.poles[0] = 6
    for f in (1, 2, 3):
        stage(match, f, [{}, {}, {}])
    seen = len(all_of(match, "Born"))
    cast(match, stamps, {0: [(s, 0, 0) for s in spells]})
    born = drive_past(match, stamps, "Born", seen)
    mine = [c for c in born.children if (c["family"], c["cottage"]) == (0, 0)]
    return (mine[0] if mine else {"girls": 0, "boys": 0, "forced": None}), born


def test_vi_2_4_worked_example_girls_boys_twins_give_ten_random_children() -> None:
    """The source's example: girls, boys and twins uncovered in a cottage with five women
    and a young man: ten children whose sex is random, girls and boys cancelling."""
    child, born = births_with(["girls", "boys", "twins"], FIVE_WOMEN_AND_A_YOUNG_MAN)
    assert child["girls"] + child["boys"] == 10  # type: ignore[operator]
    assert child["forced"] is None
    assert len(born.draws) == 10


def test_vi_2_4_one_child_per_fertile_woman_if_a_fertile_man_lives_there() -> None:
    child, _ = births_with(
        [], {"young_woman": 2, "mature_woman": 1, "elder": 3, "girl": 2, "mature_man": 1}
    )
    assert child["girls"] + child["boys"] == 3  # type: ignore[operator]
    child, _ = births_with([], {"young_woman": 2, "mature_woman": 1, "elder": 3, "boy": 4})
    assert child["girls"] + child["boys"] == 0  # type: ignore[operator]


def test_vi_2_4_girls_boys_twins_infertility_and_their_cancellations() -> None:
    cottage = {"young_woman": 2, "young_man": 1}
    child, born = births_with(["girls"], cottage)
    assert (child["girls"], child["boys"], born.draws) == (2, 0, [])
    child, _ = births_with(["boys"], cottage)
    assert (child["girls"], child["boys"]) == (0, 2)
    child, _ = births_with(["twins", "boys"], cottage)
    assert (child["girls"], child["boys"]) == (0, 4)
    child, _ = births_with(["infertility"], cottage)
    assert (child["girls"], child["boys"]) == (0, 0)
    # twins and infertility cancel: one child each, sex drawn
    child, born = births_with(["twins", "infertility"], cottage)
    assert child["girls"] + child["boys"] == 2  # type: ignore[operator]
    assert len(born.draws) == 2


def test_vi_2_4_cancellation_whatever_the_numbers() -> None:
    assert model.forced_sex(["girls", "girls", "boys"]) is None
    assert model.forced_sex(["girls", "girls"]) == "girl"
    assert model.children_per_woman(["twins", "twins", "infertility"]) == 1
    assert model.children_per_woman(["infertility", "infertility"]) == 0


def test_vi_2_4_draw_order_family_by_family_cottage_by_cottage_child_by_child() -> None:
    """A prearranged sequence is consumed in turn order from the start player, cottage 0,
    1, 2, child by child, so duplicate tables get the same births."""
    mine = ["girl", "boy", "boy", "girl", "girl", "girl", "boy"]
    match, stamps = new_village(4, prearranged_sexes=["boy"] * 40)
    drive(match, stamps, lambda m: m.round == 2 and m.phase == 2)
    assert match.start_family == 1
    used = match.sexes_used  # round 1's births took the first ones
    assert used > 0
    match.options = Options(max_players=4, prearranged_sexes=["boy"] * used + mine)
    pair = {"young_woman": 1, "young_man": 1}
    stage(match, 0, [pair, {}, {}])  # 1 child, drawn last
    stage(match, 1, [{}, pair, {"mature_woman": 2, "mature_man": 1}])  # 1 then 2 children
    stage(match, 2, [{}, {}, {}])
    stage(match, 3, [{"young_woman": 3, "mature_man": 1}, {}, {}])  # 3 children
    born = drive_past(match, stamps, "Born")
    got = [(c["family"], c["cottage"], c["girls"], c["boys"]) for c in born.children]
    assert got == [(1, 1, 1, 0), (1, 2, 0, 2), (3, 0, 3, 0), (0, 0, 0, 1)]
    assert born.draws == mine and born.prearranged == 7
    assert match.sexes_used == used + 7


def test_vi_2_4_random_sexes_from_the_seed_on_their_own_stream_recorded() -> None:
    match, stamps = new_village(3, seed=b"\x05" * 32)
    born = drive_past(match, stamps, "Born")
    assert born.draws, "the default arrangement puts couples together"
    rng = birth_stream(match.effective_seed(), 1)
    assert born.draws == [sex_of(rng.randbelow(2)) for _ in born.draws]
    # The stream is SeededRandom(effective seed, "village/births/<round>").
    again = SeededRandom(match.effective_seed(), "village/births/1")
    assert [sex_of(again.randbelow(2)) for _ in born.draws] == born.draws


def test_vi_2_4_prearranged_runs_out_then_the_seed_draws() -> None:
    match, stamps = new_village(3, prearranged_sexes=["boy"])
    born = drive_past(match, stamps, "Born")
    rng = birth_stream(match.effective_seed(), 1)
    assert born.prearranged == 1
    assert born.draws == ["boy"] + [sex_of(rng.randbelow(2)) for _ in born.draws[1:]]


def test_vi_2_4_children_are_born_into_their_mothers_cottage_beyond_six() -> None:
    match, stamps = new_village(3, prearranged_sexes=["girl"] * 20)
    to_decision(match, stamps, "choose", 2)
    stage(match, 0, [{"young_woman": 5, "young_man": 1}, {}, {}])
    born = drive_past(match, stamps, "Born")
    assert [c for c in born.children if c["family"] == 0] == [
        {"family": 0, "cottage": 0, "girls": 5, "boys": 0, "forced": None}
    ]
    # Capacity is enforced only in phase 1: the cottage holds 11 until then (aged).
    assert match.round == 2 and awaiting(match, "arrange")
    assert match.cottages[0][0] == model.counts(
        {"young_woman": 5, "mature_woman": 5, "mature_man": 1}
    )


# ---- the catch (VI-2.5) ----------------------------------------------------------------


def catch_with(
    players: int,
    cottages: dict[int, list[dict[str, int]]],
    spells: dict[int, list[tuple[str, int, int]]] | None = None,
) -> Any:
    """The CatchShared event when the families hold ``cottages`` (every child born before
    the catch is a girl, so hunters are only those staged)."""
    match, stamps = new_village(players, prearranged_sexes=["girl"] * 200)
    to_decision(match, stamps, "choose", 2)
    for f in match.families:
        stage(match, f, cottages.get(f, [{"young_woman": 1, "young_man": 1, "elder": 1}, {}, {}]))
        match.poles[f] = 6
    seen = len(all_of(match, "CatchShared"))
    cast(match, stamps, spells or {})
    return drive_past(match, stamps, "CatchShared", seen)


def test_vi_2_5_worked_example_eleven_hunters_claim_three_birds() -> None:
    hunters = [{"young_man": 5}, {"boy": 3, "mature_man": 2}, {"young_man": 1, "young_woman": 1}]
    catch = catch_with(4, {0: hunters})
    claim = next(c for c in catch.claims if c["family"] == 0)
    assert (claim["hunters"], claim["claim"], claim["got"]) == (11, 3, 3)
    assert model.claim(11) == 3 and model.claim(10) == 2 and model.claim(0) == 0


def test_vi_2_5_abundance_doubles_lack_cancels_both_cancel() -> None:
    men = [{"young_man": 5}, {"young_man": 1, "young_woman": 1}, {}]
    catch = catch_with(4, {0: men}, {0: [("abundance", 0, 0)]})
    assert catch.claims[0]["hunters"] == 11
    catch = catch_with(4, {0: men}, {0: [("lack", 0, 0)]})
    assert catch.claims[0]["hunters"] == 1
    catch = catch_with(4, {0: men}, {0: [("lack", 0, 0), ("abundance", 0, 0)]})
    assert catch.claims[0]["hunters"] == 6
    assert model.hunter_factor(["abundance", "abundance", "lack"]) == 1


def test_vi_2_5_thirteen_birds_ten_with_three_the_last_claimant_gets_less() -> None:
    big = [{"young_man": 6}, {"mature_man": 6}, {"boy": 5, "young_woman": 1}]  # 17: 4 birds
    catch = catch_with(4, {f: big for f in range(4)})
    assert catch.catch == 13
    assert [(c["family"], c["got"]) for c in catch.claims] == [(0, 4), (1, 4), (2, 4), (3, 1)]
    catch = catch_with(3, {f: big for f in range(3)})
    assert catch.catch == 10
    assert [c["got"] for c in catch.claims] == [4, 4, 2]
    catch = catch_with(2, {f: big for f in range(4)})
    assert catch.catch == 13
    assert model.share_catch([5, 5, 5], 13) == [5, 5, 3]
