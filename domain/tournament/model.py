"""The values tournament pairing and standings work on: entrants, tables, results, rulings.

Everything here is an immutable value: a round's pairing and a standings table are pure
functions of these, so the tournament aggregate can record them in its events and anyone
can recompute them from those events alone (docs/tournaments.md, "Pairing and standings
rules"; the rule ids ``TO-x.y`` are cited in errors and tests).

An entrant is named by an id (a string the aggregate chooses); the seed order is the order
of the sequence of ids a function is given, first the top seed. Points are exact
:class:`~fractions.Fraction` values, so that ties are ties and never rounding accidents.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from domain.kernel.errors import InvalidArgument

#: Table sizes a tournament may use (TO-1.1): the games seat 2 or more; tournaments here
#: seat at most 4 at a table.
TABLE_SIZES = (2, 3, 4)


@dataclass(frozen=True)
class Table:
    """One table of a round: its entrants in seat order (seat 0 first) and why they sit
    together, in words a player or judge can check against the rules."""

    number: int
    seats: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Bye:
    """An entrant who sits out a round without playing, and why (TO-5.3 scores it)."""

    entrant: str
    reason: str


@dataclass(frozen=True)
class Round:
    """A round's pairing: its tables, numbered from 1, and its byes."""

    number: int
    tables: tuple[Table, ...]
    byes: tuple[Bye, ...] = ()

    def entrants(self) -> set[str]:
        """Everyone given a table or a bye this round."""
        return {e for t in self.tables for e in t.seats} | {b.entrant for b in self.byes}


@dataclass(frozen=True)
class MatchResult:
    """The result of one table of one round, or of a bye (TO-5.1).

    ``places`` gives each seat's place, in the order of ``seats``, as a competition
    ranking: 1 for the first, tied seats share the better place and the next place skips
    (``(1, 1, 3)``). ``forfeited`` names the seats that forfeited (absent at the round's
    start deadline, or withdrawn once paired): they score nothing (TO-5.2) and the
    aggregate places them last. A bye is a result with a single seat and no table
    (``table`` 0): make one with :meth:`bye`.
    """

    round: int
    table: int
    seats: tuple[str, ...]
    places: tuple[int, ...]
    forfeited: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if len(self.seats) == 0 or len(set(self.seats)) != len(self.seats):
            raise InvalidArgument("TO-5.1", "a result names each of its seats once")
        if len(self.places) != len(self.seats):
            raise InvalidArgument("TO-5.1", "a result gives one place for each seat")
        check_places("TO-5.1", self.places)
        if not self.forfeited <= set(self.seats):
            raise InvalidArgument("TO-5.1", "only an entrant seated at the table can forfeit")
        if self.round < 1:
            raise InvalidArgument("TO-5.1", "rounds are numbered from 1")
        if self.is_bye != (self.table == 0):
            raise InvalidArgument("TO-5.1", "a bye has one seat and table 0; a table has more")

    @classmethod
    def bye(cls, round: int, entrant: str) -> MatchResult:
        """The result of a bye: the entrant alone, first, at no table."""
        return cls(round=round, table=0, seats=(entrant,), places=(1,))

    @property
    def is_bye(self) -> bool:
        return len(self.seats) == 1

    def place_of(self, entrant: str) -> int:
        return self.places[self.seats.index(entrant)]


@dataclass(frozen=True)
class ReplaceResult:
    """A ruling that replaces the places (and forfeits) of one table's result (TO-6.1)."""

    round: int
    table: int
    places: tuple[int, ...]
    forfeited: frozenset[str] = field(default_factory=frozenset)
    note: str = ""


@dataclass(frozen=True)
class Penalty:
    """A ruling that takes ``points`` off an entrant's total (TO-6.2)."""

    round: int
    entrant: str
    points: Fraction
    note: str = ""

    def __post_init__(self) -> None:
        if self.points <= 0:
            raise InvalidArgument("TO-6.2", "a penalty takes a positive number of points")


Ruling = ReplaceResult | Penalty


def check_places(rule: str, places: Sequence[int]) -> None:
    """Places must be a competition ranking (``1, 1, 3``; never ``1, 2, 2, 3`` or ``2``)."""
    ordered = sorted(places)
    for i, place in enumerate(ordered):
        if place != i + 1 and (i == 0 or place != ordered[i - 1]):
            raise InvalidArgument(
                rule,
                f"places {tuple(places)} are not a ranking: tied seats share the better "
                "place and the next place skips (1, 1, 3)",
            )


def check_entrants(entrants: Sequence[str]) -> None:
    """At least two entrants, each id once (TO-1.1)."""
    if len(entrants) < 2:
        raise InvalidArgument("TO-1.1", "a tournament needs at least two entrants")
    if len(set(entrants)) != len(entrants) or any(not e for e in entrants):
        raise InvalidArgument("TO-1.1", "each entrant has a distinct, non-empty id")


def check_table_size(table_size: int, min_seats: int = 2) -> None:
    """2, 3 or 4 seats a table, and no fewer than the game needs (TO-1.1)."""
    if table_size not in TABLE_SIZES:
        raise InvalidArgument("TO-1.1", "a table seats 2, 3 or 4 entrants")
    if not 2 <= min_seats <= table_size:
        raise InvalidArgument(
            "TO-1.1", f"the fewest seats a game needs is from 2 to the table size {table_size}"
        )


def check_round_number(round_number: int) -> None:
    if round_number < 1:
        raise InvalidArgument("TO-1.1", "rounds are numbered from 1")


def table_sizes(count: int, table_size: int, min_seats: int = 2) -> tuple[list[int], int]:
    """How ``count`` entrants sit in one round: the sizes of its tables, and how many byes.

    TO-1.2: as few tables as seat everyone at tables of at most ``table_size``, their
    sizes as equal as possible, larger tables first; if that many tables cannot each seat
    ``min_seats``, one table fewer (and so on), the entrants left over having byes. So 9
    entrants at 4-seat tables sit 3, 3, 3; 5 at 2-seat tables sit 2, 2 with one bye.
    """
    tables = -(-count // table_size)
    while tables > 0 and tables * min_seats > count:
        tables -= 1
    if tables == 0:
        return [], count
    seated = min(count, tables * table_size)
    base, extra = divmod(seated, tables)
    return [base + 1] * extra + [base] * (tables - extra), count - seated


def pair_key(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def meetings(results: Iterable[MatchResult]) -> Counter[frozenset[str]]:
    """How many times each two entrants have sat at the same table (byes meet nobody;
    a forfeited table counts, since they were paired: TO-3.4)."""
    met: Counter[frozenset[str]] = Counter()
    for result in results:
        for i, a in enumerate(result.seats):
            for b in result.seats[i + 1 :]:
                met[pair_key(a, b)] += 1
    return met


def byes_had(results: Iterable[MatchResult]) -> Counter[str]:
    """How many byes each entrant has had."""
    return Counter(r.seats[0] for r in results if r.is_bye)


def show_points(points: Fraction) -> str:
    """Points as a person writes them: ``2``, ``1.5``, ``4/3``."""
    if points.denominator == 1:
        return str(points.numerator)
    if points.denominator == 2:
        return f"{float(points):g}"
    return str(points)


def points_word(points: Fraction) -> str:
    return f"{show_points(points)} point" + ("" if points == 1 else "s")
