"""Village's events record their consequences, so that changing a rule's code cannot
change how a stored match replays, and events stored before they did (version 1) still
replay, and verify, as they did.

Each command works out what its event leads to; replaying the event only applies its
fields. The tests replace the code that decides by code that fails if called (or that
decides otherwise), rebuild the match from its events and compare the states; and they
store matches as the release of 2026-12-05 did, without the fields added since, and
show that they upcast, verify and replay to the same state. The generation change
(``Aged``) has its own module, ``test_village_recorded_ageing``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from domain_support import Stamps, replays_as_played, stored_without
from eventsourcing.application import Application
from test_village_properties import random_legal
from test_village_recorded_ageing import failing, rebuild, state_of
from village_support import act, fire, new_village, to_decision

from domain.kernel import MatchStatus, Viewer
from domain.kernel.chain import UPCAST
from domain.village import (
    ChooseSpells,
    PassSpells,
    PlaceSpell,
    Village,
    ending,
    feast,
    legacy,
    magic,
    model,
)
from domain.village import match as village_match
from domain.village.views import event_view

#: Every event of version 2 (but ``Aged``) and the fields version 2 added.
ADDED = {
    "Founded": ("pole",),
    "RoundBegan": ("pole",),
    "SpellPlaced": ("place_next",),
    "SpellsPassed": ("place_next",),
    "VictimsChosen": ("owed", "turn"),
    "TotemCompleted": ("outcome",),
}

PLACING = ("SpellPlaced", "SpellsPassed")

#: The rule code that decides what those events record: a replay never runs it.
DECIDERS = (
    (magic, "rotation_after"),
    (feast, "after_victims"),
    (ending, "outcome"),
    (model, "tie"),
)

#: The kit's constants the commands record (VI-1.3, VI-2.1): a replay never reads them.
KIT = ("START_POLE", "RESTART_POLE")

#: The frozen code that works out a version-1 event: a version-2 one never runs it.
LEGACY = ("founded", "restarted", "placed", "victims_done", "completed")


def played(seed: int, players: int, steps: int = 2_000, **options: Any) -> Village:
    """A match played by random legal commands, a deadline let pass (its defaults
    applied) one step in five, until it ends or ``steps`` steps are taken."""
    rng = random.Random(seed)
    match, stamps = new_village(players, **options)
    for _ in range(steps):
        decision = match.decision
        if match.status is not MatchStatus.PLAYING or decision is None:
            break
        if rng.random() < 0.2:
            fire(match, stamps)
            continue
        seat = match.party_owner(rng.choice(decision.parties))
        match.act(seat, rng.choice(random_legal(match, seat, rng)), stamps())
    return match


def named(events: list[Any], name: str) -> list[Any]:
    return [e for e in events if type(e).__name__ == name]


def replays_without_rule_code(match: Village, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuild ``match`` from its events with every decider and every version-1
    derivation replaced by code that fails, and another kit: the same state, to the
    last field."""
    with monkeypatch.context() as patched:
        for module, name in DECIDERS:
            patched.setattr(module, name, failing)
        for name in KIT:
            patched.setattr(village_match, name, 99)
        for name in LEGACY:
            patched.setattr(legacy, name, failing)
        rebuilt = rebuild(list(match.pending_events))
    assert state_of(rebuilt) == state_of(match)


def as_release_1(match: Village) -> list[Any]:
    """The match's events as the release of 2026-12-05 stored them, loaded again."""
    mapper = Application().mapper
    return [mapper.to_domain_event(item) for item in stored_without(match, ADDED)]


def with_fields(evt: Any, **fields: Any) -> Any:
    """A copy of an event with fields changed, as a store holding other values gives it."""
    copy = object.__new__(type(evt))
    object.__setattr__(copy, "__dict__", dict(vars(evt), **fields))
    return copy


#: Matches that hold every event of ``ADDED`` (seed, players, options).
MATCHES = [
    (1, 2, {"spells_a": True}),
    (1, 3, {}),
    (2, 3, {"spells_a": True, "feast_a": True}),
]


@pytest.fixture(scope="module", params=MATCHES, ids=lambda p: f"seed{p[0]}-{p[1]}p")
def match(request: pytest.FixtureRequest) -> Village:
    seed, players, options = request.param
    return played(seed, players, **options)


# ---- changing a rule's code changes no replay ----------------------------------------------


def test_every_version_2_event_replays_without_the_code_of_its_rule(
    match: Village, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = [e for e in match.pending_events if type(e).__name__ in ADDED]
    assert recorded and all(type(e).class_version == 2 for e in recorded)
    replays_without_rule_code(match, monkeypatch)


@pytest.mark.parametrize("pole", [2, 0])
def test_vi_1_3_vi_2_1_a_new_and_a_restarted_pole_replay_as_recorded(
    pole: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Founded`` and ``RoundBegan`` record the pole a family starts and restarts with:
    another kit in the code changes no replay, and the body takes the recorded one."""
    match = played(1, 2, spells_a=True)
    founded = named(match.pending_events, "Founded")[0]
    restart = next(e for e in named(match.pending_events, "RoundBegan") if e.restarts)
    assert (founded.pole, restart.pole) == (1, 1)
    monkeypatch.setattr(village_match, "START_POLE", pole)
    monkeypatch.setattr(village_match, "RESTART_POLE", pole)
    events = list(match.pending_events)
    at_start = rebuild(events[: events.index(founded) + 1])
    assert at_start.poles == [1] * at_start.family_count
    upto = events.index(restart) + 1
    assert [rebuild(events[:upto]).poles[f] for f in restart.restarts] == [1] * len(
        restart.restarts
    )
    replays_without_rule_code(match, monkeypatch)
    # A store that recorded other poles replays to them.
    changed = [with_fields(e, pole=pole) if e in (founded, restart) else e for e in events[:upto]]
    assert rebuild(changed[: events.index(founded) + 1]).poles == [pole] * at_start.family_count
    assert [rebuild(changed).poles[f] for f in restart.restarts] == [pole] * len(restart.restarts)


def test_vi_2_2_placing_and_passing_record_where_the_rotation_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``spells_a``: a pass moves the rotation on like a placement; each event records
    where it goes on, and another rotation in the code changes no replay."""
    match, stamps = new_village(3, spells_a=True)
    drive_to_placing(match, stamps, {0: ["girls", "boys"], 1: ["lack"], 2: ["twins"]})
    act(match, stamps, PassSpells(0))  # start family 0 passes, losing both
    place_default(match, stamps)  # family 1 places
    place_default(match, stamps)  # family 2 places; nobody has a spell left
    events = [e for e in match.pending_events if type(e).__name__ in PLACING]
    assert [(type(e).__name__, e.family, e.place_next) for e in events] == [
        ("SpellsPassed", 0, 1),
        ("SpellPlaced", 1, 2),
        ("SpellPlaced", 2, 0),
    ]
    # Counter-clockwise in the code: each event still puts the rotation where it says.
    monkeypatch.setattr(magic, "rotation_after", lambda m, f: (f - m.start_family - 1) % 3)
    for upto, evt in enumerate(match.pending_events, start=1):
        if type(evt).__name__ in PLACING:
            assert rebuild(list(match.pending_events)[:upto]).place_next == evt.place_next


def test_vi_2_2_the_rotation_a_replay_follows_is_the_one_recorded() -> None:
    """The event's ``place_next`` is what its body applies: a store that recorded
    another rotation replays to it, and the next placer follows."""
    match, stamps = new_village(3)
    drive_to_placing(match, stamps, {0: ["girls", "boys"], 1: ["lack"], 2: ["twins"]})
    place_default(match, stamps)
    placed = named(match.pending_events, "SpellPlaced")[-1]
    assert (placed.family, placed.place_next, match.next_placer()) == (0, 1, 1)
    events = [e if e is not placed else with_fields(e, place_next=2) for e in match.pending_events]
    rebuilt = rebuild(events)
    assert (rebuilt.place_next, rebuilt.next_placer()) == (2, 2)


def test_vi_2_2_a_spell_goes_where_its_event_puts_it_on_the_board() -> None:
    """``SpellPlaced`` and ``PlacementsRevealed`` record each spell's board position;
    the replay puts it there, whatever the board held before."""
    for options in ({}, {"spells_b": True}):
        match = played(1, 3, **options)
        name = "PlacementsRevealed" if options else "SpellPlaced"
        evt = next(e for e in named(match.pending_events, name) if e.originator_version > 20)
        placements = getattr(evt, "placements", None) or [vars(evt)]
        moved = [dict(p, position=p["position"] + 10) for p in placements]
        changed = (
            with_fields(evt, placements=moved)
            if options
            else with_fields(evt, position=moved[0]["position"])
        )
        events = [e for e in match.pending_events if e.originator_version < evt.originator_version]
        rebuilt = rebuild([*events, changed])
        spots = rebuilt.board[-len(moved) :]
        assert [s["position"] for s in spots] == [p["position"] for p in moved]
        assert [s["chit"] for s in spots] == [p["chit"] for p in moved]


def test_vi_2_6_feast_a_victims_record_the_deaths_still_owed_and_the_next_chooser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under ``feast_a`` the other families choose one victim each in turn: each
    ``VictimsChosen`` records the deaths still owed and how many have chosen, and the
    replay takes them as recorded, whatever the code counts."""
    match = played(2, 3, feast_a=True)
    chosen = named(match.pending_events, "VictimsChosen")
    going_on = [e for e in chosen if e.owed and e.owed[0][0] == e.starving]
    assert going_on and all(e.turn > 0 and len(e.victims) == 1 for e in going_on)
    assert any(e.turn == 0 and not (e.owed and e.owed[0][0] == e.starving) for e in chosen)
    monkeypatch.setattr(feast, "after_victims", lambda m, count: ([], 0))
    events = list(match.pending_events)
    for evt in going_on[:5]:
        rebuilt = rebuild(events[: events.index(evt) + 1])
        assert (rebuilt.feast_queue, rebuilt.feast_turn) == (evt.owed, evt.turn)
    replays_without_rule_code(match, monkeypatch)


def test_vi_2_6_the_deaths_a_replay_owes_are_the_ones_recorded() -> None:
    """The event's ``owed`` and ``turn`` are what its body applies: a store that
    recorded others replays to them, and the next decision follows."""
    match = played(2, 3, feast_a=True)
    evt = next(e for e in named(match.pending_events, "VictimsChosen") if e.turn > 0)
    events = list(match.pending_events)[: list(match.pending_events).index(evt) + 1]
    starving, deaths = evt.owed[0]
    changed = with_fields(evt, owed=[[starving, deaths + 1], *evt.owed[1:]], turn=evt.turn + 1)
    rebuilt = rebuild([*events[:-1], changed])
    assert rebuilt.feast_queue[0] == [starving, deaths + 1]
    assert rebuilt.feast_turn == evt.turn + 1
    assert feast.victims_awaited(rebuilt)[2]["remaining"] == deaths + 1


def test_vi_4_1_vi_7_11_the_outcome_replays_as_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """``TotemCompleted`` records the match's outcome as it keeps it (VI-7.11: no lone
    winner in its tie field): another tie rule in the code changes no replay, and the
    body takes the recorded outcome."""
    match = played(1, 2, spells_a=True)
    (done,) = named(match.pending_events, "TotemCompleted")
    assert done.outcome == match.outcome
    assert done.outcome == {"winner": done.winner, "tied": done.tied, "seats": done.winning_seats}
    monkeypatch.setattr(model, "tie", lambda families: list(families))
    assert rebuild(list(match.pending_events)).outcome == done.outcome
    other = {"winner": None, "tied": [0, 1], "seats": [0, 1]}
    events = [e if e is not done else with_fields(e, outcome=other) for e in match.pending_events]
    assert rebuild(events).outcome == other


def test_vi_7_11_a_version_1_lone_winner_in_tied_is_no_tie() -> None:
    """A ``TotemCompleted`` recorded before VI-7.11 holds a lone winner in ``tied``; upcast,
    it is worked out by that release's code: no tie."""
    match = played(1, 2, spells_a=True)
    loaded = as_release_1(match)
    (done,) = named(loaded, "TotemCompleted")
    assert done.outcome is None and done.winner is not None
    older = with_fields(done, tied=[done.winner])
    rebuilt = rebuild([e if e is not done else older for e in loaded])
    assert rebuilt.outcome == {"winner": done.winner, "tied": [], "seats": done.winning_seats}


# ---- events stored by the previous release (version 1) -------------------------------------


def test_events_of_version_1_upcast_replay_and_verify_as_before(match: Village) -> None:
    assert replays_as_played(match, as_release_1(match), ADDED)


# ---- what a player sees -------------------------------------------------------------------


def test_vi_5_1_the_new_fields_show_no_hidden_spell(match: Village) -> None:
    """What the new fields say is public (where the placing rotation stands, a pole,
    the deaths still owed, the outcome) and a player sees them as recorded, while
    another family's placed spell stays hidden; an event of version 1 is shown as it
    was recorded, without them or the upcaster's mark."""
    for events in (list(match.pending_events), as_release_1(match)):
        rebuilt = rebuild(events)
        for evt in events:
            name = type(evt).__name__
            if name not in ADDED:
                continue
            for seat in range(len(rebuilt.players)):
                _, view = event_view(rebuilt, evt, Viewer.player(seat))
                assert UPCAST not in view
                if getattr(evt, UPCAST, None):
                    assert not set(ADDED[name]) & set(view)
                else:
                    assert all(view[field] == getattr(evt, field) for field in ADDED[name])
                if name == "SpellPlaced" and evt.family not in rebuilt.parties_of(seat):
                    assert "spell" not in view and "salt" not in view


# ---- helpers --------------------------------------------------------------------------------


def drive_to_placing(match: Village, stamps: Stamps, spells: dict[int, list[str]]) -> None:
    """Through phase 1 by the defaults; then each family chooses ``spells[family]``."""
    to_decision(match, stamps, "choose", 2)
    for family in match.turn_order():
        mine = spells.get(family, [])
        act(match, stamps, ChooseSpells(family, mine, max(0, len(mine) - match.poles[family])))


def place_default(match: Village, stamps: Stamps) -> None:
    """The awaited placer places its first spell on its own cottage 0."""
    family = match.next_placer()
    assert family is not None
    act(match, stamps, PlaceSpell(family, match.hands[family][0], family, 0))
