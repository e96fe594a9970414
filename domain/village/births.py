"""Phase 3, births (VI-2.4): each fertile woman with a fertile man in her cottage has a
child, as the revealed spells of phase 3 allow; each child's sex is drawn.

The sexes come from a documented stream so that the replay tool can re-derive every one
from the revealed seed (see docs/randomness.md); a prearranged sequence, given at
creation, is consumed first. Everything drawn is recorded in the ``Born`` event, and
replay never draws again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from domain.kernel.randomness import SeededRandom
from domain.village import model
from domain.village.model import COTTAGES

if TYPE_CHECKING:
    from domain.village.match import Village


def birth_stream(effective_seed: bytes, round_number: int) -> SeededRandom:
    """The random stream of a round's births (VI-2.4): ``village/births/<round>``; each
    draw is ``randbelow(2)``, 0 a girl, 1 a boy. Replay tools re-derive it from the
    revealed seed."""
    return SeededRandom(effective_seed, f"village/births/{round_number}")


def sex_of(draw: int) -> str:
    """The sex a draw of :func:`birth_stream` gives: 0 a girl, 1 a boy."""
    return model.GIRL if draw == 0 else model.BOY


class Births(NamedTuple):
    """What the ``Born`` event records."""

    #: Per cottage with children: ``{"family", "cottage", "girls", "boys", "forced"}``.
    children: list[dict[str, Any]]
    #: Every sex drawn or prearranged, in order (none for a sex a spell forces).
    draws: list[str]
    #: How many of the prearranged sexes were used.
    prearranged: int


def draw(match: Village) -> Births:
    """The round's births: family by family in turn order, cottage by cottage, child by
    child; a spell that forces the sex decides it, else the prearranged sequence while
    it lasts, then the round's seeded stream (opened only if a draw is needed)."""
    prearranged = match.options.prearranged_sexes or []
    used = 0
    rng: SeededRandom | None = None
    draws: list[str] = []
    children = []
    for f in match.turn_order():
        for c in range(COTTAGES):
            cottage = match.cottages[f][c]
            spells = match.spells_on(f, c, 3)
            count = model.children_in(cottage, spells)
            if count == 0:
                continue
            forced = model.forced_sex(spells)
            girls = boys = 0
            for _ in range(count):
                if forced is not None:
                    sex = forced
                elif match.sexes_used + used < len(prearranged):
                    sex = prearranged[match.sexes_used + used]
                    used += 1
                    draws.append(sex)
                else:
                    if rng is None:
                        rng = birth_stream(match.effective_seed(), match.round)
                    sex = sex_of(rng.randbelow(2))
                    draws.append(sex)
                if sex == model.GIRL:
                    girls += 1
                else:
                    boys += 1
            children.append(
                {"family": f, "cottage": c, "girls": girls, "boys": boys, "forced": forced}
            )
    return Births(children, draws, used)
