"""Single elimination: a seeded bracket, two seats a table, winners go on (TO-4).

The bracket follows from the seed order alone; each later round follows from the results
(as rulings leave them) of the rounds before it, so any round can be recomputed from the
events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.tournament.model import (
    Bye,
    MatchResult,
    Round,
    Ruling,
    Table,
    check_entrants,
    check_round_number,
)
from domain.tournament.standings import effective_results


def bracket_size(count: int) -> int:
    """The smallest power of two that holds ``count`` entrants."""
    size = 1
    while size < count:
        size *= 2
    return size


def elimination_rounds(count: int) -> int:
    """How many rounds a bracket of ``count`` entrants takes (TO-4.2)."""
    return bracket_size(count).bit_length() - 1


def bracket_order(size: int) -> list[int]:
    """The seeds of a bracket of ``size`` (a power of two), top to bottom (TO-4.2).

    Built by doubling: ``[1, 2]``, then each seed ``s`` of the bracket of half the size
    is followed by its first-round opponent ``size + 1 − s``: ``[1, 4, 2, 3]``,
    ``[1, 8, 4, 5, 2, 7, 3, 6]``. So seeds 1 and 2 can meet only in the final, 1 to 4
    only in the semi-finals, and so on.
    """
    order = [1]
    while len(order) < size:
        doubled = 2 * len(order)
        order = [s for seed in order for s in (seed, doubled + 1 - seed)]
    return order


def _winner(result: MatchResult, round_number: int) -> str:
    """TO-4.3: the one seat placed first alone."""
    firsts = [e for e in result.seats if result.place_of(e) == 1]
    if len(firsts) != 1:
        raise RuleViolation(
            "TO-4.3",
            f"table {result.table} of round {round_number} has no single winner: "
            "a single-elimination table needs a ruling that names one",
        )
    return firsts[0]


def pair_single_elimination(
    entrants: Sequence[str],
    results: Sequence[MatchResult],
    round_number: int,
    table_size: int = 2,
    rulings: Sequence[Ruling] = (),
    withdrawn: Mapping[str, int] | None = None,
) -> Round:
    """Round ``round_number`` of the bracket of ``entrants`` (all of them, in seed order,
    withdrawn ones too).

    TO-4.2: in a bracket of the next power of two, round 1 sets seed s against seed
    size + 1 − s; the missing seeds above the count are byes, so the top seeds have them.
    TO-4.3: the winner of each table goes on to meet the winner of the next one down.
    TO-4.4: a withdrawn entrant is never seated: whoever they would meet goes on with a
    bye (once a result is recorded, it stands). ``withdrawn`` maps each withdrawn entrant
    to the first round they did not play: the earlier rounds are recomputed as they were
    paired, with the byes a withdrawal gave then and the results played before it.
    TO-4.5: a round needs every result of the one before it.
    """
    check_entrants(entrants)
    check_round_number(round_number)
    if table_size != 2:
        raise InvalidArgument("TO-4.1", "single elimination is played at two-seat tables")
    total = elimination_rounds(len(entrants))
    if round_number > total:
        raise InvalidArgument(
            "TO-4.2",
            f"a bracket of {len(entrants)} entrants has {total} rounds, not {round_number}",
        )
    seed = {e: i for i, e in enumerate(entrants, start=1)}
    size = bracket_size(len(entrants))
    withdrawals = dict(withdrawn or {})

    def gone_by(r: int) -> set[str]:
        """Who had withdrawn when round ``r`` was paired."""
        return {e for e, first_missed in withdrawals.items() if first_missed <= r}

    found = {
        (r.round, frozenset(r.seats)): r
        for r in effective_results(results, rulings)
        if not r.is_bye
    }
    slots: list[str | None] = [
        entrants[s - 1] if s <= len(entrants) else None for s in bracket_order(size)
    ]
    for r in range(1, round_number):
        gone = gone_by(r)
        slots = [None if e in gone else e for e in slots]
        advancing: list[str | None] = []
        for a, b in zip(slots[::2], slots[1::2], strict=True):
            if a is None or b is None:
                advancing.append(a if b is None else b)
                continue
            result = found.get((r, frozenset((a, b))))
            if result is not None:
                advancing.append(_winner(result, r))
            else:
                raise RuleViolation(
                    "TO-4.5", f"round {r} is not over: {a} against {b} has no result"
                )
        slots = advancing
    # A withdrawn entrant's slot is empty from here on.
    gone = gone_by(round_number)
    slots = [None if e in gone else e for e in slots]
    tables: list[Table] = []
    byes: list[Bye] = []
    for match, (a, b) in enumerate(zip(slots[::2], slots[1::2], strict=True), start=1):
        if a is not None and b is not None:
            reason = (
                f"single elimination, round {round_number}, bracket match {match}: "
                f"seed {seed[a]} against seed {seed[b]}"
            )
            tables.append(Table(len(tables) + 1, (a, b), reason))
        elif a is not None or b is not None:
            alone = a if a is not None else b
            assert alone is not None
            byes.append(Bye(alone, _bye_reason(round_number, seed[alone], len(entrants), size)))
    return Round(round_number, tuple(tables), tuple(byes))


def _bye_reason(round_number: int, seed: int, count: int, size: int) -> str:
    if round_number == 1 and seed <= size - count:
        return (
            f"bye: seed {seed} of {count}; a bracket of {size} has {size - count} byes, "
            "and the top seeds take them"
        )
    return f"bye: no opponent in round {round_number}, the one due withdrew"
