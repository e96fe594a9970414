"""What each viewer may see of a Jungle Speed match: the one place where it is redacted.

Hidden until the end, and then only through the revealed seed (JS-9.2): the order of
every face-down pile, the prearranged deal and the secret seed. Players and spectators
see the same facts — nobody, not even a pile's owner, may look at face-down cards
(JS-2.2) — so a view depends only on whether the viewer is the referee, except that a
player's state also lists what that seat may do now (its legal actions).
Views are plain dicts named like the fields of the wire messages.
"""

from __future__ import annotations

from typing import Any

from domain.jungle_speed.match import JungleSpeed, deal_piles
from domain.kernel.views import (
    Viewer,
    ViewerRole,
    created_view,
    options_view,
    shown_payload,
)

#: Options arranged beforehand instead of drawn (see :func:`domain.kernel.views.options_view`).
PREARRANGED = ("prearranged_deal",)


def _cards(match: JungleSpeed, ids: list[int]) -> list[dict[str, Any]]:
    return [match.card(c).to_dict() for c in ids]


def event_view(match: JungleSpeed, evt: object, viewer: Viewer) -> tuple[str, dict[str, Any]]:
    """The event's name and the fields ``viewer`` may see. ``match`` gives the deck."""
    name, data = shown_payload(evt)
    if name == "Created":
        return name, created_view(match, data, PREARRANGED, viewer)
    if name == "Dealt":
        deck: list[int] = data["deck"]
        down, pot = data.get("down"), data.get("pot")
        if down is None or pot is None:  # recorded before the deal's piles were
            down, pot = deal_piles(deck, data["seats"], match.is_ru)
        view = {
            "face_down_counts": [len(pile) for pile in down],
            "pot": _cards(match, pot),
            "first_turn": 0,
        }
        if viewer.sees_everything:
            view["deck"] = _cards(match, deck)
        return name, view
    if name == "DuelWon" and data.get("dealt") is not None and not viewer.sees_everything:
        # The cards go under face-down piles: how many each loser takes is public.
        counts = [[seat, len(cards)] for seat, cards in data["dealt"]]
        return name, dict(data, dealt=counts)
    if name == "PilesRecycled":
        # The face-up piles were public: the draw would tell the new face-down orders.
        orders: list[list[int]] = data["orders"]
        view = {"face_down_counts": [len(o) for o in orders], "stamp": data["stamp"]}
        if viewer.sees_everything:
            view["orders"] = [{"positions": o} for o in orders]
        return name, view
    if name == "Revealed":
        return name, dict(data, card=match.card(data["card"]).to_dict())
    if name == "OutwardReveal":
        reveals = [{"seat": s, "card": match.card(c).to_dict()} for s, c in data["reveals"]]
        return name, dict(data, reveals=reveals)
    # Every other event is public as recorded.
    return name, data


def state_view(match: JungleSpeed, viewer: Viewer) -> dict[str, Any]:
    """The match as ``viewer`` may see it now."""
    referee = viewer.sees_everything
    seats = []
    for s, name in enumerate(match.players):
        down = match.down[s] if match.down else []
        up = match.up[s] if match.up else []
        seat: dict[str, Any] = {
            "seat": s,
            "name": name,
            "face_down_count": len(down),
            "face_up_count": len(up),
            "finished": not match.active(s),
            "face_up": _cards(match, up),
        }
        if up:
            seat["top"] = match.card(up[-1]).to_dict()
        if referee:
            seat["face_down"] = _cards(match, down)
        seats.append(seat)
    view: dict[str, Any] = {
        "options": options_view(match.options_data, PREARRANGED, viewer),
        "seats": seats,
        "pot": _cards(match, match.pot),
        "open_duels": [{"seats": d} for d in match.open_duels()],
        "arrows_race_open": bool(match.open_arrows()),
        "coloured_mode": match.coloured_mode,
        "seed_commitment": match.seed_commitment,
        "turn_deadline_ms": match.timer_deadline_ms() or 0,
    }
    if match.turn is not None:
        view["turn"] = match.turn
    if match.pending_outward is not None:
        view["outward_waiting"] = match.pending_outward
    view.update(personal_view(match, viewer) or {})
    if referee or match.status.value == "ended":
        view["seed"] = match.seed
    return view


def personal_view(match: JungleSpeed, viewer: Viewer) -> dict[str, Any] | None:
    """What ``viewer``'s state adds to a spectator's, as keys a spectator's lacks: a
    seat's legal actions. None for the referee, whose state differs within (every
    card face down), not only by added keys.

    It lets the server build a spectator's state once and give every seat a copy with
    its own part added, instead of building each seat's whole state."""
    if viewer.sees_everything:
        return None
    if viewer.role is ViewerRole.PLAYER and viewer.seat is not None:
        # Derived from public facts only: the same for every viewer who could be this seat.
        return {"legal": match.legal_actions(viewer.seat)}
    return {}
