"""Ties in the replay tool: simultaneous commands whose winner was drawn (JS-4.2a).

An event that decided a tie (:mod:`domain.kernel.ties`) records, under ``tie``, the
window applied, every contender in receive order with its receive stamp, and the index
drawn. What the event did is its winner's: the contender drawn. This module reads a
recorded tie (:func:`tie_of`) for the commands that show one, and checks it for
``verify``: the record is whole, its contenders are simultaneous (received in order by
one server instance, within the window of the first), its winner is the contender
drawn, and, once the seed is revealed, the draw is the one the match's committed
randomness gives (:func:`domain.kernel.ties.tie_draw`).

This module names no game: a game's draw check (:mod:`replay.jungle_speed`) calls
:func:`check_ties` with its name, its rule id and the windows its options record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.kernel.stamps import ReceiveStamp
from domain.kernel.ties import Held, tie_draw, tie_purpose, window_us


@dataclass(frozen=True)
class TieEntry:
    """One contender of a tie, as recorded."""

    seat: int
    target: str
    stamp: ReceiveStamp

    @property
    def receive(self) -> int:
        """Its receive number in the match, 0 where its stamp has none."""
        return self.stamp.receive

    @property
    def sequence(self) -> int:
        return self.stamp.sequence

    @property
    def instance(self) -> str:
        return self.stamp.instance

    @property
    def monotonic_ns(self) -> int:
        return self.stamp.monotonic_ns

    @property
    def on_stream(self) -> bool:
        return self.stamp.on_stream


@dataclass(frozen=True)
class Tie:
    """A tie as an event records it: the window applied, the contenders in receive
    order, the index drawn."""

    window_us: int
    contenders: list[TieEntry]
    drawn: int

    @property
    def winner(self) -> TieEntry:
        return self.contenders[self.drawn]

    def after_first_us(self, entry: TieEntry) -> float:
        """How long after the first contender ``entry`` was received, in µs (on the
        first's clock: a stamp of another instance is on another, and never joins)."""
        return (entry.monotonic_ns - self.contenders[0].monotonic_ns) / 1000


def tie_of(fields: dict[str, Any]) -> Tie | None:
    """The tie an event's fields record, or None: none recorded, or not readable (which
    :func:`check_ties` reports)."""
    try:
        return _read(fields.get("tie"))
    except (KeyError, TypeError, ValueError):
        return None


def _read(tie: Any) -> Tie | None:
    if tie is None:
        return None
    if not isinstance(tie, dict) or not isinstance(tie.get("contenders"), list):
        raise ValueError("it is not a window, contenders and a drawn index")
    entries = []
    for entry in tie["contenders"]:
        stored = entry.get("stamp") if isinstance(entry, dict) else None
        if not isinstance(stored, dict):
            raise ValueError("a contender holds no receive stamp")
        # The stored form checked as recorded, before it is read.
        for key in ("sequence", "monotonic_ns", "wall_ns", "receive"):
            if key in stored or key != "receive":  # a stamp of no command has no number
                _int(stored.get(key), f"a contender's {key}")
        stamp = ReceiveStamp.from_dict(stored)
        seat = _int(entry.get("seat"), "a contender's seat")
        entries.append(TieEntry(seat, str(entry.get("target", "")), stamp))
    drawn, window = tie.get("drawn"), tie.get("window_us")
    if not isinstance(drawn, int) or isinstance(drawn, bool):
        raise ValueError(f"its drawn index {drawn!r} is not a number")
    if not isinstance(window, int) or isinstance(window, bool):
        raise ValueError(f"its window {window!r} is not a number of µs")
    if not 0 <= drawn < len(entries):
        raise ValueError(f"its drawn index {drawn} is not one of its {len(entries)} contenders")
    return Tie(window, entries, drawn)


def _stamp_of(fields: dict[str, Any]) -> ReceiveStamp | None:
    """The receive stamp an event's fields record, None where none can be read."""
    stored = fields.get("stamp")
    try:
        return ReceiveStamp.from_dict(stored) if isinstance(stored, dict) else None
    except KeyError:
        return None


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} {value!r} is not a number")
    return value


def check_ties(
    events: Sequence[tuple[int, str, dict[str, Any]]],
    first: int,
    match_seed: bytes | None,
    *,
    game: str,
    rule: str,
    windows: tuple[int, int],
) -> tuple[list[tuple[int, str]], list[str]]:
    """Check every tie recorded in ``events`` from position ``first`` on (those before
    are a fork's carried history: the origin's, checked by verifying the origin).

    ``windows`` are the match's tie windows in µs, for a command read on an open stream
    and for one stamped when its call was admitted, as its options record them.
    ``match_seed`` is the effective seed, None while the seed is not revealed: the
    draws are then not re-derived, and a note says so. Returns the problems, each at
    the version of the event that decided the tie, every reason citing ``rule``, and
    notes on what was checked.
    """
    problems: list[tuple[int, str]] = []
    ties = 0
    for version, name, fields in events[first:]:
        if fields.get("tie") is None:
            continue
        ties += 1
        reasons = _tie_problems(version, name, fields, match_seed, game, windows)
        problems += [(version, f"{rule}: {reason}") for reason in reasons]
    if not ties:
        return problems, []
    counted = f"{ties} tie{'s' if ties > 1 else ''} ({rule})"
    if match_seed is None:
        note = (
            f"{counted}: contenders and winner checked; the draw of the winner cannot be "
            "re-derived until the seed is revealed at the end"
        )
    else:
        note = (
            f"{counted}: each draw re-derived from the revealed seed, its winner the "
            "contender drawn"
        )
    return problems, [note]


def _tie_problems(
    version: int,
    name: str,
    fields: dict[str, Any],
    match_seed: bytes | None,
    game: str,
    windows: tuple[int, int],
) -> list[str]:
    try:
        tie = _read(fields["tie"])
    except (KeyError, TypeError, ValueError) as exc:
        return [f"the tie {name} records cannot be read: {exc}"]
    assert tie is not None
    n = len(tie.contenders)
    if n < 2:
        return [f"{name} records a tie of {n} contender: a tie has two or more"]
    found = _simultaneous(tie)
    winner = tie.winner
    said = fields.get("winner")
    if said != winner.seat:
        found.append(
            f"the contender drawn, {tie.drawn}, is seat {winner.seat}, but {name} names "
            f"seat {said} the winner"
        )
    elif _stamp_of(fields) != winner.stamp:
        found.append(
            f"the winner's receive stamp in {name} is not the stamp of the contender drawn, "
            f"{tie.drawn}"
        )
    first = tie.contenders[0]
    expected = window_us(*windows, first.stamp)
    if tie.window_us != expected:
        how = "read on an open stream" if first.on_stream else "stamped when its call was admitted"
        found.append(
            f"the tie applies a window of {tie.window_us} µs, but the match's options give "
            f"{expected} µs after a first grab {how}"
        )
    if match_seed is not None:
        derived = tie_draw(match_seed, game, version, n)
        if derived != tie.drawn:
            found.append(
                f"the draw is not the one re-derived from the revealed seed: the tie records "
                f"contender {tie.drawn} (seat {winner.seat}) drawn, the stream "
                f"{tie_purpose(game, version)} gives contender {derived} "
                f"(seat {tie.contenders[derived].seat}) of {n}"
            )
    return found


def _simultaneous(tie: Tie) -> list[str]:
    """Whether the contenders are simultaneous with the first (JS-4.2a): received by its
    server instance, in receive order, within the window after it, each seat once."""
    found: list[str] = []
    first = tie.contenders[0]
    held = Held(first.stamp, tie.window_us * 1000)
    seats: set[int] = set()
    for index, entry in enumerate(tie.contenders):
        if entry.seat in seats:
            found.append(f"seat {entry.seat} is a contender of the tie twice")
        seats.add(entry.seat)
        if index == 0:
            continue
        if entry.instance != first.instance:
            found.append(
                f"contender {index} was received by server instance {entry.instance!r}, the "
                f"first by {first.instance!r}: stamps of two instances are never simultaneous"
            )
            continue
        before = tie.contenders[index - 1]
        if (
            entry.monotonic_ns < before.monotonic_ns
            or entry.sequence <= before.sequence
            or (entry.receive and before.receive and entry.receive <= before.receive)
        ):
            found.append(
                f"the contenders are not in receive order: contender {index} "
                f"({_received(entry)}) was received before contender {index - 1} "
                f"({_received(before)})"
            )
        if not held.admits(entry.stamp):
            after = tie.after_first_us(entry)
            found.append(
                f"contender {index} was received {after:g} µs after the first, outside the "
                f"tie window of {tie.window_us} µs: not simultaneous with it"
            )
    return found


def _received(entry: TieEntry) -> str:
    """``recv #12, in match #7``: a contender's place in the receive order."""
    number = f", in match #{entry.receive}" if entry.receive else ""
    return f"recv #{entry.sequence}{number}"
