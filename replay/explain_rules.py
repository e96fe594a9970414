"""What ``explain`` says about one event of each game: grab races and rule outcomes.

Each game's hook gets the whole recorded match (every event's own fields) and the
states right before and right after the event to explain, and returns an
:class:`Explanation` or None when the event decided nothing worth explaining. The hooks
only read what the events recorded and what the aggregate computed from them: they
never decide anything again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.kernel.match import MatchAggregate
from replay import format as fmt

#: What ``explain`` flags by default: a reaction faster than this is not a human's.
HUMAN_LIMIT_MS = 100.0


@dataclass(frozen=True)
class Context:
    """One event to explain, in its match."""

    version: int
    #: ``(version, event name, the event's own fields)`` of the whole match, in order.
    events: Sequence[tuple[int, str, dict[str, Any]]]
    before: MatchAggregate | None
    after: MatchAggregate
    human_limit_ms: float = HUMAN_LIMIT_MS

    @property
    def name(self) -> str:
        return self.events[self.version - 1][1]

    @property
    def fields(self) -> dict[str, Any]:
        return self.events[self.version - 1][2]


@dataclass(frozen=True)
class Contender:
    """One grab of a race, with the evidence a judge weighs (JS-5.1)."""

    seat: int
    player: str
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
    #: Milliseconds after the winner's grab was received (0 for the winner).
    gap_ms: float
    #: Milliseconds from the event it reacted to reaching its stream to its receipt;
    #: None when the server did not see both ends.
    reaction_ms: float | None
    suspect: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Explanation:
    version: int
    event: str
    title: str
    rules: list[str]
    facts: list[str]
    contenders: list[Contender] = field(default_factory=list)
    human_limit_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data = dict(vars(self))
        data["contenders"] = [c.to_dict() for c in self.contenders]
        return data


# ---- Jungle Speed: grab races (JS-4.2, JS-5.1, JS-5.2, JS-5.3, JS-6.1) -------------

#: Events that end every race open before them: a card turned face up or piles turned over.
_JS_RESETS = ("Revealed", "OutwardReveal", "PilesRecycled", "Dealt")
_JS_WINS = {"DuelWon": "won the duel", "ArrowsWon": "won the arrows race"}


def jungle_speed(ctx: Context) -> Explanation | None:
    """A grab race: the grab that decided it (or a wrong grab) and every grab recorded
    for the same race, in receive order, with gaps and reaction times."""
    name, fields = ctx.name, ctx.fields
    if name == "LateGrab":
        return _js_race(ctx, int(fields["decided_at_version"]))
    if name in _JS_WINS:
        return _js_race(ctx, ctx.version)
    if name == "WrongGrab":
        return _js_wrong(ctx)
    if name == "PlayerFinished":
        return _js_finished(ctx)
    if name == "MatchEnded":
        return _js_ended(ctx)
    return None


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


def _js_grabs(ctx: Context, start: int) -> list[tuple[int, str, dict[str, Any]]]:
    """The grab events from version ``start`` up to the next reveal (or the end)."""
    grabs = []
    for version, name, fields in ctx.events[start - 1 :]:
        if name in _JS_RESETS:
            break
        if "stamp" in fields and name in ("DuelWon", "ArrowsWon", "WrongGrab", "LateGrab"):
            grabs.append((version, name, fields))
    return grabs


def _js_race(ctx: Context, decided: int) -> Explanation:
    _, won_name, won = ctx.events[decided - 1]
    grabs = [(decided, won_name, won)] + [
        g
        for g in _js_grabs(ctx, decided + 1)
        if g[1] == "LateGrab" and g[2]["decided_at_version"] == decided
    ]
    winner = won["winner"]
    contenders = _contenders(ctx, grabs)
    opened = _opened_by(ctx, decided)
    if won_name == "DuelWon":
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
    facts.insert(0, f"race opened by {opened}")
    facts.append(
        "the first grab in server receive order wins; later grabs of the race are late "
        "and change nothing"
    )
    return Explanation(ctx.version, ctx.name, title, rules, facts, contenders, ctx.human_limit_ms)


def _opened_by(ctx: Context, version: int) -> str:
    """The reveal (or deal, or recycling) before ``version``: what the race was about."""
    for at, name, _ in reversed(ctx.events[: version - 1]):
        if name in _JS_RESETS:
            return f"the {name} event at version {at}"
    return "no earlier reveal"


def _js_wrong(ctx: Context) -> Explanation:
    """A wrong grab, with the wrong grabs made since the same reveal."""
    start = ctx.version
    while start > 1 and ctx.events[start - 2][1] not in _JS_RESETS:
        start -= 1
    grabs = [g for g in _js_grabs(ctx, start) if g[1] == "WrongGrab"]
    seat = ctx.fields["seat"]
    title = f"wrong grab by {fmt.seat(ctx.after, seat)} at version {ctx.version}"
    facts = [
        "no open duel involved the grabber and no inward-arrows race was open",
        "the grabber takes every face-up pile and the pot and starts the next turn",
    ]
    return Explanation(
        ctx.version,
        ctx.name,
        title,
        ["JS-5.2", "JS-5.1"],
        facts,
        _contenders(ctx, grabs),
        ctx.human_limit_ms,
    )


def _contenders(ctx: Context, grabs: list[tuple[int, str, dict[str, Any]]]) -> list[Contender]:
    # The order the match recorded them in: receive order within one server instance,
    # commit order between instances (whose sequences and clocks are their own).
    ordered = sorted(grabs, key=lambda g: g[0])
    first = ordered[0][2]["stamp"]
    found = []
    for version, name, fields in ordered:
        stamp = fields["stamp"]
        seat = int(fields.get("winner", fields.get("seat", -1)))
        sent = int(stamp.get("seen_sent_monotonic_ns", 0))
        reaction = (stamp["monotonic_ns"] - sent) / 1e6 if sent else None
        outcome = {
            "DuelWon": "won",
            "ArrowsWon": "won",
            "LateGrab": "late",
            "WrongGrab": "wrong",
        }[name]
        found.append(
            Contender(
                seat=seat,
                player=_player(ctx.after, seat),
                outcome=outcome,
                version=version,
                sequence=int(stamp["sequence"]),
                wall_ns=int(stamp["wall_ns"]),
                monotonic_ns=int(stamp["monotonic_ns"]),
                seen_version=int(stamp.get("seen_version", 0)),
                instance=str(stamp.get("instance", "")),
                on_stream=bool(stamp.get("on_stream", False)),
                gap_ms=_gap_ms(first, stamp),
                reaction_ms=reaction,
                suspect=reaction is not None and reaction < ctx.human_limit_ms,
            )
        )
    return found


def _gap_ms(first: dict[str, Any], stamp: dict[str, Any]) -> float:
    """How long after the first grab this one was received: on the monotonic clock of
    one instance, or on the wall clocks of two (less exact: they are two machines')."""
    if stamp.get("instance", "") == first.get("instance", ""):
        return float(stamp["monotonic_ns"] - first["monotonic_ns"]) / 1e6
    return float(stamp["wall_ns"] - first["wall_ns"]) / 1e6


def _player(match: MatchAggregate, seat: int) -> str:
    players = getattr(match, "players", [])
    return str(players[seat]) if 0 <= seat < len(players) else ""


# ---- Tribes: lines (TR-2.5, TR-3.1 … TR-3.5) ---------------------------------------


def tribes(ctx: Context) -> Explanation | None:
    name, fields, match = ctx.name, ctx.fields, ctx.after
    if name == "RoundWon":
        winner = fields["winner"]
        rules = ["TR-3.1", "TR-3.3"]
        if fields["by"] == "revealed":
            rules.insert(1, "TR-3.2")
            how = "an opponent's line revealed by a lift and left intact (TR-3.2)"
        else:
            how = "a line of the mover's own tribe (TR-3.1)"
        facts = [f"won by {how}"]
        facts += [f"line on spaces {', '.join(map(str, line))}" for line in fields["lines"]]
        if fields.get("feathers"):
            rules.append("TR-3.5")
            facts.append("the winner held all four badges: the Feathers of Greatness")
        elif fields.get("badge"):
            rules.append("TR-3.4")
            facts.append(f"badge taken: {fields['badge']}")
        title = f"round {fields['round']} won by {fmt.seat(match, winner)}"
        return Explanation(ctx.version, name, title, rules, facts)
    if name == "RoundDrawn":
        reason = fields["reason"]
        fact = (
            "every player passed in a row: nobody had a legal move"
            if reason == "passes"
            else "the round reached its move limit without a winner"
        )
        title = f"round {fields['round']} drawn ({reason})"
        return Explanation(ctx.version, name, title, ["TR-2.5"], [fact, "no badge is taken"])
    if name == "Lifted" and fields.get("revealed_lines"):
        lines = [", ".join(map(str, line)) for line in fields["revealed_lines"]]
        facts = [f"the lift uncovered totem {fields['uncovered']}"]
        facts += [f"it completes an opponent's line on spaces {line}" for line in lines]
        facts.append("the lifted totem must cover one of those lines' other spaces if it can")
        title = f"a line revealed by {fmt.seat(match, fields['seat'])}'s lift"
        return Explanation(ctx.version, name, title, ["TR-3.2", "TR-3.1"], facts)
    return None


# ---- Village: feast, census, the end (VI-2.6, VI-2.9, VI-3.1, VI-4.1) ---------------


def village(ctx: Context) -> Explanation | None:
    name, fields = ctx.name, ctx.fields
    if name == "Feasted":
        facts = []
        for meal in fields["meals"]:
            text = (
                f"family {meal['family']}: {meal['members']} members need {meal['need']} "
                f"birds, ate {meal['eaten']}"
            )
            if meal["missing"]:
                text += f", {meal['missing']} missing: {meal['deaths']} die (starvation)"
            if meal["discarded"]:
                text += f", {meal['discarded']} birds over the pen's 5 discarded"
            facts.append(text)
        return Explanation(ctx.version, name, "the feast", ["VI-2.6"], facts)
    if name == "CensusTaken":
        sizes = fields["sizes"]
        top = max(sizes) if sizes else 0
        largest = [f for f, s in enumerate(sizes) if s == top]
        facts = [f"members per family: {_per_family(sizes)}"]
        facts.append(
            f"largest: {_families(largest)} with {top}" + (" (a tie)" if len(largest) > 1 else "")
        )
        facts.append(f"add a piece: {_families(fields['pieces'])}")
        if fields.get("blocked"):
            facts.append(f"entitled but blocked (wiped out or no elder): {fields['blocked']}")
        if fields.get("birds"):
            facts.append(f"a bird each: {_families(fields['birds'])}")
        rules = ["VI-2.9", "VI-7.5"] + (["VI-3.2"] if fields.get("blocked") else [])
        return Explanation(ctx.version, name, "the census", rules, facts)
    if name == "TotemCompleted":
        facts = [
            f"families with 6 pieces: {_families(fields['contenders'])}",
            f"members per family: {_per_family(fields['sizes'])}",
            f"birds per family: {_per_family(fields['birds'])}",
        ]
        if fields["winner"] is not None:
            title = f"family {fields['winner']} wins"
        else:
            title = f"no single winner: tied {_families(fields['tied'])}"
        facts.append(f"winning seats: {fmt.seats(ctx.after, fields['winning_seats'])}")
        return Explanation(ctx.version, name, title, ["VI-4.1", "VI-4.2", "VI-7.1"], facts)
    if name == "WipedOut":
        facts = [
            f"family {fields['family']} had no fertile woman or no fertile man after phase "
            f"{fields['phase']}: all {sum(fields['lost'].values())} members are lost"
        ]
        title = f"family {fields['family']} wiped out"
        return Explanation(ctx.version, name, title, ["VI-3.1"], facts)
    return None


def _families(numbers: Sequence[int]) -> str:
    return ", ".join(f"family {f}" for f in numbers) if numbers else "none"


def _per_family(values: Sequence[int]) -> str:
    return ", ".join(f"family {f} {v}" for f, v in enumerate(values))
