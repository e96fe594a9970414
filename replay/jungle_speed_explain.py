"""What ``explain`` and ``disputes`` read of a Jungle Speed match: its grab races
(JS-4.2, JS-4.2a, JS-5.1, JS-5.2, JS-5.3, JS-4.7, JS-6.1) and the end of a player's game
or of the match (JS-8.1 to JS-8.3).

A race is read from the recorded events and the states they built, never decided again:
the event that opened it, the reveals that left it open, and every grab recorded for it
in receive order, as :class:`replay.explain_rules.RaceEvidence`. :data:`RACES` is how
the generic commands reach this reading, through the game's entry in
:mod:`replay.games`; the data it gives (contenders, ties, gaps) is the generic one of
:mod:`replay.explain_rules`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from domain.kernel.match import MatchAggregate
from domain.kernel.stamps import ReceiveStamp
from replay import format as fmt
from replay.explain_rules import (
    LATE,
    LOST,
    LOST_DRAW,
    TIE_RULE,
    WINNER,
    WRONG,
    Contender,
    Context,
    Explanation,
    GrabRaces,
    RaceEvidence,
    TieContender,
    TieEvidence,
    ranked,
    tie_facts,
)
from replay.ties import Tie, tie_of

#: Events that turn cards face up or over: wrong grabs are grouped between them.
_RESETS = ("Revealed", "OutwardReveal", "PilesRecycled", "Dealt")
#: Events after which no grab can be late for a race decided before them: they clear
#: the match's decided races (a card turned face up, JS-5.3).
_FRESH = ("Revealed", "OutwardReveal")
_WINS = {"DuelWon": "won the duel", "ArrowsWon": "won the arrows race"}
_OUTCOMES = {"DuelWon": "won", "ArrowsWon": "won", "LateGrab": "late", "WrongGrab": "wrong"}


def explain(ctx: Context) -> Explanation | None:
    """``explain``'s hook for Jungle Speed. A grab race: the grab that decided it (or a
    wrong grab) and every grab recorded for the same race, in receive order, with gaps
    and reaction times; a player finishing (JS-8.1) or the match ending (JS-8.2, JS-8.3)."""
    name = ctx.name
    if name in _WINS or name == "LateGrab":
        race = race_at(ctx)
        assert race is not None
        return _won(ctx, race)
    if name == "WrongGrab":
        race = race_at(ctx)
        assert race is not None
        return _wrong(ctx, race)
    if name == "PlayerFinished":
        return _finished(ctx)
    if name == "MatchEnded":
        return _ended(ctx)
    return None


def explain_race(ctx: Context, race: RaceEvidence) -> Explanation:
    """What ``explain`` says of the grab event at ``ctx.version``, one of ``race``'s
    contenders, with the race already read (:func:`replay.explain.race_explanations`):
    the race is not read again for each of its grabs."""
    if ctx.name == "WrongGrab":
        return _wrong(ctx, race)
    return _won(ctx, race)


def race_at(ctx: Context) -> RaceEvidence | None:
    """The race the grab event at ``ctx.version`` belongs to (None: not a grab).

    A won duel or arrows race, or a late grab (the race it was late for): the deciding
    grab and every late grab naming it. A wrong grab: the wrong grabs since the same
    reveal. The one reading of a race that ``explain`` and ``disputes`` share.
    """
    name, fields = ctx.name, ctx.fields
    if name == "LateGrab":
        decided = int(fields["decided_at_version"])
    elif name in _WINS:
        decided = ctx.version
    elif name == "WrongGrab":
        return _wrong_grabs(ctx)
    else:
        return None
    _, won_name, won = ctx.events[decided - 1]
    grabs = [(decided, won_name, won)]
    for version, later, later_fields in ctx.events[decided:]:
        if later in _FRESH:
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


def _wrong_grabs(ctx: Context) -> RaceEvidence:
    """The wrong grabs made since the reveal before the one at ``ctx.version``."""
    start = ctx.version
    while start > 1 and ctx.events[start - 2][1] not in _RESETS:
        start -= 1
    grabs = []
    for version, name, fields in ctx.events[start - 1 :]:
        if name in _RESETS:
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
_TAKEN = ("DuelWon", "ArrowsWon", "WrongGrab", "PilesRecycled", "Dealt")


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
    start = max((v for v, n, _ in ctx.events[: decided - 1] if n in _TAKEN), default=1)
    tables = [_table(ctx.at(v)) for v in range(start, decided)]
    key = _race_key(tables[-1], name, fields)
    opened = decided - 1
    while opened > start and _still_open(tables[opened - 1 - start], key):
        opened -= 1
    if opened == start:
        while opened > 1 and _still_open(_table(ctx.at(opened - 1)), key):
            opened -= 1
    left_open = [
        version for version, event, _ in ctx.events[opened : decided - 1] if event in _RESETS
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


def _finished(ctx: Context) -> Explanation:
    seat, place = ctx.fields["seat"], ctx.fields["place"]
    title = f"{fmt.seat(ctx.after, seat)} finishes {fmt.ordinal(place)}"
    facts = [
        f"{fmt.seat(ctx.after, seat)} has no face-down and no face-up card left",
        f"{len(getattr(ctx.after, 'finished', []))} finished so far",
    ]
    return Explanation(ctx.version, ctx.name, title, ["JS-8.1"], facts)


def _ended(ctx: Context) -> Explanation:
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


def _won(ctx: Context, race: RaceEvidence) -> Explanation:
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


def _wrong(ctx: Context, race: RaceEvidence) -> Explanation:
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
        tie = tie_of(fields) if name in _WINS else None
        if tie is None:
            seat = int(fields.get("winner", fields.get("seat", -1)))
            outcome = _OUTCOMES[name]
            stamp = ReceiveStamp.from_dict(fields["stamp"])
            found.append(_contender(ctx, version, seat, stamp, outcome, label(name, seat), opened))
            continue
        for index, entry in enumerate(tie.contenders):
            drawn = index == tie.drawn
            outcome, labelled = (_OUTCOMES[name], WINNER) if drawn else (LOST_DRAW, LOST_DRAW)
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


def _players(match: MatchAggregate) -> list[str]:
    return list(getattr(match, "players", []))


def _player(match: MatchAggregate, seat: int) -> str:
    players = _players(match)
    return str(players[seat]) if 0 <= seat < len(players) else ""


#: The races ``explain`` and ``disputes`` read (:attr:`replay.games.GameReplay.races`):
#: every race of a match is found from its won races and its wrong grabs, a late grab
#: being read with the race it was late for.
RACES = GrabRaces(
    deciding=("DuelWon", "ArrowsWon", "WrongGrab"), race_at=race_at, explain=explain_race
)
