"""Helpers for the Village domain tests: matches, driving them to a decision, staging a
village, casting spells.

"Staging" writes members straight into the aggregate's state to set up a scene the
rules are then checked on (five women and a young man in one cottage, say); a staged
match is for checking one rule and is never replayed. The property tests play whole
matches through commands and timers only, and replay them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain_support import Stamps

from domain.kernel import MatchStatus
from domain.village import (
    Arrange,
    ChooseSpells,
    FamilyCommand,
    Options,
    PlaceSpell,
    Village,
    model,
)

SEED = bytes(range(32))
SECRET = bytes(range(100, 132))


def new_village(
    players: int = 4,
    seed: bytes = SEED,
    secret: bytes = SECRET,
    stamps: Stamps | None = None,
    **options: Any,
) -> tuple[Village, Stamps]:
    """A started match of ``players`` players (seats 0 … players-1)."""
    stamps = stamps or Stamps()
    match = Village.create(Options(max_players=players, **options), seed, secret=secret)
    for s in range(players):
        match.join(f"player {s}", bytes([s]), f"token-hash-{s}", stamps())
    return match, stamps


def owner(match: Village, family: int) -> int:
    return match.party_owner(family)


def act(match: Village, stamps: Stamps, command: FamilyCommand) -> None:
    """The command, sent by the seat that plays its family."""
    match.act(owner(match, command.family), command, stamps())


def fire(match: Village, stamps: Stamps) -> None:
    """Let the awaited decision's deadline pass: the defaults apply."""
    deadline = match.timer_deadline_ms()
    assert deadline is not None
    match.fire_timer(stamps.at(max(stamps.wall_ms, deadline)))


def awaiting(match: Village, kind: str, phase: int | None = None) -> bool:
    decision = match.decision
    return (
        decision is not None and decision.kind == kind and (phase is None or match.phase == phase)
    )


def drive(
    match: Village,
    stamps: Stamps,
    until: Callable[[Village], bool],
    limit: int = 10_000,
) -> None:
    """Let deadlines pass (every default applies) until ``until`` holds."""
    for _ in range(limit):
        if until(match):
            return
        assert match.status is MatchStatus.PLAYING, "the match ended first"
        fire(match, stamps)
    raise AssertionError("never reached")


def to_decision(match: Village, stamps: Stamps, kind: str, phase: int | None = None) -> None:
    drive(match, stamps, lambda m: awaiting(m, kind, phase))


def stage(match: Village, family: int, cottages: Sequence[Mapping[str, int]]) -> None:
    """Set a family's members (see the module docstring: never replayed)."""
    match.cottages[family] = [model.counts(c) for c in cottages]
    match.pool[family] = model.empty()
    match.newcomers[family] = [model.empty() for _ in range(model.COTTAGES)]


def arrange_all_default(match: Village, stamps: Stamps) -> None:
    """Answer every phase 1 arrangement with the default, by command."""
    while awaiting(match, "arrange"):
        decision = match.decision
        assert decision is not None
        family = decision.parties[0]
        cottages, _ = match.default_arrangement(family)
        act(match, stamps, Arrange(family, cottages))


def cast(
    match: Village,
    stamps: Stamps,
    spells: Mapping[int, Sequence[tuple[str, int, int]]],
    birds: Mapping[int, int] | None = None,
) -> None:
    """From the magic phase's choice: each family in ``spells`` chooses the listed spells
    (with the birds needed, or ``birds``), the others nothing; then each places its
    spells in the order listed, ``(spell, target family, cottage)``. Ends when the first
    decision after the placements is awaited."""
    to_decision(match, stamps, "choose", 2)
    for family in match.turn_order():
        mine = [s for s, _, _ in spells.get(family, [])]
        needed = max(0, len(mine) - match.poles[family])
        sacrifice = (birds or {}).get(family, needed)
        act(match, stamps, ChooseSpells(family, mine, sacrifice))
    queue = {f: list(p) for f, p in spells.items()}
    while awaiting(match, "place"):
        decision = match.decision
        assert decision is not None
        family = decision.parties[0]
        spell, target, cottage = queue[family].pop(0)
        act(match, stamps, PlaceSpell(family, spell, target, cottage))


def people(cottages: Sequence[Mapping[str, int]]) -> int:
    return sum(model.total(c) for c in cottages)


def names(events: Sequence[object]) -> list[str]:
    return [type(e).__name__ for e in events]


def events_after(match: Village, version: int) -> list[Any]:
    return [e for e in match.pending_events if e.originator_version > version]


def last(match: Village, name: str) -> Any:
    """The last recorded event called ``name``."""
    found = [e for e in match.pending_events if type(e).__name__ == name]
    assert found, f"no {name} event"
    return found[-1]


def all_of(match: Village, name: str) -> list[Any]:
    return [e for e in match.pending_events if type(e).__name__ == name]


def drive_past(match: Village, stamps: Stamps, name: str, seen: int | None = None) -> Any:
    """Let deadlines pass until a new event called ``name`` is recorded (the ``seen``-th
    of its name, counting from 0; by default the next one); return it."""
    if seen is None:
        seen = len(all_of(match, name))
    drive(match, stamps, lambda m: len(all_of(m, name)) > seen)
    return all_of(match, name)[seen]
