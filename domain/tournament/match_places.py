"""From a table's ended match to the places the tournament records for it (TO-9.4).

The application seats a table's entrants at its match in the table's seat order, each
with their own token (TO-8.2), and records the places the ended match gave them. Anyone
holding the match and the tournament's events checks that the tournament recorded what
the match says: the match's seat ``i`` is the table's ``i``-th entrant, or, when the
match has fewer seats than the table (some entrants forfeited before it began, TO-9.3),
the ``i``-th of those who did not forfeit. A forfeiting seat is placed by the
tournament, after the others (TO-5.1), whatever the match says; the others keep their
order among themselves, as a competition ranking (1, 1, 3).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence


def seat_entrants(seats: Sequence[str], forfeited: Collection[str], match_seats: int) -> list[str]:
    """The entrant at each seat of the match, by seat number (see the module's
    docstring)."""
    if match_seats == len(seats):
        return list(seats)
    return [e for e in seats if e not in forfeited]


def competition_ranking(values: Mapping[str, int]) -> dict[str, int]:
    """Each key's place when the smaller value is better: 1 for the best, tied keys
    share the better place and the next place skips (1, 1, 3)."""
    return {k: 1 + sum(1 for other in values.values() if other < v) for k, v in values.items()}


def table_places(
    seats: Sequence[str],
    forfeited: Collection[str],
    match_result: Iterable[Mapping[str, int]],
    match_seats: int,
) -> dict[str, int]:
    """The place the tournament records for each entrant of the table who did not
    forfeit, from the result (``{"seat", "place"}`` each) of the match of
    ``match_seats`` seats, by entrant. A seat the result does not place is left out (and
    so differs from any place recorded)."""
    places = list(match_result)
    at = seat_entrants(seats, forfeited, match_seats)
    by_entrant = {
        at[p["seat"]]: p["place"]
        for p in places
        if 0 <= p["seat"] < len(at) and at[p["seat"]] not in forfeited
    }
    return competition_ranking(by_entrant)


def recorded_places(
    seats: Sequence[str], places: Sequence[int], forfeited: Collection[str]
) -> dict[str, int]:
    """The places a ``ResultRecorded`` event gives the entrants who did not forfeit."""
    return {e: p for e, p in zip(seats, places, strict=True) if e not in forfeited}
