"""The typed commands of Jungle Speed, besides :class:`~domain.kernel.commands.Start`."""

from __future__ import annotations

from dataclasses import dataclass

from domain.kernel.commands import Command

#: Values of a grab's ``target`` (JS-6.1, ES only).
TARGET_DEFAULT = "default"
TARGET_DUEL = "duel"
TARGET_ARROWS = "arrows"
TARGETS = (TARGET_DEFAULT, TARGET_DUEL, TARGET_ARROWS)


@dataclass(frozen=True)
class Reveal(Command):
    """Reveal the top face-down card of one's pile, in turn (JS-3.1, JS-3.2)."""


@dataclass(frozen=True)
class Grab(Command):
    """Grab the totem (JS-4.2). ``target`` says which race a grab means where a duel and
    inward arrows are open at once (JS-6.1); ``default`` lets the rules choose."""

    target: str = TARGET_DEFAULT
