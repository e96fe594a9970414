"""``verify``'s ``refusals`` check: the match's log of refused commands holds, and with
the match's events it accounts for every receive number (docs/audit.md, "Refused
commands").

The server numbers a match's commands 1, 2, 3... in receive order, applied or refused;
an applied command's number is in the stamp of its events, a refused one's in its
record in the refusal log, and a refused command beyond its seat's quota is only
counted and takes no number (the next command takes it). So:

1. the log's hash chain holds (:func:`replay.refusals.read_log`), and, read from a
   bundle, the header counts its refusal lines;
2. every number from the first to the highest is held by the events or by a kept
   refusal (a fork's first is the one after the numbers of the history it carries);
3. no number is held both by an event and by a refusal;
4. each refusal sits where its number says: after the events of lower numbers, before
   those of higher ones.

An event that decided a tie between simultaneous commands (JS-4.2a,
:mod:`domain.kernel.ties`) holds the number of every contender, not only its winner's
(:func:`domain.kernel.ties.stamps_of`). The decision was held open while the window
ran, so a command refused meanwhile was refused at the version before that event, with
a number that may fall after the first contender's: such a refusal sits in its place.
So does one refused while a race was held open that nobody else joined: its winner's
event records no tie, but the refusal's stamp falls within the window the match's
options give after that event's stamp (:meth:`domain.kernel.ties.Held.admits`).

A failure is a problem of its own check, :data:`REFUSALS`, at the version after which
the first bad receive number came. The check is reported for a match whose commands are
numbered or that has a refusal log; a bundle without refusal lines says they are not in
the evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.kernel.refusals import Refusal
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.ties import Held, stamps_of, window_us
from replay.audit import Problem, Report
from replay.refusals import Refusals
from replay.store import Record

#: The check this module adds to a report.
REFUSALS = "refusals"


def numbers_of(records: Sequence[Record]) -> tuple[int, dict[int, int]]:
    """The number a fork's own commands start after (0 for a match that is no fork),
    and each receive number the events hold, with the first version holding it: every
    stamp an event holds, each contender's of a tie included (:func:`stamps_of`)."""
    base, held = 0, dict[int, int]()
    for record in records:
        data = _fields(record)
        if record.version == 1:
            for entry in data.get("history", []):
                fields = entry.get("fields") if isinstance(entry, dict) else None
                for stamp in stamps_of(fields if isinstance(fields, dict) else {}):
                    base = max(base, _number(stamp))
        for stamp in stamps_of(data):
            number = _number(stamp)
            if number:
                held.setdefault(number, record.version)
    return base, held


def tied_numbers(records: Sequence[Record]) -> dict[int, set[int]]:
    """By version of an event that decided a tie (JS-4.2a), the receive numbers of its
    contenders: the commands held while a refused one may have come in between."""
    tied: dict[int, set[int]] = {}
    for record in records:
        data = _fields(record)
        if data.get("tie"):
            numbers = {_number(stamp) for stamp in stamps_of(data)} - {0}
            if numbers:
                tied[record.version] = numbers
    return tied


def held_when_refused(records: Sequence[Record], version: int, refusal: Refusal) -> bool:
    """Whether the event at ``version`` decided a race held open (JS-4.2a) when
    ``refusal`` came: it is the event right after the refusal's version, and the refusal
    was received within the tie window that opened at the event's own stamp."""
    if version != refusal.version + 1:
        return False
    created = next((_fields(r) for r in records if r.version == 1), {})
    event = next((_fields(r) for r in records if r.version == version), {})
    options = created.get("options")
    if not isinstance(options, dict) or not isinstance(event.get("stamp"), dict):
        return False
    try:
        first = ReceiveStamp.from_dict(event["stamp"])
        came = ReceiveStamp.from_dict(refusal.stamp)
        windows = int(options.get("tie_window_us", 0)), int(options.get("call_tie_window_us", 0))
    except (KeyError, TypeError, ValueError):
        return False
    window = window_us(*windows, first)
    return window > 0 and Held(first, window * 1000).admits(came)


def _fields(record: Record) -> dict[str, Any]:
    return vars(record.event) if record.event is not None else {}


def check_refusals(
    report: Report, records: Sequence[Record], refusals: Refusals | None, source: str = "store"
) -> None:
    """Add the ``refusals`` check to ``report`` (see the module docstring); ``refusals``
    None: read from a bundle that holds none. ``source`` names where they were read."""
    base, held = numbers_of(records)
    if refusals is None:
        if held:
            report.added.append(REFUSALS)
            report.skipped[REFUSALS] = (
                f"not in the evidence: the {source} holds no refused commands (exported "
                "without its refusal log), so the receive numbers are not accounted for"
            )
        return
    if not held and refusals.quota is None and not refusals.problems:
        return  # commands not numbered (stored before the numbers), nothing refused
    report.added.append(REFUSALS)

    def after(number: int) -> int:
        """The version after which the command of ``number`` came."""
        return max((v for n, v in held.items() if n < number), default=1)

    def fail(version: int, reason: str) -> None:
        report.problems.append(Problem(version, reason, REFUSALS))

    kept = refusals.refusals
    tied = tied_numbers(records)

    def held_open(number: int, version: int, refusal: Refusal) -> bool:
        """Whether ``number``, held by the event at ``version``, was a contender of a
        race still held open when ``refusal`` was refused (JS-4.2a): that event is the
        one right after the version the refusal was refused at."""
        if version != refusal.version + 1:
            return False
        return number in tied.get(version, ()) or held_when_refused(records, version, refusal)

    if refusals.problems:
        # The first number after the last good refusal that no event holds.
        number = max((r.receive for r in kept), default=base) + 1
        while number in held:
            number += 1
        fail(
            after(number),
            f"receive number {number} on: the log of refused commands fails "
            f"({refusals.problems[0]}): a kept refusal was changed, removed or reordered, "
            "and the refusals from there on are not evidence",
        )
        return
    for refusal in kept:
        if refusal.receive in held:
            fail(
                refusal.version,
                f"receive number {refusal.receive} is held both by the event at version "
                f"{held[refusal.receive]} and by a refusal kept at version {refusal.version}: "
                "one of them was forged",
            )
            return
        before = [n for n, v in held.items() if v <= refusal.version and n > refusal.receive]
        later = [
            n
            for n, v in held.items()
            if v > refusal.version and n < refusal.receive and not held_open(n, v, refusal)
        ]
        if before or later:
            wrong = min(before) if before else max(later)
            fail(
                refusal.version,
                f"receive number {refusal.receive} was refused at version {refusal.version}, "
                f"but the event at version {held[wrong]} holds number {wrong}: the refusal "
                "is out of its place among the events (its log was rewritten)",
            )
            return
    seen = set(held) | {r.receive for r in kept}
    top = max(seen, default=base)
    missing = [n for n in range(base + 1, top + 1) if n not in seen]
    if missing:
        first = missing[0]
        more = f" ({len(missing) - 1} more numbers missing)" if len(missing) > 1 else ""
        fail(
            after(first),
            f"receive number {first} is held by no event and no kept refusal{more}: the "
            f"command received after version {after(first)} left no trace: its record was "
            f"deleted from the {source}'s log of refused commands, or never saved",
        )
        return
    detail = (
        f"receive numbers {base + 1} to {top} each held once: "
        f"{len(set(held))} by applied commands, {len(kept)} by kept refusals"
        if top > base
        else "no command numbered"
    )
    if refusals.quota is not None:
        detail += "; the log of refused commands intact"
    counted = sum(refusals.not_kept.values())
    if counted:
        detail += (
            f"; {counted} more refused commands only counted (beyond {refusals.quota} per "
            "seat), taking no number"
        )
    report.found[REFUSALS] = detail


def _number(stamp: ReceiveStamp) -> int:
    number = stamp.receive
    return number if isinstance(number, int) and not isinstance(number, bool) else 0
