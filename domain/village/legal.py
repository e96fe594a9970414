"""What a seat may do now: the legal actions its view shows (VI-5).

For each family of the seat that owes the awaited decision: the decision's kind, rule
and deadline, the choices it may make and the default the deadline would apply. A
client builds its commands from these choices alone, so every command built from them
must be accepted; and they show nothing a seat may not see (a family's own hand, public
counts and positions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.kernel.decisions import Decision
from domain.kernel.match import MatchStatus
from domain.village import model
from domain.village.ageing import youth_minimum, youth_needs
from domain.village.commands import command_dict
from domain.village.defaults import default_command
from domain.village.feast import victims_owed
from domain.village.model import COTTAGE_CAPACITY, COTTAGES, ELDER, FAMILY_LIMIT, SPELLS
from domain.village.revealing import revealable

if TYPE_CHECKING:
    from domain.village.match import Village


def legal_actions(match: Village, seat: int) -> dict[str, Any]:
    """What ``seat`` may do now (its view shows it): ``start``, and for each of its
    families that owes the awaited decision, the decision's kind, rule, deadline,
    the choices it may make and the default the deadline would apply."""
    legal: dict[str, Any] = {"start": match.start_refusal(seat) is None, "decisions": []}
    decision = match.decision
    if decision is None or match.status is not MatchStatus.PLAYING:
        return legal
    for family in decision.parties:
        if match.decision_refusal(seat, family, decision.kind) is not None:
            continue
        legal["decisions"].append(
            {
                "family": family,
                "kind": decision.kind,
                "rule": decision.rule,
                "deadline_ms": decision.deadline_ms,
                "choices": choices(match, family, decision),
                "default": command_dict(default_command(match, family)),
            }
        )
    return legal


def choices(match: Village, family: int, decision: Decision) -> dict[str, Any]:
    """What ``family`` may answer ``decision`` with, by kind of decision."""
    kind = decision.kind
    if kind == "arrange":
        members = match.members(family)
        return {
            "members": members,
            "house": min(model.total(members), FAMILY_LIMIT),
            "capacity": COTTAGE_CAPACITY,
        }
    if kind == "choose":
        return {
            "spells": list(SPELLS),
            "pieces": match.poles[family],
            "birds": match.birds[family],
            "max_spells": min(len(SPELLS), match.poles[family] + match.birds[family]),
        }
    targets = [[t, c] for t in match.families for c in range(COTTAGES)]
    if kind == "place":
        return {
            "hand": list(match.hands[family]),
            "targets": targets,
            "can_pass": match.options.spells_a,
        }
    if kind == "submit":
        return {
            "hand": list(match.hands[family]),
            "targets": targets,
            "all_required": not match.options.spells_a,
        }
    if kind == "reveal":
        return {"phase": match.phase, "revealable": revealable(match, family)}
    if kind in ("victims", "name_victims"):
        starving = decision.detail["starving"]
        elders = bool(decision.detail["elders"])
        return {
            "starving": starving,
            "count": victims_owed(decision, family),
            "elders": elders,
            "candidates": candidates(match, starving, elders),
        }
    return {
        "needs": youth_needs(match, family),
        "minimum": youth_minimum(match, family),
        "candidates": candidates(match, family, True),
    }


def candidates(match: Village, family: int, elders: bool) -> list[dict[str, Any]]:
    """The members of ``family`` a decision may name (elders only if ``elders``):
    ``{"cottage", "kind", "count"}`` for each kind present in each cottage."""
    return [
        {"cottage": c, "kind": k, "count": n}
        for c in range(COTTAGES)
        for k, n in match.cottages[family][c].items()
        if n > 0 and (elders or k != ELDER)
    ]
