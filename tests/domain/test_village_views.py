"""What each viewer sees of a Village match (VI-5, VI-2.3): the owner its own spells,
the others counts and positions, nobody but the referee an unrevealed spell, ever."""

from __future__ import annotations

import json
import re
from typing import Any

from domain_support import refused
from village_support import (
    act,
    all_of,
    awaiting,
    cast,
    drive,
    fire,
    new_village,
    to_decision,
)

from domain.games import GAMES, game_of
from domain.kernel import MatchStatus, Viewer
from domain.village import (
    ChooseSpells,
    ChooseVictims,
    PlaceSpell,
    RevealSpells,
    SubmitPlacements,
    Village,
    model,
)
from domain.village.views import event_view, state_view

HEX64 = re.compile(r"[0-9a-f]{64}")


def stream(match: Village, viewer: Viewer) -> list[tuple[str, dict[str, Any]]]:
    return [event_view(match, e, viewer) for e in match.pending_events]


def text(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def test_the_game_is_registered() -> None:
    match, _ = new_village(3)
    assert GAMES["village"].aggregate is Village
    assert game_of(match).state_view is state_view


def test_vi_5_1_the_owner_sees_its_spells_others_counts_and_positions() -> None:
    """VI-5.1: the choice and each face-down spell: the owner sees them, others not."""
    match, stamps = new_village(4)
    cast(match, stamps, {1: [("girls", 2, 1), ("illness", 0, 0)]})
    owner = state_view(match, Viewer.player(1))
    other = state_view(match, Viewer.player(0))
    spectator = state_view(match, Viewer.spectator())
    referee = state_view(match, Viewer.referee())
    assert owner["families"][1]["spells"] == ["girls", "illness"]
    for view in (other, spectator):
        family = view["families"][1]
        assert "spells" not in family and "hand" not in family
        assert family["spell_count"] == 2 and family["sacrificed"] == 1
        assert [(b["owner"], b["family"], b["cottage"]) for b in view["board"]] == [
            (1, 2, 1),
            (1, 0, 0),
        ]
        assert all("spell" not in b and "salt" not in b for b in view["board"])
        assert "girls" not in text(view) and "illness" not in text(view)
    assert [b["spell"] for b in owner["board"]] == ["girls", "illness"]
    assert [b["spell"] for b in referee["board"]] == ["girls", "illness"]
    assert referee["secret"] == match.secret and "secret" not in owner
    # The event streams: the choice and the placements, redacted the same way.
    for name, view in stream(match, Viewer.player(0)):
        if name in ("SpellsChosen", "SpellPlaced") and view["family"] == 1:
            assert "spells" not in view and "spell" not in view and "salts" not in view
    chosen = [v for n, v in stream(match, Viewer.player(1)) if n == "SpellsChosen"]
    assert chosen[1]["spells"] == ["girls", "illness"]


def test_vi_5_1_two_players_each_sees_both_its_families() -> None:
    """VI-5.1 with VI-7.1: a seat owns two families and sees both."""
    match, stamps = new_village(2)
    cast(match, stamps, {2: [("youth", 2, 0)], 3: [("lack", 3, 0)]})
    mine = state_view(match, Viewer.player(0))
    assert mine["families"][2]["spells"] == ["youth"]
    assert "spells" not in mine["families"][3]
    assert [b.get("spell") for b in mine["board"]] == ["youth", None]


def test_vi_2_3_an_unrevealed_spell_stays_secret_from_players_forever() -> None:
    match, stamps = new_village(4, seed=b"\x03" * 32)
    cast(match, stamps, {2: [("infertility", 0, 0)]})
    salt = match.board[0]["salt"]
    to_decision(match, stamps, "reveal", 3)
    act(match, stamps, RevealSpells(2, []))
    drive(match, stamps, lambda m: m.status is MatchStatus.ENDED, limit=100_000)
    for viewer in (Viewer.player(0), Viewer.player(1), Viewer.player(3), Viewer.spectator()):
        seen = text(stream(match, viewer)) + text(state_view(match, viewer))
        assert salt not in seen and match.secret not in seen
        ended = next(v for n, v in stream(match, viewer) if n == "RoundEnded")
        assert ended["unrevealed"] == [] and ended["chits"][2]["chits"] == [match_chit(match)]
    owner = next(v for n, v in stream(match, Viewer.player(2)) if n == "RoundEnded")
    assert owner["unrevealed"] == [
        {"position": 0, "family": 2, "spell": "infertility", "salt": salt}
    ]
    referee = text(stream(match, Viewer.referee()))
    assert salt in referee and match.secret in referee


def match_chit(match: Village) -> str:
    spell = next(e for e in all_of(match, "SpellPlaced"))
    chit: str = spell.chit
    return chit


def test_vi_5_2_members_birds_poles_and_births_are_public() -> None:
    """VI-5.2: members per cottage, birds, poles and random births are public."""
    match, stamps = new_village(3)
    drive(match, stamps, lambda m: m.round == 2)
    view = state_view(match, Viewer.spectator())
    for f in match.families:
        family = view["families"][f]
        assert family["cottages"] == match.cottages[f]
        assert (family["birds"], family["pole"]) == (match.birds[f], match.poles[f])
    born = next(v for n, v in stream(match, Viewer.spectator()) if n == "Born")
    assert born["draws"] == all_of(match, "Born")[0].draws
    assert "seed" not in view and view["seed_commitment"] == match.seed_commitment


def test_prearranged_sexes_and_the_seed_are_hidden_until_the_end() -> None:
    match, stamps = new_village(3, prearranged_sexes=["girl", "boy"])
    created = stream(match, Viewer.spectator())[0][1]
    assert created["options"]["prearranged"] is True
    assert "prearranged_sexes" not in created["options"] and "seed" not in created
    assert "secret" not in created
    assert stream(match, Viewer.referee())[0][1]["options"]["prearranged_sexes"] == ["girl", "boy"]
    drive(match, stamps, lambda m: m.status is MatchStatus.ENDED, limit=100_000)
    assert state_view(match, Viewer.spectator())["seed"] == match.seed


def test_spells_b_and_feast_b_secrets_until_revealed_together() -> None:
    match, stamps = new_village(3, spells_b=True)
    to_decision(match, stamps, "choose", 2)
    act(match, stamps, ChooseSpells(0, ["girls"]))
    fire(match, stamps)
    act(match, stamps, SubmitPlacements(0, [("girls", 1, 2)]))
    submitted = [v for n, v in stream(match, Viewer.player(1)) if n == "PlacementsSubmitted"]
    assert submitted == [
        {"family": 0, "count": 1, "by_default": False, "stamp": submitted[0]["stamp"]}
    ]
    placed = next(v for n, v in stream(match, Viewer.player(1)) if n == "PlacementsRevealed")
    assert placed["placements"][0]["target_family"] == 1 and "spell" not in placed["placements"][0]


def test_vi_5_1_feast_b_names_are_secret_until_revealed() -> None:
    """VI-5.1 and VI-2.6: feast_b names are secret choices until revealed together."""
    match, stamps = new_village(4, feast_b=True)
    to_decision(match, stamps, "choose", 2)
    match.cottages[0] = [
        model.counts({"young_woman": 9, "elder": 1}),
        model.counts({"mature_man": 1}),
        model.empty(),
    ]
    match.birds[0] = 0
    drive(match, stamps, lambda m: awaiting(m, "name_victims"))
    decision = match.decision
    assert decision is not None
    first = decision.parties[0]
    act(match, stamps, ChooseVictims(first, [(0, "elder")]))
    for viewer in (Viewer.player((first + 1) % 4), Viewer.spectator()):
        named = [v for n, v in stream(match, viewer) if n == "VictimsNamed"][-1]
        assert "victims" not in named and named["count"] == 1
        assert "victims" not in state_view(match, viewer)["named"][0]
    assert state_view(match, Viewer.player(first))["named"][0]["victims"] == [
        {"cottage": 0, "kind": "elder"}
    ]


def test_a_players_state_names_the_decision_it_owes_its_deadline_and_choices() -> None:
    match, stamps = new_village(4, choose_timeout_ms=9_000)
    to_decision(match, stamps, "choose", 2)
    view = state_view(match, Viewer.player(2))
    decision = match.decision
    assert decision is not None
    [owed] = view["legal"]["decisions"]
    assert owed["family"] == 2 and owed["kind"] == "choose" and owed["rule"] == "VI-2.2"
    assert owed["deadline_ms"] == decision.deadline_ms == decision.opened_ms + 9_000
    assert owed["choices"]["spells"] == list(model.SPELLS)
    assert owed["default"] == {"command": "ChooseSpells", "family": 2, "spells": [], "birds": 0}
    assert view["decision"]["parties"] == [0, 1, 2, 3]
    act(match, stamps, ChooseSpells(2, []))
    assert state_view(match, Viewer.player(2))["legal"]["decisions"] == []
    assert "legal" not in state_view(match, Viewer.spectator())


def test_refusals_name_no_hidden_fact() -> None:
    match, stamps = new_village(4)
    cast(match, stamps, {1: [("twins", 0, 0)]})
    to_decision(match, stamps, "reveal", 3)
    error = refused(match, "VI-2.2", match.act, 0, RevealSpells(1, [0]), stamps())  # VI-7.9
    assert "twins" not in error.message and match.board[0]["salt"] not in error.message
    error = refused(match, "VI-2.2", match.act, 0, PlaceSpell(0, "twins", 0, 0), stamps())
    assert "twins" not in error.message and "phase 3" in error.message


# ---- two matches that differ only in hidden choices ------------------------------------


def normalised(values: list[object]) -> str:
    """The views as text, each 64-hex value (commitments, chits) replaced by the order of
    its first appearance: pseudo-random by design, they tell nothing."""
    labels: dict[str, str] = {}

    def label(found: re.Match[str]) -> str:
        return labels.setdefault(found.group(0), f"<hash {len(labels)}>")

    return HEX64.sub(label, text(values))


def play_hiding(spells: list[str], targets: list[tuple[int, int]]) -> tuple[Village, list[int]]:
    """Family 1 casts ``spells`` on ``targets`` and never reveals them; everyone else
    plays the same; returns the match and the versions after each step."""
    match, stamps = new_village(4, seed=b"\x04" * 32)
    versions = []
    while match.round < 3:
        if awaiting(match, "choose") and match.decision is not None and 1 in match.decision.parties:
            act(match, stamps, ChooseSpells(1, spells, max(0, len(spells) - match.poles[1])))
        elif (
            awaiting(match, "place")
            and match.decision is not None
            and match.decision.parties == (1,)
        ):
            spell = match.hands[1][0]
            target, cottage = targets[len(spells) - len(match.hands[1])]
            act(match, stamps, PlaceSpell(1, spell, target, cottage))
        elif (
            awaiting(match, "reveal")
            and match.decision is not None
            and match.decision.parties == (1,)
        ):
            act(match, stamps, RevealSpells(1, []))
        else:
            fire(match, stamps)
        versions.append(match.version)
    return match, versions


def views_of(match: Village, viewer: Viewer) -> list[object]:
    """The viewer's stream, and its state after each event (rebuilt event by event)."""
    out: list[object] = []
    rebuilt: Any = None
    for evt in match.pending_events:
        rebuilt = evt.mutate(rebuilt)
        out.append(event_view(rebuilt, evt, viewer))
        out.append(state_view(rebuilt, viewer))
    return out


def test_vi_5_1_streams_and_states_identical_whatever_the_hidden_choices() -> None:
    """VI-5.1, VI-2.3: two matches differing only in family 1's secret spells, never
    revealed: every other player's and a spectator's stream and states are identical
    (commitments aside, which are fresh hashes), for two whole rounds."""
    a, _ = play_hiding(["girls", "lack"], [(0, 0), (1, 2)])
    b, _ = play_hiding(["illness", "youth"], [(0, 0), (1, 2)])
    assert a.round == b.round == 3
    for viewer in (Viewer.player(0), Viewer.player(2), Viewer.player(3), Viewer.spectator()):
        assert normalised(views_of(a, viewer)) == normalised(views_of(b, viewer))
    # The owner and the referee do see the difference.
    for viewer in (Viewer.player(1), Viewer.referee()):
        assert normalised(views_of(a, viewer)) != normalised(views_of(b, viewer))
