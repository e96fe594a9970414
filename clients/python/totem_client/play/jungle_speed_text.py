"""Words for the Jungle Speed screen: cards, events, races and results, from the contract.

Kept apart from the widgets so that what the screen says is decided in one place and
reads the same in every panel. Nothing here knows the rules: cards and outcomes are
named from the messages the server sent (``totem.v1.jungle_speed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.content import Content

from totem.v1 import common_pb2, jungle_speed_pb2
from totem_client.messages import MatchEvent
from totem_client.play.words import Names, describe_common, end_reason, result_lines

Card = jungle_speed_pb2.Card
Stamp = common_pb2.ReceiveStamp

#: Screen colours of the four card colours (JS-1.1).
COLOUR_STYLES: dict[int, str] = {
    jungle_speed_pb2.COLOUR_PURPLE: "#b48cff",
    jungle_speed_pb2.COLOUR_GREEN: "#4cc764",
    jungle_speed_pb2.COLOUR_ORANGE: "#ff9340",
    jungle_speed_pb2.COLOUR_YELLOW: "#f2d34b",
}

#: One glyph per look-alike family (JS-1.2): the variant's word tells the shapes apart.
FAMILY_GLYPHS = {"STAR": "★", "CROSS": "✚", "RING": "◎", "WAVE": "≈", "LEAF": "♣", "KNOT": "∞"}

#: Special cards (JS-1.3): a glyph and their kind's word, "arrows" going on a line of its own.
SPECIAL_WORDS: dict[int, tuple[str, str]] = {
    jungle_speed_pb2.CARD_KIND_INWARD_ARROWS: ("→←", "inward"),
    jungle_speed_pb2.CARD_KIND_OUTWARD_ARROWS: ("←→", "outward"),
    jungle_speed_pb2.CARD_KIND_COLOURED_ARROWS: ("⇄", "coloured"),
}
SPECIAL_STYLE = "bold reverse"


def colour_name(card: Card) -> str:
    return jungle_speed_pb2.Colour.Name(card.colour).removeprefix("COLOUR_").lower()


def shape_name(card: Card) -> str:
    """The variant, then the family: "pointed star", "double ring"."""
    family, _, variant = (
        jungle_speed_pb2.Shape.Name(card.shape).removeprefix("SHAPE_").partition("_")
    )
    return f"{variant.lower()} {family.lower()}"


def card_words(card: Card) -> str:
    """A card in plain words, for the log and the race panel."""
    if card.kind in SPECIAL_WORDS:
        return f"{SPECIAL_WORDS[card.kind][1]} arrows"
    return f"{colour_name(card)} {shape_name(card)}"


def card_face(card: Card) -> Content:
    """A card as drawn on the table: glyph and shape in the card's colour, or the special."""
    if card.kind in SPECIAL_WORDS:
        glyph, words = SPECIAL_WORDS[card.kind]
        return Content.assemble(
            (f"{glyph} {words}", SPECIAL_STYLE), "\n", ("arrows", SPECIAL_STYLE)
        )
    family = jungle_speed_pb2.Shape.Name(card.shape).removeprefix("SHAPE_").split("_")[0]
    style = f"bold {COLOUR_STYLES.get(card.colour, 'white')}"
    return Content.assemble(
        (f"{FAMILY_GLYPHS.get(family, '?')} {shape_name(card)}", style),
        "\n",
        (colour_name(card), COLOUR_STYLES.get(card.colour, "white")),
    )


def describe(event: MatchEvent, names: Names) -> str:
    """One line of the event log: what happened, in words, with its version."""
    kind = event.WhichOneof("event")
    text = describe_common(event, names) or f"event {kind}"
    if kind == "jungle_speed":
        text = _describe_game(event.jungle_speed, names)
    return f"v{event.version}  {text}"


def _describe_game(body: jungle_speed_pb2.JungleSpeedEvent, names: Names) -> str:
    kind = body.WhichOneof("event")
    if kind == "created":
        return "match created"
    if kind == "dealt":
        return f"cards dealt; {names(body.dealt.first_turn)} reveals first"
    if kind == "revealed":
        by_timer = body.revealed.cause == jungle_speed_pb2.REVEAL_CAUSE_TIMEOUT
        how = " (the turn timer revealed it)" if by_timer else ""
        return f"{names(body.revealed.seat)} revealed {card_words(body.revealed.card)}{how}"
    if kind == "outward_reveal":
        shown = ", ".join(
            f"{names(r.seat)} {card_words(r.card)}" for r in body.outward_reveal.reveals
        )
        return f"outward arrows of {names(body.outward_reveal.triggered_by)}: {shown}"
    if kind == "duel_won":
        won = body.duel_won
        text = f"{names(won.winner)} won the duel against {names.listed(won.losers)}"
        return text + _drawn(won.tie, names)
    if kind == "arrows_won":
        won_arrows = body.arrows_won
        text = f"{names(won_arrows.winner)} won the inward-arrows race"
        return text + _drawn(won_arrows.tie, names)
    if kind == "wrong_grab":
        return f"{names(body.wrong_grab.seat)} grabbed wrongly: nothing was open for them"
    if kind == "late_grab":
        return f"{names(body.late_grab.seat)} grabbed late"
    if kind == "piles_recycled":
        return "nobody could reveal: the face-up piles were turned over"
    if kind == "player_finished":
        finished = body.player_finished
        return f"{names(finished.seat)} finished (place {finished.place})"
    return f"event {kind}"


def _drawn(tie: jungle_speed_pb2.JungleSpeedTie, names: Names) -> str:
    """How a race's winner was chosen, when the grabs were simultaneous (JS-4.2a)."""
    if not tie.contenders:
        return ""
    seats = names.listed([c.seat for c in tie.contenders])
    return f", drawn among the simultaneous grabs of {seats} (JS-4.2a)"


# ---- races --------------------------------------------------------------------------------


@dataclass
class Grab:
    """One grab of a race, as the server received it."""

    seat: int
    stamp: Stamp
    outcome: str  # "won", "late", "wrong" or "lost the draw" (JS-4.2a)


@dataclass
class Race:
    """The outcome of a grab that decided something: a duel, an arrows race, a wrong grab.

    Late grabs for it are added as they come; ``grabs`` lists them all in receive order.
    """

    version: int
    what: str  # "duel", "arrows" or "wrong grab"
    seat: int
    losers: list[int] = field(default_factory=list)
    annulled: list[int] = field(default_factory=list)
    arrows_annulled: bool = False
    grabs: list[Grab] = field(default_factory=list)


class Races:
    """The races of the match, from DuelWon, ArrowsWon, WrongGrab and LateGrab."""

    def __init__(self) -> None:
        self.by_version: dict[int, Race] = {}
        self.last: Race | None = None

    def note(self, event: MatchEvent) -> bool:
        """Take in a grab's event; return True if the last race changed."""
        if event.WhichOneof("event") != "jungle_speed":
            return False
        body = event.jungle_speed
        kind = body.WhichOneof("event")
        race: Race | None = None
        if kind == "duel_won":
            won = body.duel_won
            race = Race(event.version, "duel", won.winner, list(won.losers))
            race.annulled, race.arrows_annulled = list(won.annulled), won.arrows_annulled
            race.grabs.extend(_contenders(won.winner, won.stamp, won.tie))
        elif kind == "arrows_won":
            won_arrows = body.arrows_won
            race = Race(event.version, "arrows", won_arrows.winner)
            race.annulled = list(won_arrows.annulled)
            race.grabs.extend(_contenders(won_arrows.winner, won_arrows.stamp, won_arrows.tie))
        elif kind == "wrong_grab":
            race = Race(event.version, "wrong grab", body.wrong_grab.seat)
            race.grabs.append(Grab(body.wrong_grab.seat, body.wrong_grab.stamp, "wrong"))
        elif kind == "late_grab":
            late = body.late_grab
            decided = self.by_version.get(late.decided_at_version)
            if decided is None:  # decided before this screen's first event: say so
                decided = Race(late.decided_at_version, "race", late.seat)
                self.by_version[decided.version] = decided
            decided.grabs.append(Grab(late.seat, late.stamp, "late"))
            decided.grabs.sort(key=lambda g: g.stamp.sequence)
            self.last = decided
            return True
        if race is None:
            return False
        self.by_version[race.version] = race
        self.last = race
        return True


def _contenders(winner: int, stamp: Stamp, tie: jungle_speed_pb2.JungleSpeedTie) -> list[Grab]:
    """The grabs that decided a race: its winner's, or every grab of a tie (JS-4.2a)."""
    if not tie.contenders:
        return [Grab(winner, stamp, "won")]
    return [
        Grab(c.seat, c.stamp, "won" if index == tie.drawn else "lost the draw")
        for index, c in enumerate(tie.contenders)
    ]


def _millis_after(stamp: Stamp, first: Stamp) -> float:
    """Wall-clock milliseconds between two receipts (comparable across server instances)."""
    late = stamp.received_at.seconds * 1e9 + stamp.received_at.nanos
    early = first.received_at.seconds * 1e9 + first.received_at.nanos
    return (late - early) / 1e6


def race_lines(race: Race, names: Names) -> Content:
    """The race panel: what was decided, by whom, and every grab in receive order with its
    sequence number, the version its sender had seen, and how long after the first it came.
    """
    if race.what == "duel":
        head = f"duel won by {names.full(race.seat)} against {names.listed(race.losers)}"
    elif race.what == "arrows":
        head = f"inward-arrows race won by {names.full(race.seat)}"
    elif race.what == "wrong grab":
        head = f"wrong grab by {names.full(race.seat)}: takes every face-up pile and the pot"
    else:
        head = "a race decided before this screen opened"
    parts: list[str | tuple[str, str] | Content] = [
        (f"v{race.version} ", "dim"),
        (head, "bold"),
    ]
    first = race.grabs[0].stamp if race.grabs else None
    for order, grab in enumerate(race.grabs, 1):
        style = {"won": "bold", "late": "italic", "wrong": "italic", "lost the draw": "italic"}[
            grab.outcome
        ]
        line = (
            f"\n{order}. #{grab.stamp.sequence} {names(grab.seat)} {grab.outcome}"
            f", had seen v{grab.stamp.seen_version}"
        )
        if first is not None and grab.stamp is not first:
            line += f", {_millis_after(grab.stamp, first):+.1f} ms"
        parts.append((line, style))
    annulled = [names.listed(race.annulled)] if race.annulled else []
    if race.arrows_annulled:
        annulled.append("the inward-arrows race")
    if annulled:
        parts.append(f"\nannulled: {'; '.join(annulled)}")
    return Content.assemble(*parts)


__all__ = [
    "Names",
    "Races",
    "card_face",
    "card_words",
    "describe",
    "end_reason",
    "race_lines",
    "result_lines",
]
