"""The pieces of Village and the arithmetic of its rules, as pure functions.

Members of a family are counted, not named: the board game's markers of one kind in one
cottage are interchangeable, so a cottage is a count per kind (:data:`KINDS`) and every
choice about a person names a cottage and a kind. Keeping the arithmetic here, apart
from the aggregate, lets the tests check each rule on its own and keeps the aggregate to
the order of play.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

#: Villager kinds (VI-1.2), youngest first: the order of every listing.
GIRL = "girl"
BOY = "boy"
YOUNG_WOMAN = "young_woman"
YOUNG_MAN = "young_man"
MATURE_WOMAN = "mature_woman"
MATURE_MAN = "mature_man"
ELDER = "elder"
KINDS = (GIRL, BOY, YOUNG_WOMAN, YOUNG_MAN, MATURE_WOMAN, MATURE_MAN, ELDER)
CHILDREN = (GIRL, BOY)
FERTILE_WOMEN = (YOUNG_WOMAN, MATURE_WOMAN)
FERTILE_MEN = (YOUNG_MAN, MATURE_MAN)
HUNTERS = (BOY, YOUNG_MAN, MATURE_MAN)
#: Generation change (VI-2.8): what each kind becomes; elders die (None).
AGES_TO: dict[str, str | None] = {
    GIRL: YOUNG_WOMAN,
    BOY: YOUNG_MAN,
    YOUNG_WOMAN: MATURE_WOMAN,
    YOUNG_MAN: MATURE_MAN,
    MATURE_WOMAN: ELDER,
    MATURE_MAN: ELDER,
    ELDER: None,
}
#: Feast victims by default (VI-2.6): by kind in this order; elders only where allowed.
VICTIM_ORDER = (GIRL, BOY, YOUNG_WOMAN, YOUNG_MAN, MATURE_WOMAN, MATURE_MAN)
#: Youth's default (VI-2.8): the first present in this order stays; never an elder.
YOUTH_ORDER = (MATURE_WOMAN, MATURE_MAN, YOUNG_WOMAN, YOUNG_MAN, GIRL, BOY)

COTTAGES = 3
COTTAGE_CAPACITY = 6
FAMILY_LIMIT = COTTAGES * COTTAGE_CAPACITY
PEN_LIMIT = 5
POLE_MAX = 6
PEOPLE_PER_BIRD = 5
SPELL_COUNT = 10

#: The ten spells (VI-2.2) and the phase each acts in (VI-2.3 … VI-2.8).
SPELL_PHASE: dict[str, int] = {
    "girls": 3,
    "boys": 3,
    "twins": 3,
    "infertility": 3,
    "abundance": 4,
    "lack": 4,
    "illness": 6,
    "big_cure": 6,
    "little_cure": 6,
    "youth": 7,
}
SPELLS = tuple(SPELL_PHASE)
REVEAL_PHASES = (3, 4, 6, 7)

Counts = dict[str, int]
#: A person chosen by a decision: ``(cottage, kind)``.
Person = tuple[int, str]


def empty() -> Counts:
    return dict.fromkeys(KINDS, 0)


def counts(values: Mapping[str, int] | None = None) -> Counts:
    """Counts with every kind present (absent kinds are 0)."""
    result = empty()
    for kind, n in (values or {}).items():
        result[kind] += n
    return result


def total(c: Mapping[str, int]) -> int:
    return sum(c.values())


def added(*parts: Mapping[str, int]) -> Counts:
    result = empty()
    for part in parts:
        for kind, n in part.items():
            result[kind] += n
    return result


def family_counts(cottages: Sequence[Mapping[str, int]]) -> Counts:
    return added(*cottages)


def has_any(c: Mapping[str, int], kinds: Iterable[str]) -> bool:
    return any(c.get(k, 0) > 0 for k in kinds)


def can_multiply(c: Mapping[str, int]) -> bool:
    """A family can multiply with a fertile woman and a fertile man (VI-3.1; children
    are not fertile, decided here)."""
    return has_any(c, FERTILE_WOMEN) and has_any(c, FERTILE_MEN)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ---- births (VI-2.4) ---------------------------------------------------------------


def children_per_woman(spells: Sequence[str]) -> int:
    """``twins`` two, ``infertility`` none, both (whatever their numbers) or neither one."""
    twins, infertility = "twins" in spells, "infertility" in spells
    if twins and not infertility:
        return 2
    if infertility and not twins:
        return 0
    return 1


def forced_sex(spells: Sequence[str]) -> str | None:
    """``girls`` all girls, ``boys`` all boys; both (whatever their numbers) or neither:
    each child's sex is drawn."""
    girls, boys = "girls" in spells, "boys" in spells
    if girls and not boys:
        return GIRL
    if boys and not girls:
        return BOY
    return None


def children_in(cottage: Mapping[str, int], spells: Sequence[str]) -> int:
    """How many children a cottage gets: one per fertile woman (times the spells) if at
    least one fertile man lives there."""
    if not has_any(cottage, FERTILE_MEN):
        return 0
    women = sum(cottage.get(k, 0) for k in FERTILE_WOMEN)
    return women * children_per_woman(spells)


# ---- the catch (VI-2.5) --------------------------------------------------------------


def catch_size(families: int) -> int:
    """13 birds; 10 with three families (three players)."""
    return 10 if families == 3 else 13


def hunter_factor(spells: Sequence[str]) -> int:
    """``abundance`` doubles a cottage's hunters, ``lack`` cancels them; both cancel."""
    abundance, lack = "abundance" in spells, "lack" in spells
    if abundance and not lack:
        return 2
    if lack and not abundance:
        return 0
    return 1


def hunters_in(cottage: Mapping[str, int], spells: Sequence[str]) -> int:
    return sum(cottage.get(k, 0) for k in HUNTERS) * hunter_factor(spells)


def claim(hunters: int) -> int:
    """One bird per five hunters, rounded up."""
    return ceil_div(hunters, PEOPLE_PER_BIRD)


def share_catch(claims: Sequence[int], catch: int) -> list[int]:
    """Claims served in the order given until the catch runs out; the last claimant may
    get fewer than its claim."""
    got = []
    left = catch
    for wanted in claims:
        take = min(wanted, left)
        got.append(take)
        left -= take
    return got


# ---- the feast (VI-2.6) ----------------------------------------------------------------


def need(members: int) -> int:
    """Birds a family eats: one per five members, rounded up."""
    return ceil_div(members, PEOPLE_PER_BIRD)


def default_victims(
    cottages: Sequence[Mapping[str, int]], deaths: int, elders: bool
) -> list[Person]:
    """Victims taken by kind (girl, boy, young woman, young man, mature woman, mature
    man), within a kind from the highest-numbered cottage first (VI-2.6); then elders
    the same way when they are allowed and nobody else remains (VI-7.7)."""
    order = (*VICTIM_ORDER, ELDER) if elders else VICTIM_ORDER
    left = [dict(c) for c in cottages]
    chosen: list[Person] = []
    for kind in order:
        for cottage in reversed(range(len(left))):
            while len(chosen) < deaths and left[cottage].get(kind, 0) > 0:
                left[cottage][kind] -= 1
                chosen.append((cottage, kind))
    return chosen


def youngest_in(cottage: Mapping[str, int]) -> str | None:
    """The youngest kind present in a cottage (girls before boys), or None if empty."""
    return next((k for k in KINDS if cottage.get(k, 0) > 0), None)


# ---- generation change (VI-2.8) ----------------------------------------------------


def aged(cottage: Mapping[str, int], spared: Mapping[str, int]) -> tuple[Counts, int]:
    """A cottage after everyone but the spared ages one step; and how many elders died."""
    result = counts(spared)
    died = 0
    for kind in KINDS:
        n = cottage.get(kind, 0) - spared.get(kind, 0)
        becomes = AGES_TO[kind]
        if becomes is None:
            died += n
        else:
            result[becomes] += n
    return result, died


def default_spared(cottage: Mapping[str, int], spells: int) -> list[str]:
    """Youth's default: for each spell, the first kind in :data:`YOUTH_ORDER` with a
    member not yet spared stays (never an elder, VI-7.4)."""
    left = dict(cottage)
    spared: list[str] = []
    for _ in range(spells):
        kind = next((k for k in YOUTH_ORDER if left.get(k, 0) > 0), None)
        if kind is None:
            break
        left[kind] -= 1
        spared.append(kind)
    return spared


# ---- totem construction (VI-2.9) -------------------------------------------------


def census_awards(sizes: Sequence[int], totem_b: bool) -> tuple[list[int], list[int]]:
    """Who may add a piece and who gets a bird, from the sizes of the families.

    Three families: every tied largest adds a piece, nobody else (``totem_b`` changes the
    four-family ties only, decided here). Four families: the largest and the second
    largest add a piece; exactly two tied largest: only they; one largest and several
    tied second: the largest adds, the seconds get a bird each (``totem_b``: they all add
    a piece); three or four tied largest: no piece, a bird each (``totem_b``: a piece
    each). Returns sorted lists of families: pieces, birds.
    """
    top = max(sizes)
    largest = [f for f, s in enumerate(sizes) if s == top]
    if len(sizes) != 4:
        return largest, []
    if len(largest) == 2:
        return largest, []
    if len(largest) >= 3:
        return (largest, []) if totem_b else ([], largest)
    second = max(s for f, s in enumerate(sizes) if f not in largest)
    seconds = [f for f, s in enumerate(sizes) if s == second and f not in largest]
    if len(seconds) == 1:
        return sorted(largest + seconds), []
    if totem_b:
        return sorted(largest + seconds), []
    return largest, seconds


# ---- the end (VI-4.1) ----------------------------------------------------------------


def tie(families: Sequence[int]) -> list[int]:
    """A tie field of an event, a view or an outcome (VI-7.11): the families tied, empty
    unless two or more are (a lone winner is not a tie)."""
    return list(families) if len(families) >= 2 else []


def winner_among(
    contenders: Sequence[int], sizes: Sequence[int], birds: Sequence[int]
) -> list[int]:
    """The families still tied after the tie-breaks: the largest family, then the most
    birds. One family: the winner; several: no winner between them."""
    best = max(sizes[f] for f in contenders)
    tied = [f for f in contenders if sizes[f] == best]
    most = max(birds[f] for f in tied)
    return [f for f in tied if birds[f] == most]
