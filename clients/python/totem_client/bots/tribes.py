"""A Tribes bot that plays legal moves, and a runner for a table of bots.

The bot plays from its watch stream alone: every event carries the seat's state after it,
with the seat's legal actions (``TribesState.legal``): the spaces it may lift, and each
totem it may place with its destinations, already narrowed by the die (TR-5.2) and by a
revealed line (TR-3.2). The bot never re-implements those rules; it only chooses among
what it is offered, by looking at the visible tops:

1. a move that completes a line of its own wins (then it names a badge it lacks);
2. otherwise a move that blocks an opponent's line in the making: it puts a totem (or
   the Great Totem of Doom) on the third space of a line whose other two an opponent
   holds;
3. otherwise any move, chosen at random, a move from the mat a little preferred to a lift
   (a lift may uncover an opponent's line: nobody sees under a stack, TR-6.1).

A lift's destinations are offered only once the totem is lifted, so a lift is judged by
the spaces its totem could plausibly reach; the place that follows is chosen among the
destinations then offered. A command the server refuses (the turn timer was faster, say)
is not sent again until the match has changed. The bot stops when the match ends.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

import click
import grpc

from totem.v1 import common_pb2
from totem.v1 import tribes_pb2 as pb
from totem_client import options
from totem_client.bots.base import StreamBot
from totem_client.bots.command import BotTable
from totem_client.bots.table import OnSeated, TableResult, bot_names, run_bots
from totem_client.client import Client
from totem_client.games.tribes import BADGES
from totem_client.games.tribes import GAME as TRIBES_GAME
from totem_client.messages import MatchEvent, MatchState
from totem_client.session import Session

#: Default delay before moving, after seeing it is the bot's turn, in milliseconds.
DEFAULT_THINK_MS = (5.0, 20.0)

#: Scores of a move (see the module's text).
WIN = 1_000
BLOCK = 10
LIFT = -1

BADGE_NAMES = {value: name for name, value in BADGES.items()}

#: A space's visible top, as the bot reads it: a seat, SPECIAL (breaks every line), or
#: None (empty). UNKNOWN: what a lift will uncover.
SPECIAL = -1
UNKNOWN = -2
Top = int | None


@dataclass(frozen=True)
class Move:
    """One thing to send: a lift of ``space``, or a place of ``option``'s totem."""

    kind: str  # "lift" or "place"
    space: int = 0
    option: pb.TribesPlaceOption | None = None
    destination: int = 0
    score: float = 0.0


def lines(size: int) -> list[tuple[int, int, int]]:
    """Every three consecutive spaces in a row, a column or a diagonal (TR-3.1): board
    geometry the bot needs to look for lines, not a rule it enforces."""
    found = []
    for row in range(size):
        for col in range(size):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(row + k * dr, col + k * dc) for k in range(3)]
                if all(0 <= r < size and 0 <= c < size for r, c in cells):
                    a, b, c = (r * size + c for r, c in cells)
                    found.append((a, b, c))
    return found


def tops(state: pb.TribesState) -> list[Top]:
    found: list[Top] = []
    for space in state.spaces:
        if not space.HasField("top"):
            found.append(None)
        elif space.top.kind == pb.TRIBES_TOTEM_KIND_TRIBE:
            found.append(space.top.seat)
        else:
            found.append(SPECIAL)
    return found


def _sizes(state: pb.TribesState) -> list[int]:
    """The visible top's size of each space: 0 when empty, 6 for the Doom, 7 for the Mini
    (which nothing covers)."""
    sizes = []
    for space in state.spaces:
        if not space.HasField("top"):
            sizes.append(0)
        elif space.top.kind == pb.TRIBES_TOTEM_KIND_TRIBE:
            sizes.append(space.top.size)
        else:
            sizes.append(6 if space.top.kind == pb.TRIBES_TOTEM_KIND_DOOM else 7)
    return sizes


def has_line(board: Sequence[Top], seat: int, size: int) -> bool:
    return any(all(board[s] == seat for s in line) for line in lines(size))


def threats(board: Sequence[Top], seat: int, size: int) -> int:
    """Lines an opponent of ``seat`` holds two spaces of, the third empty or topped by
    another tribe's totem: one move from a win."""
    count = 0
    for line in lines(size):
        owners = [board[s] for s in line]
        for rival in {o for o in owners if o is not None and o >= 0 and o != seat}:
            if owners.count(rival) == 2:
                third = next(o for o in owners if o != rival)
                if third is None or (third >= 0 and third != rival):
                    count += 1
    return count


def score(
    state: pb.TribesState,
    seat: int,
    piece: pb.TribesTotem,
    origin: int | None,
    destination: int,
) -> float:
    """How good placing ``piece`` on ``destination`` looks, lifted from ``origin`` (None:
    from off the board, or lifted already, the origin then showing what it uncovered)."""
    size = state.board_size
    board = tops(state)
    before = threats(board, seat, size)
    after_board = list(board)
    if origin is not None:
        after_board[origin] = UNKNOWN
    mine = piece.kind == pb.TRIBES_TOTEM_KIND_TRIBE and piece.seat == seat
    after_board[destination] = seat if mine else SPECIAL
    value = 0.0
    if mine and has_line(after_board, seat, size):
        value += WIN
    value += BLOCK * max(0, before - threats(after_board, seat, size))
    if origin is not None:
        value += LIFT
    return value


def choose(state: pb.TribesState, seat: int, rng: random.Random) -> Move | None:
    """The bot's move in this state, from its legal actions; None if it has none."""
    legal = state.legal
    candidates: list[Move] = []
    for option in legal.places:
        for destination in option.destinations:
            value = score(state, seat, option.totem, None, destination)
            candidates.append(Move("place", option=option, destination=destination, score=value))
    sizes = _sizes(state)
    for space in legal.lifts:
        piece = state.spaces[space].top
        reach = 6 if piece.kind == pb.TRIBES_TOTEM_KIND_DOOM else piece.size
        # Where the lifted totem could plausibly go: judged only, never sent as is.
        plausible = [d for d in range(len(sizes)) if d != space and sizes[d] < reach]
        best = max((score(state, seat, piece, space, d) for d in plausible), default=LIFT)
        candidates.append(Move("lift", space=space, score=best))
    if not candidates:
        return None
    top = max(c.score for c in candidates)
    return rng.choice([c for c in candidates if c.score == top])


@dataclass
class TribesBotStats:
    """What one bot did and what happened to it, counted from the match's events."""

    #: Moves completed by this bot's own commands.
    moves: int = 0
    #: Lifts this bot made.
    lifts: int = 0
    #: Moves the turn timer completed for this seat.
    timed_out: int = 0
    #: Turns this seat passed (no legal move, TR-2.5).
    passes: int = 0
    rounds_won: int = 0
    feathers: bool = False
    #: Commands the server refused: (the version the bot had seen, command, rule id).
    refusals: list[tuple[int, str, str]] = field(default_factory=list)

    def line(self) -> str:
        """What the bot did, in one line of words (``totem bots --stats``)."""
        return (
            f"{self.moves} moves ({self.lifts} lifts), {self.timed_out} by the timer, "
            f"{self.passes} passes, {self.rounds_won} rounds won"
            + (", the Feathers" if self.feathers else "")
            + f", {len(self.refusals)} refused commands"
        )


class TribesBot(StreamBot):
    """Plays one seat of a Tribes match through a player :class:`Session`.

    ``think_ms`` is (low, high) bounds of a uniform random delay before each command;
    ``rng`` makes the delays and the choices among equal moves reproducible.
    """

    def __init__(
        self,
        session: Session,
        *,
        think_ms: tuple[float, float] = DEFAULT_THINK_MS,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(session)
        low, high = think_ms
        if not 0 <= low <= high:
            raise ValueError("delays must satisfy 0 <= low <= high")
        self.think_ms = think_ms
        self.rng = rng or random.Random()
        self.stats = TribesBotStats()
        self._blocked_at: int | None = None

    async def _step(self, state: MatchState) -> None:
        version = state.summary.version
        move = None
        if state.summary.status == common_pb2.MATCH_STATUS_PLAYING and version != self._blocked_at:
            move = choose(state.tribes, self.seat, self.rng)
        if move is None:
            await self._changed.wait()
            return
        delay = self.rng.uniform(*self.think_ms) / 1000
        await self._changed_within(delay)
        if self._moved_on(state):
            return  # look again: the timer may have moved, or the match ended
        await self._play(state, move)

    def _moved_on(self, seen: MatchState) -> bool:
        now = self.session.state
        return now is not None and now.summary.version != seen.summary.version

    async def _play(self, state: MatchState, move: Move) -> None:
        version = state.summary.version
        if move.kind == "lift":
            error = await self._send("lift", version, lambda: self.session.lift(move.space))
            if error is None:
                self.stats.lifts += 1
        else:
            assert move.option is not None
            option, destination = move.option, move.destination
            badge = self._badge(state) if move.score >= WIN else None
            error = await self._send(
                "place",
                version,
                lambda: self.session.place_option(option, destination, badge=badge),
            )
            if error is None:
                self.stats.moves += 1
        if error is not None and error.code == grpc.StatusCode.FAILED_PRECONDITION:
            self.stats.refusals.append((version, move.kind, error.rule))
            self._blocked_at = version

    def _badge(self, state: MatchState) -> str | None:
        """A badge to name with a winning move: one this seat lacks, at random."""
        names = [BADGE_NAMES[b] for b in state.tribes.legal.badges if b in BADGE_NAMES]
        return self.rng.choice(names) if names else None

    def _count(self, event: MatchEvent) -> None:
        if not event.HasField("tribes"):
            return
        body = event.tribes
        kind = body.WhichOneof("event")
        me = self.seat
        if kind == "placed" and body.placed.seat == me:
            if body.placed.cause == pb.TRIBES_MOVE_CAUSE_TIMEOUT:
                self.stats.timed_out += 1
        elif kind == "passed" and body.passed.seat == me:
            self.stats.passes += 1
        elif kind == "round_won" and body.round_won.winner == me:
            self.stats.rounds_won += 1
            self.stats.feathers = body.round_won.feathers


async def play_table(
    client: Client,
    players: int,
    *,
    extended: bool = False,
    board_size: int | None = None,
    turn_timeout_ms: int | None = None,
    entropy: bytes = b"",
    names: Sequence[str] | None = None,
    think_ms: tuple[float, float] = DEFAULT_THINK_MS,
    seed: int | None = None,
    on_seated: OnSeated | None = None,
) -> TableResult[TribesBot]:
    """Create a Tribes match for ``players`` seats, seat one bot in each, play it to the
    Feathers of Greatness.

    The match starts by itself when the last bot joins. Each bot adds fresh entropy to the
    seed when it joins. ``seed`` makes the bots' delays and choices reproducible (not the
    server's draws).
    """
    if not 2 <= players <= 4:
        raise ValueError("Tribes is for 2 to 4 players")
    names = bot_names(players, names)
    created = await client.create_tribes(
        max_players=players,
        extended=extended,
        board_size=board_size,
        turn_timeout_ms=turn_timeout_ms,
        entropy=entropy,
    )
    bots = []
    for i, name in enumerate(names):
        session = await client.join(created.match_id, name, entropy=secrets.token_bytes(16))
        rng = random.Random(seed + i) if seed is not None else None
        bots.append(TribesBot(session, think_ms=think_ms, rng=rng))
    if on_seated is not None:
        on_seated(created.match_id)
    return await run_bots(created.match_id, bots)


#: ``totem bots tribes``.
TABLE = BotTable(
    help="""Create a Tribes match, seat a bot in every seat, play it to the Feathers; or with
    --join MATCH --token TOKEN ..., play the seats those tokens hold in MATCH.

    Prints the result (placements with names) and the match id, for
    `totem-replay show MATCH`.
    """,
    players=options.players(
        TRIBES_GAME, "Number of bots; the match has exactly this many seats (TR-1.1)."
    ),
    match_options=[
        click.Option(
            ["--extended"],
            is_flag=True,
            help="The extended game: Dice of Fate, special totems, Salvation Spaces (TR-5).",
        ),
        click.Option(
            ["--board-size"],
            type=click.IntRange(3, 5),
            default=None,
            help="Side of the board (TR-1.2); by default 3 for two players, 4 for three or four.",
        ),
        click.Option(
            ["--turn-timeout-ms"],
            type=click.IntRange(min=0),
            default=None,
            help="Turn timer; the server's default (60000) if not given, 0 turns it off.",
        ),
    ],
    bot_options=[
        options.delay_range(
            "--think-ms", DEFAULT_THINK_MS, "Random delay before each of a bot's commands."
        ),
    ],
    bot=TribesBot,
    play_table=play_table,
)

__all__ = ["TABLE", "TribesBot", "TribesBotStats", "choose", "play_table"]
