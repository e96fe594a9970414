"""What each viewer may see of a Village match: the one place where it is redacted (VI-5).

Secret until revealed (VI-5.1): each family's spell choice (which spells, their salts),
the identity of each face-down spell, spells_b placements before they are placed
together, feast_b names before they are revealed together. A family's owner sees its
own; other players and spectators see counts, positions and commitments only; an
unrevealed spell stays secret from them for good (VI-2.3). The referee sees everything,
including the match secret the salts derive from. Everything else — members per
cottage, birds, poles, random births — is public (VI-5.2).

Prearranged sexes (VI-2.4) are hidden like Jungle Speed's prearranged deal: they would
tell the births to come. Views are plain dicts named like the fields of the wire
messages.
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
from domain.village.match import Village
from domain.village.phases import PHASE_NAMES

#: Events whose ``family`` decides something secret, and the fields only its owner
#: (and the referee) may see.
SECRET_FIELDS = {
    "SpellsChosen": ("spells", "salts", "chits"),
    "SpellPlaced": ("spell", "salt"),
    "PlacementsSubmitted": ("placements",),
    "VictimsNamed": ("victims",),
}


#: Options arranged beforehand instead of drawn (see :func:`domain.kernel.views.options_view`).
PREARRANGED = ("prearranged_sexes",)


def owns(match: Village, viewer: Viewer, family: int) -> bool:
    """Whether ``viewer`` sees ``family``'s secrets: its owner, or the referee."""
    if viewer.sees_everything:
        return True
    if viewer.role is not ViewerRole.PLAYER or viewer.seat is None:
        return False
    return family in match.parties_of(viewer.seat)


def event_view(match: Village, evt: object, viewer: Viewer) -> tuple[str, dict[str, Any]]:
    """The event's name and the fields ``viewer`` may see."""
    name, data = shown_payload(evt)
    if name == "Created":
        view = created_view(match, data, PREARRANGED, viewer)
        if viewer.sees_everything:
            view["secret"] = data["secret"]
        return name, view
    if name in SECRET_FIELDS:
        if not owns(match, viewer, data["family"]):
            for field in SECRET_FIELDS[name]:
                data.pop(field, None)
        return name, data
    if name == "PlacementsRevealed":
        placements = []
        for p in data["placements"]:
            shown = dict(p)
            if not owns(match, viewer, p["family"]):
                shown.pop("spell")
                shown.pop("salt")
            placements.append(shown)
        return name, {"placements": placements}
    if name == "RoundEnded":
        view = {"round": data["round"], "chits": data["chits"]}
        view["unrevealed"] = [u for u in data["unrevealed"] if owns(match, viewer, u["family"])]
        view["unplaced"] = [u for u in data["unplaced"] if owns(match, viewer, u["family"])]
        return name, view
    # Every other event is public as recorded (revealed spells with their salts, births,
    # the catch, the feast, victims, deaths, ageing, the census, the checks).
    return name, data


def personal_view(match: Village, viewer: Viewer) -> dict[str, Any] | None:
    """What ``viewer``'s state adds to a spectator's, when it only adds keys: nothing,
    for a spectator. None for a player, who sees its own families' spells and hands
    inside the families, and for the referee: their states are built whole."""
    return {} if viewer.role is ViewerRole.SPECTATOR else None


def state_view(match: Village, viewer: Viewer) -> dict[str, Any]:
    """The match as ``viewer`` may see it now."""
    families = []
    for f in match.families:
        choice = match.choices[f] if match.choices else None
        family: dict[str, Any] = {
            "family": f,
            "seat": match.party_owner(f),
            "name": match.players[match.party_owner(f)],
            "cottages": [dict(c) for c in match.cottages[f]],
            "unhoused": dict(match.pool[f]),
            "members": match.size(f),
            "birds": match.birds[f],
            "pole": match.poles[f],
            "wiped_out": match.wiped[f],
            "elderless": match.elderless[f],
            "chosen": choice is not None,
            "spell_count": len(choice["spells"]) if choice else 0,
            "sacrificed": choice["birds"] if choice else 0,
            "commitment": choice["commitment"] if choice else "",
            "unplaced_count": len(match.hands[f]),
            "passed": match.passed[f],
            "submitted": match.submissions[f] is not None,
        }
        if owns(match, viewer, f):
            family["spells"] = list(choice["spells"]) if choice else []
            family["hand"] = list(match.hands[f])
            if match.submissions[f] is not None:
                family["placements"] = [list(p) for p in match.submissions[f] or []]
        families.append(family)
    board = []
    for b in match.board:
        spot = {
            "position": b["position"],
            "owner": b["owner"],
            "family": b["family"],
            "cottage": b["cottage"],
            "chit": b["chit"],
            "revealed": b["revealed"],
        }
        if b["revealed"] or owns(match, viewer, b["owner"]):
            spot["spell"] = b["spell"]
        if b["revealed"] or viewer.sees_everything:
            spot["salt"] = b["salt"]
        board.append(spot)
    view: dict[str, Any] = {
        "options": options_view(match.options_data, PREARRANGED, viewer),
        "round": match.round,
        "phase": match.phase,
        "phase_name": PHASE_NAMES.get(match.phase, ""),
        "start_family": match.start_family,
        "families": families,
        "board": board,
        "seed_commitment": match.seed_commitment,
    }
    if match.decision_data is not None and match.status.value == "playing":
        view["decision"] = dict(match.decision_data)
    if match.names:
        view["named"] = [
            {"family": f, **({"victims": v} if owns(match, viewer, f) else {})}
            for f, v in match.names
        ]
    if match.outcome is not None:
        view["outcome"] = dict(match.outcome)
    if viewer.role is ViewerRole.PLAYER and viewer.seat is not None:
        view["legal"] = match.legal_actions(viewer.seat)
    if viewer.sees_everything:
        view["secret"] = match.secret
    if viewer.sees_everything or match.status.value == "ended":
        view["seed"] = match.seed
    return view
