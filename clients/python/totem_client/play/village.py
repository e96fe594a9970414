"""The Village screen of ``totem play``: the families, the board of spells, the round,
the decision awaited, what the user's families owe, the log, the result.

Everything is drawn from the state each watched event carries (``event.state.village``);
what the user may do comes from its legal actions (``legal.decisions``: kind, rule,
deadline, choices and the default the deadline would apply). The screen never works
out the rules itself.

Keys: d sends the default of the decision selected (sendable as is); tab selects the
next decision owed; n answers a reveal by keeping every spell secret, a choice of spells
by choosing none; s starts a waiting match. A key sends its command even when nothing
is owed: the server decides, and its refusal is shown. Spectators get no keys but q.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content

from totem.v1 import common_pb2
from totem.v1 import village_pb2 as pb
from totem_client.client import MatchEvent, MatchState, Session, VillageCommand
from totem_client.play.app import GameScreen
from totem_client.play.widgets import EventLog, Panel
from totem_client.play.words import Names, describe_common, result_lines

TICK = 0.2
KIND_FIELDS = ("girl", "boy", "young_woman", "young_man", "mature_woman", "mature_man", "elder")
KIND_SHORT = {"girl": "g", "boy": "b", "young_woman": "yw", "young_man": "ym"}
KIND_SHORT |= {"mature_woman": "mw", "mature_man": "mm", "elder": "E"}


def _now_ms() -> float:
    return time.time() * 1000


def enum_word(enum: object, value: int, prefix: str) -> str:
    name: str = enum.Name(value)  # type: ignore[attr-defined]
    return name.removeprefix(prefix).lower().replace("_", " ")


def kind_word(kind: int) -> str:
    return enum_word(pb.VillageKind, kind, "VILLAGE_KIND_")


def spell_word(spell: int) -> str:
    return enum_word(pb.VillageSpell, spell, "VILLAGE_SPELL_") if spell else "face down"


def decision_word(kind: int) -> str:
    return enum_word(pb.VillageDecisionKind, kind, "VILLAGE_DECISION_KIND_")


def counts_words(counts: pb.VillageCounts) -> str:
    parts = [f"{getattr(counts, k)}{KIND_SHORT[k]}" for k in KIND_FIELDS if getattr(counts, k)]
    return " ".join(parts) or "empty"


def seconds_left(deadline_ms: int) -> str:
    return f"{max(0.0, (deadline_ms - _now_ms()) / 1000):.1f} s" if deadline_ms else "no deadline"


def describe(event: MatchEvent, names: Names) -> str:
    """The event in words, for the log."""
    common = describe_common(event, names)
    body = f"v{event.version} "
    if common is not None:
        return body + common
    if event.WhichOneof("event") != "village":
        return body + (event.WhichOneof("event") or "event")
    village = event.village
    kind = village.WhichOneof("event") or "event"
    detail = getattr(village, kind)
    fam = getattr(detail, "family", None)
    who = f"family {fam}: " if isinstance(fam, int) and kind != "round_began" else ""
    if kind == "round_began":
        return body + f"round {detail.round} began, start family {detail.start_family}"
    if kind == "phase_began":
        return body + f"phase {detail.phase} began"
    if kind == "decision_awaited":
        return body + "a decision is awaited"
    if kind == "totem_completed":
        winner = f"family {detail.winner} wins" if detail.HasField("winner") else "a tie"
        return body + f"a totem pole is complete: {winner}"
    return body + who + kind.replace("_", " ")


class VillageScreen(GameScreen):
    """A Village table: the table, the families, the board, the decisions, the log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "default", "send default", priority=True),
        Binding("tab", "next_decision", "next decision", priority=True),
        Binding("n", "none", "none/secret", priority=True),
        Binding("s", "start", "start", priority=True),
    ]
    PLAYER_ACTIONS = frozenset({"default", "next_decision", "none", "start"})

    DEFAULT_CSS = """
    VillageScreen #result { border: heavy $success; }
    VillageScreen #owed { background: $boost; }
    """

    def __init__(self, title: str) -> None:
        super().__init__(title)
        self.names = Names()
        self.state: MatchState | None = None
        self.selected = 0
        self.table = Panel("table", id="table")
        self.families = Panel("families", id="families")
        self.board = Panel("spells on the board", id="board")
        self.owed = Panel("you owe", id="owed")
        self.result = Panel("result", id="result", classes="-hidden")
        self.events = EventLog(id="log", max_lines=1000)
        self.status_for = -1

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
        self.events.write_line(describe(event, self.names))
        if state is not None and state.WhichOneof("game") == "village":
            self.state = state
            self._redraw()

    # ---- drawing -----------------------------------------------------------------------

    def decisions(self) -> list[pb.VillageOwedDecision]:
        return list(self.state.village.legal.decisions) if self.state is not None else []

    def current(self) -> pb.VillageOwedDecision | None:
        owed = self.decisions()
        return owed[self.selected % len(owed)] if owed else None

    def _redraw(self) -> None:
        state = self.state
        if state is None:
            return
        if state.summary.status != self.status_for:
            self.status_for = state.summary.status
            self.refresh_bindings()
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
            lines.append(f"\nstart family: {game.start_family}")
        variations = [
            v
            for v in ("village", "spells_a", "spells_b", "feast_a", "feast_b", "totem_a", "totem_b")
            if getattr(game.options, v)
        ]
        lines.append(f"\nvariations: {', '.join(variations) or 'none'}")
        decision = game.decision
        if decision.kind and summary.status == common_pb2.MATCH_STATUS_PLAYING:
            parties = ", ".join(str(f) for f in decision.parties) or "nobody"
            lines.append(
                Content.assemble(
                    "\nawaited: ",
                    (f"{decision_word(decision.kind)} ({decision.rule})", "bold"),
                    f" from families {parties} · deadline in {seconds_left(decision.deadline_ms)}",
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
        down = [s for s in board if not s.revealed]
        up = [s for s in board if s.revealed]
        lines: list[str] = [f"face down: {len(down)}"]
        for spot in down:
            what = f" ({spell_word(spot.spell)})" if spot.spell else ""
            lines.append(
                f"  #{spot.position} by family {spot.owner} on family {spot.family} "
                f"cottage {spot.cottage}{what}"
            )
        lines.append(f"revealed: {len(up)}")
        for spot in up:
            lines.append(
                f"  #{spot.position} {spell_word(spot.spell)} by family {spot.owner} on "
                f"family {spot.family} cottage {spot.cottage}"
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
        if not owed:
            return Content("you owe nothing now")
        lines: list[Content] = []
        current = self.current()
        for decision in owed:
            mark = "▶ " if decision is current else "  "
            lines.append(
                Content.assemble(
                    mark,
                    (f"family {decision.family}: {decision_word(decision.kind)}", "bold"),
                    f" ({decision.rule}) · deadline in {seconds_left(decision.deadline_ms)}",
                )
            )
            lines.append(Content("    choices: " + self._choices(decision)))
            lines.append(Content("    default: " + self._command(decision.default)))
        lines.append(
            Content.assemble(
                Content.styled("d", "bold reverse"),
                " sends the default of ▶ · ",
                Content.styled("tab", "bold reverse"),
                " next · ",
                Content.styled("n", "bold reverse"),
                " keep secret / choose no spell",
            )
        )
        return Content("\n").join(lines)

    @staticmethod
    def _choices(decision: pb.VillageOwedDecision) -> str:
        which = decision.WhichOneof("choices")
        if which == "arrange":
            a = decision.arrange
            return f"house {a.house} of {counts_words(a.members)}, {a.capacity} a cottage"
        if which == "choose":
            c = decision.choose
            return f"up to {c.max_spells} spells ({c.pieces} free, {c.birds} birds to sacrifice)"
        if which == "place":
            p = decision.place
            hand = ", ".join(spell_word(s) for s in p.hand)
            return f"hand {hand} on {len(p.targets)} cottages" + (" or pass" if p.can_pass else "")
        if which == "reveal":
            r = decision.reveal
            return f"phase {r.phase}: positions {' '.join(map(str, r.revealable)) or 'none'}"
        if which == "victims":
            v = decision.victims
            people = ", ".join(
                f"{c.count} {kind_word(c.kind)} in cottage {c.cottage}" for c in v.candidates
            )
            return f"{v.count} of family {v.starving}: {people}"
        if which == "youth":
            y = decision.youth
            return f"per cottage at most {list(y.needs)}, at least {list(y.minimum)}"
        return "none"

    @staticmethod
    def _command(command: VillageCommand) -> str:
        which = command.WhichOneof("command")
        if which is None:
            return "none"
        body = getattr(command, which)
        if which == "arrange":
            return "arrange " + " | ".join(counts_words(c) for c in body.cottages)
        if which == "choose_spells":
            spells = ", ".join(spell_word(s) for s in body.spells) or "no spell"
            return f"choose {spells}" + (f", {body.birds} birds" if body.birds else "")
        if which == "place_spell":
            return (
                f"place {spell_word(body.spell)} on family {body.target_family} "
                f"cottage {body.cottage}"
            )
        if which == "reveal_spells":
            return "reveal " + (" ".join(map(str, body.positions)) or "nothing")
        if which in ("choose_victims", "spare_from_age"):
            people = body.victims if which == "choose_victims" else body.spared
            named = ", ".join(f"{kind_word(p.kind)} of cottage {p.cottage}" for p in people)
            return which.replace("_", " ") + ": " + (named or "nobody")
        return which.replace("_", " ")

    def _result(self) -> Content:
        assert self.state is not None
        lines = result_lines(self.state.summary, self.names)
        outcome = self.state.village.outcome
        if outcome.HasField("winner"):
            extra = f"\nfamily {outcome.winner} completed its totem pole first"
        elif outcome.tied:
            extra = "\ntied families: " + ", ".join(map(str, outcome.tied))
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
            return state is not None and state.summary.status == common_pb2.MATCH_STATUS_PLAYING
        return True

    def action_default(self) -> None:
        decision = self.current()
        if decision is None:
            self.notice.say("you owe no decision now")
            return
        command = VillageCommand()
        command.CopyFrom(decision.default)
        label = f"{decision_word(decision.kind)} for family {decision.family}"
        self.send(label, lambda session: session.act(command))

    def action_next_decision(self) -> None:
        self.selected += 1
        self.owed.update(self._owed())

    def action_none(self) -> None:
        """Keep every spell secret (a reveal) or choose no spell (a choice); for another
        decision, or none, a reveal of nothing is sent and the server says why not."""
        decision = self.current()
        family = decision.family if decision is not None else self._first_family()
        if decision is not None and decision.kind == pb.VILLAGE_DECISION_KIND_CHOOSE:
            choose = pb.VillageChooseSpells(family=family)
            self.send("choose no spell", lambda s: s.act(VillageCommand(choose_spells=choose)))
            return
        reveal = pb.VillageRevealSpells(family=family)
        self.send("keep spells secret", lambda s: s.act(VillageCommand(reveal_spells=reveal)))

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
