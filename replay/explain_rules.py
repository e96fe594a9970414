"""What ``explain`` says about one event of each game: grab races and rule outcomes.

Each game's hook gets the whole recorded match (every event's own fields) and the
states right before and right after the event to explain, and returns an
:class:`Explanation` or None when the event decided nothing worth explaining. The hooks
only read what the events recorded and what the aggregate computed from them: they
never decide anything again.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, NamedTuple

from domain.kernel.match import MatchAggregate
from domain.kernel.stamps import ReceiveStamp
from replay import format as fmt
from replay.ties import Tie, tie_of

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


# ---- Jungle Speed: grab races (JS-4.2, JS-5.1, JS-5.2, JS-5.3, JS-6.1) -------------

#: Events that turn cards face up or over: wrong grabs are grouped between them.
_JS_RESETS = ("Revealed", "OutwardReveal", "PilesRecycled", "Dealt")
#: Events after which no grab can be late for a race decided before them: they clear
#: the match's decided races (a card turned face up, JS-5.3).
_JS_FRESH = ("Revealed", "OutwardReveal")
_JS_WINS = {"DuelWon": "won the duel", "ArrowsWon": "won the arrows race"}
_JS_OUTCOMES = {"DuelWon": "won", "ArrowsWon": "won", "LateGrab": "late", "WrongGrab": "wrong"}


def jungle_speed(ctx: Context) -> Explanation | None:
    """A grab race: the grab that decided it (or a wrong grab) and every grab recorded
    for the same race, in receive order, with gaps and reaction times."""
    name = ctx.name
    if name in _JS_WINS or name == "LateGrab":
        race = js_race(ctx)
        assert race is not None
        return _js_won(ctx, race)
    if name == "WrongGrab":
        race = js_race(ctx)
        assert race is not None
        return _js_wrong(ctx, race)
    if name == "PlayerFinished":
        return _js_finished(ctx)
    if name == "MatchEnded":
        return _js_ended(ctx)
    return None


def explain_race(ctx: Context, race: RaceEvidence) -> Explanation:
    """What ``explain`` says of the grab event at ``ctx.version``, one of ``race``'s
    contenders, with the race already read (:func:`replay.explain.race_explanations`):
    the race is not read again for each of its grabs."""
    if ctx.name == "WrongGrab":
        return _js_wrong(ctx, race)
    return _js_won(ctx, race)


def js_race(ctx: Context) -> RaceEvidence | None:
    """The race the grab event at ``ctx.version`` belongs to (None: not a grab).

    A won duel or arrows race, or a late grab (the race it was late for): the deciding
    grab and every late grab naming it. A wrong grab: the wrong grabs since the same
    reveal. The one reading of a race that ``explain`` and ``disputes`` share.
    """
    name, fields = ctx.name, ctx.fields
    if name == "LateGrab":
        decided = int(fields["decided_at_version"])
    elif name in _JS_WINS:
        decided = ctx.version
    elif name == "WrongGrab":
        return _js_wrong_grabs(ctx)
    else:
        return None
    _, won_name, won = ctx.events[decided - 1]
    grabs = [(decided, won_name, won)]
    for version, later, later_fields in ctx.events[decided:]:
        if later in _JS_FRESH:
            break
        if later == "LateGrab" and later_fields["decided_at_version"] == decided:
            grabs.append((version, later, later_fields))
    winner = int(won["winner"])
    opened, left_open = _opening(ctx, decided, won_name, won)
    if won_name == "DuelWon":
        kind, beaten = "duel", set(won["losers"])
    else:
        kind, beaten = "arrows", {s for s in range(len(_players(ctx.after))) if s != winner}

    def label(name: str, seat: int) -> str:
        if name != "LateGrab":
            return WINNER
        return LOST if seat in beaten else LATE

    contenders = _contenders(ctx, grabs, opened, label)
    tie = tie_of(won)
    return RaceEvidence(
        kind,
        decided,
        opened,
        ctx.events[opened - 1][1],
        left_open,
        contenders,
        ctx.human_limit_ms,
        winner,
        _tie_evidence(ctx, tie) if tie is not None else None,
    )


def _tie_evidence(ctx: Context, tie: Tie) -> TieEvidence:
    contenders = [
        TieContender(
            index=index,
            seat=entry.seat,
            player=_player(ctx.after, entry.seat),
            target=entry.target,
            sequence=entry.sequence,
            instance=entry.instance,
            receive=entry.receive,
            after_first_us=tie.after_first_us(entry),
            drawn=index == tie.drawn,
        )
        for index, entry in enumerate(tie.contenders)
    ]
    return TieEvidence(tie.window_us, tie.drawn, tie.winner.seat, contenders)


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


def _js_wrong_grabs(ctx: Context) -> RaceEvidence:
    """The wrong grabs made since the reveal before the one at ``ctx.version``."""
    start = ctx.version
    while start > 1 and ctx.events[start - 2][1] not in _JS_RESETS:
        start -= 1
    grabs = []
    for version, name, fields in ctx.events[start - 1 :]:
        if name in _JS_RESETS:
            break
        if name == "WrongGrab":
            grabs.append((version, name, fields))
    opened = max(start - 1, 1)
    contenders = _contenders(ctx, grabs, opened, lambda name, seat: WRONG)
    return RaceEvidence(
        "wrong",
        grabs[0][0],
        opened,
        ctx.events[opened - 1][1],
        [],
        contenders,
        ctx.human_limit_ms,
    )


#: Events after which no race is open but one they may leave behind (RU: the grab that
#: ends colour mode can leave a duel by shape, JS-6.3): a grab takes the totem and annuls
#: every other race (JS-4.7), a wrong grab or a recycling empties the face-up piles.
_JS_TAKEN = ("DuelWon", "ArrowsWon", "WrongGrab", "PilesRecycled", "Dealt")


class _Table(NamedTuple):
    """What decides whether a race is open: the visible cards and the open races."""

    tops: dict[int, int]
    duels: list[list[int]]
    arrows: set[int]
    annulled: list[list[int]]


def _table(match: Any) -> _Table:
    return _Table(
        dict(match.visible()),
        match.open_duels(),
        set(match.open_arrows()),
        [list(pair) for pair in match.annulled],
    )


def _opening(
    ctx: Context, decided: int, name: str, fields: dict[str, Any]
) -> tuple[int, list[int]]:
    """The version after which the race decided at ``decided`` was open without a break,
    and the reveals after it that left it open (JS-4.7).

    A duel stays open while reveals go on, as long as neither of its cards is covered
    (JS-4.7), so the reveal right before the grab need not be the one that opened it. A
    duel is the winner's visible card with a loser's (the same cards, their pair not
    annulled, in one open duel: JS-4.1, JS-4.6); an arrows race, one of the inward-arrows
    cards open before the grab (JS-6.1). Read from the states the events built, never
    decided again: forwards from the last event that left no race open, then, should the
    race have been open even then, backwards.
    """
    if decided <= 2:
        return 1, []
    start = max((v for v, n, _ in ctx.events[: decided - 1] if n in _JS_TAKEN), default=1)
    tables = [_table(ctx.at(v)) for v in range(start, decided)]
    key = _race_key(tables[-1], name, fields)
    opened = decided - 1
    while opened > start and _still_open(tables[opened - 1 - start], key):
        opened -= 1
    if opened == start:
        while opened > 1 and _still_open(_table(ctx.at(opened - 1)), key):
            opened -= 1
    left_open = [
        version for version, event, _ in ctx.events[opened : decided - 1] if event in _JS_RESETS
    ]
    return opened, left_open


def _race_key(table: _Table, name: str, fields: dict[str, Any]) -> tuple[Any, ...]:
    """The race decided by the event ``name`` with ``fields``, on the table before it."""
    if name == "DuelWon":
        winner = int(fields["winner"])
        pairs = [(loser, table.tops[loser]) for loser in fields["losers"] if loser in table.tops]
        return ("duel", winner, table.tops.get(winner), pairs)
    return ("arrows", table.arrows)


def _still_open(table: _Table, key: tuple[Any, ...]) -> bool:
    """Whether the race ``key`` names was open on ``table``."""
    if key[0] == "arrows":
        return bool(key[1] & table.arrows)
    _, winner, card, pairs = key
    if table.tops.get(winner) != card:
        return False
    duel: list[int] = next((d for d in table.duels if winner in d), [])
    return any(
        seat in duel
        and table.tops.get(seat) == theirs
        and sorted((card, theirs)) not in table.annulled
        for seat, theirs in pairs
    )


def _js_finished(ctx: Context) -> Explanation:
    seat, place = ctx.fields["seat"], ctx.fields["place"]
    title = f"{fmt.seat(ctx.after, seat)} finishes {fmt.ordinal(place)}"
    facts = [
        f"{fmt.seat(ctx.after, seat)} has no face-down and no face-up card left",
        f"{len(getattr(ctx.after, 'finished', []))} finished so far",
    ]
    return Explanation(ctx.version, ctx.name, title, ["JS-8.1"], facts)


def _js_ended(ctx: Context) -> Explanation:
    match, reason = ctx.after, ctx.fields["reason"]
    variant = getattr(match, "variant", "")
    if reason == "completed":
        rule = "JS-8.2"
        if variant == "RU":
            how = "RU: the first to finish wins; every other player shares second place"
        else:
            how = "ES: play goes on until two players remain (one, in a match of two)"
    else:
        rule, how = "JS-8.3", f"the match was {reason}"
    facts = [how, f"result: {fmt.result(match, ctx.fields.get('result', []))}"]
    if ctx.fields.get("statement"):
        said = "the referee stated" if reason == "stopped" else "the server observed"
        facts.append(f"{said}: {ctx.fields['statement']}")
    return Explanation(ctx.version, ctx.name, f"match {reason}", [rule], facts)


def _js_won(ctx: Context, race: RaceEvidence) -> Explanation:
    decided = race.decided
    won = ctx.events[decided - 1][2]
    winner = won["winner"]
    if race.kind == "duel":
        title = f"duel won by {fmt.seat(ctx.after, winner)} at version {decided}"
        rules = ["JS-4.1", "JS-4.2", "JS-5.1", "JS-5.3"]
        facts = [f"duel of {fmt.seats(ctx.after, sorted([winner, *won['losers']]))}"]
        facts.append(f"losers: {fmt.seats(ctx.after, won['losers'])}")
        if won.get("annulled"):
            rules.append("JS-4.6")
            facts.append(f"other duels annulled: {fmt.seats(ctx.after, won['annulled'])}")
        if won.get("arrows_annulled"):
            rules.append("JS-4.7")
            facts.append("the open inward-arrows race was annulled")
    else:
        title = f"inward-arrows race won by {fmt.seat(ctx.after, winner)} at version {decided}"
        rules = ["JS-6.1", "JS-4.2", "JS-5.1", "JS-5.3"]
        facts = ["every player races (JS-6.1)"]
        if won.get("annulled"):
            rules.append("JS-4.7")
            facts.append(f"duels annulled: {fmt.seats(ctx.after, won['annulled'])}")
    facts[:0] = _opening_facts(race)
    if race.left_open_by and "JS-4.7" not in rules:
        rules.append("JS-4.7")
    if race.tie is not None:
        rules.insert(rules.index("JS-4.2") + 1, TIE_RULE)
        facts += tie_facts(race.tie)
        facts.append(
            "the first grab in server receive order wins, unless grabs within the tie "
            "window after it were simultaneous with it: the winner among them is drawn "
            f"({TIE_RULE}); later grabs of the race are late and change nothing"
        )
    else:
        facts.append(
            "the first grab in server receive order wins; later grabs of the race are late "
            "and change nothing"
        )
    return Explanation(ctx.version, ctx.name, title, rules, facts, race)


def _opening_facts(race: RaceEvidence) -> list[str]:
    facts = [f"race opened by the {race.opened_by} event at version {race.opened}"]
    if race.left_open_by:
        versions = ", ".join(map(str, race.left_open_by))
        which = "the reveals at versions" if len(race.left_open_by) > 1 else "the reveal at version"
        facts.append(f"still open after {which} {versions}: no card of it was covered (JS-4.7)")
    return facts


def _js_wrong(ctx: Context, race: RaceEvidence) -> Explanation:
    """A wrong grab, with the wrong grabs made since the same reveal."""
    seat = ctx.fields["seat"]
    title = f"wrong grab by {fmt.seat(ctx.after, seat)} at version {ctx.version}"
    facts = [
        f"last reveal before it: the {race.opened_by} event at version {race.opened}",
        "no open duel involved the grabber and no inward-arrows race was open",
        "the grabber takes every face-up pile and the pot and starts the next turn",
    ]
    return Explanation(ctx.version, ctx.name, title, ["JS-5.2", "JS-5.1"], facts, race)


def _contenders(
    ctx: Context,
    grabs: list[tuple[int, str, dict[str, Any]]],
    opened: int,
    label: Callable[[str, int], str],
) -> list[Contender]:
    # The order the match recorded them in: receive order within one server instance,
    # commit order between instances (whose sequences and clocks are their own). A tie
    # (JS-4.2a) is recorded by its deciding event: its contenders, in receive order.
    found = []
    for version, name, fields in sorted(grabs, key=lambda g: g[0]):
        tie = tie_of(fields) if name in _JS_WINS else None
        if tie is None:
            seat = int(fields.get("winner", fields.get("seat", -1)))
            outcome = _JS_OUTCOMES[name]
            stamp = ReceiveStamp.from_dict(fields["stamp"])
            found.append(_contender(ctx, version, seat, stamp, outcome, label(name, seat), opened))
            continue
        for index, entry in enumerate(tie.contenders):
            drawn = index == tie.drawn
            outcome, labelled = (_JS_OUTCOMES[name], WINNER) if drawn else (LOST_DRAW, LOST_DRAW)
            found.append(
                _contender(ctx, version, entry.seat, entry.stamp, outcome, labelled, opened, index)
            )
    return ranked(found)


def _contender(
    ctx: Context,
    version: int,
    seat: int,
    stamp: ReceiveStamp,
    outcome: str,
    label: str,
    opened: int,
    tie_index: int | None = None,
) -> Contender:
    """One grab recorded at ``version``, from its receive stamp."""
    return Contender.of(
        stamp,
        seat=seat,
        player=_player(ctx.after, seat),
        outcome=outcome,
        version=version,
        label=label,
        human_limit_ms=ctx.human_limit_ms,
        opened=opened,
        tie_index=tie_index,
    )


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


def _players(match: MatchAggregate) -> list[str]:
    return list(getattr(match, "players", []))


def _player(match: MatchAggregate, seat: int) -> str:
    players = _players(match)
    return str(players[seat]) if 0 <= seat < len(players) else ""
