"""Simultaneous commands: a decision held open for a window, then drawn (JS-4.2a).

Below some gap, the order in which a server reads two commands says nothing about
which was sent first (docs/api.md, "Stamp precision"). A game whose rules decide a race
by receive order can therefore hold the decision open when the race's first command is
received, take every other command of the same race received within the window after
it as simultaneous, and draw the winner among them from the match's committed
randomness. The draw is recorded with every contender, so a judge re-derives it once
the seed is revealed (:func:`tie_draw`), and replay never decides again.

A held decision lives only in memory, between the commands of one batch of a match's
actor: the server runs the commands received within the window, then asks the match to
decide (:meth:`domain.kernel.match.MatchAggregate.settle_held`) before it saves or
answers anything. Nothing held is ever stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from domain.kernel.randomness import SeededRandom
from domain.kernel.stamps import ReceiveStamp

#: The longest window a match may record, in microseconds.
MAX_WINDOW_US = 1_000_000

Opts = TypeVar("Opts")


def with_windows(options: Opts, stream_us: int, call_us: int) -> Opts:
    """``options`` recording the server's tie windows, if its game holds simultaneous
    commands (its options have the fields ``tie_window_us`` and ``call_tie_window_us``);
    any other game's options as they are. The server sets them when a match is created:
    they are its setting, not the creator's choice."""
    names = {f.name for f in fields(options)}  # type: ignore[arg-type]
    if not {"tie_window_us", "call_tie_window_us"} <= names:
        return options
    return replace(options, tie_window_us=stream_us, call_tie_window_us=call_us)  # type: ignore[type-var]


def window_us(stream_us: int, call_us: int, stamp: ReceiveStamp) -> int:
    """The window that opens after ``stamp``: the stream window for a command read on an
    open stream, the call window for one stamped when its call was admitted (a call's
    stamp is coarser: docs/api.md, "Stamp precision")."""
    return stream_us if stamp.on_stream else call_us


@dataclass
class Held:
    """A decision held open: the first contender and those received within the window.

    ``entries`` are the game's own description of each contender (a dict holding at
    least its ``stamp`` as stored), in receive order, the first one first.
    """

    first: ReceiveStamp
    window_ns: int
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def deadline_ns(self) -> int:
        """The last receive time (``monotonic_ns``) a simultaneous command may have."""
        return self.first.monotonic_ns + self.window_ns

    def admits(self, stamp: ReceiveStamp) -> bool:
        """Whether ``stamp`` falls within the window. Stamps of another server instance
        are on another clock and never do."""
        return (
            stamp.instance == self.first.instance
            and self.first.monotonic_ns <= stamp.monotonic_ns <= self.deadline_ns
        )


def tie_purpose(game: str, version: int) -> str:
    """The random stream of the draw recorded at ``version`` (docs/randomness.md)."""
    return f"{game}/tie/{version}"


def tie_draw(effective_seed: bytes, game: str, version: int, contenders: int) -> int:
    """Which of ``contenders`` simultaneous commands wins, as an index in receive order:
    the first number of the stream :func:`tie_purpose` of the deciding event's version."""
    return SeededRandom(effective_seed, tie_purpose(game, version)).randbelow(contenders)


def tie_record(held: Held, drawn: int) -> dict[str, Any]:
    """What the deciding event records of a tie: the window applied, every contender in
    receive order with its stamp, and the index drawn."""
    return {"window_us": held.window_ns // 1000, "contenders": held.entries, "drawn": drawn}


def stamps_of(data: dict[str, Any]) -> list[ReceiveStamp]:
    """The receive stamps an event's fields hold: its own ``stamp`` and, for an event
    that decided a tie, each contender's. Replay tools account for receive numbers
    with it; a stored stamp missing a field no stamp was ever stored without is left
    out."""
    found = []
    own = data.get("stamp")
    if isinstance(own, dict):
        found.append(own)
    tie = data.get("tie")
    if isinstance(tie, dict):
        for contender in tie.get("contenders", []):
            stamp = contender.get("stamp") if isinstance(contender, dict) else None
            if isinstance(stamp, dict):
                found.append(stamp)
    stamps = []
    for stored in found:
        try:
            stamps.append(ReceiveStamp.from_dict(stored))
        except KeyError:
            continue
    return stamps
