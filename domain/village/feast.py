"""Phase 5, the feast (VI-2.6): every family eats; a starving one loses a member per
missing bird, chosen by its owner or, under ``feast_a`` and ``feast_b``, by the others.

The meals are worked out at once; the victims are decisions, one starving family at a
time in turn order. Under ``feast_b`` the other families name their share of the deaths
in secret and the names are applied together, a name that no longer exists falling as
VI-7.7 says: that fall is decided here, when the names are revealed, and recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.kernel.decisions import Decision
from domain.kernel.errors import RuleViolation
from domain.village import model
from domain.village.commands import ChooseVictims
from domain.village.model import ELDER, PEN_LIMIT, Person
from domain.village.options import Options
from domain.village.people import check_people, person_dicts

if TYPE_CHECKING:
    from domain.village.match import Village

RULE = "VI-2.6"


def elders_may_die(options: Options) -> bool:
    """Under feast_a and feast_b the other families may choose elders (VI-2.6)."""
    return options.feast_a or options.feast_b


def meals(match: Village) -> list[dict[str, int]]:
    """Each family's meal in turn order, as the ``Feasted`` event records it: its size,
    need, the birds eaten and missing, the deaths owed (never more than the members who
    may die) and the birds discarded beyond the pen's 5."""
    eaten_by: list[dict[str, int]] = []
    for f in match.turn_order():
        members = match.members(f)
        size = model.total(members)
        need = model.need(size)
        eaten = min(need, match.birds[f])
        missing = need - eaten
        victims = size if elders_may_die(match.options) else size - members[ELDER]
        left = match.birds[f] - eaten
        eaten_by.append(
            {
                "family": f,
                "members": size,
                "need": need,
                "eaten": eaten,
                "missing": missing,
                "deaths": min(missing, victims),
                "discarded": max(0, left - PEN_LIMIT),
            }
        )
    return eaten_by


def victim_choosers(match: Village, starving: int) -> list[int]:
    """feast_a / feast_b: the other families, in turn order from the start player."""
    return [f for f in match.turn_order() if f != starving]


def shares(match: Village, starving: int, deaths: int) -> list[list[int]]:
    """feast_b: the deaths dealt one at a time to the other families in turn order;
    [family, share] for each family with a share."""
    others = victim_choosers(match, starving)
    dealt = [[f, 0] for f in others]
    for i in range(deaths):
        dealt[i % len(others)][1] += 1
    return [s for s in dealt if s[1] > 0]


def victims_awaited(match: Village) -> tuple[str, list[int], dict[str, Any]]:
    """The decision the first starving family's deaths open: its kind, who owes it and
    its public detail. Its owner chooses them all, never an elder; under ``feast_a`` the
    others choose one each in turn; under ``feast_b`` they name their shares at once."""
    starving, deaths = match.feast_queue[0]
    if match.options.feast_b:
        dealt = shares(match, starving, deaths)
        return (
            "name_victims",
            [f for f, _ in dealt],
            {"starving": starving, "deaths": deaths, "shares": dealt, "elders": True},
        )
    if match.options.feast_a:
        others = victim_choosers(match, starving)
        chooser = others[match.feast_turn % len(others)]
        return (
            "victims",
            [chooser],
            {"starving": starving, "deaths": 1, "remaining": deaths, "elders": True},
        )
    return "victims", [starving], {"starving": starving, "deaths": deaths, "elders": False}


def after_victims(match: Village, count: int) -> tuple[list[list[int]], int]:
    """What ``count`` victims chosen for the first starving family leave, as the
    ``VictimsChosen`` event records it: the starving families still owed deaths
    (``[family, deaths]``, in turn order), and how many victims the others have chosen
    for the first of them (``feast_a``, one each in turn: 0 once its deaths are all
    taken, the next starving family's choosers starting again from the first)."""
    (starving, deaths), *rest = match.feast_queue
    owed = [list(q) for q in rest]
    if deaths > count:
        return [[starving, deaths - count], *owed], match.feast_turn + 1
    return owed, 0


def victims_kind(options: Options) -> str:
    """The kind of decision a family answers with victims: named in secret under
    ``feast_b``, chosen openly otherwise."""
    return "name_victims" if options.feast_b else "victims"


def victims_owed(decision: Decision, family: int) -> int:
    """How many victims ``family`` names in answer to ``decision``: its share under
    ``feast_b``, else every death the decision is for."""
    if decision.kind == "name_victims":
        count: int = next(s for f, s in decision.detail["shares"] if f == family)
        return count
    deaths: int = decision.detail["deaths"]
    return deaths


def check_victims(match: Village, cmd: ChooseVictims) -> tuple[int, int, list[dict[str, Any]]]:
    """The starving family, how many victims ``cmd`` names and the victims as events
    carry them: as many as the family owes, each a member of the starving family, an
    elder only where the decision allows it."""
    decision = match.decision
    assert decision is not None
    starving: int = decision.detail["starving"]
    count = victims_owed(decision, cmd.family)
    if len(cmd.victims) != count:
        raise RuleViolation(RULE, f"family {cmd.family} must name {count} victims")
    check_people(RULE, starving, match.cottages[starving], cmd.victims, decision.detail["elders"])
    return starving, count, person_dicts(cmd.victims)


def resolved_names(match: Village) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """feast_b: the names revealed together, applied in turn order; a name that no
    longer exists falls to the youngest remaining member of that cottage (VI-7.7),
    or, in an empty cottage, to the default victim of the family (decided here).
    Returns the names (``{"family", "victims"}``, in turn order) and the deaths."""
    starving = match.feast_queue[0][0]
    order = match.turn_order()
    names = sorted(match.names, key=lambda n: order.index(n[0]))
    left = [dict(c) for c in match.cottages[starving]]
    deaths: list[Person] = []
    for _, victims in names:
        for v in victims:
            cottage, kind = v["cottage"], v["kind"]
            if left[cottage][kind] == 0:
                youngest = model.youngest_in(left[cottage])
                if youngest is not None:
                    kind = youngest
                else:
                    fallback = model.default_victims(left, 1, elders=True)
                    if not fallback:
                        continue
                    cottage, kind = fallback[0]
            left[cottage][kind] -= 1
            deaths.append((cottage, kind))
    return [{"family": f, "victims": v} for f, v in names], person_dicts(deaths)
