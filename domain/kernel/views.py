"""Who is looking, and what every game hides the same way. Every event and state has a
view per viewer (see each game's views, which build on the functions here)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from domain.kernel.chain import UPCAST
from domain.kernel.match import event_name, payload

if TYPE_CHECKING:
    from domain.kernel.match import MatchAggregate

#: Fields of an event no viewer is shown, the referee included: bearer-token hashes
#: authenticate seats and are nobody's business.
UNSHOWN_FIELDS = ("token_hash", "referee_token_hash")


class ViewerRole(enum.Enum):
    PLAYER = "player"
    SPECTATOR = "spectator"
    REFEREE = "referee"


@dataclass(frozen=True)
class Viewer:
    """A seat's player, a spectator, or the referee (who sees everything)."""

    role: ViewerRole
    seat: int | None = None

    @classmethod
    def player(cls, seat: int) -> Viewer:
        return cls(ViewerRole.PLAYER, seat)

    @classmethod
    def spectator(cls) -> Viewer:
        return cls(ViewerRole.SPECTATOR)

    @classmethod
    def referee(cls) -> Viewer:
        return cls(ViewerRole.REFEREE)

    @property
    def sees_everything(self) -> bool:
        return self.role is ViewerRole.REFEREE


def shown_payload(evt: object) -> tuple[str, dict[str, Any]]:
    """An event's name and its fields without :data:`UNSHOWN_FIELDS`: where each game's
    view of an event starts."""
    data = payload(evt)
    for field in UNSHOWN_FIELDS:
        data.pop(field, None)
    # An event stored before its class's fields changed is shown as it was recorded:
    # without the upcaster's mark and the fields it filled in (domain.kernel.versions).
    for filled in data.pop(UPCAST, None) or ():
        if data.get(filled) is None:
            data.pop(filled, None)
    return event_name(evt), data


#: The option naming who may take a seat (:class:`domain.kernel.options.CommonOptions`).
RESERVED = "reserved_for"


def options_view(
    options: Mapping[str, Any], prearranged: tuple[str, ...], viewer: Viewer
) -> dict[str, Any]:
    """A match's options as ``viewer`` may see them. What was arranged beforehand instead
    of drawn (a deal, the cards or dice of a tournament's table, children's sexes) is
    hidden until it happens: everyone learns that something was, the referee alone what
    (a copy, so that no view shares a list with the match). The token hashes of a
    tournament table's entrants (``reserved_for``) are nobody's business."""
    view = {k: v for k, v in options.items() if k not in prearranged and k != RESERVED}
    view["prearranged"] = any(options.get(k) is not None for k in prearranged)
    if viewer.sees_everything:
        for key in prearranged:
            if options.get(key) is not None:
                view[key] = list(options[key])
    return view


def created_view(
    match: MatchAggregate, data: Mapping[str, Any], prearranged: tuple[str, ...], viewer: Viewer
) -> dict[str, Any]:
    """A match's creation as ``viewer`` may see it: its options (:func:`options_view`),
    the seed's commitment and the creator's entropy; the seed itself only for the
    referee (everyone else reads it in the match's last event, when it can no longer
    tell anything to come)."""
    view = {
        "options": options_view(data["options"], prearranged, viewer),
        "seed_commitment": match.seed_commitment,
        "entropy": data["entropy"],
    }
    if viewer.sees_everything:
        view["seed"] = data["seed"]
    return view
