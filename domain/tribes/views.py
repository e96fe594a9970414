"""What each viewer may see of a Tribes match: the one place where it is redacted.

Hidden (TR-6.1): what lies below the top of each stack. Players and spectators see the
top of every stack and every mat; only the referee sees whole stacks. Moves are public,
as at a real table (remembering them is the game), so every event but the creation is
the same for every viewer: a lift names the totem it uncovered, which everyone sees at
once (TR-2.2a). Hidden until drawn: the prearranged Cards of Truth and die rolls, of
which players and spectators learn only that they were given; and the seed until the
end. A player's state also lists what that seat may do now (its legal actions).
Views are plain dicts named like the fields of the wire messages.
"""

from __future__ import annotations

from typing import Any

from domain.kernel.views import (
    Viewer,
    ViewerRole,
    created_view,
    options_view,
    shown_payload,
)
from domain.tribes.match import Tribes
from domain.tribes.pieces import DOOM, MINI, owner, size_of

PREARRANGED = ("prearranged_cards", "prearranged_dice")


def totem(piece: int) -> dict[str, Any]:
    """A piece as the wire names it: kind TRIBE with its seat and size, or DOOM, or MINI."""
    if piece == DOOM:
        return {"kind": "DOOM"}
    if piece == MINI:
        return {"kind": "MINI"}
    return {"kind": "TRIBE", "seat": owner(piece), "size": size_of(piece)}


def _maybe(piece: int | None) -> dict[str, Any] | None:
    return None if piece is None else totem(piece)


def event_view(match: Tribes, evt: object, viewer: Viewer) -> tuple[str, dict[str, Any]]:
    """The event's name and the fields ``viewer`` may see."""
    name, data = shown_payload(evt)
    if name == "Created":
        return name, created_view(match, data, PREARRANGED, viewer)
    if name == "Lifted":
        return name, dict(data, totem=totem(data["totem"]), uncovered=_maybe(data["uncovered"]))
    if name == "Placed":
        return name, dict(data, totem=totem(data["totem"]), covered=_maybe(data["covered"]))
    # Every other event is public as recorded.
    return name, data


def state_view(match: Tribes, viewer: Viewer) -> dict[str, Any]:
    """The match as ``viewer`` may see it now."""
    referee = viewer.sees_everything
    spaces = []
    for space in match.spaces:
        stack = match.board[space]
        entry: dict[str, Any] = {
            "space": space,
            "row": space // match.size,
            "column": space % match.size,
            "salvation": space in match.salvation,
        }
        if stack:
            entry["top"] = totem(stack[-1])
        if referee:
            entry["stack"] = [totem(p) for p in stack]
        spaces.append(entry)
    seats = []
    for seat, name in enumerate(match.players):
        seats.append(
            {
                "seat": seat,
                "name": name,
                "mat": list(match.mats[seat]) if match.mats else [],
                "badges": list(match.badges[seat]) if match.badges else [],
                "card": match.cards[seat] if match.cards else 0,
                "penalised": seat in match.penalised,
                "chief_removed": seat in match.removed,
            }
        )
    view: dict[str, Any] = {
        "options": options_view(match.options_data, PREARRANGED, viewer),
        "board_size": match.size,
        "spaces": spaces,
        "seats": seats,
        "beside": [totem(p) for p in match.beside],
        "round": match.round,
        "order": list(match.order),
        "die": match.die or "",
        "moves": match.moves,
        "passes": match.passes,
        "seed_commitment": match.seed_commitment,
        "turn_deadline_ms": match.timer_deadline_ms() or 0,
    }
    if match.turn is not None:
        view["turn"] = match.turn
    if match.lifted is not None:
        lift = match.lifted
        view["lifted"] = {
            "totem": totem(lift.piece),
            "origin": lift.origin,
            "revealed_lines": [list(line) for line in lift.revealed],
        }
    view.update(personal_view(match, viewer) or {})
    if referee or match.status.value == "ended":
        view["seed"] = match.seed
    return view


def personal_view(match: Tribes, viewer: Viewer) -> dict[str, Any] | None:
    """What ``viewer``'s state adds to a spectator's, as keys a spectator's lacks: a
    seat's legal actions. None for the referee, whose state differs within (whole
    stacks), not only by added keys.

    It lets the server build a spectator's state once and give every seat a copy with
    its own part added, instead of building each seat's whole state."""
    if viewer.sees_everything:
        return None
    if viewer.role is ViewerRole.PLAYER and viewer.seat is not None:
        # Derived from visible facts only: the same for anyone who could be this seat.
        return {"legal": legal_view(match.legal_actions(viewer.seat))}
    return {}


def legal_view(legal: dict[str, Any]) -> dict[str, Any]:
    return dict(
        legal,
        places=[dict(p, totem=totem(p["totem"])) for p in legal["places"]],
        must_move=_maybe(legal["must_move"]),
    )
