"""The Tribes screen of ``totem play``: the board, the tribes, the table, the moves, the log.

Everything on the table is drawn from the state each watched event carries
(``event.state.tribes``), and the user's moves from its legal actions (``legal``): the
screen never works out the rules itself. The events feed the log and the last round's
outcome (``TribesRoundWon``, ``TribesRoundDrawn``), which no state holds.

Keys: the arrows (or h j k l) move the cursor over the board, tab jumps to the next space
the legal actions offer; 1 to 5 pick the totem of that size from the mat, x the special
totem (extended game); enter (or space) places the picked or lifted totem on the
cursor's space, or, with nothing picked, lifts the cursor's top; esc lets go of the pick;
b chooses the badge a winning move names; s starts a waiting match. A key sends its
command even when the legal actions do not offer it: the server decides, and its refusal
is shown. Spectators get no keys but q.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from totem.v1 import common_pb2
from totem.v1 import tribes_pb2 as pb
from totem_client.games.tribes import BADGES
from totem_client.messages import MatchEvent, MatchState
from totem_client.play.app import GameScreen
from totem_client.play.tribes_text import (
    BADGE_ORDER,
    DIE_DEMANDS,
    DIE_WORDS,
    Outcome,
    badge_name,
    badges_words,
    cell_style,
    cell_words,
    describe,
    seat_style,
    spaces_words,
    totem_words,
)
from totem_client.play.widgets import EventLog, Panel
from totem_client.play.words import Names, result_lines
from totem_client.session import Session

Totem = pb.TribesTotem
Option = pb.TribesPlaceOption

#: How often the turn timer on screen is redrawn, seconds.
TICK = 0.2
#: Width of a board cell inside its lines, in cells: "5 alice" and its marks.
CELL = 9

#: Marks in a board cell's first line, with their style and meaning (the legend).
MARK_TARGET = ("→", "bold #4cc764", "may go here")
MARK_LIFT = ("↑", "bold #4cc9f0", "may be lifted")
MARK_ORIGIN = ("○", "bold", "lifted from")
MARK_REVEALED = ("!", "bold #ff5f5f", "revealed line")
MARK_SALVATION = ("✚", "#4cc764", "Salvation Space")

SOURCE_WORDS: dict[int, str] = {
    pb.TRIBES_PLACE_SOURCE_LIFTED: "lifted",
    pb.TRIBES_PLACE_SOURCE_MAT: "from your mat",
    pb.TRIBES_PLACE_SOURCE_BESIDE: "from beside the board",
}
SPECIAL_KEYS = {pb.TRIBES_TOTEM_KIND_DOOM: "doom", pb.TRIBES_TOTEM_KIND_MINI: "mini"}


def _now_ms() -> float:
    return time.time() * 1000


@dataclass(frozen=True)
class Pick:
    """The totem the user picked to place: one of its mat (``size``) or a special totem
    beside the board (``special``)."""

    size: int = 0
    special: pb.TribesTotemKind.ValueType = pb.TRIBES_TOTEM_KIND_UNSPECIFIED


@dataclass(frozen=True)
class Held:
    """The totem that enter would place: the lifted one, or the pick; with the legal
    actions' option for it, if they offer one."""

    source: int  # a TribesPlaceSource
    totem: Totem
    option: Option | None

    def destinations(self) -> list[int]:
        return list(self.option.destinations) if self.option is not None else []


def _find_option(legal: pb.TribesLegalActions, source: int, totem: Totem) -> Option | None:
    for option in legal.places:
        if option.source != source:
            continue
        if source == pb.TRIBES_PLACE_SOURCE_LIFTED:
            return option
        if source == pb.TRIBES_PLACE_SOURCE_BESIDE and option.totem.kind == totem.kind:
            return option
        if source == pb.TRIBES_PLACE_SOURCE_MAT and option.totem.size == totem.size:
            return option
    return None


def _playing(state: MatchState | None) -> bool:
    return state is not None and state.summary.status == common_pb2.MATCH_STATUS_PLAYING


# ---- widgets -------------------------------------------------------------------------------


class BoardView(Static):
    """The board as a grid: each space's number, its marks, its visible totem; the cursor
    in reverse. A click on a space moves the cursor there."""

    DEFAULT_CSS = """
    BoardView { width: auto; height: auto; min-width: 34; border: round $foreground 40%;
                padding: 0 1; }
    """

    class Clicked(Message):
        """A space of the board was clicked."""

        def __init__(self, space: int) -> None:
            super().__init__()
            self.space = space

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size_drawn = 0

    def on_mount(self) -> None:
        self.border_title = "board"
        self.update("the board appears when play begins")

    def draw(
        self,
        game: pb.TribesState,
        names: Names,
        marks: dict[int, list[tuple[str, str, str]]],
        cursor: int | None,
    ) -> None:
        size = game.board_size
        self.size_drawn = size
        if size == 0:
            return
        self.border_title = f"board {size}×{size}"
        self.border_subtitle = f"cursor: space {cursor}" if cursor is not None else ""
        rule = "─" * CELL
        parts: list[str | tuple[str, str] | Content] = ["┌" + "┬".join([rule] * size) + "┐\n"]
        for row in range(size):
            for line in (0, 1):
                parts.append("│")
                for column in range(size):
                    space = game.spaces[row * size + column]
                    parts.append(self._cell_line(space, line, names, marks, cursor))
                    parts.append("│")
                parts.append("\n")
            if row < size - 1:
                parts.append("├" + "┼".join([rule] * size) + "┤\n")
        parts.append("└" + "┴".join([rule] * size) + "┘")
        used = {mark for space_marks in marks.values() for mark in space_marks}
        if any(space.salvation for space in game.spaces):
            used.add(MARK_SALVATION)
        legend = [
            Content.assemble((glyph, style), f" {meaning}")
            for glyph, style, meaning in (
                MARK_TARGET,
                MARK_LIFT,
                MARK_ORIGIN,
                MARK_REVEALED,
                MARK_SALVATION,
            )
            if (glyph, style, meaning) in used
        ]
        if legend:
            parts.extend(["\n", Content(" · ").join(legend)])
        self.update(Content.assemble(*parts))

    @staticmethod
    def _cell_line(
        space: pb.TribesSpace,
        line: int,
        names: Names,
        marks: dict[int, list[tuple[str, str, str]]],
        cursor: int | None,
    ) -> Content:
        here = space.space == cursor
        base = "reverse" if here else ""
        if line == 0:
            number = f"{space.space}"
            glyphs = [(glyph, style) for glyph, style, _ in marks.get(space.space, [])]
            salvation = MARK_SALVATION[0] if space.salvation else ""
            used = len(number) + sum(len(g) + 1 for g, _ in glyphs) + len(salvation)
            pieces: list[str | tuple[str, str]] = [(number, f"{base} dim" if not here else base)]
            for glyph, style in glyphs:
                pieces.extend([(" ", base), (glyph, f"{style} {base}".strip())])
            pieces.append((" " * max(0, CELL - used), base))
            if salvation:
                pieces.append((salvation, f"{MARK_SALVATION[1]} {base}".strip()))
            return Content.assemble(*pieces)
        if space.HasField("top"):
            text = cell_words(space.top, names)[:CELL].center(CELL)
            return Content.assemble((text, f"{cell_style(space.top)} {base}".strip()))
        return Content.assemble(("·".center(CELL), f"dim {base}".strip()))

    def on_click(self, event: events.Click) -> None:
        """The space under the click: lines of three (two of the cell, one rule), cells
        of CELL + 1 columns (the cell and its rule), after the top and left rules."""
        offset = event.get_content_offset(self)
        size = self.size_drawn
        if offset is None or size == 0:
            return
        row, row_line = divmod(offset.y - 1, 3)
        column, column_cell = divmod(offset.x - 1, CELL + 1)
        if offset.y < 1 or offset.x < 1 or row_line > 1 or column_cell >= CELL:
            return
        if 0 <= row < size and 0 <= column < size:
            self.post_message(self.Clicked(row * size + column))


class TableInfo(Static):
    """The round, whose turn, the order, the die, the totems beside the board, a lifted
    totem waiting, and the last round's outcome."""

    DEFAULT_CSS = """
    TableInfo { height: auto; border: round $foreground 40%; padding: 0 1; }
    """

    def on_mount(self) -> None:
        self.border_title = "table"

    def draw(
        self,
        state: MatchState,
        names: Names,
        you: int | None,
        outcome: Outcome | None,
    ) -> None:
        game = state.tribes
        summary = state.summary
        lines: list[str | tuple[str, str] | Content] = []
        if summary.status == common_pb2.MATCH_STATUS_WAITING:
            lines.append(
                f"waiting for players: {len(summary.players)} of {summary.max_players} seats"
            )
        else:
            if summary.status == common_pb2.MATCH_STATUS_ENDED:
                lines.append(("the match is over", "bold"))
            else:
                moves = f"{game.moves} move{'' if game.moves == 1 else 's'}"
                lines.append(Content.assemble(("round ", "bold"), (f"{game.round}", "bold")))
                lines.append(f" · {moves} made")
            if game.HasField("turn"):
                whose = ("you, " if game.turn == you else "") + names.full(game.turn)
                deadline = game.turn_deadline_ms
                timer = ""
                if deadline:
                    timer = f" · timer {max(0.0, (deadline - _now_ms()) / 1000):.1f} s"
                lines.append(Content.assemble("\nturn: ", (whose, "bold"), timer))
            if game.order:
                order = " → ".join(f"{names(s)} ({game.seats[s].card})" for s in game.order)
                lines.append(f"\norder (Cards of Truth): {order}")
        if game.options.extended and summary.status == common_pb2.MATCH_STATUS_PLAYING:
            lines.append(Content.assemble("\ndie: ", (self._die(game, you), "bold")))
            beside = ", ".join(totem_words(t, names) for t in game.beside) or "nothing"
            lines.append(f"\nbeside the board: {beside}")
        if game.HasField("lifted"):
            lifted = game.lifted
            lines.append(
                Content.assemble(
                    "\nlifted: ",
                    (totem_words(lifted.totem, names, you=you), "bold"),
                    f" from space {lifted.origin}, waiting to be placed",
                )
            )
            for line in lifted.revealed_lines:
                spaces = "-".join(str(s) for s in line.spaces)
                lines.append(
                    (f"\n  it revealed the line {spaces}: it must cover one of its spaces", "bold")
                )
        last = outcome.words(names) if outcome is not None else "none yet"
        lines.append(Content.assemble("\nlast round: ", (last, "bold" if outcome else "")))
        self.update(Content.assemble(*lines))

    @staticmethod
    def _die(game: pb.TribesState, you: int | None) -> str:
        if not game.die:
            return "not rolled"
        words = DIE_WORDS.get(game.die, "an unknown face")
        legal = game.legal
        yours = game.HasField("turn") and game.turn == you
        if yours and game.die in DIE_DEMANDS and not legal.must_move and legal.places:
            words += " (it cannot: a normal turn)"
        return words


class TribesView(Static):
    """Every tribe: name, card, the totems on its mat, its badges, the Feathers, a
    coaching penalty."""

    DEFAULT_CSS = """
    TribesView { height: auto; border: round $foreground 40%; padding: 0 1; }
    """

    def on_mount(self) -> None:
        self.border_title = "tribes"

    def draw(self, state: MatchState, names: Names, you: int | None, feathers: int | None) -> None:
        game = state.tribes
        width = max((len(names(s.seat)) for s in game.seats), default=0)
        rows: list[Content] = []
        for seat in game.seats:
            turn = game.HasField("turn") and game.turn == seat.seat and _playing(state)
            mark = "▶ " if turn else "  "
            name = names(seat.seat).ljust(width)
            mat = " ".join(str(size) for size in seat.mat) or "empty"
            parts: list[str | tuple[str, str]] = [
                mark,
                (name, f"bold {seat_style(seat.seat)}"),
                (" · you" if seat.seat == you else "      "),
                f"  card {seat.card or '-'}  mat {mat:<9}  badges: ",
                (badges_words(seat.badges), "bold"),
            ]
            if seat.seat == feathers:
                parts.append(("  ★ the Feathers of Greatness", "bold #f2d34b"))
            if seat.chief_removed:
                parts.append(("  penalised: Grand Chief out", "italic"))
            elif seat.penalised:
                parts.append(("  penalised: Grand Chief out from the next round", "italic"))
            rows.append(Content.assemble(*parts))
        self.update(Content("\n").join(rows) if rows else Content("no tribes yet"))


class MovesView(Static):
    """What the user may do now, from the legal actions, with the keys for it."""

    DEFAULT_CSS = """
    MovesView { height: auto; padding: 0 1; background: $boost; }
    """


# ---- the screen ----------------------------------------------------------------------------


class TribesScreen(GameScreen):
    """A Tribes table: the board, the table, the tribes, the user's moves, the log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(0, -1)", "move", key_display="←↑↓→ hjkl", priority=True),
        Binding("down", "cursor(0, 1)", show=False, priority=True),
        Binding("left", "cursor(-1, 0)", show=False, priority=True),
        Binding("right", "cursor(1, 0)", show=False, priority=True),
        Binding("k", "cursor(0, -1)", show=False, priority=True),
        Binding("j", "cursor(0, 1)", show=False, priority=True),
        Binding("h", "cursor(-1, 0)", show=False, priority=True),
        Binding("l", "cursor(1, 0)", show=False, priority=True),
        Binding("tab", "next_spot", "next", priority=True),
        Binding("1", "pick(1)", "mat", key_display="1-5", priority=True),
        *(Binding(str(n), f"pick({n})", show=False, priority=True) for n in range(2, 6)),
        Binding("x", "special", "special", priority=True),
        Binding("enter", "play", "lift/place", priority=True),
        Binding("space", "play", show=False, priority=True),
        Binding("escape", "let_go", "let go", priority=True),
        Binding("b", "badge", "badge", priority=True),
        Binding("s", "start", "start", priority=True),
    ]

    DEFAULT_CSS = """
    TribesScreen #top { height: auto; }
    TribesScreen #side { width: 1fr; height: auto; }
    TribesScreen #result { border: heavy $success; }
    """

    #: Actions only a player has.
    PLAYER_ACTIONS = frozenset(
        {"cursor", "next_spot", "pick", "special", "play", "let_go", "badge", "start"}
    )

    def __init__(self, title: str) -> None:
        super().__init__(title)
        self.names = Names()
        self.state: MatchState | None = None
        self.cursor: int | None = None
        self.pick: Pick | None = None
        self.badge: pb.TribesBadge.ValueType = pb.TRIBES_BADGE_UNSPECIFIED
        self.outcome: Outcome | None = None
        self.feathers: int | None = None
        self.board = BoardView(id="board")
        self.table = TableInfo(id="table")
        self.tribes = TribesView(id="tribes")
        self.moves = MovesView(id="moves")
        self.result = Panel("result", id="result", classes="-hidden")
        self.events = EventLog(id="log", max_lines=1000)
        self.keys_for: tuple[str, int] = ("", 0)

    def compose_game(self) -> ComposeResult:
        with Horizontal(id="top"):
            yield self.board
            with Vertical(id="side"):
                yield self.table
                yield self.tribes
        yield self.moves
        yield self.result
        yield self.events

    def on_mount(self) -> None:
        self.moves.update("opening the match…")
        self.set_interval(TICK, self._tick)

    def seated(self, session: Session) -> None:
        super().seated(session)
        self._redraw()

    @property
    def you(self) -> int | None:
        return self.session.seat if self.session is not None else None

    # ---- what the user holds -----------------------------------------------------------

    def held(self) -> Held | None:
        """The totem enter would place: the user's lifted totem, else the pick, else the
        special totem the die demands, if it waits beside the board."""
        state = self.state
        you = self.you
        if state is None or you is None:
            return None
        game = state.tribes
        legal = game.legal
        if game.HasField("lifted") and game.HasField("turn") and game.turn == you:
            source = pb.TRIBES_PLACE_SOURCE_LIFTED
            return Held(source, game.lifted.totem, _find_option(legal, source, game.lifted.totem))
        if self.pick is not None:
            if self.pick.special:
                totem = Totem(kind=self.pick.special)
                source = pb.TRIBES_PLACE_SOURCE_BESIDE
            else:
                totem = Totem(kind=pb.TRIBES_TOTEM_KIND_TRIBE, seat=you, size=self.pick.size)
                source = pb.TRIBES_PLACE_SOURCE_MAT
            return Held(source, totem, _find_option(legal, source, totem))
        if legal.must_move:
            demanded = Totem(kind=legal.must_move)
            option = _find_option(legal, pb.TRIBES_PLACE_SOURCE_BESIDE, demanded)
            if option is not None:
                return Held(pb.TRIBES_PLACE_SOURCE_BESIDE, demanded, option)
        return None

    def offered(self) -> list[int]:
        """The spaces the legal actions offer now: the held totem's destinations, or
        the spaces that may be lifted."""
        held = self.held()
        if held is not None:
            return held.destinations()
        if self.state is None:
            return []
        return list(self.state.tribes.legal.lifts)

    # ---- drawing -----------------------------------------------------------------------

    def show(self, event: MatchEvent) -> None:
        state = event.state if event.HasField("state") else None
        if state is not None:
            self.names.update(state.summary)
        self.events.write_line(describe(event, self.names))
        if event.WhichOneof("event") == "tribes":
            self._note(event.tribes)
        if state is not None and state.WhichOneof("game") == "tribes":
            self.state = state
            self._redraw()

    def _note(self, body: pb.TribesEvent) -> None:
        """Take in what the state does not hold: the last round's outcome, the Feathers;
        and let go of the pick once the user's move is made."""
        outcome = Outcome.of(body)
        if outcome is not None:
            self.outcome = outcome
            if outcome.feathers:
                self.feathers = outcome.winner
        if body.WhichOneof("event") == "placed" and body.placed.seat == self.you:
            self.pick = None

    def _redraw(self) -> None:
        state = self.state
        if state is None:
            self.moves.update(self._moves())
            return
        game = state.tribes
        you = self.you
        keys = (state.summary.variant, state.summary.status)
        if keys != self.keys_for:
            self.keys_for = keys
            self.refresh_bindings()  # x is for the extended game, s for a waiting match
        if game.board_size and (self.cursor is None or self.cursor >= game.board_size**2):
            middle = game.board_size // 2
            self.cursor = middle * game.board_size + middle
        if you is not None and self.badge and self.badge in game.seats[you].badges:
            self.badge = pb.TRIBES_BADGE_UNSPECIFIED
        cursor = self.cursor if self.is_player else None  # spectators have no cursor
        self.board.draw(game, self.names, self._marks(game), cursor)
        self.table.draw(state, self.names, you, self.outcome)
        self.tribes.draw(state, self.names, you, self.feathers)
        self.moves.update(self._moves())
        ended = state.summary.status == common_pb2.MATCH_STATUS_ENDED
        self.result.show_content(self._result() if ended else None)

    def _marks(self, game: pb.TribesState) -> dict[int, list[tuple[str, str, str]]]:
        marks: dict[int, list[tuple[str, str, str]]] = {}
        if game.HasField("lifted"):
            marks.setdefault(game.lifted.origin, []).append(MARK_ORIGIN)
            for line in game.lifted.revealed_lines:
                for space in line.spaces:
                    marks.setdefault(space, []).append(MARK_REVEALED)
        mark = MARK_TARGET if self.held() is not None else MARK_LIFT
        for space in self.offered():
            marks.setdefault(space, []).append(mark)
        return marks

    def _result(self) -> Content:
        assert self.state is not None
        lines = result_lines(self.state.summary, self.names)
        if self.feathers is None:
            return lines
        feathers = f"\n{self.names.full(self.feathers)} took the Feathers of Greatness"
        return Content.assemble(lines, (feathers, "bold"))

    def _moves(self) -> Content:
        state, session = self.state, self.session
        if session is None:
            return Content("opening the match…")
        if not session.is_player:
            return Content("spectating: you see what every spectator sees")
        if state is None:
            return Content("waiting for the match's first event…")
        status = state.summary.status
        if status == common_pb2.MATCH_STATUS_ENDED:
            return Content("the match is over: q quits")
        game = state.tribes
        legal = game.legal
        if status == common_pb2.MATCH_STATUS_WAITING:
            if legal.start:
                return Content.assemble(("s", "bold reverse"), " start with the seats taken")
            return Content("waiting for the other players")
        lines: list[Content] = []
        yours = game.HasField("turn") and game.turn == self.you
        if not yours:
            whose = self.names(game.turn) if game.HasField("turn") else "nobody"
            lines.append(Content(f"your moves: none now ({whose} is moving)"))
        elif legal.must_move:
            demanded = totem_words(Totem(kind=legal.must_move), self.names)
            lines.append(Content.assemble(("your turn: ", "bold"), f"the die demands {demanded}"))
        else:
            lines.append(Content.assemble(("your turn", "bold")))
        held = self.held()
        key = Content.styled("enter", "bold reverse")
        here = self.cursor
        if held is not None:
            what = totem_words(held.totem, self.names, you=self.you)
            where = SOURCE_WORDS.get(held.source, "")
            targets = held.destinations()
            offered = f"may go to {spaces_words(targets)}" if targets else "not offered now"
            line = Content.assemble("  holding ", (what, "bold"), f" {where}: {offered}")
            lines.append(line)
            if legal.forced_cover:
                lines.append(Content("  a revealed line: it must cover one of those spaces"))
            fit = "" if here in targets else " (not offered there: the server decides)"
            hint: list[str | Content] = [key, f" place it on space {here}{fit}"]
            if held.source != pb.TRIBES_PLACE_SOURCE_LIFTED and self.pick is not None:
                hint.extend([" · ", Content.styled("esc", "bold reverse"), " let go"])
            lines.append(Content.assemble("  ", *hint))
        elif yours:
            mat = [o.totem.size for o in legal.places if o.source == pb.TRIBES_PLACE_SOURCE_MAT]
            pieces: list[str | Content] = ["  "]
            if mat:
                pieces.extend(
                    [
                        Content.styled("1-5", "bold reverse"),
                        f" a totem of your mat ({spaces_words(mat)})",
                    ]
                )
            if legal.lifts:
                if mat:
                    pieces.append(" · ")
                pieces.extend([key, f" on a ↑ space lifts its top ({spaces_words(legal.lifts)})"])
            if len(pieces) == 1:
                pieces.append("nothing is offered: pick a totem with 1-5, or lift with enter")
            lines.append(Content.assemble(*pieces))
        else:
            lines.append(Content("  pick a totem with 1-5 to have it ready for your turn"))
        you = self.you
        if you is not None and you < len(game.seats):
            name = badge_name(self.badge) if self.badge else "the first you lack"
            lines.append(
                Content.assemble(
                    "  badge a winning move names: ",
                    (name, "bold"),
                    " (",
                    Content.styled("b", "bold reverse"),
                    " changes it)",
                )
            )
        return Content("\n").join(lines)

    def _tick(self) -> None:
        """Count the turn timer down between events."""
        state = self.state
        if _playing(state) and state is not None and state.tribes.turn_deadline_ms:
            self.table.draw(state, self.names, self.you, self.outcome)

    # ---- keys --------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Moves are for players while the match is played; x for the extended game; s
        while the match waits."""
        if action in self.PLAYER_ACTIONS and not self.is_player:
            return False
        state = self.state
        if action == "start":
            return state is None or state.summary.status == common_pb2.MATCH_STATUS_WAITING
        if action in self.PLAYER_ACTIONS and not _playing(state):
            return False  # nothing to move before the start or after the end
        if action == "special":
            return state is not None and state.tribes.options.extended
        return True

    def on_board_view_clicked(self, message: BoardView.Clicked) -> None:
        if self.is_player:
            self.cursor = message.space
            self._redraw()

    def action_cursor(self, dx: int, dy: int) -> None:
        size = self.state.tribes.board_size if self.state is not None else 0
        if not size or self.cursor is None:
            return
        row, column = divmod(self.cursor, size)
        row = min(size - 1, max(0, row + dy))
        column = min(size - 1, max(0, column + dx))
        self.cursor = row * size + column
        self._redraw()

    def action_next_spot(self) -> None:
        """The cursor to the next space the legal actions offer, after the cursor's."""
        offered = self.offered()
        if not offered:
            self.notice.say("no space is offered now")
            return
        current = self.cursor if self.cursor is not None else -1
        self.cursor = next((s for s in offered if s > current), offered[0])
        self._redraw()

    def action_pick(self, size: int) -> None:
        if self._lifted_by_you():
            self.notice.say("a lifted totem must be placed: it cannot be swapped (TR-2.2a)")
            return
        self.pick = Pick(size=size)
        self.notice.clear()
        self._redraw()

    def action_special(self) -> None:
        """Pick the special totem the die demands; pressed again, the other one."""
        if self._lifted_by_you():
            self.notice.say("a lifted totem must be placed: it cannot be swapped (TR-2.2a)")
            return
        state = self.state
        face = state.tribes.die if state is not None else 0
        first = DIE_DEMANDS.get(face, pb.TRIBES_TOTEM_KIND_DOOM)
        other = (
            pb.TRIBES_TOTEM_KIND_MINI
            if first == pb.TRIBES_TOTEM_KIND_DOOM
            else pb.TRIBES_TOTEM_KIND_DOOM
        )
        special = other if self.pick is not None and self.pick.special == first else first
        self.pick = Pick(special=special)
        self.notice.clear()
        self._redraw()

    def action_let_go(self) -> None:
        self.pick = None
        self._redraw()

    def action_badge(self) -> None:
        """The next badge the user lacks, then none (the first missing, TR-3.4)."""
        state, you = self.state, self.you
        if state is None or you is None or you >= len(state.tribes.seats):
            return
        held = set(state.tribes.seats[you].badges)
        choices: list[pb.TribesBadge.ValueType] = [pb.TRIBES_BADGE_UNSPECIFIED]
        choices.extend(b for b in BADGE_ORDER if b not in held)
        index = choices.index(self.badge) if self.badge in choices else 0
        self.badge = choices[(index + 1) % len(choices)]
        self._redraw()

    def action_play(self) -> None:
        """Place what is held on the cursor's space, or lift the cursor's top."""
        space = self.cursor
        if space is None:
            self.notice.say("the board appears when play begins")
            return
        held = self.held()
        if held is None:
            self.send(f"lift space {space}", lambda session: session.lift(space))
            return
        badge = badge_name(self.badge) if self.badge else None
        assert badge is None or badge in BADGES
        what = totem_words(held.totem, self.names, you=self.you)
        label = f"place {what} on space {space}"
        if held.source == pb.TRIBES_PLACE_SOURCE_LIFTED:
            self.send(label, lambda session: session.place(space, badge=badge))
        elif held.source == pb.TRIBES_PLACE_SOURCE_BESIDE:
            special = SPECIAL_KEYS[held.totem.kind]
            self.send(label, lambda session: session.place(space, special=special, badge=badge))
        else:
            size = held.totem.size
            self.send(label, lambda session: session.place(space, size=size, badge=badge))

    def action_start(self) -> None:
        self.send("start", lambda session: session.start("tribes"))

    def _lifted_by_you(self) -> bool:
        state = self.state
        if state is None:
            return False
        game = state.tribes
        return game.HasField("lifted") and game.HasField("turn") and game.turn == self.you


SCREEN = TribesScreen
