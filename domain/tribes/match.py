"""The Tribes match aggregate: every rule TR-1 … TR-5 lives here.

The board is a list of stacks, one per space, each bottom first (``board[s][-1]`` is the
visible top, TR-1.2). A tribe's mat is the sorted list of the sizes not on the board
(TR-1.3); the special totems not on the board wait in ``beside`` (TR-5.3). Pieces are
ints (see :mod:`domain.tribes.pieces`).

Command methods check the rules and raise a ``DomainError`` naming the rule; only then do
they trigger events. Each check lives in one ``*_refusal`` method that the command and
:meth:`Tribes.legal_actions` share, so that what a view offers is exactly what the
commands accept. Event bodies (the ``@event`` methods) only move pieces and count: they
run again, unchanged, when the match is rebuilt, and never decide anything a replay could
decide differently. Every random draw (the Cards of Truth, the die) and every outcome (a
pass, a round won or drawn) is a field of an event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eventsourcing.domain import event

from domain.kernel.commands import Command
from domain.kernel.errors import DomainError, InvalidArgument, RuleViolation
from domain.kernel.match import EndReason, MatchAggregate, MatchStatus, acting, check_entropy
from domain.kernel.randomness import SeededRandom
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.topics import register_game
from domain.tribes.commands import LiftTotem, Penalise, PlaceTotem
from domain.tribes.options import Options
from domain.tribes.pieces import (
    BADGES,
    BLANK,
    CHIEF,
    DEMANDS,
    DOOM,
    MINI,
    SIZES,
    SPECIALS,
    corners,
    describe,
    is_special,
    lines,
    lines_through,
    owner,
    size_of,
    tribe_totem,
)

#: Who made a move: the player, or the turn timer for them.
CAUSE_PLAYER = "player"
CAUSE_TIMEOUT = "timeout"

#: Where a placed piece came from, in a legal action.
FROM_MAT = "mat"
FROM_BESIDE = "beside"
FROM_LIFTED = "lifted"

#: How a round was won (TR-3.3): a line of the mover's, or an opponent's revealed line.
BY_LINE = "line"
BY_REVEALED = "revealed"

#: Why a round was drawn (TR-2.5).
DRAWN_PASSES = "passes"
DRAWN_MOVE_LIMIT = "move_limit"


def truth_cards(effective_seed: bytes, index: int, players: int) -> list[int]:
    """The Cards of Truth of the ``index``-th round (from 0), indexed by seat (TR-2.1).

    The cards 1 … ``players`` shuffled on their own stream ``tribes/cards/<index>``; seat
    ``s`` draws position ``s``. Replay tools call this to re-derive the recorded draw.
    """
    cards = list(range(1, players + 1))
    SeededRandom(effective_seed, f"tribes/cards/{index}").shuffle(cards)
    return cards


def die_roll(effective_seed: bytes, index: int, faces: list[str]) -> str:
    """The ``index``-th roll of the match (from 0) of a die with these faces (TR-5.1): one
    ``randbelow(len(faces))`` on its own stream ``tribes/die/<index>``."""
    return faces[SeededRandom(effective_seed, f"tribes/die/{index}").randbelow(len(faces))]


def turn_order(cards: list[int]) -> list[int]:
    """Seats in ascending order of their Card of Truth (TR-2.1)."""
    return sorted(range(len(cards)), key=lambda seat: cards[seat])


@dataclass(frozen=True)
class Lift:
    """A piece lifted from the board and not yet placed (TR-2.2a)."""

    piece: int
    origin: int
    #: The piece the lift uncovered, now the top of ``origin``; None if it left it empty.
    uncovered: int | None
    #: Lines of an opponent the uncovered piece completes (TR-3.2), each its three spaces.
    revealed: tuple[tuple[int, ...], ...]
    #: Who lifted it: the player, or the turn timer (which places it in the same instant).
    cause: str = CAUSE_PLAYER


class Tribes(MatchAggregate):
    """One match of Tribes, base or extended."""

    GAME = "tribes"
    MIN_PLAYERS = 2
    PLAYERS_RULE = "TR-1.1"
    #: A round starts the match: the Cards of Truth are drawn (TR-2.1).
    START_RULE = "TR-2.1"
    #: Any command after the match has ended names TR-3.5 (TR-8).
    END_RULES = dict.fromkeys(EndReason, "TR-3.5")

    # ---- creation ----------------------------------------------------------------

    @classmethod
    def create(
        cls, options: Options, seed: bytes, entropy: bytes = b"", referee_token_hash: str = ""
    ) -> Tribes:
        """A new match waiting for players. ``seed`` is the server's secret seed."""
        options.validate()
        check_entropy(cls.PLAYERS_RULE, entropy)
        return cls(
            options=options.to_dict(),
            seed=seed.hex(),
            entropy=entropy.hex(),
            referee_token_hash=referee_token_hash,
        )

    @event("Created")
    def __init__(
        self, options: dict[str, Any], seed: str, entropy: str, referee_token_hash: str
    ) -> None:
        self._init_match(options, seed, entropy, referee_token_hash)
        self.options = Options.from_dict(options)
        #: The board's side, fixed at the start (TR-1.2); 0 before.
        self.size = 0
        self.salvation: list[int] = []
        self.board: list[list[int]] = []
        self.mats: list[list[int]] = []
        self.beside: list[int] = []
        self.badges: list[list[str]] = []
        #: Seats penalised for coaching (TR-4.1), and those whose Grand Chief is out of
        #: the game already (from the round after the penalty).
        self.penalised: list[int] = []
        self.removed: list[int] = []
        self.round = 0
        self.cards: list[int] = []
        self.order: list[int] = []
        self.turn_index = 0
        self.turn: int | None = None
        #: The face rolled for the turn under way (extended game), or None.
        self.die: str | None = None
        self.lifted: Lift | None = None
        self.moves = 0
        self.passes = 0
        self.rolls = 0
        #: Wall time (ms) at which the turn under way began: the turn timer runs from it.

    @property
    def max_players(self) -> int:
        return self.options.max_players

    @property
    def variant(self) -> str:
        return "extended" if self.options.extended else "base"

    @property
    def seats(self) -> range:
        return range(len(self.players))

    @property
    def spaces(self) -> range:
        return range(self.size * self.size)

    # ---- queries -----------------------------------------------------------------------

    def top(self, space: int) -> int | None:
        stack = self.board[space]
        return stack[-1] if stack else None

    def line_owner(self, line: tuple[int, ...], tops: list[int | None] | None = None) -> int | None:
        """The tribe whose visible totems make up the whole line, if any (TR-3.1, TR-5.3);
        on the board, or on the board's ``tops`` as a move would leave them."""
        owners = set()
        for space in line:
            piece = self.top(space) if tops is None else tops[space]
            if piece is None or is_special(piece):
                return None
            owners.add(owner(piece))
        return owners.pop() if len(owners) == 1 else None

    def lines_of(self, seat: int, tops: list[int | None] | None = None) -> list[tuple[int, ...]]:
        return [line for line in lines(self.size) if self.line_owner(line, tops) == seat]

    def where(self, piece: int) -> int | None:
        """The space whose stack holds ``piece``, if it is on the board."""
        return next((s for s in self.spaces if piece in self.board[s]), None)

    def demanded(self) -> int | None:
        """The special totem the die demands this turn, if any (TR-5.2): the one its face
        names, unless that totem had no legal destination when the turn began, which
        makes the whole turn a normal turn.

        The demand is settled once, at the start of the turn (TR-8.3): a lift that
        empties a space later in the turn makes no demand of a normal turn. A lift is
        the only change to the board within a turn, and while a demand stands only the
        demanded totem may be lifted; so with a totem lifted the demand stands exactly
        when the lifted totem is the demanded one, and with none lifted the board is the
        one the turn began on."""
        if self.die is None or self.die == BLANK:
            return None
        piece = DEMANDS[self.die]
        if self.lifted is not None:
            return piece if self.lifted.piece == piece else None
        origin = None if piece in self.beside else self.where(piece)
        movable = any(self.destination_refusal(piece, d, origin) is None for d in self.spaces)
        return piece if movable else None

    def destination_refusal(
        self, piece: int, destination: int, origin: int | None
    ) -> RuleViolation | None:
        """Why ``piece`` (lifted from ``origin``, or from off the board) may not go to
        ``destination``, or None if it may: steps 6 to 8 of TR-8.1's order, the lifted
        totem put back (TR-2.2a), then the Mini (TR-5.5), the Doom (TR-5.4), a Salvation
        Space (TR-5.6), and last the sizes (TR-2.3)."""
        if destination == origin:
            return RuleViolation("TR-2.2a", "a lifted totem cannot be put back on its own space")
        top = self.top(destination)
        if top is None:
            return None
        if piece == MINI:
            return RuleViolation("TR-5.5", "the Mini-Totem of Chaos moves to an empty space only")
        if top == MINI:
            return RuleViolation("TR-5.5", "nothing covers the Mini-Totem of Chaos")
        if top == DOOM:
            return RuleViolation("TR-5.4", "nothing covers the Great Totem of Doom")
        if piece == DOOM:
            if destination in self.salvation:
                return RuleViolation(
                    "TR-5.6",
                    f"space {destination} is a Salvation Space: the Great Totem of Doom "
                    "cannot cover the tribe totem on it",
                )
            return None
        if size_of(top) >= size_of(piece):
            return RuleViolation(
                "TR-2.3",
                f"a totem of size {size_of(piece)} covers only a strictly smaller one; the "
                f"top of space {destination} has size {size_of(top)}",
            )
        return None

    def destinations(self, piece: int, origin: int | None) -> list[int]:
        """Every space ``piece`` may go to from ``origin`` (None: from off the board)."""
        return [d for d in self.spaces if self.destination_refusal(piece, d, origin) is None]

    def forced_destinations(self) -> list[int]:
        """TR-3.2: the spaces the lifted piece must go to, covering a space of an
        opponent's revealed line; empty when no line was revealed or no cover is
        possible (then any legal destination will do)."""
        lift = self.lifted
        if lift is None or not lift.revealed:
            return []
        spaces = sorted({s for line in lift.revealed for s in line if s != lift.origin})
        return [s for s in spaces if self.destination_refusal(lift.piece, s, lift.origin) is None]

    def timer_deadline_ms(self) -> int | None:
        """When the turn timer fires, in wall milliseconds; None if it is not running."""
        if self.status is not MatchStatus.PLAYING or self.options.turn_timeout_ms == 0:
            return None
        return self.clock_ms + self.options.turn_timeout_ms

    # ---- the checks the commands and the legal actions share -------------------------
    #
    # A command that breaks several rules is refused with the first that applies in the
    # order of TR-8.1, one check each: the match's end and the turn (_play_refusal); the
    # die (_die_refusal); a removed Grand Chief (_chief_refusal); a totem that is not the
    # mover's to move (_owner_refusal); the totem lifted or to lift (_source_refusal);
    # the destination (destination_refusal); the forced cover (_target_refusal); a badge
    # held already (_held_badge_refusal). A malformed argument (a space off the board, an
    # unknown badge, a special totem in the base game) is wrong whatever the state: it is
    # refused INVALID_ARGUMENT right after the end and the turn, before the rules' steps.

    def _play_refusal(self, seat: int) -> DomainError | None:
        """Why ``seat`` may not move at all now (status, seat, turn), or None: steps 1 and
        2 of TR-8.1."""
        if self.status is MatchStatus.ENDED:
            return RuleViolation("TR-3.5", "the match has ended")
        if self.status is MatchStatus.WAITING:
            return RuleViolation("TR-2.2", "the match has not started yet")
        if not 0 <= seat < len(self.players):
            return RuleViolation("TR-1.1", f"seat {seat} is not taken in this match")
        if self.turn != seat:
            whose = "nobody's turn" if self.turn is None else f"seat {self.turn}'s turn"
            return RuleViolation("TR-2.2", f"it is {whose}: only they may move now")
        # Two states a command never meets, only a view in the middle of a command's
        # events: a turn whose die is still to be rolled, and a move the turn timer is
        # completing. They offer nothing, so that no view offers a move that is gone.
        if self.options.extended and self.die is None:
            return RuleViolation("TR-5.1", "the Dice of Fate are still to be rolled")
        if self.lifted is not None and self.lifted.cause == CAUSE_TIMEOUT:
            return RuleViolation("TR-2.2", "the turn timer is completing this move")
        return None

    def _space_refusal(self, name: str, space: int) -> InvalidArgument | None:
        if not 0 <= space < self.size * self.size:
            return InvalidArgument(
                "TR-1.2", f"{name} {space} does not exist: spaces are 0 to {self.size**2 - 1}"
            )
        return None

    def _die_refusal(self, piece: int | None) -> RuleViolation | None:
        """Step 3 of TR-8.1 (TR-5.2): a special totem moved when the die does not demand
        it; or, while the die demands one, a command that does not move it. ``piece`` is
        the totem the command moves, None if it moves none (an empty space lifted, a
        place naming no totem with none lifted)."""
        demanded = self.demanded()
        if piece is not None and is_special(piece) and piece != demanded:
            return RuleViolation(
                "TR-5.2", f"{describe(piece)} moves only when the Dice of Fate demand it"
            )
        if demanded is not None and piece != demanded:
            return RuleViolation(
                "TR-5.2", f"the Dice of Fate demand that {describe(demanded)} moves"
            )
        return None

    def _chief_refusal(self, piece: int | None) -> RuleViolation | None:
        """Step 4 of TR-8.1: a Grand Chief removed for coaching (TR-4.1)."""
        if piece is None or is_special(piece) or size_of(piece) != CHIEF:
            return None
        if owner(piece) in self.removed:
            return RuleViolation(
                "TR-4.1",
                f"seat {owner(piece)}'s Grand Chief was removed from the game for coaching",
            )
        return None

    def _owner_refusal(self, seat: int, piece: int | None) -> RuleViolation | None:
        """Step 5 of TR-8.1 (TR-2.2): a totem that is not ``seat``'s own, on its mat or
        visible on top of a stack (or lifted by it). The refusal of a covered totem never
        says where it lies (no peeking)."""
        if piece is None or is_special(piece):
            return None
        if owner(piece) != seat:
            return RuleViolation("TR-2.2", "you may move only your own tribe's totems")
        lifted = self.lifted is not None and self.lifted.piece == piece
        on_top = any(self.top(s) == piece for s in self.spaces)
        if not (lifted or on_top or size_of(piece) in self.mats[seat]):
            return RuleViolation(
                "TR-2.2",
                f"your {size_of(piece)} is not on your Identity Mat: only a totem on your "
                "mat or on top of a stack can be moved (no peeking)",
            )
        return None

    def _source_refusal(self, piece: int | None) -> RuleViolation | None:
        """Step 6 of TR-8.1 (TR-2.2a), for a place: another totem named while one is
        lifted, none named while none is, or one named from off the board while it
        stands on the board (lift it first). ``piece`` is the totem the command names,
        None for the lifted one."""
        lift = self.lifted
        if lift is not None:
            if piece is not None and piece != lift.piece:
                return RuleViolation(
                    "TR-2.2a",
                    f"{describe(lift.piece)} is lifted: it must be placed, and cannot be "
                    "swapped for another totem",
                )
            return None
        if piece is None:
            return RuleViolation(
                "TR-2.2a",
                "nothing is lifted: lift a totem from the board first, or name one from "
                "your Identity Mat",
            )
        if any(self.top(s) == piece for s in self.spaces):
            return RuleViolation("TR-2.2a", f"{describe(piece)} is on the board: lift it first")
        return None

    def lift_refusal(self, seat: int, space: int) -> DomainError | None:
        """Why ``seat`` may not lift the top of ``space`` now, or None if it may."""
        refusal = self._play_refusal(seat) or self._space_refusal("space", space)
        if refusal is not None:
            return refusal
        piece = self.top(space)
        refusal = self._die_refusal(piece) or self._chief_refusal(piece)
        if refusal is not None:
            return refusal
        if piece is None:
            return RuleViolation("TR-2.2", f"space {space} is empty: there is nothing to lift")
        refusal = self._owner_refusal(seat, piece)
        if refusal is not None:
            return refusal
        if self.lifted is not None:
            return RuleViolation(
                "TR-2.2a", f"{describe(self.lifted.piece)} is lifted already: place it"
            )
        if not any(self.destination_refusal(piece, d, space) is None for d in self.spaces):
            return RuleViolation(
                "TR-2.3",
                f"{describe(piece)} on space {space} would have nowhere to go: choose "
                "another totem",
            )
        return None

    def place_refusal(
        self, seat: int, destination: int, piece: int | None = None, badge: str | None = None
    ) -> DomainError | None:
        """Why ``seat`` may not place now, or None if it may.

        With a piece lifted, ``piece`` is None or that piece. With none lifted, ``piece``
        is a totem of the seat's mat or a special totem beside the board.
        """
        return (
            self._play_refusal(seat)
            or self._space_refusal("destination", destination)
            or self._badge_refusal(badge)
            or self._special_refusal(piece)
            or self._placeable_refusal(seat, piece)
            or self._target_refusal(self.lifted.piece if self.lifted else piece, destination)
            or self._held_badge_refusal(seat, badge)
        )

    def _placeable_refusal(self, seat: int, piece: int | None) -> DomainError | None:
        """Whether ``piece`` (None: the lifted one) is the piece to place now, wherever
        it goes: steps 3 to 6 of TR-8.1."""
        moved = piece if piece is not None or self.lifted is None else self.lifted.piece
        return (
            self._die_refusal(moved)
            or self._chief_refusal(moved)
            or self._owner_refusal(seat, moved)
            or self._source_refusal(piece)
        )

    def _target_refusal(self, piece: int | None, destination: int) -> DomainError | None:
        """Whether the piece to place may go to ``destination``: steps 6 to 9 of TR-8.1,
        ending with the forced cover of TR-3.2 after a lift."""
        assert piece is not None
        lift = self.lifted
        refusal = self.destination_refusal(piece, destination, lift.origin if lift else None)
        if refusal is not None or lift is None or not lift.revealed:
            return refusal
        forced = self.forced_destinations()
        if forced and destination not in forced:
            return RuleViolation(
                "TR-3.2",
                "the lift revealed an opponent's line: cover one of its other spaces "
                f"({', '.join(map(str, forced))})",
            )
        return None

    def _special_refusal(self, piece: int | None) -> InvalidArgument | None:
        """A special totem named in the base game, which has none (TR-5.1)."""
        if piece is not None and is_special(piece) and not self.options.extended:
            return InvalidArgument("TR-5.1", "the base game has no special totems")
        return None

    def _badge_refusal(self, badge: str | None) -> InvalidArgument | None:
        """A badge that does not exist (TR-3.4)."""
        if badge is not None and badge not in BADGES:
            return InvalidArgument("TR-3.4", f"a badge is one of {', '.join(BADGES)}")
        return None

    def _held_badge_refusal(self, seat: int, badge: str | None) -> InvalidArgument | None:
        """Step 10 of TR-8.1: a badge the mover holds already (TR-3.4)."""
        if badge is not None and badge in self.badges[seat]:
            return InvalidArgument("TR-3.4", f"you hold the {badge} badge already")
        return None

    def legal_actions(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may do now (a player's view shows it), from the same checks as
        the commands: ``start``; ``lifts``, the spaces whose top it may lift; ``places``,
        each piece it may place (the lifted one, or from its mat or beside the board) with
        its destinations; ``forced_cover`` when TR-3.2 narrows them; the die's face and
        the special totem it demands; the badges it may name."""
        legal: dict[str, Any] = {
            "start": self.start_refusal(seat) is None,
            "lifts": [],
            "places": [],
            "forced_cover": False,
            "die": "",
            "must_move": None,
            "badges": [],
        }
        if self._play_refusal(seat) is not None:
            return legal
        legal["die"] = self.die or ""
        legal["must_move"] = self.demanded()
        legal["badges"] = [b for b in BADGES if b not in self.badges[seat]]
        legal["lifts"] = [s for s in self.spaces if self.lift_refusal(seat, s) is None]
        if self.lifted is not None:
            candidates = [(self.lifted.piece, FROM_LIFTED)]
            legal["forced_cover"] = bool(self.forced_destinations())
        else:
            candidates = [(p, FROM_BESIDE) for p in SPECIALS if p in self.beside]
            candidates += [(tribe_totem(seat, size), FROM_MAT) for size in self.mats[seat]]
        for piece, source in candidates:
            # The same checks as place_refusal, the piece's once, then each destination's.
            if self._placeable_refusal(seat, None if source == FROM_LIFTED else piece):
                continue
            found = [d for d in self.spaces if self._target_refusal(piece, d) is None]
            if found:
                legal["places"].append({"totem": piece, "from": source, "destinations": found})
        return legal

    def has_move(self, seat: int) -> bool:
        legal = self.legal_actions(seat)
        return bool(legal["lifts"] or legal["places"])

    def pending_step(self) -> RuleViolation | None:
        """A seat to move that can move is the only state a command meets; every other
        state in play is inside a command's events, its next step already decided."""
        if self.status is not MatchStatus.PLAYING:
            return None
        seat = self.turn
        if seat is None:
            if self.round == 0:
                return RuleViolation("TR-2.1", "the first round's Cards of Truth are drawn next")
            return RuleViolation(
                "TR-3.3",
                "the round has just ended: its outcome, then the next round or the end of "
                "the match, follow at once",
            )
        if self.options.extended and self.die is None:
            return RuleViolation("TR-5.1", f"the Dice of Fate are rolled next for seat {seat}")
        if self.lifted is not None and self.lifted.cause == CAUSE_TIMEOUT:
            return RuleViolation("TR-2.2", f"the turn timer is completing seat {seat}'s move")
        if not self.has_move(seat):
            return RuleViolation("TR-2.5", f"seat {seat} has no legal move and passes at once")
        return None

    def start_refusal(self, seat: int) -> RuleViolation | None:
        refusal = super().start_refusal(seat)
        cards = self.options.prearranged_cards
        if refusal is None and cards is not None and len(cards[0]) != len(self.players):
            return RuleViolation(
                "TR-2.1",
                f"the prearranged Cards of Truth are for {len(cards[0])} players: fill every seat",
            )
        return refusal

    # ---- start and rounds (TR-2.1) ---------------------------------------------------

    def _on_start(self, stamp: ReceiveStamp) -> None:
        players = len(self.players)
        size = self.options.board_size or (3 if players == 2 else 4)
        salvation: list[int] = []
        if self.options.extended:
            given = self.options.salvation_spaces
            salvation = sorted(given) if given is not None else corners(size)
        self._started(board_size=size, salvation_spaces=salvation, stamp=stamp.to_dict())
        self._start_round(stamp)

    @event("Started")
    def _started(self, board_size: int, salvation_spaces: list[int], stamp: dict[str, Any]) -> None:
        self.status = MatchStatus.PLAYING
        self.size = board_size
        self.salvation = list(salvation_spaces)
        self.board = [[] for _ in self.spaces]
        self.mats = [[] for _ in self.players]
        self.badges = [[] for _ in self.players]
        self._tick(stamp)

    def _start_round(self, stamp: ReceiveStamp) -> None:
        prearranged = self.options.prearranged_cards
        if prearranged is not None:
            cards = list(prearranged[self.round % len(prearranged)])
        else:
            cards = truth_cards(self.effective_seed(), self.round, len(self.players))
        self._round_started(
            round=self.round + 1, cards=cards, order=turn_order(cards), stamp=stamp.to_dict()
        )
        self._begin_turn(stamp)

    @event("RoundStarted")
    def _round_started(
        self, round: int, cards: list[int], order: list[int], stamp: dict[str, Any]
    ) -> None:
        self.round = round
        self.cards = list(cards)
        self.order = list(order)
        self.removed = list(self.penalised)  # TR-4.1: from the next round to start
        self.board = [[] for _ in self.spaces]
        self.mats = [
            [s for s in SIZES if not (s == CHIEF and seat in self.removed)] for seat in self.seats
        ]
        self.beside = list(SPECIALS) if self.options.extended else []
        self.lifted = None
        self.moves = 0
        self.passes = 0
        self.turn_index = 0
        self.turn = self.order[0]
        self.die = None
        self._tick(stamp)

    def _begin_turn(self, stamp: ReceiveStamp) -> None:
        """Roll for the turn under way (extended game); pass for a seat with no legal move,
        and draw the round when every seat passed in a row (TR-2.5). ``stamp`` is the
        command's that ended the previous turn."""
        while self.status is MatchStatus.PLAYING:
            seat = self.turn
            assert seat is not None
            if self.options.extended:
                self._die_rolled(seat=seat, face=self._roll())
            if self.has_move(seat):
                return
            self._passed(seat=seat)
            if self.passes >= len(self.players):
                self._round_drawn(round=self.round, reason=DRAWN_PASSES)
                self._start_round(stamp)
                return

    def _roll(self) -> str:
        prearranged = self.options.prearranged_dice
        if prearranged is not None:
            return prearranged[self.rolls % len(prearranged)]
        return die_roll(self.effective_seed(), self.rolls, self.options.dice_faces)

    @event("DieRolled")
    def _die_rolled(self, seat: int, face: str) -> None:
        self.die = face
        self.rolls += 1

    @event("Passed")
    def _passed(self, seat: int) -> None:
        self.passes += 1
        self._next_turn()

    @event("RoundDrawn")
    def _round_drawn(self, round: int, reason: str) -> None:
        self.turn = None
        self.die = None

    # ---- moves (TR-2.2 … TR-2.4, TR-5) -------------------------------------------------

    def execute(self, command: Command, seat: int | None, stamp: ReceiveStamp) -> None:
        match command:
            case LiftTotem(space=space):
                self.lift(acting(seat), space, stamp)
            case PlaceTotem(destination=destination, size=size, special=special, badge=badge):
                mover = acting(seat)
                totem = tribe_totem(mover, size) if size is not None else special
                self.place(mover, destination, stamp, totem, badge)
            case Penalise(seat=penalised):
                self.penalise(penalised, stamp)
            case _:
                super().execute(command, seat, stamp)

    def lift(self, seat: int, space: int, stamp: ReceiveStamp, cause: str = CAUSE_PLAYER) -> None:
        """Lift the top of ``space``: the first half of a move from the board (TR-2.2a).
        The totem below becomes visible to everyone at once."""
        refusal = self.lift_refusal(seat, space)
        if refusal is not None:
            raise refusal
        self._lift(seat, space, stamp, cause)

    def _lift(self, seat: int, space: int, stamp: ReceiveStamp, cause: str) -> None:
        stack = self.board[space]
        piece = stack[-1]
        uncovered = stack[-2] if len(stack) > 1 else None
        revealed: list[list[int]] = []
        if uncovered is not None and not is_special(uncovered) and owner(uncovered) != seat:
            rival = owner(uncovered)
            for line in lines_through(self.size, space):
                tops = [uncovered if s == space else self.top(s) for s in line]
                if all(p is not None and not is_special(p) and owner(p) == rival for p in tops):
                    revealed.append(list(line))
        self._lifted(
            seat=seat,
            space=space,
            totem=piece,
            uncovered=uncovered,
            revealed_lines=revealed,
            cause=cause,
            stamp=stamp.to_dict(),
        )

    @event("Lifted")
    def _lifted(
        self,
        seat: int,
        space: int,
        totem: int,
        uncovered: int | None,
        revealed_lines: list[list[int]],
        cause: str,
        stamp: dict[str, Any],
    ) -> None:
        self.board[space].pop()
        revealed = tuple(tuple(x) for x in revealed_lines)
        self.lifted = Lift(totem, space, uncovered, revealed, cause)

    def place(
        self,
        seat: int,
        destination: int,
        stamp: ReceiveStamp,
        totem: int | None = None,
        badge: str | None = None,
        cause: str = CAUSE_PLAYER,
    ) -> None:
        """Place the lifted totem (``totem`` None or that totem), or a totem from one's
        mat, or a special totem from beside the board, on ``destination`` (TR-2.2,
        TR-2.3). ``badge`` names the badge this move wins if one's own line wins with it
        (TR-3.4). Then the round may be won (TR-3.3) or drawn (TR-2.5)."""
        refusal = self.place_refusal(seat, destination, totem, badge)
        if refusal is not None:
            raise refusal
        self._place(seat, destination, stamp, totem, badge, cause)

    def _place(
        self,
        seat: int,
        destination: int,
        stamp: ReceiveStamp,
        totem: int | None,
        badge: str | None,
        cause: str,
    ) -> None:
        lift = self.lifted
        piece = lift.piece if lift is not None else totem
        assert piece is not None
        tops = [self.top(s) for s in self.spaces]
        tops[destination] = piece
        winner, won_by, winning = self._outcome(seat, lift, tops)
        limit = self.moves + 1 >= self.options.round_move_limit
        self._placed(
            seat=seat,
            totem=piece,
            origin=lift.origin if lift is not None else None,
            destination=destination,
            covered=self.top(destination),
            badge=badge,
            ends_round=winner is not None or limit,
            cause=cause,
            stamp=stamp.to_dict(),
        )
        if winner is not None:
            named = badge if winner == seat and won_by == BY_LINE else None
            self._win_round(winner, won_by, winning, named, stamp)
        elif limit:
            self._round_drawn(round=self.round, reason=DRAWN_MOVE_LIMIT)
            self._start_round(stamp)
        else:
            self._begin_turn(stamp)

    @event("Placed")
    def _placed(
        self,
        seat: int,
        totem: int,
        origin: int | None,
        destination: int,
        covered: int | None,
        badge: str | None,
        ends_round: bool,
        cause: str,
        stamp: dict[str, Any],
    ) -> None:
        if origin is None:
            if is_special(totem):
                self.beside.remove(totem)
            else:
                self.mats[seat].remove(size_of(totem))
        self.board[destination].append(totem)
        self.lifted = None
        self.moves += 1
        self.passes = 0
        if ends_round:  # a RoundWon or RoundDrawn follows at once
            self.turn = None
            self.die = None
        else:  # the next seat's turn begins now
            self._next_turn()
        self._tick(stamp)

    def _outcome(
        self, seat: int, lift: Lift | None, tops: list[int | None]
    ) -> tuple[int | None, str, list[list[int]]]:
        """Who wins with the board's ``tops`` after ``seat``'s move, in the order of
        TR-3.3: an opponent's line the lift revealed and still intact, else a line of the
        mover's. Returns (winner or None, how, the winning lines)."""
        if lift is not None and lift.revealed and lift.uncovered is not None:
            rival = owner(lift.uncovered)
            intact = [list(x) for x in lift.revealed if self.line_owner(x, tops) == rival]
            if intact:
                return rival, BY_REVEALED, intact
        mine = [list(x) for x in self.lines_of(seat, tops)]
        if mine:
            return seat, BY_LINE, mine
        return None, BY_LINE, []

    def _next_turn(self) -> None:
        self.turn_index = (self.turn_index + 1) % len(self.order)
        self.turn = self.order[self.turn_index]
        self.die = None

    # ---- winning (TR-3.4, TR-3.5) ------------------------------------------------------

    def _win_round(
        self,
        winner: int,
        won_by: str,
        winning: list[list[int]],
        named: str | None,
        stamp: ReceiveStamp,
    ) -> None:
        held = self.badges[winner]
        feathers = len(held) == len(BADGES)
        badge = None
        if not feathers:
            badge = named if named is not None else next(b for b in BADGES if b not in held)
        self._round_won(
            round=self.round,
            winner=winner,
            by=won_by,
            lines=winning,
            badge=badge,
            feathers=feathers,
        )
        if feathers:
            self._end(EndReason.COMPLETED, self._result(winner))
        else:
            self._start_round(stamp)

    @event("RoundWon")
    def _round_won(
        self,
        round: int,
        winner: int,
        by: str,
        lines: list[list[int]],
        badge: str | None,
        feathers: bool,
    ) -> None:
        if badge is not None:
            self.badges[winner].append(badge)
        self.turn = None
        self.die = None

    def _result(self, winner: int) -> list[dict[str, int]]:
        """The Feathers' winner first; the others ranked by badges held, ties sharing a
        place (decided here)."""
        score = {s: len(self.badges[s]) for s in self.seats}
        score[winner] = len(BADGES) + 1
        return [
            {"seat": s, "place": 1 + sum(1 for t in self.seats if score[t] > score[s])}
            for s in self.seats
        ]

    # ---- no coaching (TR-4.1) ----------------------------------------------------------

    def penalise(self, seat: int, stamp: ReceiveStamp) -> None:
        """The referee penalises ``seat`` for coaching: its Grand Chief leaves the game for
        the rest of the match from the next round to start, so that the board in play is
        never altered (TR-4.1)."""
        refusal = self.penalty_refusal(seat)
        if refusal is not None:
            raise refusal
        self._penalised(seat=seat, from_round=self.round + 1, stamp=stamp.to_dict())

    def penalty_refusal(self, seat: int) -> DomainError | None:
        if self.status is MatchStatus.ENDED:
            return RuleViolation("TR-3.5", "the match has ended")
        if self.status is MatchStatus.WAITING:
            return RuleViolation("TR-4.1", "the match has not started yet")
        if not 0 <= seat < len(self.players):
            return RuleViolation("TR-4.1", f"seat {seat} is not taken in this match")
        if seat in self.penalised:
            return RuleViolation("TR-4.1", f"seat {seat} was penalised already")
        return None

    @event("Penalised")
    def _penalised(self, seat: int, from_round: int, stamp: dict[str, Any]) -> None:
        self.penalised.append(seat)

    # ---- the turn timer -------------------------------------------------------------------

    def fire_timer(self, stamp: ReceiveStamp) -> None:
        """The turn timer elapsed: the server moves for the player whose turn it is.

        Its move is the first legal one: a lifted totem goes to the first of its
        destinations (the forced ones under TR-3.2); otherwise the first piece the legal
        actions offer to place (a special totem the die demands, else the smallest totem
        of the mat) goes to its lowest-numbered destination; otherwise the top of the
        lowest-numbered space that may be lifted is lifted, then placed the same way.
        """
        if self.status is MatchStatus.ENDED:
            raise RuleViolation("TR-3.5", "the match has ended")
        if self.status is not MatchStatus.PLAYING:
            raise RuleViolation("TR-2.2", "the match has not started yet")
        if not self.timer_due(stamp):
            raise RuleViolation("TR-2.2", "the turn timer has not elapsed")
        seat = self.turn
        assert seat is not None
        legal = self.legal_actions(seat)
        if not legal["places"]:
            self._lift(seat, legal["lifts"][0], stamp, CAUSE_TIMEOUT)
            # The lifted totem's destinations, by the check its place meets (the view of
            # this instant offers none: nobody but the timer can act in it).
            piece = self.lifted.piece if self.lifted else None
            first = next(d for d in self.spaces if self._target_refusal(piece, d) is None)
            self._place(seat, first, stamp, None, None, CAUSE_TIMEOUT)
            return
        option = legal["places"][0]
        totem = None if option["from"] == FROM_LIFTED else option["totem"]
        self._place(seat, option["destinations"][0], stamp, totem, None, CAUSE_TIMEOUT)

    # ---- helpers -------------------------------------------------------------------------


register_game(Tribes)
