"""A Jungle Speed bot that plays by the rules, and a runner for a table of bots.

The bot plays from its watch stream alone: every event carries the seat's state after it,
with the seat's legal actions (``JungleSpeedState.legal``), so it never calls GetMatch
and never re-implements the rules. It grabs the totem when its legal actions offer a grab
(an open duel it is in, or an inward-arrows race: JS-4.2, JS-6.1), and reveals when they
offer a reveal (JS-3.1), each after a random, human-like delay, and not before the
minimum reveal interval (JS-3.4). A race is grabbed for at most once. A command the
server refuses (FAILED_PRECONDITION: the state moved on, e.g. someone was faster) is not
sent again until the match has changed. The bot stops when the match ends.

One exception to "grab only when a grab is offered": a table can go round for ever. When
nobody can reveal, the server turns every face-up pile over, shuffled (PilesRecycled);
but if no card of one seat can ever match a card of another (each seat holds shapes no
other seat holds, and no special card is left), no shuffle opens a race and only a
penalty moves cards between seats. A bot that sees a whole round between two recycles
with no race grabs once, on purpose, a few reveals into the next one: a wrong grab
(JS-5.2), a legal move whose penalty gathers the piles. ``break_stalls=False`` turns
this off.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import click
import grpc

from totem.v1 import common_pb2, jungle_speed_pb2
from totem_client import options
from totem_client.bots.base import StreamBot
from totem_client.bots.command import BotTable
from totem_client.bots.table import Standing, TableResult, bot_names, run_bots
from totem_client.client import Client
from totem_client.errors import TotemError
from totem_client.games.jungle_speed import GAME as JUNGLE_SPEED_GAME
from totem_client.messages import ActResponse, MatchEvent, MatchState
from totem_client.session import Session
from totem_client.streams import RESUMABLE_CODES

__all__ = ["TABLE", "BotStats", "JungleSpeedBot", "Standing", "TableResult", "play_table"]

#: Default delay before grabbing, after seeing a race open, in milliseconds (low, high).
DEFAULT_REACTION_MS = (20.0, 60.0)
#: Default delay before revealing, after seeing it is the bot's turn, in milliseconds.
DEFAULT_REVEAL_DELAY_MS = (10.0, 40.0)

#: How many reveals into a round that would repeat for ever a bot grabs (low, high).
STALL_BREAK_AFTER_REVEALS = (3, 12)

RaceKey = tuple[object, ...]


@dataclass
class BotStats:
    """What one bot did and what happened to it, counted from the match's events."""

    #: Reveals this bot made on its turn.
    reveals: int = 0
    #: Reveals the server made for this seat because its turn timer elapsed (JS-3.4).
    timed_out: int = 0
    #: Grabs this bot sent.
    grabs: int = 0
    duels_won: int = 0
    duels_lost: int = 0
    arrows_won: int = 0
    wrong_grabs: int = 0
    late_grabs: int = 0
    #: Grabs made on purpose to break a round that would repeat for ever.
    stall_breaks: int = 0
    #: Commands the server refused: (the version the bot had seen, command, rule id).
    refusals: list[tuple[int, str, str]] = field(default_factory=list)

    def line(self) -> str:
        """What the bot did, in one line of words (``totem bots --stats``)."""
        return (
            f"{self.reveals} reveals ({self.timed_out} by the timer), {self.grabs} grabs, "
            f"duels {self.duels_won} won / {self.duels_lost} lost, arrows {self.arrows_won} "
            f"won, {self.wrong_grabs} wrong and {self.late_grabs} late grabs, "
            f"{len(self.refusals)} refused commands"
        )


class JungleSpeedBot(StreamBot):
    """Plays one seat of a Jungle Speed match through a player :class:`Session`.

    ``reaction_ms`` and ``reveal_delay_ms`` are (low, high) bounds of uniform random
    delays; ``rng`` makes them reproducible. ``break_stalls``: see the module's text.
    """

    def __init__(
        self,
        session: Session,
        *,
        reaction_ms: tuple[float, float] = DEFAULT_REACTION_MS,
        reveal_delay_ms: tuple[float, float] = DEFAULT_REVEAL_DELAY_MS,
        rng: random.Random | None = None,
        break_stalls: bool = True,
    ) -> None:
        super().__init__(session)
        for low, high in (reaction_ms, reveal_delay_ms):
            if not 0 <= low <= high:
                raise ValueError("delays must satisfy 0 <= low <= high")
        self.reaction_ms = reaction_ms
        self.reveal_delay_ms = reveal_delay_ms
        self.rng = rng or random.Random()
        self.stats = BotStats()
        # Races seen: when the bot will grab for them (monotonic seconds).
        self._race_due: dict[RaceKey, float] = {}
        self._grabbed: set[RaceKey] = set()
        self._reveal_due: float | None = None
        self._reveal_blocked_at: int | None = None
        self.break_stalls = break_stalls
        # Stall detection, from the events: a recycle was seen; a race was decided or a
        # wrong grab made since the last recycle; reveals to wait before breaking a stall.
        self._recycled = False
        self._grab_since_recycle = False
        self._stall_countdown: int | None = None

    async def _step(self, state: MatchState) -> None:
        """Decide from ``state``; wait for the chosen moment unless the match changes first."""
        action, due = self._plan(state, time.monotonic())
        if action is None:
            await self._changed.wait()
            return
        delay = due - time.monotonic()
        if delay > 0:
            await self._changed_within(delay)
        if self._changed.is_set():
            return  # look again: the race may be over, the turn may have passed
        version = state.summary.version
        if action == "grab":
            await self._grab(state)
        elif action == "break stall":
            self._stall_countdown = None
            self.stats.stall_breaks += 1
            self.stats.grabs += 1
            await self._send("grab", version, self.session.grab)
        else:
            await self._reveal(version)

    def _plan(self, state: MatchState, now: float) -> tuple[str | None, float]:
        """The next action ("grab", "break stall" or "reveal") and when to take it, or
        (None, 0)."""
        if state.summary.status != common_pb2.MATCH_STATUS_PLAYING:
            return None, 0.0
        legal = state.jungle_speed.legal
        races = self._races(state.jungle_speed)
        self._race_due = {k: v for k, v in self._race_due.items() if k in races}
        open_races = [k for k in races if k not in self._grabbed]
        for key in open_races:
            if key not in self._race_due:
                self._race_due[key] = now + self._delay(self.reaction_ms)
        if open_races:
            return "grab", min(self._race_due[k] for k in open_races)
        if self._stall_countdown == 0:
            return "break stall", now
        if not legal.reveal:
            self._reveal_due = None
            return None, 0.0
        if self._reveal_blocked_at == state.summary.version:
            return None, 0.0
        if self._reveal_due is None:
            self._reveal_due = now + self._delay(self.reveal_delay_ms)
        # The minimum interval is a wall-clock time (JS-3.4); waits are monotonic.
        not_before = now + max(0.0, legal.reveal_not_before_ms / 1000 - time.time())
        return "reveal", max(self._reveal_due, not_before)

    def _races(self, state: jungle_speed_pb2.JungleSpeedState) -> list[RaceKey]:
        """The races this bot's legal actions offer a grab for, each named by what is
        visible (a race stays the same race while its cards stay up)."""
        tops = {s.seat: s.top.id for s in state.seats if s.HasField("top")}
        races: list[RaceKey] = []
        for option in state.legal.grabs:
            seats = tuple(sorted({self.seat, *option.opponents}))
            races.append((option.resolves, seats, tuple(tops.get(s) for s in seats)))
        return races[:1]  # the server's default target: one grab takes the totem

    def _delay(self, bounds: tuple[float, float]) -> float:
        return self.rng.uniform(*bounds) / 1000

    async def _grab(self, state: MatchState) -> None:
        races = self._races(state.jungle_speed)
        self._grabbed.update(races)
        self.stats.grabs += 1
        error = await self._send("grab", state.summary.version, self.session.grab)
        if error is not None and error.code in RESUMABLE_CODES:
            # The server was away (a restart): the race is still this bot's to grab for.
            self._grabbed.difference_update(races)

    async def _reveal(self, version: int) -> None:
        self._reveal_due = None
        error = await self._send("reveal", version, self.session.reveal)
        if error is not None and error.code == grpc.StatusCode.FAILED_PRECONDITION:
            # Refused by the rules: not again at this version. After a transient failure
            # (the server was away) the same reveal is tried again.
            self._reveal_blocked_at = version

    async def _send(
        self, command: str, version: int, send: Callable[[], Awaitable[ActResponse]]
    ) -> TotemError | None:
        error = await super()._send(command, version, send)
        if error is not None and error.code == grpc.StatusCode.FAILED_PRECONDITION:
            self.stats.refusals.append((version, command, error.rule))
        return error

    def _count(self, event: MatchEvent) -> None:
        if not event.HasField("jungle_speed"):
            return
        body = event.jungle_speed
        kind = body.WhichOneof("event")
        me = self.seat
        if kind == "revealed" and body.revealed.seat == me:
            if body.revealed.cause == jungle_speed_pb2.REVEAL_CAUSE_TIMEOUT:
                self.stats.timed_out += 1
            else:
                self.stats.reveals += 1
        elif kind == "duel_won":
            if body.duel_won.winner == me:
                self.stats.duels_won += 1
            elif me in body.duel_won.losers:
                self.stats.duels_lost += 1
        elif kind == "arrows_won" and body.arrows_won.winner == me:
            self.stats.arrows_won += 1
        elif kind == "wrong_grab" and body.wrong_grab.seat == me:
            self.stats.wrong_grabs += 1
        elif kind == "late_grab" and body.late_grab.seat == me:
            self.stats.late_grabs += 1
        self._watch_for_stalls(kind)

    def _watch_for_stalls(self, kind: str | None) -> None:
        """Notice a round with no race between two recycles (see the module's text)."""
        if kind in ("duel_won", "arrows_won", "wrong_grab"):
            self._grab_since_recycle = True
            self._stall_countdown = None
        elif kind == "piles_recycled":
            if self._recycled and not self._grab_since_recycle and self.break_stalls:
                self._stall_countdown = self.rng.randint(*STALL_BREAK_AFTER_REVEALS)
            self._recycled = True
            self._grab_since_recycle = False
        elif kind in ("revealed", "outward_reveal") and self._stall_countdown:
            self._stall_countdown -= 1


# ---- a table of bots -------------------------------------------------------------------


async def play_table(
    client: Client,
    players: int,
    *,
    variant: str = "ES",
    turn_timeout_ms: int | None = None,
    entropy: bytes = b"",
    names: Sequence[str] | None = None,
    reaction_ms: tuple[float, float] = DEFAULT_REACTION_MS,
    reveal_delay_ms: tuple[float, float] = DEFAULT_REVEAL_DELAY_MS,
    seed: int | None = None,
    on_seated: Callable[[str], None] | None = None,
) -> TableResult[JungleSpeedBot]:
    """Create a match for ``players`` seats, seat one bot in each, play it to the end.

    The match starts by itself when the last bot joins. Each bot adds fresh entropy to
    the seed when it joins. ``seed`` makes the bots' delays reproducible (not the deal).
    """
    if not 2 <= players <= 10:
        raise ValueError("Jungle Speed is for 2 to 10 players")
    names = bot_names(players, names)
    created = await client.create_match(
        variant=variant, max_players=players, turn_timeout_ms=turn_timeout_ms, entropy=entropy
    )
    bots = []
    for i, name in enumerate(names):
        session = await client.join(created.match_id, name, entropy=secrets.token_bytes(16))
        rng = random.Random(seed + i) if seed is not None else None
        bots.append(
            JungleSpeedBot(
                session, reaction_ms=reaction_ms, reveal_delay_ms=reveal_delay_ms, rng=rng
            )
        )
    if on_seated is not None:
        on_seated(created.match_id)
    return await run_bots(created.match_id, bots)


#: ``totem bots jungle-speed``.
TABLE = BotTable(
    help="""Create a Jungle Speed match, seat a bot in every seat, play it to the end; or with
    --join MATCH --token TOKEN ..., play the seats those tokens hold in MATCH.

    Prints the result (placements with names) and the match id, for
    `totem-replay show MATCH`.
    """,
    players=options.players(
        JUNGLE_SPEED_GAME, "Number of bots; the match has exactly this many seats."
    ),
    match_options=[
        click.Option(
            ["--variant"],
            type=click.Choice(["ES", "RU"], case_sensitive=False),
            default="ES",
            show_default=True,
            help="Rules variant (JS-2.1, JS-8.2).",
        ),
        click.Option(
            ["--turn-timeout-ms"],
            type=click.IntRange(min=0),
            default=None,
            help="Turn timer (JS-3.4); the server's default (10000) if not given, 0 turns it off.",
        ),
    ],
    bot_options=[
        options.delay_range(
            "--reaction-ms",
            DEFAULT_REACTION_MS,
            "Random delay before a bot grabs the totem after a race opens.",
        ),
        options.delay_range(
            "--reveal-delay-ms",
            DEFAULT_REVEAL_DELAY_MS,
            "Random delay before a bot reveals on its turn.",
        ),
    ],
    bot=JungleSpeedBot,
    play_table=play_table,
)
