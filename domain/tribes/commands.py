"""The typed commands of Tribes, besides :class:`~domain.kernel.commands.Start`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from domain.kernel.commands import Command


@dataclass(frozen=True)
class LiftTotem(Command):
    """Lift one's totem from the top of ``space`` to move it (TR-2.2)."""

    space: int


@dataclass(frozen=True)
class PlaceTotem(Command):
    """Place a totem on ``destination`` (TR-2.2, TR-2.3): the lifted one when neither
    ``size`` nor ``special`` is given, one's own totem of ``size`` from the mat, or a
    special totem (TR-5.1) from beside the board. ``badge`` names the badge the move wins
    if one's own line wins with it (TR-3.4)."""

    destination: int
    size: int | None = None
    special: int | None = None
    badge: str | None = None


@dataclass(frozen=True)
class Penalise(Command):
    """The referee penalises ``seat`` for coaching (TR-4.1)."""

    REFEREE: ClassVar[bool] = True

    seat: int
