"""Village phase 2, magic (VI-2.2, VI-6.3, VI-7.6), the commitments to the secret choices,
and revealing spells (VI-2.3)."""

from __future__ import annotations

import hashlib

from domain_support import refused
from village_support import (
    act,
    all_of,
    awaiting,
    cast,
    drive,
    fire,
    last,
    new_village,
    to_decision,
)

from domain.kernel import InvalidArgument, RuleViolation, canonical_bytes
from domain.village import (
    ChooseSpells,
    PassSpells,
    PlaceSpell,
    RevealSpells,
    SubmitPlacements,
    commitments,
    model,
)


def test_vi_2_2_choices_are_made_by_every_family_at_once() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    decision = match.decision
    assert decision is not None and decision.parties == (0, 1, 2, 3)
    act(match, stamps, ChooseSpells(2, ["girls"]))
    act(match, stamps, ChooseSpells(0, []))
    decision = match.decision
    assert decision is not None and decision.parties == (1, 3)


def test_vi_2_2_a_spell_per_piece_plus_one_per_sacrificed_bird() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    assert match.poles[0] == 1 and match.birds[0] >= 3
    refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, ["girls", "boys"], 0), stamps())
    refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, ["girls", "boys", "twins"], 1), stamps())
    birds = match.birds[0]
    act(match, stamps, ChooseSpells(0, ["girls", "boys", "twins"], 2))
    # Sacrificed birds are discarded; how many is public.
    assert match.birds[0] == birds - 2
    chosen = last(match, "SpellsChosen")
    assert (chosen.count, chosen.birds) == (3, 2)


def test_vi_6_3_and_vi_2_2_each_spell_at_most_once_a_round() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, ["youth", "youth"], 1), stamps())
    act(match, stamps, ChooseSpells(0, ["youth"]))
    # Already chosen this round: the family owes no choice any more.
    refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, ["lack"]), stamps())


def test_vi_2_2_a_spell_that_does_not_exist_is_invalid() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    error = refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, ["fireball"]), stamps())
    assert isinstance(error, InvalidArgument)
    refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, [], -1), stamps())


def test_vi_7_6_sacrificing_more_birds_than_the_spells_need_is_refused() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    refused(match, "VI-7.6", match.act, 0, ChooseSpells(0, ["girls"], 1), stamps())
    refused(match, "VI-7.6", match.act, 0, ChooseSpells(0, [], 1), stamps())


def test_vi_2_2_no_more_birds_than_the_pen_holds() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    match.birds[0] = 1
    spells = ["girls", "boys", "twins"]
    refused(match, "VI-2.2", match.act, 0, ChooseSpells(0, spells, 2), stamps())


def test_vi_2_2_placing_in_turn_order_one_at_a_time_until_all_are_placed() -> None:
    match, stamps = new_village(4)
    drive(match, stamps, lambda m: m.round == 2 and awaiting(m, "choose"))
    assert match.start_family == 1
    for f, spells in {
        0: ["girls", "boys"],
        1: ["twins"],
        3: ["lack", "abundance", "youth"],
    }.items():
        act(match, stamps, ChooseSpells(f, spells, max(0, len(spells) - match.poles[f])))
    act(match, stamps, ChooseSpells(2, []))
    placers = []
    while awaiting(match, "place"):
        decision = match.decision
        assert decision is not None
        f = decision.parties[0]
        placers.append(f)
        act(match, stamps, PlaceSpell(f, match.hands[f][0], (f + 1) % 4, 2))
    # Start player 1, then 2 (nothing), 3, 0; again 3, 0; then 3 alone.
    assert placers == [1, 3, 0, 3, 0, 3]
    placed = all_of(match, "SpellPlaced")
    assert [(p.family, p.target_family, p.cottage) for p in placed][:2] == [(1, 2, 2), (3, 0, 2)]
    assert [p.position for p in placed] == list(range(6))


def test_vi_2_2_a_spell_not_owned_or_already_placed_is_refused() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls", "boys"], 1))
    for f in (1, 2, 3):
        act(match, stamps, ChooseSpells(f, []))
    assert awaiting(match, "place")
    refused(match, "VI-2.2", match.act, 0, PlaceSpell(0, "twins", 0, 0), stamps())
    refused(match, "VI-2.2", match.act, 0, PlaceSpell(0, "frog", 0, 0), stamps())
    act(match, stamps, PlaceSpell(0, "girls", 2, 1))
    refused(match, "VI-2.2", match.act, 0, PlaceSpell(0, "girls", 0, 0), stamps())
    act(match, stamps, PlaceSpell(0, "boys", 0, 0))


def test_vi_7_6_a_placement_on_a_cottage_that_does_not_exist_is_invalid() -> None:
    match, stamps = new_village(3)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls"]))
    for f in (1, 2):
        act(match, stamps, ChooseSpells(f, []))
    for target, cottage in [(3, 0), (0, 3), (-1, 0)]:
        error = refused(
            match, "VI-2.2", match.act, 0, PlaceSpell(0, "girls", target, cottage), stamps()
        )
        assert isinstance(error, InvalidArgument)


def test_vi_2_2_timeout_defaults_cast_nothing_place_on_own_first_cottage() -> None:
    match, stamps = new_village(4)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(1, ["illness", "youth"], 1))
    fire(match, stamps)  # families 0, 2, 3 cast nothing
    assert [e.count for e in all_of(match, "SpellsChosen")] == [2, 0, 0, 0]
    assert all(e.by_default for e in all_of(match, "SpellsChosen") if e.family != 1)
    fire(match, stamps)
    fire(match, stamps)
    placed = all_of(match, "SpellPlaced")
    assert [(p.spell, p.target_family, p.cottage, p.by_default) for p in placed] == [
        ("illness", 1, 0, True),
        ("youth", 1, 0, True),
    ]


def test_vi_2_2_spells_a_pass_loses_the_unplaced_spells() -> None:
    match, stamps = new_village(3, spells_a=True)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls", "boys", "twins"], 2))
    act(match, stamps, ChooseSpells(1, ["lack"]))
    act(match, stamps, ChooseSpells(2, []))
    act(match, stamps, PlaceSpell(0, "girls", 1, 0))
    act(match, stamps, PassSpells(1))  # family 1 passes with its spell unplaced
    act(match, stamps, PlaceSpell(0, "boys", 1, 0))
    # Family 1 has passed and family 2 has nothing: family 0 places again, without waiting.
    decision = match.decision
    assert decision is not None and decision.parties == (0,)
    act(match, stamps, PassSpells(0))
    assert match.phase == 3
    assert len(match.board) == 2
    ended = drive(match, stamps, lambda m: m.round == 2) or last(match, "RoundEnded")
    # The lost spells' chits are published with the rest, never their identity.
    assert [len(c["chits"]) for c in ended.chits] == [3, 1, 0]
    assert {u["spell"] for u in ended.unplaced} == {"twins", "lack"}


def test_passing_without_spells_a_is_refused() -> None:
    match, stamps = new_village(3)
    cast(match, stamps, {0: [("girls", 0, 0), ("boys", 0, 0)]})
    match2, stamps2 = new_village(3)
    to_decision(match2, stamps2, "choose", 2)
    act(match2, stamps2, ChooseSpells(0, ["girls"]))
    fire(match2, stamps2)
    refused(match2, "VI-2.2", match2.act, 0, PassSpells(0), stamps2())


def test_vi_7_6_under_spells_a_a_family_with_nothing_left_is_skipped() -> None:
    match, stamps = new_village(4, spells_a=True)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls"]))
    act(match, stamps, ChooseSpells(1, ["boys", "twins"], 1))
    fire(match, stamps)
    placers = []
    while awaiting(match, "place"):
        decision = match.decision
        assert decision is not None
        placers.append(decision.parties[0])
        fire(match, stamps)
    assert placers == [0, 1, 1]


def test_vi_2_2_spells_b_placements_are_submitted_at_once_and_placed_together() -> None:
    match, stamps = new_village(4, spells_b=True)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls", "boys"], 1))
    act(match, stamps, ChooseSpells(2, ["illness"]))
    act(match, stamps, ChooseSpells(1, []))
    act(match, stamps, ChooseSpells(3, []))
    decision = match.decision
    assert decision is not None and decision.kind == "submit" and decision.parties == (0, 2)
    # All chosen spells must be placed (without spells_a), each once.
    refused(match, "VI-2.2", match.act, 0, SubmitPlacements(0, [("girls", 1, 0)]), stamps())
    refused(
        match,
        "VI-2.2",
        match.act,
        0,
        SubmitPlacements(0, [("girls", 1, 0), ("girls", 1, 1)]),
        stamps(),
    )
    act(match, stamps, SubmitPlacements(2, [("illness", 0, 1)]))
    assert match.board == []  # nothing is placed before the last submission
    act(match, stamps, SubmitPlacements(0, [("boys", 3, 2), ("girls", 1, 0)]))
    revealed = last(match, "PlacementsRevealed")
    assert [
        (p["family"], p["spell"], p["target_family"], p["cottage"]) for p in revealed.placements
    ] == [
        (0, "boys", 3, 2),
        (0, "girls", 1, 0),
        (2, "illness", 0, 1),
    ]
    assert match.phase == 3


def test_vi_7_10_spells_a_with_spells_b_lets_a_family_submit_any_subset() -> None:
    """VI-7.10: under both, a family submits any subset of its face-down placements, in
    secret; the others are lost (never placed, published as unplaced at the round's end).
    It does not pass one spell at a time: the submission is its one decision."""
    match, stamps = new_village(3, spells_a=True, spells_b=True)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls", "boys"], 1))
    act(match, stamps, ChooseSpells(1, ["twins"]))
    act(match, stamps, ChooseSpells(2, []))
    decision = match.decision
    assert decision is not None and decision.kind == "submit" and decision.parties == (0, 1)
    owed = match.legal_actions(0)["decisions"][0]
    assert owed["choices"]["all_required"] is False  # any subset will do
    refused(match, "VI-2.2", match.act, 0, PassSpells(0), stamps())
    act(match, stamps, SubmitPlacements(0, [("boys", 1, 1)]))  # a subset
    act(match, stamps, SubmitPlacements(1, []))  # the empty subset
    assert [(b["owner"], b["spell"]) for b in match.board] == [(0, "boys")]
    drive(match, stamps, lambda m: m.round == 2)
    ended = last(match, "RoundEnded")
    lost = sorted((u["family"], u["spell"]) for u in ended.unplaced)
    assert lost == [(0, "girls"), (1, "twins")]
    # Without spells_a every chosen spell must be submitted.
    match, stamps = new_village(3, spells_b=True)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls", "boys"], 1))
    fire(match, stamps)
    fewer = SubmitPlacements(0, [("boys", 1, 1)])
    refused(match, "VI-2.2", match.act, 0, fewer, stamps())


def test_spells_b_deadline_places_everything_on_the_own_first_cottage() -> None:
    match, stamps = new_village(3, spells_b=True)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(1, ["girls", "boys"], 1))
    fire(match, stamps)
    fire(match, stamps)
    assert [(b["owner"], b["family"], b["cottage"]) for b in match.board] == [(1, 1, 0), (1, 1, 0)]


# ---- commitments (VI-2.2) ------------------------------------------------------------


def test_vi_2_2_the_choice_is_committed_before_any_reveal_and_checkable_after() -> None:
    match, stamps = new_village(4)
    cast(match, stamps, {0: [("girls", 1, 0), ("youth", 2, 1)]})
    chosen = next(e for e in all_of(match, "SpellsChosen") if e.family == 0)
    reveals = all_of(match, "SpellsRevealed")
    assert chosen.originator_version < min((r.originator_version for r in reveals), default=10**9)
    # The commitment is a hash of the family's chits, each a hash of spell and salt.
    placed = [e for e in all_of(match, "SpellPlaced") if e.family == 0]
    drive(match, stamps, lambda m: m.round == 2)
    ended = last(match, "RoundEnded")
    published = next(c["chits"] for c in ended.chits if c["family"] == 0)
    assert published[:2] == [p.chit for p in placed]
    digest = hashlib.sha256(canonical_bytes(sorted(published))).hexdigest()
    assert digest == chosen.commitment == commitments.commitment(published)
    # Every reveal opens its chit: anyone recomputes it from the spell and the salt.
    for evt in all_of(match, "SpellsRevealed"):
        for r in evt.reveals:
            chit = commitments.chit(1, evt.family, r["spell"], r["salt"])
            assert chit == placed[r["position"]].chit


def test_vi_2_2_salts_come_from_the_match_secret_not_the_seed() -> None:
    a, sa = new_village(3, secret=b"\x01" * 32)
    b, sb = new_village(3, secret=b"\x02" * 32)
    for match, stamps in ((a, sa), (b, sb)):
        to_decision(match, stamps, "choose", 2)
        act(match, stamps, ChooseSpells(0, ["girls"]))
    ca, cb = last(a, "SpellsChosen"), last(b, "SpellsChosen")
    assert ca.salts != cb.salts and ca.commitment != cb.commitment
    assert ca.salts == [commitments.salt(b"\x01" * 32, 1, 0, "girls")]


# ---- revealing (VI-2.3) ------------------------------------------------------------------


def test_vi_2_3_reveals_at_the_start_of_phases_3_4_6_7_by_the_owners_in_turn() -> None:
    match, stamps = new_village(4)
    cast(
        match,
        stamps,
        {
            1: [("twins", 0, 0), ("lack", 1, 0), ("illness", 2, 0)],
            3: [("youth", 3, 0)],
        },
    )
    asked: list[tuple[int, int]] = []
    while match.round == 1:
        if awaiting(match, "reveal"):
            decision = match.decision
            assert decision is not None
            asked.append((match.phase, decision.parties[0]))
            f = decision.parties[0]
            act(match, stamps, RevealSpells(f, []))
        else:
            fire(match, stamps)
    # Every family with a face-down spell on the board is asked, whatever its spells'
    # phases: being asked tells nobody what a family holds.
    assert asked == [(p, f) for p in (3, 4, 6, 7) for f in (1, 3)]
    assert not all_of(match, "IllnessStruck")


def test_vi_2_3_only_this_phase_spells_of_ones_own_family() -> None:
    match, stamps = new_village(4)
    cast(match, stamps, {0: [("lack", 1, 0), ("girls", 1, 0)], 1: [("boys", 0, 0)]})
    to_decision(match, stamps, "reveal", 3)
    decision = match.decision
    assert decision is not None and decision.parties == (0,)
    lack = next(b["position"] for b in match.board if b["spell"] == "lack")
    girls = next(b["position"] for b in match.board if b["spell"] == "girls")
    boys = next(b["position"] for b in match.board if b["spell"] == "boys")
    refused(match, "VI-2.3", match.act, 0, RevealSpells(0, [lack]), stamps())
    refused(match, "VI-2.3", match.act, 0, RevealSpells(0, [boys]), stamps())
    refused(match, "VI-2.3", match.act, 0, RevealSpells(0, [girls, girls]), stamps())
    refused(match, "VI-2.3", match.act, 0, RevealSpells(0, [99]), stamps())
    refused(match, "VI-2.3", match.act, 1, RevealSpells(1, [boys]), stamps())  # not its turn
    act(match, stamps, RevealSpells(0, [girls]))
    reveal = last(match, "SpellsRevealed")
    assert reveal.reveals == [
        {"position": girls, "spell": "girls", "salt": match.board[girls]["salt"]}
    ]


def test_vi_2_3_a_spell_acts_only_if_revealed_timeout_reveals_all() -> None:
    match, stamps = new_village(4, prearranged_sexes=["boy"] * 50)
    cast(match, stamps, {0: [("girls", 0, 0)], 1: [("girls", 1, 0)]})
    to_decision(match, stamps, "reveal", 3)
    act(match, stamps, RevealSpells(0, []))  # family 0 keeps its spell hidden
    fire(match, stamps)  # family 1's default: reveal all
    born = last(match, "Born")
    forced = {(c["family"], c["cottage"]): c["forced"] for c in born.children}
    assert forced.get((1, 0)) == "girl"
    assert forced.get((0, 0)) is None
    assert match.board[0]["revealed"] is False and match.board[1]["revealed"] is True


def test_vi_2_2_spells_leave_the_board_at_the_end_of_the_round() -> None:
    match, stamps = new_village(3)
    cast(match, stamps, {0: [("girls", 0, 0)]})
    assert match.board
    drive(match, stamps, lambda m: m.round == 2)
    assert match.board == [] and match.hands == [[], [], []]
    assert all(c is None for c in match.choices)


def test_model_lists_ten_spells_with_their_phases() -> None:
    assert len(model.SPELLS) == model.SPELL_COUNT == 10
    assert {p for p in model.SPELL_PHASE.values()} == set(model.REVEAL_PHASES)
    assert isinstance(RuleViolation("VI-2.2", "x"), Exception)
