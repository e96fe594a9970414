"""Words for the Tribes screen: totems, the die, events and round outcomes, from the
contract (``totem.v1.tribes``).

Kept apart from the widgets so that what the screen says is decided in one place. Nothing
here knows the rules: totems, rolls and outcomes are named from the messages the server
sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from totem.v1 import tribes_pb2 as pb
from totem_client.messages import MatchEvent
from totem_client.play.words import Names, describe_common

Totem = pb.TribesTotem

#: Screen colours of the seats' tribes, by seat.
SEAT_STYLES = ("#4cc9f0", "#ff9340", "#4cc764", "#d68cff")
#: The special totems on the board: a short name for a grid cell and a style.
SPECIAL_CELLS: dict[int, tuple[str, str]] = {
    pb.TRIBES_TOTEM_KIND_DOOM: ("DOOM", "bold #ff5f5f"),
    pb.TRIBES_TOTEM_KIND_MINI: ("MINI", "bold #f2d34b"),
}
SPECIAL_WORDS: dict[int, str] = {
    pb.TRIBES_TOTEM_KIND_DOOM: "the Great Totem of Doom",
    pb.TRIBES_TOTEM_KIND_MINI: "the Mini-Totem of Chaos",
}
#: What each face of the Dice of Fate demands (TR-5.2).
DIE_WORDS: dict[int, str] = {
    pb.TRIBES_DIE_FACE_BLANK: "blank: a normal turn",
    pb.TRIBES_DIE_FACE_LARGE: "large totem: the Great Totem of Doom must move",
    pb.TRIBES_DIE_FACE_SMALL: "small totem: the Mini-Totem of Chaos must move",
}
#: The special totem a face demands.
DIE_DEMANDS: dict[int, pb.TribesTotemKind.ValueType] = {
    pb.TRIBES_DIE_FACE_LARGE: pb.TRIBES_TOTEM_KIND_DOOM,
    pb.TRIBES_DIE_FACE_SMALL: pb.TRIBES_TOTEM_KIND_MINI,
}
#: The badges in the order of TR-1.5.
BADGE_ORDER = (
    pb.TRIBES_BADGE_WISDOM,
    pb.TRIBES_BADGE_LOYALTY,
    pb.TRIBES_BADGE_BOLDNESS,
    pb.TRIBES_BADGE_TENACITY,
)


def seat_style(seat: int) -> str:
    return SEAT_STYLES[seat % len(SEAT_STYLES)]


def badge_name(badge: pb.TribesBadge.ValueType) -> str:
    return pb.TribesBadge.Name(badge).removeprefix("TRIBES_BADGE_").lower()


def badges_words(badges: Iterable[pb.TribesBadge.ValueType]) -> str:
    return ", ".join(badge_name(b) for b in badges) or "none"


def spaces_words(spaces: Iterable[int]) -> str:
    return " ".join(str(s) for s in spaces) or "none"


def line_words(line: pb.TribesLine) -> str:
    return "-".join(str(s) for s in line.spaces)


def is_special(totem: Totem) -> bool:
    return totem.kind in SPECIAL_WORDS


def totem_words(
    totem: Totem, names: Names, mover: int | None = None, you: int | None = None
) -> str:
    """A totem in words: "alice's 5", "its 3" (the mover's own), "your 4" (the user's),
    "the Great Totem of Doom"."""
    if is_special(totem):
        return SPECIAL_WORDS[totem.kind]
    if mover is not None and totem.seat == mover:
        return f"its {totem.size}"
    if you is not None and totem.seat == you:
        return f"your {totem.size}"
    return f"{names(totem.seat)}'s {totem.size}"


def cell_words(totem: Totem, names: Names) -> str:
    """A totem in a grid cell: "5 alice" (size first), "DOOM", "MINI"."""
    if is_special(totem):
        return SPECIAL_CELLS[totem.kind][0]
    return f"{totem.size} {names(totem.seat)}"


def cell_style(totem: Totem) -> str:
    if is_special(totem):
        return SPECIAL_CELLS[totem.kind][1]
    return f"bold {seat_style(totem.seat)}"


# ---- events ---------------------------------------------------------------------------------


def describe(event: MatchEvent, names: Names) -> str:
    """One line of the event log: what happened, in words, with its version."""
    kind = event.WhichOneof("event")
    text = describe_common(event, names) or f"event {kind}"
    if kind == "tribes":
        text = _describe_game(event.tribes, names)
    return f"v{event.version}  {text}"


def _by_timer(cause: int) -> str:
    return " (the turn timer moved)" if cause == pb.TRIBES_MOVE_CAUSE_TIMEOUT else ""


def _describe_game(body: pb.TribesEvent, names: Names) -> str:
    kind = body.WhichOneof("event")
    if kind == "created":
        options = body.created.options
        return f"match created ({'extended' if options.extended else 'base'} game)"
    if kind == "started":
        size = body.started.board_size
        text = f"play began on a {size}×{size} board"
        if body.started.salvation_spaces:
            text += f"; Salvation Spaces {spaces_words(body.started.salvation_spaces)}"
        return text
    if kind == "round_started":
        started = body.round_started
        cards = ", ".join(f"{names(s)} {c}" for s, c in enumerate(started.cards))
        order = " → ".join(names(s) for s in started.order)
        return f"round {started.round}: Cards of Truth {cards}; order {order}"
    if kind == "die_rolled":
        rolled = body.die_rolled
        return f"{names(rolled.seat)} rolled {DIE_WORDS.get(rolled.face, 'an unknown face')}"
    if kind == "lifted":
        lifted = body.lifted
        text = (
            f"{names(lifted.seat)} lifted {totem_words(lifted.totem, names, lifted.seat)} "
            f"from space {lifted.space}, "
        )
        if lifted.HasField("uncovered"):
            text += f"uncovering {totem_words(lifted.uncovered, names)}"
        else:
            text += "leaving it empty"
        if lifted.revealed_lines:
            lines = ", ".join(line_words(line) for line in lifted.revealed_lines)
            text += f": it completes the line {lines}"
        return text + _by_timer(lifted.cause)
    if kind == "placed":
        placed = body.placed
        if placed.HasField("origin"):
            origin = f"space {placed.origin}"
        elif is_special(placed.totem):
            origin = "beside the board"
        else:
            origin = "the mat"
        text = (
            f"{names(placed.seat)} moved {totem_words(placed.totem, names, placed.seat)} "
            f"from {origin} to space {placed.destination}"
        )
        if placed.HasField("covered"):
            text += f", covering {totem_words(placed.covered, names)}"
        if placed.badge:
            text += f", naming {badge_name(placed.badge)}"
        return text + _by_timer(placed.cause)
    if kind == "passed":
        return f"{names(body.passed.seat)} had no legal move and passed"
    if kind in ("round_won", "round_drawn"):
        outcome = Outcome.of(body)
        assert outcome is not None
        return outcome.words(names)
    if kind == "penalised":
        penalised = body.penalised
        return (
            f"the referee penalised {names(penalised.seat)} for coaching: its Grand Chief "
            f"leaves the game from round {penalised.from_round}"
        )
    return f"event {kind}"


# ---- round outcomes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How a round ended: won (by whom, how, which badge or the Feathers) or drawn."""

    round: int
    winner: int | None = None
    revealed: bool = False
    lines: tuple[str, ...] = ()
    badge: pb.TribesBadge.ValueType = pb.TRIBES_BADGE_UNSPECIFIED
    feathers: bool = False
    draw: pb.TribesDrawKind.ValueType = pb.TRIBES_DRAW_KIND_UNSPECIFIED

    @classmethod
    def of(cls, body: pb.TribesEvent) -> Outcome | None:
        """The outcome a RoundWon or RoundDrawn event records; None for other events."""
        kind = body.WhichOneof("event")
        if kind == "round_won":
            won = body.round_won
            return cls(
                round=won.round,
                winner=won.winner,
                revealed=won.kind == pb.TRIBES_WIN_KIND_REVEALED_LINE,
                lines=tuple(line_words(line) for line in won.lines),
                badge=won.badge,
                feathers=won.feathers,
            )
        if kind == "round_drawn":
            return cls(round=body.round_drawn.round, draw=body.round_drawn.kind)
        return None

    def words(self, names: Names) -> str:
        if self.winner is None:
            why = (
                "every player passed"
                if self.draw == pb.TRIBES_DRAW_KIND_PASSES
                else "the move limit was reached"
            )
            return f"round {self.round} drawn ({why}): no badge"
        how = "a line revealed by another's lift" if self.revealed else "a line"
        text = f"round {self.round} won by {names(self.winner)} ({how} {', '.join(self.lines)})"
        if self.feathers:
            return text + ": takes the Feathers of Greatness"
        return text + f": takes {badge_name(self.badge)}"


__all__ = [
    "BADGE_ORDER",
    "DIE_DEMANDS",
    "DIE_WORDS",
    "Outcome",
    "badge_name",
    "badges_words",
    "cell_style",
    "cell_words",
    "describe",
    "seat_style",
    "spaces_words",
    "totem_words",
]
