"""The Jungle Speed screen of ``totem play``: the table, the last race, the moves, the log.

Everything on the table is drawn from the state each watched event carries
(``event.state.jungle_speed``), and the user's moves from its legal actions
(``legal``): the screen never works out the rules itself. The events themselves feed the
log and the race panel, whose receive stamps say who grabbed first (JS-5.1).

Keys: space reveals, g grabs (the server's default target: the duel the user is in, else
the inward-arrows race), a grabs for the arrows when a duel and a race are both open
(ES, JS-6.1), s starts a waiting match with the seats taken. A key the footer shows sends
its command even when the legal actions do not offer it: the server decides, and its
refusal is shown. Spectators get no keys but q; RU has no arrows key; s shows only while
the match waits.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal
from textual.content import Content
from textual.widgets import Static

from totem.v1 import common_pb2, jungle_speed_pb2
from totem_client.messages import MatchEvent, MatchState
from totem_client.play.app import GameScreen
from totem_client.play.jungle_speed_text import (
    Names,
    Races,
    card_face,
    describe,
    race_lines,
    result_lines,
)
from totem_client.play.widgets import EventLog, Panel
from totem_client.session import Session

Seat = jungle_speed_pb2.JungleSpeedSeat

#: How often the timers on screen (turn deadline, reveal interval) are redrawn, seconds.
TICK = 0.2

#: The narrowest a seat is drawn, in cells: room for "40 down · 10 up" and its border.
SEAT_WIDTH = 20


def _now_ms() -> float:
    return time.time() * 1000


def _seconds_until(deadline_ms: int) -> str:
    return f"{max(0.0, (deadline_ms - _now_ms()) / 1000):.1f} s"


# ---- widgets -------------------------------------------------------------------------------


class SeatView(Static):
    """One seat: its name, its visible card, its face-down and face-up counts."""

    DEFAULT_CSS = """
    SeatView { height: 5; border: round $foreground 40%; padding: 0 1; }
    SeatView.-you { border-title-style: bold; }
    SeatView.-turn { border: heavy $accent; }
    SeatView.-duel { border: double $error; }
    SeatView.-finished { color: $text-muted; border: dashed $foreground 30%; }
    """

    def __init__(self, seat: int) -> None:
        super().__init__(id=f"seat-{seat}")
        self.seat = seat

    def draw(
        self,
        seat: Seat,
        names: Names,
        *,
        turn: bool,
        you: bool,
        duel: bool,
        place: int | None,
    ) -> None:
        marks = ("▶ " if turn else "") + names(seat.seat) + (" · you" if you else "")
        self.border_title = Content(marks)
        self.border_subtitle = Content(f"seat {seat.seat}")
        self.set_class(turn, "-turn")
        self.set_class(you, "-you")
        self.set_class(duel, "-duel")
        self.set_class(seat.finished, "-finished")
        if seat.finished:
            face = Content("finished" + (f"\nplace {place}" if place else "\n"))
        elif seat.HasField("top"):
            face = card_face(seat.top)
        else:
            face = Content("no card\n")
        counts = f"\n{seat.face_down_count} down · {seat.face_up_count} up"
        self.update(Content.assemble(face, counts))


class TableInfo(Static):
    """The middle of the table: whose turn, the pot, open duels and races, the modes."""

    DEFAULT_CSS = """
    TableInfo { width: 1fr; height: auto; min-height: 6; border: round $foreground 40%;
                padding: 0 1; }
    """

    def on_mount(self) -> None:
        self.border_title = "table"

    def draw(self, state: MatchState, names: Names, you: int | None) -> None:
        game = state.jungle_speed
        summary = state.summary
        lines: list[str | tuple[str, str] | Content] = []
        if summary.status == common_pb2.MATCH_STATUS_WAITING:
            lines.append(
                f"waiting for players: {len(summary.players)} of {summary.max_players} seats"
            )
        elif summary.status == common_pb2.MATCH_STATUS_ENDED:
            lines.append(("the match is over", "bold"))
        elif game.HasField("turn"):
            whose = ("you, " if game.turn == you else "") + names.full(game.turn)
            deadline = game.turn_deadline_ms
            timer = f" · timer {_seconds_until(deadline)}" if deadline else ""
            lines.append(Content.assemble("turn: ", (whose, "bold"), timer))
        else:
            lines.append("turn: nobody can reveal")
        pot = len(game.pot)
        lines.append(f"\npot: {pot} card{'' if pot == 1 else 's'}")
        duels = [" ⚔ ".join(names(s) for s in duel.seats) for duel in game.open_duels]
        lines.append(Content.assemble("\nopen duels: ", (" | ".join(duels) or "none", "bold")))
        if game.arrows_race_open:
            lines.append(("\ninward-arrows race open: the first grab wins it", "bold"))
        if game.coloured_mode:
            lines.append(("\ncoloured mode: colours duel, not shapes", "bold"))
        if game.HasField("outward_waiting"):
            lines.append(
                f"\noutward arrows of {names(game.outward_waiting)} waiting: "
                "everyone reveals after the next grab"
            )
        self.update(Content.assemble(*lines))


class MovesView(Static):
    """What the user may do now, from the legal actions, with the key for each."""

    DEFAULT_CSS = """
    MovesView { height: auto; padding: 0 1; background: $boost; }
    """

    def draw(self, state: MatchState | None, session: Session | None, names: Names) -> None:
        self.update(self._moves(state, session, names))

    @staticmethod
    def _moves(state: MatchState | None, session: Session | None, names: Names) -> Content:
        if session is None or state is None:
            return Content("opening the match…")
        if not session.is_player:
            return Content("spectating: you see what every spectator sees")
        status = state.summary.status
        if status == common_pb2.MATCH_STATUS_ENDED:
            return Content("the match is over: q quits")
        legal = state.jungle_speed.legal
        moves: list[Content] = []
        if legal.start:
            moves.append(Content.assemble(("s", "bold reverse"), " start with the seats taken"))
        if legal.reveal:
            wait = ""
            if legal.reveal_not_before_ms > _now_ms():
                wait = f" in {_seconds_until(legal.reveal_not_before_ms)}"
            moves.append(Content.assemble(("space", "bold reverse"), f" reveal{wait}"))
        for option in legal.grabs:
            key = "a" if option.target == jungle_speed_pb2.GRAB_TARGET_ARROWS else "g"
            if option.resolves == jungle_speed_pb2.GRAB_RESOLUTION_DUEL:
                wins = f"wins the duel against {names.listed(option.opponents)}"
            else:
                wins = "wins the inward-arrows race"
            moves.append(Content.assemble((key, "bold reverse"), f" grab: {wins}"))
        if moves:
            return Content.assemble("your moves: ", Content(" · ").join(moves))
        if status == common_pb2.MATCH_STATUS_WAITING:
            return Content("waiting for the other players")
        game = state.jungle_speed
        whose = f"{names(game.turn)} reveals next" if game.HasField("turn") else "wait"
        return Content(f"your moves: none now ({whose}; no grab would win a race)")


# ---- the screen ----------------------------------------------------------------------------


class JungleSpeedScreen(GameScreen):
    """A Jungle Speed table: seats, the middle, the last race, the user's moves, the log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "reveal", "reveal", priority=True),
        Binding("g", "grab", "grab", priority=True),
        Binding("a", "grab_arrows", "grab: arrows", priority=True),
        Binding("s", "start", "start", priority=True),
    ]

    DEFAULT_CSS = """
    JungleSpeedScreen #seats {
        layout: grid; grid-size: 5; grid-rows: 5; grid-gutter: 0 1; height: auto;
    }
    JungleSpeedScreen #middle { height: auto; }
    JungleSpeedScreen #race { width: 1fr; min-height: 6; }
    JungleSpeedScreen #result { border: heavy $success; }
    """

    def __init__(self, title: str) -> None:
        super().__init__(title)
        self.names = Names()
        self.races = Races()
        self.places: dict[int, int] = {}
        self.state: MatchState | None = None
        self.seat_views: list[SeatView] = []
        self.seats = Container(id="seats")
        self.table = TableInfo(id="table")
        self.race = Panel("last race", id="race")
        self.moves = MovesView(id="moves")
        self.result = Panel("result", id="result", classes="-hidden")
        self.events = EventLog(id="log", max_lines=1000)
        self.keys_for: tuple[str, int] = ("", 0)

    def compose_game(self) -> ComposeResult:
        yield self.seats
        with Horizontal(id="middle"):
            yield self.table
            yield self.race
        yield self.moves
        yield self.result
        yield self.events

    def on_mount(self) -> None:
        self.race.update("no race yet")
        self.moves.draw(None, None, self.names)
        self.set_interval(TICK, self._tick)

    def seated(self, session: Session) -> None:
        super().seated(session)
        self.moves.draw(self.state, session, self.names)

    # ---- drawing ----

    def show(self, event: MatchEvent) -> None:
        state = event.state if event.HasField("state") else None
        if state is not None:
            self.names.update(state.summary)
        self.events.write_line(describe(event, self.names))
        if self.races.note(event) and self.races.last is not None:
            self.race.update(race_lines(self.races.last, self.names))
        body = event.jungle_speed if event.WhichOneof("event") == "jungle_speed" else None
        if body is not None and body.WhichOneof("event") == "player_finished":
            self.places[body.player_finished.seat] = body.player_finished.place
        if state is not None and state.WhichOneof("game") == "jungle_speed":
            self.state = state
            self._draw(state)

    def _draw(self, state: MatchState) -> None:
        you = self.session.seat if self.session is not None else None
        if (state.summary.variant, state.summary.status) != self.keys_for:
            self.keys_for = (state.summary.variant, state.summary.status)
            self.refresh_bindings()  # the arrows key is for ES only, start for a waiting match
        self._draw_seats(state, you)
        self.table.draw(state, self.names, you)
        self.moves.draw(state, self.session, self.names)
        ended = state.summary.status == common_pb2.MATCH_STATUS_ENDED
        result = result_lines(state.summary, self.names) if ended else None
        self.result.show_content(result)

    def _draw_seats(self, state: MatchState, you: int | None) -> None:
        game = state.jungle_speed
        playing = state.summary.status == common_pb2.MATCH_STATUS_PLAYING
        while len(self.seat_views) < len(game.seats):
            view = SeatView(len(self.seat_views))
            self.seat_views.append(view)
            self.seats.mount(view)
        self._fit_seats()
        dueling = {s for duel in game.open_duels for s in duel.seats}
        for seat in game.seats:
            self.seat_views[seat.seat].draw(
                seat,
                self.names,
                turn=playing and game.HasField("turn") and game.turn == seat.seat,
                you=seat.seat == you,
                duel=seat.seat in dueling,
                place=self.places.get(seat.seat),
            )

    def on_resize(self) -> None:
        self._fit_seats()

    def _fit_seats(self) -> None:
        """As many seats in a row as fit the terminal's width, each at least SEAT_WIDTH."""
        fit = (self.size.width + 1) // (SEAT_WIDTH + 1)
        self.seats.styles.grid_size_columns = max(1, min(len(self.seat_views), fit))

    def _tick(self) -> None:
        """Count the timers down between events."""
        state = self.state
        if state is not None and state.summary.status == common_pb2.MATCH_STATUS_PLAYING:
            you = self.session.seat if self.session is not None else None
            self.table.draw(state, self.names, you)
            self.moves.draw(state, self.session, self.names)

    # ---- keys ----

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Moves are for players; the arrows key only where the grabber may choose (ES)."""
        if action in ("reveal", "grab", "grab_arrows", "start") and not self.is_player:
            return False
        if action == "start":
            state = self.state
            return state is None or state.summary.status == common_pb2.MATCH_STATUS_WAITING
        return not (action == "grab_arrows" and self.keys_for[0] == "RU")

    def action_reveal(self) -> None:
        self.send("reveal", lambda session: session.reveal())

    def action_grab(self) -> None:
        self.send("grab", lambda session: session.grab())

    def action_grab_arrows(self) -> None:
        self.send("grab for the arrows", lambda session: session.grab("arrows"))

    def action_start(self) -> None:
        self.send("start", lambda session: session.start())


SCREEN = JungleSpeedScreen
