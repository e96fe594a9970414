"""Round robin: every entrant meets every other (TO-2).

The whole schedule follows from the entrants in seed order, the table size and the
fewest seats a game needs, fixed when the tournament is created; results never change it.
So a round robin's rounds can be published in advance, and a withdrawal (TO-2.4) only
empties seats: it never moves anyone else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from domain.kernel.errors import InvalidArgument
from domain.tournament.model import (
    Bye,
    Round,
    Table,
    check_entrants,
    check_round_number,
    check_table_size,
    pair_key,
    table_sizes,
)

#: A schedule: per round, its tables (seats in order) and its byes.
Schedule = list[tuple[list[tuple[str, ...]], list[str]]]


def circle_schedule(entrants: Sequence[str]) -> Schedule:
    """The circle (Berger) method for two-seat tables (TO-2.1).

    Number the entrants 1 … n in seed order; if n is odd, add a "bye" as number n + 1,
    so that there are m (even) numbers. Round r (1 … m − 1) lists the numbers
    ``s_k = ((k + r − 2) mod (m − 1)) + 1`` for k = 1 … m − 1 round the circle, and m
    fixed in its centre. Number m meets s_1 = r; then s_2 meets s_(m−1), s_3 meets
    s_(m−2), and so on: in round r, i and j (both below m) meet when
    ``i + j ≡ 2r (mod m − 1)``. Seats: s_k sits before s_(m+1−k); r sits before m in odd
    rounds and after it in even ones. Whoever meets the "bye" has a bye that round.
    """
    numbers: list[str | None] = list(entrants)
    if len(numbers) % 2:
        numbers.append(None)
    m = len(numbers)
    schedule: Schedule = []
    for r in range(1, m):
        circle = [numbers[(k + r - 2) % (m - 1)] for k in range(1, m)]
        centre = numbers[m - 1]
        pairs = [(circle[0], centre) if r % 2 else (centre, circle[0])]
        pairs += [(circle[k], circle[m - 1 - k]) for k in range(1, m // 2)]
        tables: list[tuple[str, ...]] = []
        byes: list[str] = []
        for a, b in pairs:
            if a is not None and b is not None:
                tables.append((a, b))
            elif a is not None or b is not None:
                byes.append(a if a is not None else b)  # type: ignore[arg-type]
        schedule.append((tables, byes))
    return schedule


def spread_schedule(entrants: Sequence[str], table_size: int, min_seats: int = 2) -> Schedule:
    """A schedule for tables of three or four that spreads meetings (TO-2.2).

    Rounds are built one after another until every two entrants have met. Each round
    seats the entrants at tables of the sizes TO-1.2 gives; its byes (if any) go to the
    entrants with the fewest byes so far, the lowest seeds first. Tables are then filled
    one at a time, and each table's seats in order:

    - its first seat: the unseated entrant who has yet to meet the most of the other
      unseated entrants;
    - each further seat: the unseated entrant who has met those already at the table the
      fewest times, then who has yet to meet the most of the other unseated entrants;

    every remaining tie going to seed order. A meeting already had is thus repeated only
    when no unseated entrant is new to the table.
    """
    seed = {e: i for i, e in enumerate(entrants)}
    met: Counter[frozenset[str]] = Counter()
    had_bye: Counter[str] = Counter()
    everyone = list(entrants)
    pairs_total = len(everyone) * (len(everyone) - 1) // 2
    sizes, bye_count = table_sizes(len(everyone), table_size, min_seats)
    schedule: Schedule = []
    while sum(1 for p in met if met[p]) < pairs_total:
        byes = sorted(everyone, key=lambda e: (had_bye[e], -seed[e]))[:bye_count]
        unseated = [e for e in everyone if e not in byes]

        def unmet(e: str, pool: list[str]) -> int:
            return sum(1 for o in pool if o != e and not met[pair_key(e, o)])

        tables: list[tuple[str, ...]] = []
        for size in sizes:
            first = min(unseated, key=lambda e: (-unmet(e, unseated), seed[e]))
            table = [first]
            unseated.remove(first)
            while len(table) < size:
                nxt = min(
                    unseated,
                    key=lambda e: (
                        sum(met[pair_key(e, t)] for t in table),
                        -unmet(e, unseated),
                        seed[e],
                    ),
                )
                table.append(nxt)
                unseated.remove(nxt)
            tables.append(tuple(table))
        for seated in tables:
            for i, a in enumerate(seated):
                for b in seated[i + 1 :]:
                    met[pair_key(a, b)] += 1
        for e in byes:
            had_bye[e] += 1
        schedule.append((tables, byes))
        if len(schedule) > len(everyone) ** 2:  # pragma: no cover - a guard, never reached
            raise AssertionError("the spread schedule does not close")
    return schedule


def round_robin_schedule(
    entrants: Sequence[str], table_size: int = 2, min_seats: int = 2
) -> Schedule:
    """The whole schedule: the circle method at two seats, the spread one at more."""
    check_entrants(entrants)
    check_table_size(table_size, min_seats)
    if table_size == 2:
        return circle_schedule(entrants)
    return spread_schedule(entrants, table_size, min_seats)


def round_robin_rounds(entrants: Sequence[str], table_size: int = 2, min_seats: int = 2) -> int:
    """How many rounds a round robin takes (TO-2.3): n − 1 for an even n at two seats, n
    for an odd n; at more seats, as many as the spread schedule needs."""
    return len(round_robin_schedule(entrants, table_size, min_seats))


def pair_round_robin(
    entrants: Sequence[str],
    round_number: int,
    table_size: int = 2,
    withdrawn: Collection[str] = (),
    min_seats: int = 2,
) -> Round:
    """Round ``round_number`` of the round robin of ``entrants`` (every entrant, in seed
    order, withdrawn ones too: the schedule is the one fixed at the start).

    TO-2.4: a withdrawn entrant is never seated. At two seats, their opponent of that
    round has a bye; at more, their table plays without them, or if fewer than
    ``min_seats`` remain, those left have byes.
    """
    check_round_number(round_number)
    schedule = round_robin_schedule(entrants, table_size, min_seats)
    if round_number > len(schedule):
        raise InvalidArgument(
            "TO-2.3", f"this round robin has {len(schedule)} rounds, not {round_number}"
        )
    planned_tables, planned_byes = schedule[round_number - 1]
    gone = set(withdrawn)
    method = "circle method" if table_size == 2 else "spread schedule"
    tables: list[Table] = []
    byes = [
        Bye(
            e,
            "bye: round robin, odd number of entrants, this entrant's turn to sit out"
            if table_size == 2
            else "bye: round robin, the fewest byes so far, lowest seed first",
        )
        for e in planned_byes
        if e not in gone
    ]
    for seats in planned_tables:
        present = tuple(e for e in seats if e not in gone)
        left = [e for e in seats if e in gone]
        if len(present) >= min_seats:
            reason = f"round robin, {method}, round {round_number}"
            if left:
                reason += f", without {', '.join(left)} (withdrawn)"
            tables.append(Table(len(tables) + 1, present, reason))
        else:
            byes += [
                Bye(e, f"bye: round robin, opponent {', '.join(left)} withdrew") for e in present
            ]
    return Round(round_number, tuple(tables), tuple(byes))
