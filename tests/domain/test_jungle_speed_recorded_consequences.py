"""Jungle Speed's events record their consequences (JS-3 … JS-8), so that changing a
rule's code cannot change how a stored match replays, and events stored before they did
(version 1) still replay, and verify, as they did.

Each command works out what its event leads to; replaying the event only applies its
fields. The tests replace the code that decides (the next turn, the JS-7 last-card
exceptions, the order of the piles collected, the simultaneous reveal, the deal of a duel
won, what a grab annuls, who grabs late, the RU colour mode, the deal) by code that
fails if called, rebuild the match from its events and compare the states. Events stored
by the first release (version 1) and by the second (version 2 of the events that grew
then) upcast, verify and replay to the same state.
"""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

import pytest
from domain_support import (
    Stamps,
    ending_deck,
    events_since,
    new_match,
    replays_as_played,
    reveal_until,
    state_of,
    stored_without,
    sym,
)
from eventsourcing.application import Application
from eventsourcing.persistence import StoredEvent
from test_jungle_speed_properties import random_script, run
from test_jungle_speed_specials import ONE_SPECIAL, last_card_match

from domain.jungle_speed import JungleSpeed, Options, legacy
from domain.jungle_speed.views import event_view
from domain.kernel import DomainError
from domain.kernel.chain import UPCAST, event_digest, stored_event_digest
from domain.kernel.match import payload
from domain.kernel.views import Viewer

#: The rule code a replay must never run for an event that records its consequences.
DECIDERS = (
    "_turn_from",
    "_collect_order",
    "_last_cards",
    "_outward",
    "_scratch",
    "_duel_deal",
    "_annulments",
    "_sharing_symbol",
    "_colour",
    "_opponents",
)
LEGACY = (
    "revealed",
    "outward_revealed",
    "wrong_grab",
    "duel_turn",
    "arrows_collected",
    "recycled_turn",
    "finished_turn",
    "colour",
    "deal",
    "open_duels",
    "open_arrows",
    "sharing_symbol",
    "annul_all_but",
    "deal_duel",
    "pot_pile",
)

#: The fields each event's version 3 added (the second release stored version 2).
ADDED_V3 = {
    "Revealed": ("coloured",),
    "OutwardReveal": ("coloured",),
    "DuelWon": ("dealt", "pairs", "spent", "participants"),
    "ArrowsWon": ("to_pot", "pairs", "spent"),
}
#: The fields each event gained since the first release (which stored version 1).
ADDED = {
    "Revealed": ("turn", "to_pot", "collected", "must_win", *ADDED_V3["Revealed"]),
    "OutwardReveal": (
        "turn",
        "waiting",
        "to_pot",
        "collector",
        "collected",
        "must_win",
        *ADDED_V3["OutwardReveal"],
    ),
    "WrongGrab": ("collected", "turn"),
    "DuelWon": ("turn", *ADDED_V3["DuelWon"]),
    "ArrowsWon": ("collector", "collected", "turn", *ADDED_V3["ArrowsWon"]),
    "PilesRecycled": ("turn",),
    "PlayerFinished": ("turn",),
    "Dealt": ("down", "pot"),
}
#: The second release: what it stored of the events that grew since.
RELEASE_2 = {**ADDED_V3, "Dealt": ADDED["Dealt"]}
RELEASE_2_VERSIONS = {"Revealed": 2, "OutwardReveal": 2, "DuelWon": 2, "ArrowsWon": 2, "Dealt": 1}


def rebuild(events: list[Any]) -> JungleSpeed:
    match = None
    for evt in events:
        match = evt.mutate(match)
    assert isinstance(match, JungleSpeed)
    return match


def replays_without_rule_code(match: JungleSpeed, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuild ``match`` from its events with every rule decider (and the version-1
    derivations) replaced by code that fails: the same state, to the last field."""
    events = list(match.pending_events)

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a replay ran the code of a rule")

    with monkeypatch.context() as patched:
        for name in DECIDERS:
            patched.setattr(JungleSpeed, name, fails)
        for name in LEGACY:
            patched.setattr(legacy, name, fails)
        rebuilt = rebuild(events)
    assert state_of(rebuilt) == state_of(match)


def played(seed: int, length: int = 600) -> JungleSpeed:
    """A match played by a random script (as the property tests play)."""
    rng = random.Random(seed)
    n = rng.randint(2, 10)
    deck = list(range(80))
    rng.shuffle(deck)
    options = Options(
        variant=rng.choice(["ES", "RU"]),
        max_players=n,
        turn_timeout_ms=rng.choice([0, 10_000]),
        prearranged_deal=deck,
    )
    stamps = Stamps()
    match = JungleSpeed.create(options, bytes(32))
    for s in range(n):
        match.join(f"p{s}", b"", f"h{s}", stamps())
    for command in random_script(seed, length):
        with contextlib.suppress(DomainError):
            run(match, stamps, command)
    return match


def names(match: JungleSpeed) -> set[str]:
    return {type(e).__name__ for e in match.pending_events}


# ---- changing a rule's code changes no replay ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("Revealed", "JS-3.1"),
        ("OutwardReveal", "JS-6.2"),
        ("WrongGrab", "JS-5.2"),
        ("DuelWon", "JS-4.5"),
        ("ArrowsWon", "JS-6.1"),
        ("PilesRecycled", "JS-3.4"),
        ("PlayerFinished", "JS-8.1"),
        ("Dealt", "JS-2.1"),
    ],
)
def test_js_2_to_8_each_event_replays_without_the_code_of_its_rule(
    name: str, rule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rule`` decides what ``name`` leads to; a rebuild never asks it again."""
    seed = next(s for s in range(200) if name in names(played(s)))
    match = played(seed)
    recorded = [e for e in match.pending_events if type(e).__name__ == name]
    version = 3 if name in ADDED_V3 else 2
    assert recorded and all(type(e).class_version == version for e in recorded)
    replays_without_rule_code(match, monkeypatch)


def test_js_3_1_revealed_records_the_next_turn_and_replay_keeps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match, stamps = new_match(3)
    for seat in (0, 1, 2, 0):
        match.reveal(seat, stamps())
    assert [e.turn for e in match.pending_events if type(e).__name__ == "Revealed"] == [1, 2, 0, 1]
    # A different turn order in the code (say, counter-clockwise) changes no replay.
    monkeypatch.setattr(JungleSpeed, "_turn_from", lambda self, seat: (seat - 2) % 3)
    assert rebuild(list(match.pending_events)).turn == 1


def test_js_7_1_last_inward_arrows_record_the_race_and_the_collecting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match, stamps = last_card_match("ES", "inward_arrows")
    version = match.version
    match.reveal(1, stamps())
    (revealed,) = events_since(match, version)
    assert revealed.must_win == [1, 73] and revealed.to_pot == [] and revealed.collected == []
    match.grab(0, stamps())
    won = events_since(match, version + 1)[0]
    assert type(won).__name__ == "ArrowsWon"
    assert (won.collector, won.collected, won.turn) == (1, [0, 1], 0)
    replays_without_rule_code(match, monkeypatch)


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_7_2_last_outward_arrows_record_the_cards_sent_to_the_pot(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seat = 0 if variant == "ES" else 9
    deck = ending_deck(10, variant, 73, {seat: [sym(seat, 0), 72]})
    match, stamps = new_match(10, variant, deck, **dict(ONE_SPECIAL, outward_arrows=1))
    reveal_until(match, stamps, seat, 1)
    pile = list(match.up[seat])
    version = match.version
    match.reveal(seat, stamps())
    revealed = events_since(match, version)[0]
    # ES: the card alone goes to the pot; RU: the whole face-up pile, card included.
    assert revealed.to_pot == ([72] if variant == "ES" else [*pile, 72])
    replays_without_rule_code(match, monkeypatch)


@pytest.mark.parametrize("variant", ["ES", "RU"])
def test_js_7_3_last_coloured_arrows_record_the_piles_collected(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    match, stamps = last_card_match(variant, "coloured_arrows")
    version = match.version
    match.reveal(1, stamps())
    revealed = events_since(match, version)[0]
    assert (revealed.collected, revealed.turn) == ([0, 1], 0)
    replays_without_rule_code(match, monkeypatch)


def test_js_7_3_a_simultaneous_reveal_records_its_collector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deck = ending_deck(10, "ES", 74, {2: [72, sym(2, 1)], 4: [sym(4, 0), 73]})
    options = dict(ONE_SPECIAL, outward_arrows=1, coloured_arrows=1)
    match, stamps = new_match(10, "ES", deck, **options)
    reveal_until(match, stamps, 2, 2)
    version = match.version
    match.reveal(2, stamps())
    outward = events_since(match, version)[1]
    assert outward.collector == 4
    assert outward.collected == [5, 6, 7, 8, 9, 0, 1, 2, 3, 4]
    replays_without_rule_code(match, monkeypatch)


def test_js_5_2_wrong_grab_records_the_piles_in_the_order_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match, stamps = new_match(4)
    for seat in range(4):
        match.reveal(seat, stamps())
    assert match.open_duels() == []
    version = match.version
    assert match.grab(2, stamps()) == "wrong"
    (wrong,) = events_since(match, version)
    assert (wrong.collected, wrong.turn) == ([3, 0, 1, 2], 2)
    replays_without_rule_code(match, monkeypatch)


def first(seeds: range, found: Any) -> tuple[JungleSpeed, Any]:
    """The first played match with an event ``found`` accepts, and that event."""
    for seed in seeds:
        match = played(seed)
        hit = next((e for e in match.pending_events if found(e)), None)
        if hit is not None:
            return match, hit
    raise AssertionError("no played match has such an event")


def test_js_4_4_a_duel_against_several_records_the_deal_and_replay_keeps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match, won = first(range(300), lambda e: type(e).__name__ == "DuelWon" and len(e.losers) > 1)
    # Each loser takes back its own pile; the rest is dealt one by one from the left.
    assert [seat for seat, _ in won.dealt] == sorted(
        won.losers, key=lambda s: (s - won.winner - 1) % len(match.players)
    )
    sizes = [len(cards) for _, cards in won.dealt]
    assert sum(sizes) >= len(won.losers) and all(sizes)
    # Dealt the other way round by today's code, the stored match replays as played.
    monkeypatch.setattr(
        JungleSpeed, "_duel_deal", lambda self, w, losers: [[s, []] for s in losers]
    )
    assert state_of(rebuild(list(match.pending_events))) == state_of(match)
    monkeypatch.undo()
    replays_without_rule_code(match, monkeypatch)


def test_js_4_6_a_grab_records_the_pairs_it_annuls(monkeypatch: pytest.MonkeyPatch) -> None:
    match, won = first(range(300), lambda e: type(e).__name__ == "DuelWon" and e.pairs)
    rebuilt = rebuild(list(match.pending_events)[: won.originator_version])
    assert all(
        pair in rebuilt.annulled or pair[0] not in rebuilt.visible().values() for pair in won.pairs
    )
    replays_without_rule_code(match, monkeypatch)


def test_js_5_3_a_duel_won_records_who_grabs_late(monkeypatch: pytest.MonkeyPatch) -> None:
    match, won = first(range(300), lambda e: type(e).__name__ == "DuelWon")
    assert {won.winner, *won.losers} <= set(won.participants)
    version = won.originator_version
    rebuilt = rebuild(list(match.pending_events)[:version])
    assert rebuilt.decided[-1] == {"seats": won.participants, "version": version}
    replays_without_rule_code(match, monkeypatch)


def test_js_6_3_an_ru_reveal_records_the_colour_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    match, revealed = first(range(300), lambda e: type(e).__name__ == "Revealed" and e.coloured)
    assert match.is_ru and match.card(revealed.card).kind.name == "COLOURED_ARROWS"
    assert rebuild(list(match.pending_events)[: revealed.originator_version]).coloured_ru
    replays_without_rule_code(match, monkeypatch)


# ---- events stored by earlier releases (versions 1 and 2) ----------------------------------


def as_release_1(match: JungleSpeed) -> list[StoredEvent]:
    """The match's events as the release of 2026-12-05 stored them."""
    return stored_without(match, ADDED)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_js_10_3_events_of_version_1_upcast_replay_and_verify_as_before(seed: int) -> None:
    match = played(seed)
    mapper = Application().mapper
    loaded = [mapper.to_domain_event(item) for item in as_release_1(match)]
    assert replays_as_played(match, loaded, ADDED)


def as_release_2(match: JungleSpeed) -> list[StoredEvent]:
    """The match's events as the second release stored them."""
    return stored_without(match, RELEASE_2, RELEASE_2_VERSIONS)


@pytest.mark.parametrize("seed", [0, 1, 3, 5])  # each has every event that grew
def test_js_10_3_events_of_version_2_upcast_replay_and_verify_as_before(seed: int) -> None:
    match = played(seed)
    mapper = Application().mapper
    loaded = [mapper.to_domain_event(item) for item in as_release_2(match)]
    upcast = replays_as_played(match, loaded, RELEASE_2)
    assert {type(e).__name__ for e in upcast} == set(RELEASE_2)


def test_a_value_slipped_into_an_upcast_field_breaks_the_digest() -> None:
    match = played(0)
    mapper = Application().mapper
    loaded = [mapper.to_domain_event(item) for item in as_release_1(match)]
    revealed = next(e for e in loaded if type(e).__name__ == "Revealed")
    assert stored_event_digest(revealed) == revealed.digest
    object.__setattr__(revealed, "turn", 3)  # not None: hashed, and the digest fails
    assert stored_event_digest(revealed) != revealed.digest


def test_an_upcast_mark_forged_on_a_version_2_event_breaks_its_digest_or_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match = played(0)
    plain = next(
        e for e in match.pending_events if type(e).__name__ == "Revealed" and e.must_win is None
    )
    # A mark naming fields that hold values leaves them hashed: the digest holds, and
    # the event still applies its values, never the rule code.
    forged = dict(vars(plain), upcast=["collected", "to_pot"])
    assert event_digest("Revealed", forged) == plain.digest
    events = [
        e if e is not plain else _with(e, upcast=["collected", "to_pot"])
        for e in match.pending_events
    ]
    monkeypatch.setattr(legacy, "revealed", lambda *args: pytest.fail("version 1 code ran"))
    assert state_of(rebuild(events)) == state_of(match)
    # A field recorded as None and named by a forged mark is no longer hashed: the digest
    # of the event fails.
    assert event_digest("Revealed", dict(vars(plain), upcast=["must_win"])) != plain.digest


def _with(evt: Any, **fields: Any) -> Any:
    """A copy of a stored event with fields added, as a tampered store would give it."""
    copy = object.__new__(type(evt))
    object.__setattr__(copy, "__dict__", dict(vars(evt), **fields))
    return copy


def test_new_fields_show_no_face_down_card() -> None:
    """JS-9.2: what the new fields name is public: seats, face-up cards going to the pot
    (JS-7.2), visible cards a grab annuls; the cards a duel's losers put under their
    face-down piles are counted for a spectator."""
    from domain.jungle_speed.views import event_view
    from domain.kernel.views import Viewer

    match = played(1)
    rebuilt: JungleSpeed | None = None
    for evt in match.pending_events:
        before = rebuilt
        rebuilt = evt.mutate(rebuilt)
        assert rebuilt is not None
        name, view = event_view(rebuilt, evt, Viewer.spectator())
        if name in ("Revealed", "OutwardReveal") and before is not None:
            face_up_before = {c for pile in before.up for c in pile}
            revealed = {view.get("card", {}).get("id")} | {
                r["card"]["id"] for r in view.get("reveals", [])
            }
            assert set(view["to_pot"]) <= face_up_before | revealed
        if name == "DuelWon":
            # The cards go under face-down piles: a spectator learns how many, the
            # referee which.
            assert view["dealt"] == [[seat, len(cards)] for seat, cards in evt.dealt]
            _, whole = event_view(rebuilt, evt, Viewer.referee())
            assert whole["dealt"] == evt.dealt
        assert json.dumps(payload(evt), default=str)


def test_js_9_2_an_event_of_version_1_is_shown_as_it_was_recorded() -> None:
    """A player's view of an upcast event holds neither the upcaster's mark nor the
    fields it filled in: what it shows is what was recorded."""
    match = played(0)
    loaded = [Application().mapper.to_domain_event(item) for item in as_release_1(match)]
    rebuilt = rebuild(loaded)
    shown = 0
    for evt, played_evt in zip(loaded, match.pending_events, strict=True):
        added = ADDED.get(type(evt).__name__)
        if not added:
            continue
        _, view = event_view(rebuilt, evt, Viewer.player(0))
        assert UPCAST not in view
        if type(evt).__name__ == "Dealt":  # a view of its own: the same deal, told the same
            assert view == event_view(rebuilt, played_evt, Viewer.player(0))[1]
        else:
            assert not set(added) & set(view), (type(evt).__name__, view)
        shown += 1
    assert shown
