"""Who is looking. Every event and state has a view per viewer (see each game's views)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


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
