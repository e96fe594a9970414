"""Revealing spells (VI-2.3): in phases 3, 4, 6 and 7 each family in turn order may turn
face up its spells that act in that phase.

A spell acts only if revealed in its phase; one left face down acts on nothing and stays
hidden from the other players for good. So the reveal is the family's decision, and the
deadline's default reveals every spell it may.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.village.commands import RevealSpells
from domain.village.model import SPELL_PHASE
from domain.village.phases import PHASE_NAMES

if TYPE_CHECKING:
    from domain.village.match import Village

RULE = "VI-2.3"


def revealable(match: Village, family: int) -> list[int]:
    """Board positions of the family's face-down spells that act in this phase."""
    return [
        b["position"] for b in match.unrevealed(family) if SPELL_PHASE[b["spell"]] == match.phase
    ]


def check_reveal(match: Village, cmd: RevealSpells) -> list[dict[str, Any]]:
    """The spells ``cmd`` reveals, by board position, as the event records them
    (``{"position", "spell", "salt"}``, so anyone can check each against its chit):
    each listed once, the family's own, face down, acting in this phase."""
    if len(set(cmd.positions)) != len(cmd.positions):
        raise InvalidArgument(RULE, "a board position is listed twice")
    for p in cmd.positions:
        if not 0 <= p < len(match.board):
            raise InvalidArgument(RULE, f"board position {p} holds no spell")
        spot = match.board[p]
        if spot["owner"] != cmd.family:
            raise RuleViolation(RULE, f"the spell at position {p} is not family {cmd.family}'s")
        if spot["revealed"]:
            raise RuleViolation(RULE, f"the spell at position {p} is already revealed")
        if SPELL_PHASE[spot["spell"]] != match.phase:
            raise RuleViolation(
                RULE,
                f"the spell at position {p} does not act in phase {match.phase} "
                f"({PHASE_NAMES[match.phase]})",
            )
    return [
        {"position": p, "spell": match.board[p]["spell"], "salt": match.board[p]["salt"]}
        for p in sorted(cmd.positions)
    ]
