"""A player's legal actions agree with the commands (JS-3.1, JS-3.4, JS-4.2, JS-5.2, JS-6.1).

The view lists what a seat may do now so that a client in any language needs no copy of
the rules. The promise: an action offered is accepted if sent before the match changes
(a reveal at or after ``reveal_not_before_ms``); a reveal or start not offered is refused;
a grab offered wins what it says it wins, and a grab not offered takes no totem (it is
wrong, JS-5.2, or late, JS-5.3). So a player who grabs only when a grab is offered never
makes a wrong grab.
"""

from __future__ import annotations

import contextlib
import copy
import random
from typing import Any

import pytest
from domain_support import Stamps, arranged, new_match, refused, state_of, sym
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_jungle_speed_properties import matches, random_script, run

from domain.jungle_speed import JungleSpeed, Options, views
from domain.jungle_speed.match import GRAB_ARROWS, GRAB_DUEL, GRAB_LATE, GRAB_WRONG
from domain.kernel import DomainError, MatchStatus, ReceiveStamp, Viewer


def _copy(match: JungleSpeed) -> JungleSpeed:
    return copy.deepcopy(match, {id(match.deck): match.deck})


def _stamp_at(stamps: Stamps, wall_ms: int) -> ReceiveStamp:
    return stamps.at(max(wall_ms, stamps.wall_ms))


def check_every_seat(match: JungleSpeed, stamps: Stamps, rng: random.Random) -> None:
    """Every seat's legal actions hold against the commands: offered ones are tried on a
    copy; refused ones on the match itself, which a refusal leaves unchanged."""
    version = match.version
    for seat in match.seats:
        legal = match.legal_actions(seat)
        if legal["reveal"]:
            _copy(match).reveal(seat, _stamp_at(stamps, legal["reveal_not_before_ms"]))
        else:
            with pytest.raises(DomainError):
                match.reveal(seat, stamps())
        if legal["start"]:
            _copy(match).start(seat, stamps())
        else:
            with pytest.raises(DomainError):
                match.start(seat, stamps())
    assert match.version == version
    seat = rng.choice(list(match.seats))
    grabs = match.legal_actions(seat)["grabs"]
    if not match.active(seat) or match.status is not MatchStatus.PLAYING:
        assert grabs == []
        return
    if grabs:
        option = rng.choice(grabs)
        trial = _copy(match)
        outcome = trial.grab(seat, stamps(), option["target"])
        assert outcome == option["resolves"] and outcome in (GRAB_DUEL, GRAB_ARROWS)
        if outcome == GRAB_DUEL:
            won = [e for e in trial.pending_events if type(e).__name__ == "DuelWon"]
            assert won[-1].losers == option["opponents"]
    else:
        assert _copy(match).grab(seat, stamps()) in (GRAB_LATE, GRAB_WRONG)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 250))
def test_legal_actions_agree_with_the_commands(
    start: tuple[JungleSpeed, Stamps], script_seed: int, length: int
) -> None:
    match, stamps = start
    rng = random.Random(script_seed)
    for command in random_script(script_seed, length):
        check_every_seat(match, stamps, rng)
        with contextlib.suppress(DomainError):
            run(match, stamps, command)


def play_by_the_legal_actions(match: JungleSpeed, stamps: Stamps, rng: random.Random) -> None:
    """Seats do only what their legal actions offer (or wait for the turn timer)."""
    while match.status is MatchStatus.PLAYING and match.version < 3_000:
        offered: list[tuple[str, int, dict[str, Any]]] = []
        for seat in match.seats:
            legal = match.legal_actions(seat)
            offered += [("grab", seat, option) for option in legal["grabs"]]
            if legal["reveal"]:
                offered.append(("reveal", seat, legal))
        if not offered:
            match.fire_timer(stamps.at(match.timer_deadline_ms() or stamps.wall_ms))
            continue
        kind, seat, detail = rng.choice(offered)
        if kind == "grab":
            assert match.grab(seat, stamps(), detail["target"]) == detail["resolves"]
        else:
            match.reveal(seat, _stamp_at(stamps, detail["reveal_not_before_ms"]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(2, 6),
    variant=st.sampled_from(["ES", "RU"]),
    seed=st.binary(min_size=32, max_size=32),
    choices=st.integers(0, 2**32),
)
def test_players_who_grab_only_when_offered_never_grab_wrong(
    players: int, variant: str, seed: bytes, choices: int
) -> None:
    stamps = Stamps()
    match = JungleSpeed.create(Options(variant=variant, max_players=players), seed)
    for s in range(players):
        match.join(f"p{s}", b"", f"h{s}", stamps())
    play_by_the_legal_actions(match, stamps, random.Random(choices))
    names = [type(e).__name__ for e in match.pending_events]
    assert "WrongGrab" not in names
    assert "DuelWon" in names or "ArrowsWon" in names or match.version >= 3_000


def test_legal_actions_name_the_duel_and_the_es_choice_of_target() -> None:
    # ES, 3 seats: seats 0 and 1 show the same shape, seat 2 inward arrows (JS-6.1).
    inward = 72
    match, stamps = new_match(3, "ES", arranged(3, [[sym(0, 0)], [sym(0, 1)], [inward]]))
    for _ in range(3):
        match.reveal(match.turn, stamps())  # type: ignore[arg-type]
    assert match.legal_actions(0)["grabs"] == [
        {"target": "default", "resolves": GRAB_DUEL, "opponents": [1]},
        {"target": "arrows", "resolves": GRAB_ARROWS, "opponents": []},
    ]
    assert match.legal_actions(2)["grabs"] == [
        {"target": "default", "resolves": GRAB_ARROWS, "opponents": []}
    ]
    assert match.legal_actions(0)["reveal"] is True and match.turn == 0
    assert match.legal_actions(1)["reveal"] is False


def test_legal_actions_offer_start_only_to_a_seat_that_may_start() -> None:
    stamps = Stamps()
    match = JungleSpeed.create(Options(max_players=4), b"\x01" * 32)
    match.join("ann", b"", "h0", stamps())
    assert match.legal_actions(0)["start"] is False  # JS-1.5: two players at least
    refused(match, "JS-1.5", match.start, 0, stamps())
    match.join("bob", b"", "h1", stamps())
    assert match.legal_actions(1)["start"] is True
    assert match.legal_actions(3)["start"] is False  # not seated
    match.start(1, stamps())
    assert match.legal_actions(1)["start"] is False


def test_js_3_4_reveal_not_before_the_minimum_interval() -> None:
    match, stamps = new_match(2, "ES", min_reveal_interval_ms=150)
    match.reveal(0, stamps())
    legal = match.legal_actions(1)
    assert legal["reveal"] is True
    assert legal["reveal_not_before_ms"] == stamps.wall_ms + 150
    refused(match, "JS-3.4", match.reveal, 1, stamps(after_ms=100))
    match.reveal(1, stamps.at(legal["reveal_not_before_ms"]))


def test_only_a_player_view_lists_legal_actions_and_only_its_own() -> None:
    match, _ = new_match(2, "ES")
    before = state_of(match)
    player = views.state_view(match, Viewer.player(0))
    assert player["legal"] == match.legal_actions(0)
    assert views.state_view(match, Viewer.player(1))["legal"] == match.legal_actions(1)
    assert "legal" not in views.state_view(match, Viewer.spectator())
    assert "legal" not in views.state_view(match, Viewer.referee())
    assert state_of(match) == before  # looking changes nothing
