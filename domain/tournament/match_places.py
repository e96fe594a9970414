"""From a table's ended match to the places the tournament records for it (TO-9.4).

Each entrant takes their seat at the table's match with their own entrant token
(TO-9.2), in the order they arrive, so the match's seat ``i`` is the entrant whose token
hash seat ``i`` holds (a replay's fork keeps those hashes, TO-10.3). The application
records the places the ended match gave them; anyone holding the match and the
tournament's events checks that the tournament recorded what the match says. A
forfeiting seat is placed by the tournament, after the others (TO-5.1), whatever the
match says; the others keep their order among themselves, as a competition ranking
(1, 1, 3).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence


def seat_entrants(
    seats: Sequence[str], token_hashes: Mapping[str, str], seat_hashes: Sequence[str]
) -> list[str | None]:
    """The entrant at each seat of the match, by seat number: the table's entrant whose
    token hash (``token_hashes``, the tournament's) the seat holds (``seat_hashes``, the
    match's); None for a seat taken with no entrant's token of this table."""
    by_hash = {token_hashes[e]: e for e in seats if e in token_hashes}
    return [by_hash.get(h) for h in seat_hashes]


def competition_ranking(values: Mapping[str, int]) -> dict[str, int]:
    """Each key's place when the smaller value is better: 1 for the best, tied keys
    share the better place and the next place skips (1, 1, 3)."""
    return {k: 1 + sum(1 for other in values.values() if other < v) for k, v in values.items()}


def table_places(
    forfeited: Collection[str],
    match_result: Iterable[Mapping[str, int]],
    at: Sequence[str | None],
) -> dict[str, int]:
    """The place the tournament records for each entrant of the table who did not
    forfeit, from the result (``{"seat", "place"}`` each) of the match whose seats hold
    the entrants ``at`` (:func:`seat_entrants`), by entrant. A seat the result does not
    place is left out (and so differs from any place recorded)."""
    by_entrant: dict[str, int] = {}
    for p in match_result:
        entrant = at[p["seat"]] if 0 <= p["seat"] < len(at) else None
        if entrant is not None and entrant not in forfeited:
            by_entrant[entrant] = p["place"]
    return competition_ranking(by_entrant)


def recorded_places(
    seats: Sequence[str], places: Sequence[int], forfeited: Collection[str]
) -> dict[str, int]:
    """The places a ``ResultRecorded`` event gives the entrants who did not forfeit."""
    return {e: p for e, p in zip(seats, places, strict=True) if e not in forfeited}
