"""What ``explain`` says about one event, whatever the game: the event in its match
(:class:`Context`), what explains it (:class:`Explanation`) and the evidence of a grab
race (:class:`RaceEvidence`, its contenders, gaps and ties).

Each game's hook (``explain`` in its replay module, registered in :mod:`replay.games`)
gets the whole recorded match (every event's own fields) and the states right before
and right after the event to explain, and returns an :class:`Explanation` or None when
the event decided nothing worth explaining. A game whose grabs race gives
:class:`GrabRaces` too, which ``explain`` and ``disputes`` read every race with. The
hooks only read what the events recorded and what the aggregate computed from them:
they never decide anything again. This module names no game.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from domain.kernel.match import MatchAggregate
from domain.kernel.stamps import ReceiveStamp

#: What ``explain`` flags by default: a reaction faster than this is not a human's.
HUMAN_LIMIT_MS = 100.0


@dataclass(frozen=True)
class Context:
    """One event to explain, in its match."""

    version: int
    #: ``(version, event name, the event's own fields)`` of the whole match, in order.
    events: Sequence[tuple[int, str, dict[str, Any]]]
    #: The state right after any version, to be read at once: the next call may move it
    #: (what a race's opening is found with). ``before`` and ``after`` are kept copies.
    at: Callable[[int], MatchAggregate]
    human_limit_ms: float = HUMAN_LIMIT_MS

    @property
    def name(self) -> str:
        return self.events[self.version - 1][1]

    @property
    def fields(self) -> dict[str, Any]:
        return self.events[self.version - 1][2]

    @cached_property
    def before(self) -> MatchAggregate | None:
        """The state right before the event (None before the first)."""
        return copy.deepcopy(self.at(self.version - 1)) if self.version > 1 else None

    @cached_property
    def after(self) -> MatchAggregate:
        """The state right after the event."""
        return copy.deepcopy(self.at(self.version))


#: What a contender's grab was to its race (JS-4.2, JS-5.2, JS-5.3, JS-6.1).
WINNER = "winner"
LOST = "lost"
LATE = "late"
WRONG = "wrong grab"
#: A grab the server refused while the race was open or late (kept in the match's
#: refusal log, :mod:`replay.refused_grabs`): evidence, never a change to the winner.
REFUSED = "refused"
#: A grab simultaneous with the winner's that the draw did not pick (JS-4.2a): recorded
#: by the deciding event among the tie's contenders; its label and its outcome.
LOST_DRAW = "lost draw"
#: The rule of simultaneous grabs.
TIE_RULE = "JS-4.2a"

#: The documented stamp precision (docs/api.md, "Stamp precision"): two grabs of a race
#: whose stamps are this close do not show which reached the server first. Both read on
#: open Play streams; otherwise (an Act call, which waits for gRPC to admit it).
STREAM_PRECISION_MS = 0.2
CALL_PRECISION_MS = 2.0


@dataclass(frozen=True)
class Contender:
    """One grab of a race, with the evidence a judge weighs (JS-5.1)."""

    seat: int
    player: str
    #: What the event recorded: "won", "late" or "wrong"; "lost draw" for a contender
    #: of a tie the draw did not pick (JS-4.2a); "refused" for a refused grab.
    outcome: str
    version: int
    sequence: int
    wall_ns: int
    monotonic_ns: int
    seen_version: int
    #: The server instance that received it ("" for a lone server).
    instance: str
    #: Stamped as its message was read on an open Play stream, not when its call was
    #: admitted (an Act call's stamp waits for that).
    on_stream: bool
    #: Milliseconds after the first grab of the race was received (0 for the first).
    gap_ms: float
    #: Milliseconds from the event it reacted to reaching its stream to its receipt;
    #: None when the server did not see both ends.
    reaction_ms: float | None
    suspect: bool
    #: The client's own measure of the reaction (ms, its clock), as it sent it with the
    #: grab; None when it sent none. A claim: it marks nothing suspect by itself.
    client_reaction_ms: int | None = None
    #: What the grab was to the race: :data:`WINNER`, :data:`LOST` (beaten by the winner:
    #: a duel's loser, or any other player of an inward-arrows race), :data:`LATE` (a late
    #: grab by a player the decision did not go against), :data:`WRONG` or
    #: :data:`REFUSED` (refused by the server: ``version`` is the match's version then).
    label: str = ""
    #: Within the stamp precision of the first grab received: the stamps do not show
    #: which of the two reached the server first.
    close_call: bool = False
    #: The version it said it had seen is older than the event that opened the race: it
    #: was sent before its player could have seen the race.
    before_opening: bool = False
    #: Its receive number in the match (``ReceiveStamp.receive``, 0 where none): the order
    #: the refused grabs are placed in among the others.
    receive: int = 0
    #: A refused grab's rule id and reason (its status and, where the viewer may see
    #: it, the message its sender got); empty for a grab the match applied.
    rule: str = ""
    reason: str = ""
    #: For a contender of a tie (JS-4.2a): its place among the simultaneous grabs, in
    #: receive order from 0 (the winner's is the index drawn); None for any other grab.
    tie_index: int | None = None

    @classmethod
    def of(
        cls,
        stamp: ReceiveStamp,
        *,
        seat: int,
        player: str,
        outcome: str,
        version: int,
        label: str,
        human_limit_ms: float,
        opened: int,
        **more: Any,
    ) -> Contender:
        """A grab from its receive stamp: its order, clocks and what it had seen, its
        reaction time (when the server saw both ends) and whether that is suspect (below
        ``human_limit_ms``), and whether it was sent before the race was ``opened``."""
        sent = stamp.seen_sent_monotonic_ns
        reaction = (stamp.monotonic_ns - sent) / 1e6 if sent else None
        fields: dict[str, Any] = {"receive": stamp.receive, **more}
        return cls(
            seat=seat,
            player=player,
            outcome=outcome,
            version=version,
            sequence=stamp.sequence,
            wall_ns=stamp.wall_ns,
            monotonic_ns=stamp.monotonic_ns,
            seen_version=stamp.seen_version,
            instance=stamp.instance,
            on_stream=stamp.on_stream,
            gap_ms=0.0,
            reaction_ms=reaction,
            suspect=reaction is not None and reaction < human_limit_ms,
            client_reaction_ms=stamp.client_reaction_ms,
            label=label,
            before_opening=0 < stamp.seen_version < opened,
            **fields,
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class TieContender:
    """One of the simultaneous grabs of a tie (JS-4.2a), as the deciding event records it."""

    #: Its place in receive order, from 0.
    index: int
    seat: int
    player: str
    #: What its grab asked to resolve (JS-6.1): "default", "duel" or "arrows".
    target: str
    sequence: int
    instance: str
    #: Its receive number in the match, 0 where its stamp has none.
    receive: int
    #: Microseconds after the tie's first grab was received (0 for the first).
    after_first_us: float
    #: The contender drawn: the winner. The others lost the draw.
    drawn: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class TieEvidence:
    """Simultaneous grabs whose winner was drawn from the match's committed randomness
    (JS-4.2a): the window applied, every contender in receive order, the index drawn."""

    window_us: int
    drawn: int
    #: The seat drawn, the race's winner.
    winner: int
    contenders: list[TieContender]

    def to_dict(self) -> dict[str, Any]:
        data = dict(vars(self))
        data["contenders"] = [c.to_dict() for c in self.contenders]
        return data


@dataclass(frozen=True)
class RaceEvidence:
    """One grab race as the match recorded it: what a judge applying JS-4.2 and JS-5.1
    rules on. Every contender in recorded order (receive order; commit order between
    server instances), with its label, gap, reaction and marks."""

    #: "duel", "arrows" or "wrong" (the wrong grabs made since one reveal, JS-5.2).
    kind: str
    #: The version of the event that decided it (wrong grabs: the first of them).
    decided: int
    #: The version and name of the event that opened the race: the one after which it
    #: stayed open until decided (JS-4.7). For wrong grabs: the last reveal before them.
    opened: int
    opened_by: str
    #: Reveals between the opening and the decision that left the race open (JS-4.7).
    left_open_by: list[int]
    contenders: list[Contender]
    human_limit_ms: float
    #: The seat that won, None for wrong grabs.
    winner: int | None = None
    #: The simultaneous grabs the winner was drawn from (JS-4.2a), None when the first
    #: grab received won alone.
    tie: TieEvidence | None = None

    @property
    def gap_ms(self) -> float | None:
        """From the first grab received to the second; None with a single grab."""
        return self.contenders[1].gap_ms if len(self.contenders) > 1 else None

    @property
    def close_call(self) -> bool:
        return any(c.close_call for c in self.contenders)

    def to_dict(self) -> dict[str, Any]:
        data = dict(vars(self))
        data["contenders"] = [c.to_dict() for c in self.contenders]
        data["gap_ms"] = self.gap_ms
        data["close_call"] = self.close_call
        data["tie"] = self.tie.to_dict() if self.tie is not None else None
        return data


@dataclass(frozen=True)
class Explanation:
    version: int
    event: str
    title: str
    rules: list[str]
    facts: list[str]
    #: The grab race the event belongs to (Jungle Speed), else None.
    race: RaceEvidence | None = None

    @property
    def contenders(self) -> list[Contender]:
        return self.race.contenders if self.race is not None else []

    @property
    def human_limit_ms(self) -> float | None:
        return self.race.human_limit_ms if self.race is not None else None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": self.version,
            "event": self.event,
            "title": self.title,
            "rules": self.rules,
            "facts": self.facts,
            "contenders": [c.to_dict() for c in self.contenders],
            "human_limit_ms": self.human_limit_ms,
        }
        if self.race is not None:
            data["race"] = {k: v for k, v in self.race.to_dict().items() if k != "contenders"}
        return data


@dataclass(frozen=True)
class GrabRaces:
    """How ``explain`` and ``disputes`` read the grab races of a game that has them
    (:attr:`replay.games.GameReplay.races`): they ask a game's entry for this, never for
    a game by name, so that any game whose grabs race is read alike."""

    #: The events every race of a match is found from: each race is read once, at the
    #: first of them it covers (its other grabs, late ones included, are its contenders).
    deciding: tuple[str, ...]
    #: The race the event at ``ctx.version`` belongs to; None when it is no grab.
    race_at: Callable[[Context], RaceEvidence | None]
    #: What ``explain`` says of the grab event at ``ctx.version``, one of the contenders
    #: of the race given, already read: a race is not read again for each of its grabs.
    explain: Callable[[Context, RaceEvidence], Explanation]


def tie_facts(tie: TieEvidence) -> list[str]:
    """What ``explain`` says of a tie (JS-4.2a): the window, the draw, then each
    contender in receive order with its seat, target, receive number and time after the
    first, drawn or lost the draw."""
    n = len(tie.contenders)
    drawn = tie.contenders[tie.drawn]
    facts = [
        f"{TIE_RULE}: {n} grabs received within the tie window of {tie.window_us} µs after "
        f"the first were simultaneous; the winner was drawn from the match's committed "
        f"randomness: contender {tie.drawn} of {n} (in receive order, from 0), "
        f"{_who(drawn.seat, drawn.player)}"
    ]
    facts += [tie_contender_text(c) for c in tie.contenders]
    return facts


def tie_contender_text(contender: TieContender) -> str:
    """One contender of a tie in words (JS-4.2a)."""
    received = f"recv #{contender.sequence}" + (
        f"@{contender.instance}" if contender.instance else ""
    )
    if contender.receive:
        received += f", in match #{contender.receive}"
    what = "drawn: the winner" if contender.drawn else f"lost the draw ({TIE_RULE})"
    return (
        f"tie contender {contender.index}: {_who(contender.seat, contender.player)}, target "
        f"{contender.target or 'default'}, {received}, +{contender.after_first_us:g} µs "
        f"after the first: {what}"
    )


def _who(seat: int, player: str) -> str:
    return f"seat {seat}" + (f" ({player})" if player else "")


def ranked(contenders: Sequence[Contender]) -> list[Contender]:
    """The contenders of one race, in the order given (the order the race was recorded
    in), each with its gap to the first and whether that gap is within the stamp
    precision (a close call).

    Any contender of the race goes through here, whatever recorded it, so that a grab
    kept as evidence elsewhere (a refused grab, say) is timed against the same first.
    """
    if not contenders:
        return []
    first = contenders[0]
    timed = [replace(first, gap_ms=0.0, close_call=False)]
    for contender in contenders[1:]:
        gap = gap_ms(first, contender)
        close = abs(gap) <= precision_ms(first, contender)
        timed.append(replace(contender, gap_ms=gap, close_call=close))
    return timed


def precision_ms(first: Contender, other: Contender) -> float:
    """The stamp precision for a pair of grabs (docs/api.md, "Stamp precision")."""
    return STREAM_PRECISION_MS if first.on_stream and other.on_stream else CALL_PRECISION_MS


def gap_ms(first: Contender, other: Contender) -> float:
    """How long after the first grab ``other`` was received: on the monotonic clock of
    one instance, or on the wall clocks of two (less exact: they are two machines')."""
    if other.instance == first.instance:
        return float(other.monotonic_ns - first.monotonic_ns) / 1e6
    return float(other.wall_ns - first.wall_ns) / 1e6
