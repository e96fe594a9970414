"""What each viewer sees (TR-6.1, TR-6.2), and the hidden-information test: two matches
that differ only in what lies under the stacks look the same to players and spectators,
event by event and state by state, until a lift uncovers the difference."""

from __future__ import annotations

import json
from typing import Any

from tribes_support import new_tribes, play

from domain.kernel import Viewer
from domain.tribes import Tribes
from domain.tribes.pieces import DOOM
from domain.tribes.views import event_view, state_view

VIEWERS = {
    "seat 0": Viewer.player(0),
    "seat 1": Viewer.player(1),
    "spectator": Viewer.spectator(),
}


def test_tr_6_1_players_and_spectators_see_the_tops_the_referee_whole_stacks() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "1@4", "3@4", "2@0")
    for viewer in VIEWERS.values():
        view = state_view(match, viewer)
        centre = view["spaces"][4]
        assert centre["top"] == {"kind": "TRIBE", "seat": 1, "size": 3}
        assert "stack" not in centre
        assert "seed" not in view
    referee = state_view(match, Viewer.referee())
    assert referee["spaces"][4]["stack"] == [
        {"kind": "TRIBE", "seat": 0, "size": 1},
        {"kind": "TRIBE", "seat": 1, "size": 3},
    ]
    assert referee["seed"] == match.seed
    assert "top" not in referee["spaces"][8] and referee["spaces"][8]["stack"] == []


def test_tr_6_1_every_mat_is_visible_to_everyone() -> None:
    match, stamps = new_tribes(2)
    play(match, stamps, "1@4", "3@4")
    for viewer in [*VIEWERS.values(), Viewer.referee()]:
        seats = state_view(match, viewer)["seats"]
        assert [s["mat"] for s in seats] == [[2, 3, 4, 5], [1, 2, 4, 5]]


def test_tr_6_1_only_a_players_view_lists_its_legal_actions() -> None:
    match, _stamps = new_tribes(2, extended=True, prearranged_dice=["large"])
    legal = state_view(match, Viewer.player(0))["legal"]
    assert legal["die"] == "large"
    assert legal["must_move"] == {"kind": "DOOM"}
    assert legal["places"][0]["totem"] == {"kind": "DOOM"}
    assert legal["lifts"] == [] and legal["badges"] == ["wisdom", "loyalty", "boldness", "tenacity"]
    assert state_view(match, Viewer.player(1))["legal"]["places"] == []  # not its turn
    assert "legal" not in state_view(match, Viewer.spectator())
    assert "legal" not in state_view(match, Viewer.referee())


def test_tr_6_2_cards_of_truth_and_rolls_are_public_once_drawn() -> None:
    match, _stamps = new_tribes(2, cards=[], extended=True)
    for viewer in VIEWERS.values():
        view = state_view(match, viewer)
        assert [s["card"] for s in view["seats"]] == match.cards
        assert view["order"] == match.order and view["die"] == match.die
        names = [event_view(match, e, viewer)[0] for e in match.pending_events]
        assert "RoundStarted" in names and "DieRolled" in names
        started = next(e for e in match.pending_events if type(e).__name__ == "RoundStarted")
        assert event_view(match, started, viewer)[1]["cards"] == match.cards


def test_tr_6_2_a_prearranged_sequence_shows_only_that_it_was_given() -> None:
    match, _ = new_tribes(2, cards=[[2, 1], [1, 2]], extended=True, prearranged_dice=["small"])
    created = match.pending_events[0]
    for viewer in VIEWERS.values():
        options = state_view(match, viewer)["options"]
        assert options["prearranged"] is True
        assert "prearranged_cards" not in options and "prearranged_dice" not in options
        _, data = event_view(match, created, viewer)
        assert data["options"]["prearranged"] is True
        assert "prearranged_cards" not in data["options"] and "seed" not in data
    _, data = event_view(match, created, Viewer.referee())
    assert data["options"]["prearranged_cards"] == [[2, 1], [1, 2]]
    assert data["options"]["prearranged_dice"] == ["small"]
    assert data["seed"] == match.seed


def test_special_totems_in_views() -> None:
    match, stamps = new_tribes(2, extended=True, prearranged_dice=["large", "blank"])
    assert state_view(match, Viewer.spectator())["beside"] == [{"kind": "DOOM"}, {"kind": "MINI"}]
    play(match, stamps, "doom@4")
    view = state_view(match, Viewer.spectator())
    assert view["spaces"][4]["top"] == {"kind": "DOOM"} and match.top(4) == DOOM
    assert view["beside"] == [{"kind": "MINI"}]
    assert [s["salvation"] for s in view["spaces"]] == [i in (0, 2, 6, 8) for i in range(9)]


def test_every_viewer_has_a_view_at_every_version() -> None:
    """Streams carry the state after each event, the ones in the middle of a command
    (between the start and the first round, say) included."""
    match, stamps = new_tribes(
        2, extended=True, round_move_limit=2, prearranged_dice=["blank", "large"]
    )
    play(match, stamps, "1@4", "doom@4")  # the move limit draws the round
    rebuilt: Any = None
    for evt in match.pending_events:
        rebuilt = evt.mutate(rebuilt)
        for viewer in [*VIEWERS.values(), Viewer.referee()]:
            event_view(rebuilt, evt, viewer)
            json.dumps(state_view(rebuilt, viewer))


# ---- the hidden-information test --------------------------------------------------------

#: Seat 0's 1 and 2 go on spaces 0 and 1 in either order; seat 1's 4 and 5 cover them.
#: Afterwards the tops and mats are the same: only what lies under spaces 0 and 1 differs.
OPENINGS = (["1@0", "4@0", "2@1", "5@1"], ["2@0", "4@0", "1@1", "5@1"])
#: The same moves in both matches afterwards; the last lifts seat 1's 4 off space 0.
LATER = ["3@8", "1@6", "4@3", "2@7", "5@5", "0>2"]


def _views(match: Tribes, viewer: Viewer, since: int) -> list[str]:
    """The viewer's event and state after each event since version ``since``, as JSON,
    rebuilt event by event as a stream would carry them."""
    rebuilt: Any = None
    out = []
    for evt in match.pending_events:
        rebuilt = evt.mutate(rebuilt)
        if evt.originator_version <= since:
            continue
        name, data = event_view(rebuilt, evt, viewer)
        data.pop("stamp", None)
        state = state_view(rebuilt, viewer)
        out.append(json.dumps([name, data, state], sort_keys=True))
    return out


def test_tr_6_1_matches_differing_only_under_the_stacks_look_alike_until_a_lift() -> None:
    matches = []
    for opening in OPENINGS:
        match, stamps = new_tribes(2)
        play(match, stamps, *opening)
        matches.append((match, stamps))
    diverged = matches[0][0].version
    assert matches[0][0].board != matches[1][0].board  # the referee sees the difference
    for match, stamps in matches:
        play(match, stamps, *LATER)
    for name, viewer in VIEWERS.items():
        a, b = (_views(m, viewer, diverged) for m, _ in matches)
        assert len(a) == len(b)
        differing = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        # The first difference is the lift of space 0's top (the second-to-last event).
        assert differing and differing[0] == len(a) - 2, name
        assert '"Lifted"' in a[differing[0]]
    # Before the lift, the states of the referee already differed.
    ref_a, ref_b = (_views(m, Viewer.referee(), diverged) for m, _ in matches)
    assert ref_a[0] != ref_b[0]
