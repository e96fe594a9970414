"""The Village screen of ``totem play``: the families, the board of spells, the round,
the decision awaited, what the user's families owe, the log, the result.

Everything is drawn from the state each watched event carries (``event.state.village``);
what the user may do comes from its legal actions (``legal.decisions``: kind, rule,
deadline, choices and the default the deadline would apply). Each owed decision becomes a
draft (:mod:`totem_client.play.village_drafts`): rows of cells built from its choices,
set to its default, that the keys change. The screen never works out the rules itself.

Keys: tab selects the next decision owed; the arrows (or h j k l) move over the draft's
rows and cells; + or space steps the cell to its next value, - to the previous one (how
many of a kind in a cottage, a spell or not, a cottage among the targets); enter sends the
draft; d sends the decision's default as is; p passes (spells_a); s starts a waiting match.
A key sends its command even when the server may refuse it: the server decides, and its
refusal is shown. Spectators get no keys but q.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content

from totem.v1 import common_pb2
from totem.v1 import village_pb2 as pb
from totem_client.games.village import VillageCommand
from totem_client.messages import MatchEvent, MatchState
from totem_client.play.app import GameScreen
from totem_client.play.village_drafts import Draft, Key, draft_for, key_of
from totem_client.play.village_text import (
    Families,
    command_words,
    counts_words,
    decision_word,
    describe,
    spell_word,
)
from totem_client.play.widgets import EventLog, Panel
from totem_client.play.words import Names, result_lines
from totem_client.session import Session

TICK = 0.2


def _now_ms() -> float:
    return time.time() * 1000


def seconds_left(deadline_ms: int) -> str:
    return f"{max(0.0, (deadline_ms - _now_ms()) / 1000):.1f} s" if deadline_ms else "no deadline"


class VillageScreen(GameScreen):
    """A Village table: the table, the families, the board, the decisions, the log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "next_decision", "next decision", priority=True),
        Binding("up", "move(-1, 0)", "row/cell", key_display="←↑↓→ hjkl", priority=True),
        Binding("down", "move(1, 0)", show=False, priority=True),
        Binding("left", "move(0, -1)", show=False, priority=True),
        Binding("right", "move(0, 1)", show=False, priority=True),
        Binding("k", "move(-1, 0)", show=False, priority=True),
        Binding("j", "move(1, 0)", show=False, priority=True),
        Binding("h", "move(0, -1)", show=False, priority=True),
        Binding("l", "move(0, 1)", show=False, priority=True),
        Binding("plus", "change(1)", "change", key_display="+ - space", priority=True),
        Binding("space", "change(1)", show=False, priority=True),
        Binding("equals_sign", "change(1)", show=False, priority=True),
        Binding("minus", "change(-1)", show=False, priority=True),
        Binding("enter", "send_draft", "send", priority=True),
        Binding("d", "default", "send default", priority=True),
        Binding("p", "pass", "pass", priority=True),
        Binding("s", "start", "start", priority=True),
    ]
    PLAYER_ACTIONS = frozenset(
        {"next_decision", "move", "change", "send_draft", "default", "pass", "start"}
    )

    DEFAULT_CSS = """
    VillageScreen #result { border: heavy $success; }
    VillageScreen #owed { background: $boost; }
    """

    def __init__(self, title: str) -> None:
        super().__init__(title)
        self.names = Names()
        self.families_named = Families()
        self.state: MatchState | None = None
        self.selected = 0
        self.drafts: dict[Key, Draft] = {}
        self.table = Panel("table", id="table")
        self.families = Panel("families", id="families")
        self.board = Panel("spells on the board", id="board")
        self.owed = Panel("you owe", id="owed")
        self.result = Panel("result", id="result", classes="-hidden")
        self.events = EventLog(id="log", max_lines=1000)
        self.keys_for: tuple[int, bool] = (-1, False)

    def compose_game(self) -> ComposeResult:
        yield self.table
        yield self.families
        yield self.board
        yield self.owed
        yield self.result
        yield self.events

    def on_mount(self) -> None:
        self.owed.update("opening the match…")
        self.set_interval(TICK, self._tick)

    def seated(self, session: Session) -> None:
        super().seated(session)
        self._redraw()

    def show(self, event: MatchEvent) -> None:
        state = event.state if event.HasField("state") else None
        if state is not None:
            self.names.update(state.summary)
            if state.WhichOneof("game") == "village":
                self.families_named.update(state.village)
        self.events.write_line(describe(event, self.names, self.families_named))
        if state is not None and state.WhichOneof("game") == "village":
            self.state = state
            self._redraw()

    # ---- the decisions and their drafts ------------------------------------------------

    def decisions(self) -> list[pb.VillageOwedDecision]:
        return list(self.state.village.legal.decisions) if self.state is not None else []

    def current(self) -> pb.VillageOwedDecision | None:
        owed = self.decisions()
        return owed[self.selected % len(owed)] if owed else None

    def draft(self) -> Draft | None:
        """The draft of the selected decision, made from its default when first shown."""
        decision = self.current()
        if decision is None or self.state is None:
            return None
        key = key_of(decision)
        if key not in self.drafts:
            self.drafts[key] = draft_for(decision, self.families_named, self.state.village.board)
        return self.drafts[key]

    def _forget_answered(self) -> None:
        """Drop the drafts of decisions no longer owed, keep the selection in range."""
        owed = {key_of(d) for d in self.decisions()}
        self.drafts = {k: d for k, d in self.drafts.items() if k in owed}
        if owed:
            self.selected %= len(owed)

    # ---- drawing -----------------------------------------------------------------------

    def _redraw(self) -> None:
        state = self.state
        if state is None:
            return
        keys = (state.summary.status, state.village.options.spells_a)
        if keys != self.keys_for:
            self.keys_for = keys
            self.refresh_bindings()  # p is for spells_a, s for a waiting match
        self._forget_answered()
        self._draw_table()
        self.families.update(self._families())
        self.board.update(self._board())
        self.owed.update(self._owed())
        ended = state.summary.status == common_pb2.MATCH_STATUS_ENDED
        self.result.show_content(self._result() if ended else None)

    def _draw_table(self) -> None:
        state = self.state
        assert state is not None
        game, summary = state.village, state.summary
        lines: list[str | tuple[str, str] | Content] = []
        if summary.status == common_pb2.MATCH_STATUS_WAITING:
            lines.append(f"waiting for players: {len(summary.players)} of {summary.max_players}")
        elif summary.status == common_pb2.MATCH_STATUS_ENDED:
            lines.append(("the match is over", "bold"))
        else:
            lines.append((f"round {game.round} · phase {game.phase} {game.phase_name}", "bold"))
            lines.append(f"\nstart family: {self.families_named(game.start_family)}")
        variations = [
            v
            for v in ("village", "spells_a", "spells_b", "feast_a", "feast_b", "totem_a", "totem_b")
            if getattr(game.options, v)
        ]
        lines.append(f"\nvariations: {', '.join(variations) or 'none'}")
        decision = game.decision
        if decision.kind and summary.status == common_pb2.MATCH_STATUS_PLAYING:
            lines.append(
                Content.assemble(
                    "\nawaited: ",
                    (f"{decision_word(decision.kind)} ({decision.rule})", "bold"),
                    f" from {self.families_named.listed(decision.parties)}",
                    f" · deadline in {seconds_left(decision.deadline_ms)}",
                )
            )
        self.table.update(Content.assemble(*lines))

    def _families(self) -> Content:
        assert self.state is not None
        game = self.state.village
        rows: list[Content] = []
        for family in game.families:
            mark = "▶ " if family.family in game.decision.parties else "  "
            owner = self.names(family.seat) + (" · yours" if family.owned else "")
            cottages = " | ".join(counts_words(c) for c in family.cottages) or counts_words(
                family.unhoused
            )
            flags = [
                f
                for f, on in (
                    ("wiped out", family.wiped_out),
                    ("elderless", family.elderless),
                    ("passed", family.passed),
                )
                if on
            ]
            spells = f"{family.spell_count} spells chosen, {family.unplaced_count} unplaced"
            if family.owned and family.spells:
                spells += " (" + ", ".join(spell_word(s) for s in family.spells) + ")"
            rows.append(
                Content.assemble(
                    mark,
                    (f"family {family.family}", "bold"),
                    f" ({owner}) · cottages {cottages} · {family.members} members",
                    f" · birds {family.birds} · pole {family.pole}/6 · {spells}",
                    (f" · {', '.join(flags)}" if flags else ""),
                )
            )
        return Content("\n").join(rows) if rows else Content("no families yet")

    def _board(self) -> Content:
        assert self.state is not None
        board = self.state.village.board
        if not board:
            return Content("no spells on the board")
        fam = self.families_named
        down = [s for s in board if not s.revealed]
        up = [s for s in board if s.revealed]
        lines: list[str] = [f"face down: {len(down)}"]
        for spot in down:
            what = f" ({spell_word(spot.spell)})" if spot.spell else ""
            lines.append(
                f"  #{spot.position} by {fam(spot.owner)} on {fam(spot.family)} "
                f"cottage {spot.cottage}{what}"
            )
        lines.append(f"revealed: {len(up)}")
        for spot in up:
            lines.append(
                f"  #{spot.position} {spell_word(spot.spell)} by {fam(spot.owner)} on "
                f"{fam(spot.family)} cottage {spot.cottage}"
            )
        return Content("\n".join(lines))

    def _owed(self) -> Content:
        session, state = self.session, self.state
        if session is None:
            return Content("opening the match…")
        if not session.is_player:
            return Content("spectating: you see what every spectator sees")
        if state is None:
            return Content("waiting for the match's first event…")
        status = state.summary.status
        if status == common_pb2.MATCH_STATUS_ENDED:
            return Content("the match is over: q quits")
        if status == common_pb2.MATCH_STATUS_WAITING:
            if state.village.legal.start:
                return Content.assemble(("s", "bold reverse"), " start with the seats taken")
            return Content("waiting for the other players")
        owed = self.decisions()
        draft = self.draft()
        if not owed or draft is None:
            return Content("you owe nothing now")
        lines: list[Content] = []
        for decision in owed:
            mark = "▶ " if key_of(decision) == draft.key else "  "
            lines.append(
                Content.assemble(
                    mark,
                    (
                        f"{self.families_named(decision.family)}: {decision_word(decision.kind)}",
                        "bold",
                    ),
                    f" ({decision.rule}) · deadline in {seconds_left(decision.deadline_ms)}",
                )
            )
        lines.extend(Content(f"    {note}") for note in draft.notes)
        for r, row in enumerate(draft.rows):
            cells: list[str | tuple[str, str] | Content] = [f"    {row.label}: "]
            for c, cell in enumerate(row.cells):
                if c:
                    cells.append(" | ")
                here = r == draft.row and c == draft.column
                cells.append((cell.label, "bold reverse" if here else "bold"))
            lines.append(Content.assemble(*cells))
        sends = command_words(draft.command(), self.families_named)
        default = command_words(draft.decision.default, self.families_named)
        lines.append(Content.assemble("  enter sends: ", (sends, "bold")))
        lines.append(Content(f"  d sends the default: {default}"))
        keys: list[str | Content] = [
            Content.styled("↑↓←→", "bold reverse"),
            " row and cell · ",
            Content.styled("+ - space", "bold reverse"),
            " change · ",
            Content.styled("enter", "bold reverse"),
            " send · ",
            Content.styled("d", "bold reverse"),
            " default",
        ]
        if len(owed) > 1:
            keys.extend([" · ", Content.styled("tab", "bold reverse"), " next decision"])
        if draft.decision.kind == pb.VILLAGE_DECISION_KIND_PLACE and draft.decision.place.can_pass:
            keys.extend([" · ", Content.styled("p", "bold reverse"), " pass"])
        lines.append(Content.assemble("  ", *keys))
        return Content("\n").join(lines)

    def _result(self) -> Content:
        assert self.state is not None
        lines = result_lines(self.state.summary, self.names)
        outcome = self.state.village.outcome
        if outcome.HasField("winner"):
            extra = f"\n{self.families_named(outcome.winner)} completed its totem pole first"
        elif outcome.tied:
            extra = "\ntied: " + self.families_named.listed(outcome.tied)
        else:
            extra = ""
        return Content.assemble(lines, (extra, "bold"))

    def _tick(self) -> None:
        state = self.state
        if state is not None and state.summary.status == common_pb2.MATCH_STATUS_PLAYING:
            self._draw_table()
            self.owed.update(self._owed())

    # ---- keys --------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.PLAYER_ACTIONS and not self.is_player:
            return False
        state = self.state
        if action == "start":
            return state is None or state.summary.status == common_pb2.MATCH_STATUS_WAITING
        if action in self.PLAYER_ACTIONS:
            playing = state is not None and state.summary.status == common_pb2.MATCH_STATUS_PLAYING
            if action == "pass":
                return playing and state is not None and state.village.options.spells_a
            return playing
        return True

    def action_next_decision(self) -> None:
        self.selected += 1
        self.owed.update(self._owed())

    def action_move(self, rows: int, columns: int) -> None:
        draft = self.draft()
        if draft is not None:
            draft.move(rows, columns)
            self.owed.update(self._owed())

    def action_change(self, by: int) -> None:
        draft = self.draft()
        if draft is not None:
            draft.change(by)
            self.owed.update(self._owed())

    def _send_command(self, decision: pb.VillageOwedDecision, command: VillageCommand) -> None:
        label = f"{decision_word(decision.kind)} for family {decision.family}"
        self.send(label, lambda session: session.act(command))

    def action_send_draft(self) -> None:
        draft = self.draft()
        if draft is None:
            self.notice.say("you owe no decision now")
            return
        self._send_command(draft.decision, draft.command())

    def action_default(self) -> None:
        decision = self.current()
        if decision is None:
            self.notice.say("you owe no decision now")
            return
        command = VillageCommand()
        command.CopyFrom(decision.default)
        self._send_command(decision, command)

    def action_pass(self) -> None:
        """Place no more spells this round (spells_a): for the selected decision's family,
        or the user's first; the server says if it may not."""
        decision = self.current()
        family = decision.family if decision is not None else self._first_family()
        command = VillageCommand(pass_spells=pb.VillagePassSpells(family=family))
        self.send(f"pass for family {family}", lambda session: session.act(command))

    def _first_family(self) -> int:
        state = self.state
        if state is not None:
            for family in state.village.families:
                if family.owned:
                    return family.family
        return 0

    def action_start(self) -> None:
        self.send("start", lambda session: session.start("village"))


SCREEN = VillageScreen
