"""The Jungle Speed match aggregate: every rule JS-1 … JS-9 lives here.

Piles are lists of card ids. A face-down pile is kept top first (``down[s][0]`` is
revealed next); a face-up pile bottom first (``up[s][-1]`` is the visible card); the
pot in the order cards went in. Turning a face-up pile over onto the bottom of a
face-down pile therefore keeps its order (JS-4.3): the card revealed first comes up
first again.

Command methods check the rules and raise a ``DomainError`` naming the rule; only then
do they trigger events. Each command also decides what its event leads to — who plays
next (JS-3.1, JS-3.3, JS-4.5, JS-6.1, JS-6.2), the cards a last face-down card sends to
the pot or makes its owner collect (JS-7), the order of the piles a player collects
(JS-5.2), the outward arrows left waiting (JS-6.2), how the cards of a duel won are
dealt (JS-4.3, JS-4.4), the pairs and races a grab annuls (JS-4.6, JS-6.1), who may grab
late (JS-5.3), the RU colour mode (JS-6.3), the piles of the deal (JS-2.1) — working it
out on a copy of the table (:meth:`JungleSpeed._scratch`), and records it in the event's
fields, with every choice, random draw and receive stamp. Event bodies (the ``@event``
methods) apply those fields: they run again when the match is rebuilt, so changing a rule's code
cannot change how a stored match replays. What a body still does itself is bookkeeping
the recorded moves imply, the same in every release: a reveal ends the late-grab
window (JS-5.3) and a grab the RU colour mode (JS-6.3), and annulments and spent races
are forgotten once their cards are covered (JS-4.6, :meth:`JungleSpeed._prune`).

The events whose fields grew carry a ``class_version``; a stored older event is upcast
with the new fields None, and its body works them out as the release that stored it did
(:mod:`domain.jungle_speed.legacy`).
"""

from __future__ import annotations

import copy
from typing import Any

from eventsourcing.domain import event

from domain.jungle_speed import legacy
from domain.jungle_speed.cards import Card, Deck, Kind
from domain.jungle_speed.commands import (
    TARGET_ARROWS,
    TARGET_DEFAULT,
    TARGETS,
    Grab,
    Reveal,
)
from domain.jungle_speed.options import Options
from domain.kernel.commands import Command
from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.kernel.match import EndReason, MatchAggregate, MatchStatus, acting, check_entropy
from domain.kernel.randomness import SeededRandom
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.ties import Held, tie_draw, tie_record, window_us
from domain.kernel.topics import register_game
from domain.kernel.versions import fill_in, unrecorded

#: What a grab does (JS-4.2, JS-5.2, JS-5.3, JS-6.1).
GRAB_DUEL = "duel"
GRAB_ARROWS = "arrows"
GRAB_LATE = "late"
GRAB_WRONG = "wrong"
#: A grab that would win a race, held open for the tie window (JS-4.2a): what it does
#: is known once the server settles the race (:meth:`JungleSpeed.settle_held`).
GRAB_HELD = "held"
WINNING = (GRAB_DUEL, GRAB_ARROWS)

REVEAL_TURN = "turn"
REVEAL_TIMEOUT = "timeout"


def _contender(seat: int, target: str, stamp: ReceiveStamp) -> dict[str, Any]:
    """A grab held in a tie, as the deciding event records it (JS-4.2a)."""
    return {"seat": seat, "target": target, "stamp": stamp.to_dict()}


def shuffled_deck(effective_seed: bytes, size: int) -> list[int]:
    """The deck order of a match, drawn from its effective seed (JS-9.1).

    Replay and audit tools call this to re-derive the recorded deal from the revealed
    seed; see docs/randomness.md.
    """
    deck = list(range(size))
    SeededRandom(effective_seed, "jungle_speed/deal").shuffle(deck)
    return deck


def deal_piles(deck: list[int], seats: int, ru: bool) -> tuple[list[list[int]], list[int]]:
    """The piles a deal of ``deck`` makes (JS-2.1): each seat's face-down pile, top
    first, dealt one card at a time from seat 0; and the pot. RU deals floor(80/n) each
    and leaves the rest in the pot; ES deals everything.

    Replay tools call this to check that the piles a ``Dealt`` records are the deal of
    the deck it records."""
    cut = (len(deck) // seats) * seats if ru else len(deck)
    return [deck[s:cut:seats] for s in range(seats)], deck[cut:]


def recycle_orders(effective_seed: bytes, index: int, sizes: list[int]) -> list[list[int]]:
    """The draw of the ``index``-th recycling of the piles (JS-3.4, decided here).

    For each seat in order, a shuffle of the positions ``0 .. size - 1`` of its face-up
    pile (bottom first): the new face-down pile, top first, takes the cards at those
    positions. Drawn from one stream per recycling, so that replay tools can re-derive
    it from the revealed seed and the recorded sizes alone.
    """
    rng = SeededRandom(effective_seed, f"jungle_speed/recycle/{index}")
    orders = []
    for size in sizes:
        order = list(range(size))
        rng.shuffle(order)
        orders.append(order)
    return orders


class JungleSpeed(MatchAggregate):
    """One match of Jungle Speed, variant ES or RU."""

    GAME = "jungle_speed"
    MIN_PLAYERS = 2
    PLAYERS_RULE = "JS-1.5"
    #: Nobody holds a card before the deal that starts the match (JS-2.1).
    START_RULE = "JS-2.1"
    #: A completed match ended by JS-8.2; an abandoned or stopped one by JS-8.3.
    END_RULES = {
        EndReason.COMPLETED: "JS-8.2",
        EndReason.ABANDONED: "JS-8.3",
        EndReason.STOPPED: "JS-8.3",
    }

    # ---- the events whose consequences are recorded (version 2) ------------------------
    #
    # Each names the fields of its version 1 and the ones version 2 added; the upcaster
    # fills the added ones in as None for an event stored before them.

    class Revealed(MatchAggregate.Event):
        """A reveal (JS-3.2). ``turn``: who reveals next (JS-3.1, JS-3.3). When the card
        was its owner's last face-down one (JS-7): ``to_pot``, the face-up cards that go
        to the pot (JS-7.2); ``collected``, the seats whose face-up piles the revealer
        takes, in that order, the pot after them (JS-7.3, JS-5.2); ``must_win``,
        ``[seat, card]`` of a last inward-arrows card (JS-7.1). ``coloured``: the RU
        colour mode after it (JS-6.3; always off in ES, which reads the visible cards)."""

        class_version = 3
        seat: int
        card: int
        cause: str
        stamp: dict[str, Any]
        turn: int | None
        to_pot: list[int]
        collected: list[int]
        must_win: list[int] | None
        coloured: bool

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "turn", "to_pot", "collected", "must_win")

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            fill_in(state, "coloured")

    class OutwardReveal(MatchAggregate.Event):
        """A simultaneous reveal (JS-6.2): ``reveals``, ``[seat, card]`` in seat order.
        ``turn``: who reveals next; ``waiting``: the seat whose outward arrows, revealed
        here, wait for the next grab (JS-6.2). The last face-down cards revealed (JS-7):
        ``to_pot`` and ``must_win`` as in ``Revealed``; ``collector`` takes the face-up
        piles of the seats ``collected``, in that order, then the pot (JS-7.3).
        ``coloured``: the RU colour mode after it (JS-6.3)."""

        class_version = 3
        triggered_by: int
        reveals: list[list[int]]
        stamp: dict[str, Any]
        turn: int | None
        waiting: int | None
        to_pot: list[int]
        collector: int | None
        collected: list[int]
        must_win: list[int] | None
        coloured: bool

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "turn", "waiting", "to_pot", "collector", "collected", "must_win")

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            fill_in(state, "coloured")

    class WrongGrab(MatchAggregate.Event):
        """A wrong grab (JS-5.2): ``seat`` takes the face-up piles of the seats
        ``collected``, in that order, then the pot; ``turn``: who reveals next."""

        class_version = 2
        seat: int
        stamp: dict[str, Any]
        collected: list[int]
        turn: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "collected", "turn")

    class DuelWon(MatchAggregate.Event):
        """A duel won (JS-4.2 … JS-4.6). ``turn``: who reveals next (JS-4.5).
        ``dealt``: ``[seat, cards]`` for each loser, the cards put under its face-down
        pile in that order (JS-4.3, JS-4.4); ``pairs``: the pairs of visible cards whose
        duels the grab annuls, ``spent``: the arrows races it annuls (JS-4.6);
        ``participants``: the seats that grab late from now on (JS-5.3)."""

        class_version = 3
        winner: int
        losers: list[int]
        stamp: dict[str, Any]
        annulled: list[int]
        arrows_annulled: bool
        turn: int | None
        dealt: list[list[Any]]
        pairs: list[list[int]]
        spent: list[int]
        participants: list[int]
        tie: dict[str, Any] | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "turn")

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            fill_in(state, "dealt", "pairs", "spent", "participants")

    class ArrowsWon(MatchAggregate.Event):
        """An inward-arrows race won (JS-6.1). ``collector``: the player whose last card
        the race was and who lost it (JS-7.1), taking the face-up piles of the seats
        ``collected``, in that order, then the pot; ``turn``: who reveals next.
        ``to_pot``: the winner's face-up pile, put into the pot (JS-6.1); ``pairs`` and
        ``spent``: the duels and races the grab annuls (JS-4.6)."""

        class_version = 3
        winner: int
        stamp: dict[str, Any]
        annulled: list[int]
        collector: int | None
        collected: list[int]
        turn: int | None
        to_pot: list[int]
        pairs: list[list[int]]
        spent: list[int]
        tie: dict[str, Any] | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "collector", "collected", "turn")

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            fill_in(state, "to_pot", "pairs", "spent")

    class PilesRecycled(MatchAggregate.Event):
        """The face-up piles turned over, shuffled (JS-3.4). ``turn``: who reveals next."""

        class_version = 2
        orders: list[list[int]]
        stamp: dict[str, Any]
        turn: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "turn")

    class Dealt(MatchAggregate.Event):
        """The deal (JS-2.1): ``deck``, the order drawn or prearranged; ``down``, each
        seat's face-down pile, top first, and ``pot``, the cards left over (RU)."""

        class_version = 2
        seats: int
        deck: list[int]
        stamp: dict[str, Any]
        down: list[list[int]]
        pot: list[int]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "down", "pot")

    class PlayerFinished(MatchAggregate.Event):
        """A player finished (JS-8.1). ``turn``: who reveals next, the finisher's turn
        passing on."""

        class_version = 2
        seat: int
        place: int
        turn: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "turn")

    # ---- creation ----------------------------------------------------------------

    @classmethod
    def create(
        cls, options: Options, seed: bytes, entropy: bytes = b"", referee_token_hash: str = ""
    ) -> JungleSpeed:
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
        self.deck: Deck = self.options.deck()
        self.down: list[list[int]] = []
        self.up: list[list[int]] = []
        self.pot: list[int] = []
        self.turn: int | None = None
        #: Seats in finishing order, each with its place (JS-8).
        self.finished: list[int] = []
        self.places: dict[int, int] = {}
        #: Pairs of visible cards whose duel was annulled (JS-4.6), each sorted.
        self.annulled: list[list[int]] = []
        #: Visible inward-arrows cards whose race is over (won or annulled).
        self.spent_arrows: list[int] = []
        #: RU coloured arrows: on until the next grab or special card (JS-6.3).
        self.coloured_ru = False
        #: JS-7.1: [seat, card] of a player whose last face-down card was inward arrows.
        self.must_win: list[int] | None = None
        #: ES outward chain: the seat whose outward-arrows card waits for the next grab.
        self.pending_outward: int | None = None
        #: The races decided since the last reveal, oldest first, for late grabs (JS-5.3):
        #: each {"seats": participants or None for everyone, "version": version that
        #: decided}. All of them count: one grab can open a duel that a second decides
        #: (RU colour mode ends with the first), and the first duel's players stay late.
        self.decided: list[dict[str, Any]] = []
        self.last_reveal_ms: int | None = None
        #: How many times the piles were recycled (JS-3.4): each has its own random stream.
        self.recycled = 0
        #: The last stamped event revealed outward arrows, or was the grab a chained
        #: simultaneous reveal waited for: that reveal (JS-6.2) follows in the same
        #: command (see :meth:`pending_step`).
        self.outward_due = False

    #: For a state saved (as a snapshot) before the attribute existed.
    outward_due = False

    @property
    def max_players(self) -> int:
        return self.options.max_players

    @property
    def variant(self) -> str:
        return self.options.variant

    @property
    def is_ru(self) -> bool:
        return self.options.variant == "RU"

    # ---- queries -------------------------------------------------------------------

    @property
    def seats(self) -> range:
        return range(len(self.players))

    def active(self, seat: int) -> bool:
        """Still in the game (JS-8.1)."""
        return seat not in self.places

    def card(self, card_id: int) -> Card:
        return self.deck[card_id]

    def visible(self) -> dict[int, int]:
        """The top face-up card of every seat that has one (JS-2.2)."""
        return {s: pile[-1] for s, pile in enumerate(self.up) if pile}

    @property
    def coloured_mode(self) -> bool:
        """Duels match by colour (JS-6.3): ES while a coloured-arrows card is visible."""
        return self._coloured(self.visible())

    def _coloured(self, tops: dict[int, int]) -> bool:
        """:attr:`coloured_mode`, given the visible cards (they are asked for often: every
        view and every grab looks at the duels)."""
        if self.is_ru:
            return self.coloured_ru
        return any(self.card(c).kind is Kind.COLOURED_ARROWS for c in tops.values())

    def open_duels(self) -> list[list[int]]:
        """Open duels, each the sorted seats in it (JS-4.1, JS-4.6)."""
        tops = self.visible()
        by_colour = self._coloured(tops)
        groups: dict[str, list[int]] = {}
        for seat, card_id in tops.items():
            key = self.card(card_id).key(by_colour)
            if key is not None:
                groups.setdefault(key, []).append(seat)
        duels = []
        for seats in groups.values():
            inside = [
                s
                for s in seats
                if any(t != s and sorted((tops[s], tops[t])) not in self.annulled for t in seats)
            ]
            if len(inside) >= 2:
                duels.append(sorted(inside))
        return sorted(duels)

    def open_arrows(self) -> list[int]:
        """Visible inward-arrows cards whose race is still open (JS-6.1, JS-4.7)."""
        return [
            c
            for c in self.visible().values()
            if self.card(c).kind is Kind.INWARD_ARROWS and c not in self.spent_arrows
        ]

    def timer_deadline_ms(self) -> int | None:
        """When the turn timer fires (JS-3.4), in wall milliseconds; None if not running."""
        if self.status is not MatchStatus.PLAYING or self.options.turn_timeout_ms == 0:
            return None
        return self.clock_ms + self.options.turn_timeout_ms

    def card_count(self) -> int:
        """Cards on the table: face down, face up and in the pot (JS-10.1)."""
        return sum(map(len, self.down)) + sum(map(len, self.up)) + len(self.pot)

    # ---- start (JS-2) ----------------------------------------------------------------

    def _on_start(self, stamp: ReceiveStamp) -> None:
        if self.options.prearranged_deal is not None:
            deck = list(self.options.prearranged_deal)
        else:
            deck = shuffled_deck(self.effective_seed(), len(self.deck))
        down, pot = deal_piles(deck, len(self.players), self.is_ru)
        self._dealt(seats=len(self.players), deck=deck, stamp=stamp.to_dict(), down=down, pot=pot)

    @event(Dealt)
    def _dealt(
        self,
        seats: int,
        deck: list[int],
        stamp: dict[str, Any],
        down: list[list[int]] | None,
        pot: list[int] | None,
        upcast: list[str] | None = None,
    ) -> None:
        if unrecorded(upcast, down=down, pot=pot):
            legacy.deal(self, seats, deck)
        else:
            assert down is not None and pot is not None
            self.down = [list(pile) for pile in down]
            self.up = [[] for _ in down]
            self.pot = list(pot)
        self.status = MatchStatus.PLAYING
        self.turn = 0  # JS-2.3: seat 0 reveals first (every seat is dealt 7 cards or more)
        self._tick(stamp)

    # ---- commands --------------------------------------------------------------------

    def execute(self, command: Command, seat: int | None, stamp: ReceiveStamp) -> None:
        match command:
            case Reveal():
                self.reveal(acting(seat), stamp)
            case Grab(target=target):
                self.grab(acting(seat), stamp, target)
            case _:
                super().execute(command, seat, stamp)

    # ---- revealing (JS-3) ------------------------------------------------------------

    def reveal(self, seat: int, stamp: ReceiveStamp) -> None:
        """Reveal the top face-down card of ``seat`` (JS-3.1, JS-3.2)."""
        self.settle_held()  # a race held open was decided before this reveal came
        self._require_in_game(seat)
        refusal = self.reveal_refusal(seat)
        if refusal is not None:
            raise refusal
        earliest = self.reveal_not_before_ms()
        if stamp.wall_ms < earliest:
            interval = self.options.min_reveal_interval_ms
            raise RuleViolation(
                "JS-3.4", f"a reveal must come at least {interval} ms after the previous one"
            )
        self._reveal(seat, REVEAL_TURN, stamp)

    def reveal_refusal(self, seat: int) -> RuleViolation | None:
        """Why ``seat`` may not reveal now, whatever the time, or None if it may."""
        if self.pending_outward is not None:
            return RuleViolation(
                "JS-6.2",
                "a simultaneous reveal is waiting: the open duels must be settled by a grab first",
            )
        if self.turn != seat:
            whose = "nobody can reveal" if self.turn is None else f"it is seat {self.turn}'s turn"
            return RuleViolation("JS-3.1", f"only the player whose turn it is may reveal; {whose}")
        return None

    def reveal_not_before_ms(self) -> int:
        """The earliest wall time (ms) of the next reveal (JS-3.4); 0 when there is no wait."""
        interval = self.options.min_reveal_interval_ms
        if self.last_reveal_ms is None or interval == 0:
            return 0
        return self.last_reveal_ms + interval

    def _reveal(self, seat: int, cause: str, stamp: ReceiveStamp) -> None:
        card_id = self.down[seat][0]
        board = self._scratch()
        board._turn_up(seat, card_id)
        board._colour(card_id)
        last = board._last_cards([[seat, card_id]] if not board.down[seat] else [])
        board._prune()
        self._revealed(
            seat=seat,
            card=card_id,
            cause=cause,
            stamp=stamp.to_dict(),
            turn=board._turn_from(seat + 1),  # JS-3.1, JS-3.3
            to_pot=last["to_pot"],
            collected=last["collected"],
            must_win=last["must_win"],
            coloured=board.coloured_ru,
        )
        if self._settle(stamp) and self.card(card_id).kind is Kind.OUTWARD_ARROWS:
            self._outward_chain(seat, stamp)

    @event(Revealed)
    def _revealed(
        self,
        seat: int,
        card: int,
        cause: str,
        stamp: dict[str, Any],
        turn: int | None,
        to_pot: list[int] | None,
        collected: list[int] | None,
        must_win: list[int] | None,
        coloured: bool | None,
        upcast: list[str] | None = None,
    ) -> None:
        if unrecorded(upcast, to_pot=to_pot, collected=collected):
            legacy.revealed(self, seat, card)
        else:
            assert to_pot is not None and collected is not None
            self._turn_up(seat, card)
            if coloured is None:  # version 2
                legacy.colour(self, card)
            self._apply_last(to_pot, seat if collected else None, collected, must_win)
            self._prune()
            self.turn = turn
        if coloured is not None:
            self.coloured_ru = coloured
        self.last_reveal_ms = ReceiveStamp.from_dict(stamp).wall_ms
        self._tick(stamp)
        # Whether or not the card stays visible (JS-7.2 sends a last one to the pot).
        self.outward_due = self.card(card).kind is Kind.OUTWARD_ARROWS

    def _outward_chain(self, seat: int, stamp: ReceiveStamp) -> None:
        """Simultaneous reveals, repeated while they show outward arrows (JS-6.2).

        A chained reveal nobody can make (no face-down cards anywhere) stays pending;
        the turn timer makes it once the piles are turned over (JS-3.4).
        """
        trigger: int | None = seat
        while trigger is not None and self.status is MatchStatus.PLAYING:
            reveals = [[s, self.down[s][0]] for s in self._revealers()]
            if not reveals:
                return
            self._outward_revealed(
                triggered_by=trigger,
                reveals=reveals,
                stamp=stamp.to_dict(),
                **self._outward(trigger, reveals),
            )
            trigger = None
            if self._settle(stamp) and self.pending_outward is not None and not self.open_duels():
                trigger = self.pending_outward

    def _outward(self, trigger: int, reveals: list[list[int]]) -> dict[str, Any]:
        """What a simultaneous reveal leads to (JS-6.2, JS-7), as ``OutwardReveal``
        records it."""
        board = self._scratch()
        for seat, card in reveals:
            board._turn_up(seat, card)
            board._colour(card)
        # Everyone reveals at once: the last-card exceptions (JS-7) apply once every
        # card is face up, so a player collecting "all face-up piles" (JS-7.3) takes the
        # cards revealed with theirs whatever the seat order.
        last = board._last_cards([[s, c] for s, c in reveals if not board.down[s]])
        board._prune()
        chained = [s for s, c in reveals if self.card(c).kind is Kind.OUTWARD_ARROWS]
        # Decided here for RU too, whose text is silent: the next simultaneous reveal
        # waits until the open duels are settled by a grab.
        waiting = chained[0] if chained else None
        if self.is_ru and not board.open_duels() and board.down[trigger]:
            # RU: no duel opened, so the revealer of the outward arrows plays on (JS-6.2).
            turn: int | None = trigger
        else:
            turn = board._turn_from(self.turn if self.turn is not None else trigger + 1)
        return dict(last, turn=turn, waiting=waiting, coloured=board.coloured_ru)

    @event(OutwardReveal)
    def _outward_revealed(
        self,
        triggered_by: int,
        reveals: list[list[int]],
        stamp: dict[str, Any],
        turn: int | None,
        waiting: int | None,
        to_pot: list[int] | None,
        collector: int | None,
        collected: list[int] | None,
        must_win: list[int] | None,
        coloured: bool | None,
        upcast: list[str] | None = None,
    ) -> None:
        self.pending_outward = None
        if unrecorded(upcast, to_pot=to_pot, collected=collected):
            legacy.outward_revealed(self, triggered_by, reveals)
        else:
            assert to_pot is not None and collected is not None
            for seat, card in reveals:
                self._turn_up(seat, card)
                if coloured is None:  # version 2
                    legacy.colour(self, card)
            self._apply_last(to_pot, collector, collected, must_win)
            self._prune()
            self.pending_outward = waiting
            self.turn = turn
        if coloured is not None:
            self.coloured_ru = coloured
        self.last_reveal_ms = ReceiveStamp.from_dict(stamp).wall_ms
        self._tick(stamp)

    def _turn_up(self, seat: int, card_id: int) -> bool:
        """Move the top face-down card face up; return whether it was the last one."""
        assert self.down[seat][:1] == [card_id], (
            f"card #{card_id} is not the top face-down card of seat {seat}"
        )
        self.down[seat].pop(0)
        self.up[seat].append(card_id)
        self.decided = []  # a reveal ends the late-grab window (JS-5.3)
        return not self.down[seat]

    def _colour(self, card_id: int) -> None:
        """The RU colour mode after ``card_id`` is revealed (JS-6.3): coloured arrows
        last until another special card (or the next grab)."""
        kind = self.card(card_id).kind
        if kind is not Kind.SYMBOL:
            self.coloured_ru = kind is Kind.COLOURED_ARROWS

    def _last_cards(self, last: list[list[int]]) -> dict[str, Any]:
        """The exceptions for players' last face-down cards (JS-7), ``[seat, card]`` in
        seat order, each card face up already: decided one after the other on this table
        (a copy, :meth:`_scratch`), moved on it, and returned as the event records them.

        Cards go to the pot before anyone collects: a pile collected first has no card
        left to send to the pot, so the order of the moves changes nothing."""
        to_pot: list[int] = []
        collector: int | None = None
        collected: list[int] = []
        must_win: list[int] | None = None
        for seat, card_id in last:
            kind = self.card(card_id).kind
            on_top = bool(self.up[seat]) and self.up[seat][-1] == card_id
            if kind is Kind.OUTWARD_ARROWS:
                if self.is_ru:  # JS-7.2 RU: finished at once, face-up pile to the pot.
                    moved = list(self.up[seat])
                elif on_top:  # JS-7.2 ES: the card goes into the pot.
                    moved = [card_id]
                else:
                    moved = []
                self._apply_last(moved, None, [], None)
                to_pot += moved
            elif kind is Kind.COLOURED_ARROWS and on_top:  # JS-7.3
                collector, collected = seat, self._collect_order(seat)
                self._apply_last([], collector, collected, None)
            elif kind is Kind.INWARD_ARROWS:  # JS-7.1
                must_win = [seat, card_id]
                self._apply_last([], None, [], must_win)
        return {
            "to_pot": to_pot,
            "collector": collector,
            "collected": collected,
            "must_win": must_win,
        }

    def _apply_last(
        self,
        to_pot: list[int],
        collector: int | None,
        collected: list[int],
        must_win: list[int] | None,
    ) -> None:
        """Apply recorded last-card exceptions (JS-7): the cards ``to_pot`` leave their
        face-up piles for the pot, in that order; ``collector`` takes the piles of the
        seats ``collected`` and the pot; ``must_win`` is the last-card race."""
        for card_id in to_pot:
            owner = next(s for s in self.seats if card_id in self.up[s])
            self.up[owner].remove(card_id)
            self.pot.append(card_id)
        if collector is not None:
            self.coloured_ru = False  # the coloured arrows have left the table (JS-7.3)
            self._take_piles(collector, collected)
        if must_win is not None:
            self.must_win = list(must_win)

    # ---- grabbing (JS-4, JS-5, JS-6.1) ----------------------------------------------

    def grab(self, seat: int, stamp: ReceiveStamp, target: str = TARGET_DEFAULT) -> str:
        """Grab the totem; return what it did: "duel", "arrows", "wrong", "late", or
        "held" for a grab that would win a race in a match with a tie window.

        Grabs are decided in the order the server received them (JS-4.2): this method is
        called in that order, so the first grab that finds a race open wins it, unless
        the match has a tie window (JS-4.2a): then that grab is held, the grabs that
        would win a race received within the window after it join it, and
        :meth:`settle_held` draws the winner among them.
        """
        self._require_in_game(seat)
        if target not in TARGETS:
            raise InvalidArgument("JS-6.1", f"grab target must be one of {', '.join(TARGETS)}")
        if target != TARGET_DEFAULT and self.is_ru:
            raise InvalidArgument(
                "JS-6.1", "only the ES variant lets the grabber choose between duel and arrows"
            )
        outcome, _ = self.grab_outcome(seat, target)
        if self.held is not None:
            if outcome in WINNING and self._joins(seat, stamp):
                self.held.entries.append(_contender(seat, target, stamp))
                return GRAB_HELD
            self.settle_held()
            outcome, _ = self.grab_outcome(seat, target)
        window = window_us(self.options.tie_window_us, self.options.call_tie_window_us, stamp)
        if outcome in WINNING and window:
            self.held = Held(stamp, window * 1000, [_contender(seat, target, stamp)])
            return GRAB_HELD
        return self._take_totem(seat, target, stamp)

    def _joins(self, seat: int, stamp: ReceiveStamp) -> bool:
        """Whether a winning grab by ``seat`` is simultaneous with the held one (JS-4.2a):
        within the window, and not a second grab of a seat already in it."""
        assert self.held is not None
        seats = {e["seat"] for e in self.held.entries}
        return seat not in seats and self.held.admits(stamp)

    def settle_held(self) -> None:
        """Decide a held race (JS-4.2a): alone, its grab wins as if it had never been
        held; with simultaneous grabs, the winner is drawn from the match's committed
        randomness, and the deciding event records the window, every contender and the
        draw. The other contenders' grabs do nothing more: they lost the draw."""
        held = self.held
        if held is None:
            return
        del self.held  # back to the class's None: nothing held stays in the state
        if len(held.entries) == 1:
            (only,) = held.entries
            self._take_totem(only["seat"], only["target"], held.first)
            return
        drawn = tie_draw(self.effective_seed(), self.GAME, self.version + 1, len(held.entries))
        winner = held.entries[drawn]
        stamp = ReceiveStamp.from_dict(winner["stamp"])
        self._take_totem(winner["seat"], winner["target"], stamp, tie_record(held, drawn))

    def _take_totem(
        self, seat: int, target: str, stamp: ReceiveStamp, tie: dict[str, Any] | None = None
    ) -> str:
        """What a grab does, decided now (JS-4.2 … JS-6.1), and what follows from it."""
        duels, arrows = self.open_duels(), self.open_arrows()
        outcome, mine = self._outcome(seat, target, duels, arrows)
        extra: dict[str, Any] = {} if tie is None else {"tie": tie}
        if outcome == GRAB_DUEL:
            assert mine is not None
            losers = self._opponents(seat, mine)
            dealt = self._duel_deal(seat, losers)
            board = self._scratch()
            board._put_under(dealt)
            self._duel_won(
                winner=seat,
                losers=losers,
                stamp=stamp.to_dict(),
                annulled=sorted({s for d in duels if d != mine for s in d}),
                arrows_annulled=bool(arrows),
                # The loser starts (JS-4.5); of several, the first from the winner's left.
                turn=board._turn_from(self._clockwise_after(seat, losers)[0]),
                dealt=dealt,
                participants=self._sharing_symbol(seat),
                **self._annulments(duels, arrows, seat),
                **extra,
            )
        elif outcome == GRAB_ARROWS:
            # JS-7.1: a player racing for their last card who loses it collects.
            racing = self.must_win is not None and self.must_win[1] in arrows
            loser = self.must_win[0] if racing and self.must_win else None
            collector = loser if loser != seat else None
            collected = [] if collector is None else self._collect_order(collector)
            to_pot = list(self.up[seat])  # the winner's face-up pile (JS-6.1)
            board = self._scratch()
            board._apply_last(to_pot, collector, collected, None)
            self._arrows_won(
                winner=seat,
                stamp=stamp.to_dict(),
                annulled=sorted({s for d in duels for s in d}),
                collector=collector,
                collected=collected,
                to_pot=to_pot,
                **self._annulments(duels, arrows, None),
                # The winner plays next (JS-6.1), after a lost last-card race too (JS-7.1):
                # taking the cards "as JS-5.2" does not make the collector start. Worked
                # out after the collecting, which gives the collector face-down cards to
                # play in turn again.
                turn=board._turn_from(seat),
                **extra,
            )
        elif outcome == GRAB_LATE:
            decided = self._decided_for(seat)
            self._late_grab(seat=seat, stamp=stamp.to_dict(), decided_at_version=decided[-1])
            return outcome
        else:
            collected = self._collect_order(seat)  # JS-5.2
            board = self._scratch()
            board._take_piles(seat, collected)
            self._wrong_grab(
                seat=seat, stamp=stamp.to_dict(), collected=collected, turn=board._turn_from(seat)
            )
        if self._settle(stamp) and self.pending_outward is not None:
            self._outward_chain(self.pending_outward, stamp)
        return outcome

    def grab_outcome(self, seat: int, target: str = TARGET_DEFAULT) -> tuple[str, list[int] | None]:
        """What a grab by ``seat`` would do now, and the duel it would resolve.

        One of :data:`GRAB_DUEL`, :data:`GRAB_ARROWS`, :data:`GRAB_LATE`,
        :data:`GRAB_WRONG`: the one decision behind both :meth:`grab` and the legal actions
        of a view, so the two never disagree.
        """
        return self._outcome(seat, target, self.open_duels(), self.open_arrows())

    def _outcome(
        self, seat: int, target: str, duels: list[list[int]], arrows: list[int]
    ) -> tuple[str, list[int] | None]:
        """:meth:`grab_outcome`, given the open duels and arrows races (worked out once
        by a caller that asks for several targets)."""
        mine = next((d for d in duels if seat in d), None)
        if mine is not None and (not arrows or target != TARGET_ARROWS):
            return GRAB_DUEL, mine
        if arrows:
            return GRAB_ARROWS, None
        if self._decided_for(seat):
            return GRAB_LATE, None
        return GRAB_WRONG, None

    def _decided_for(self, seat: int) -> list[int]:
        """Versions of the races ``seat`` took part in that were decided since the last
        reveal (JS-5.3): a grab by ``seat`` now is late for them."""
        return [d["version"] for d in self.decided if d["seats"] is None or seat in d["seats"]]

    def legal_actions(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may do now (a player's view shows it), from the same checks as
        the commands: ``start``, ``reveal`` with ``reveal_not_before_ms``, and ``grabs``,
        the grabs that would win a race, each with its target, what it resolves and the
        seats it beats; the server's default target first."""
        legal: dict[str, Any] = {
            "start": self.start_refusal(seat) is None,
            "reveal": False,
            "reveal_not_before_ms": 0,
            "grabs": [],
        }
        if self.status is not MatchStatus.PLAYING or not 0 <= seat < len(self.players):
            return legal
        if not self.active(seat):
            return legal
        if self.reveal_refusal(seat) is None:
            legal["reveal"] = True
            legal["reveal_not_before_ms"] = self.reveal_not_before_ms()
        targets = [TARGET_DEFAULT] if self.is_ru else [TARGET_DEFAULT, TARGET_ARROWS]
        seen: set[str] = set()
        duels, arrows = self.open_duels(), self.open_arrows()
        for target in targets:
            outcome, duel = self._outcome(seat, target, duels, arrows)
            if outcome in seen or outcome not in (GRAB_DUEL, GRAB_ARROWS):
                continue
            seen.add(outcome)
            opponents = self._opponents(seat, duel) if duel is not None else []
            legal["grabs"].append({"target": target, "resolves": outcome, "opponents": opponents})
        return legal

    @event(DuelWon)
    def _duel_won(
        self,
        winner: int,
        losers: list[int],
        stamp: dict[str, Any],
        annulled: list[int],
        arrows_annulled: bool,
        turn: int | None,
        dealt: list[list[Any]] | None,
        pairs: list[list[int]] | None,
        spent: list[int] | None,
        participants: list[int] | None,
        tie: dict[str, Any] | None = None,
        upcast: list[str] | None = None,
    ) -> None:
        """``tie``: the simultaneous grabs the winner was drawn from (JS-4.2a), if any."""
        if unrecorded(upcast, dealt=dealt, pairs=pairs, spent=spent):
            participants = legacy.sharing_symbol(self, winner)  # before any card moves
            legacy.annul_all_but(self, winner)
            legacy.deal_duel(self, winner, losers)
        else:
            assert dealt is not None and pairs is not None and spent is not None
            self._annul(pairs, spent)
            self._put_under(dealt)
        if unrecorded(upcast, turn=turn):
            legacy.duel_turn(self, winner, losers)
        else:
            self.turn = turn
        self._grabbed(participants, stamp)

    def _duel_deal(self, winner: int, losers: list[int]) -> list[list[Any]]:
        """Where the cards of a duel won go (JS-4.3, JS-4.4): ``[seat, cards]`` for each
        loser, the cards to put under its face-down pile in that order."""
        pile = self.up[winner] + self.pot
        if len(losers) == 1:  # JS-4.3: the winner's pile, the loser's own, the pot.
            (loser,) = losers
            return [[loser, self.up[winner] + self.up[loser] + self.pot]]
        # JS-4.4: each loser takes back its own pile; the winner's pile, then the pot, are
        # dealt one by one, clockwise from the winner's left.
        order = self._clockwise_after(winner, losers)
        return [[loser, self.up[loser] + pile[i :: len(order)]] for i, loser in enumerate(order)]

    def _put_under(self, dealt: list[list[Any]]) -> None:
        """Apply a recorded deal: each ``[seat, cards]`` puts those cards, taken from the
        face-up piles and the pot, under the seat's face-down pile in that order."""
        moved = {card_id for _, cards in dealt for card_id in cards}
        self.up = [[c for c in pile if c not in moved] for pile in self.up]
        self.pot = [c for c in self.pot if c not in moved]
        for seat, cards in dealt:
            self.down[seat] += cards

    @event(ArrowsWon)
    def _arrows_won(
        self,
        winner: int,
        stamp: dict[str, Any],
        annulled: list[int],
        collector: int | None,
        collected: list[int] | None,
        turn: int | None,
        to_pot: list[int] | None,
        pairs: list[list[int]] | None,
        spent: list[int] | None,
        tie: dict[str, Any] | None = None,
        upcast: list[str] | None = None,
    ) -> None:
        """``tie``: the simultaneous grabs the winner was drawn from (JS-4.2a), if any."""
        before_v2 = unrecorded(upcast, collected=collected)
        if before_v2 and self.must_win and self.must_win[1] in legacy.open_arrows(self):
            racing = self.must_win  # the last-card race lost (JS-7.1), as version 1 read it
        else:
            racing = None
        if unrecorded(upcast, to_pot=to_pot, pairs=pairs, spent=spent):
            legacy.annul_all_but(self, None)
            legacy.pot_pile(self, winner)
        else:
            assert to_pot is not None and pairs is not None and spent is not None
            self._annul(pairs, spent)
            self._apply_last(to_pot, None, [], None)
        if before_v2:
            legacy.arrows_collected(self, racing, winner)
        else:
            assert collected is not None
            if collector is not None:
                self._take_piles(collector, collected)
            self.turn = turn
        self.must_win = None
        self._grabbed(None, stamp)

    @event(WrongGrab)
    def _wrong_grab(
        self,
        seat: int,
        stamp: dict[str, Any],
        collected: list[int] | None,
        turn: int | None,
        upcast: list[str] | None = None,
    ) -> None:
        if unrecorded(upcast, collected=collected):
            legacy.wrong_grab(self, seat)
        else:
            assert collected is not None
            self._take_piles(seat, collected)
            self.turn = turn
        self.coloured_ru = False
        self._prune()
        self._tick(stamp)
        self._release_outward()

    @event("LateGrab")
    def _late_grab(self, seat: int, stamp: dict[str, Any], decided_at_version: int) -> None:
        """Recorded as evidence; it changes nothing (JS-5.3)."""

    def _sharing_symbol(self, seat: int) -> list[int]:
        """The participants of the duel ``seat`` wins, for late grabs (JS-5.3): every seat
        whose visible card shares the symbol of ``seat``'s (JS-4.1), including one whose
        pair with ``seat`` was annulled (JS-4.6) and who therefore does not lose."""
        by_colour = self.coloured_mode
        symbol = self.card(self.up[seat][-1]).key(by_colour)
        return [s for s, c in self.visible().items() if self.card(c).key(by_colour) == symbol]

    def _opponents(self, seat: int, duel: list[int]) -> list[int]:
        """Who loses to ``seat`` in ``duel``: everyone in it but a player whose pair with
        ``seat`` was annulled, who does not duel ``seat`` again until a card of the pair
        is covered (JS-4.6)."""
        tops = self.visible()
        return [s for s in duel if s != seat and sorted((tops[s], tops[seat])) not in self.annulled]

    def _annulments(
        self, duels: list[list[int]], arrows: list[int], winner: int | None
    ) -> dict[str, Any]:
        """What a grab annuls (JS-4.6, JS-6.1): it resolves one race, the duel of
        ``winner`` (None: an arrows race), and annuls the others' ``duels``, each pair of
        visible cards in them (``pairs``), and the open arrows races (``spent``)."""
        tops = self.visible()
        pairs: list[list[int]] = []
        for duel in duels:
            if winner in duel:
                continue
            for a in duel:
                for b in duel:
                    pair = sorted((tops[a], tops[b]))
                    if a < b and pair not in self.annulled and pair not in pairs:
                        pairs.append(pair)
        spent = [c for c in arrows if c not in self.spent_arrows]
        return {"pairs": pairs, "spent": spent}

    def _annul(self, pairs: list[list[int]], spent: list[int]) -> None:
        """Apply what a grab annuls: pairs of cards that duel no more and races over."""
        self.annulled += [list(pair) for pair in pairs]
        self.spent_arrows += spent

    def _grabbed(self, seats: list[int] | None, stamp: dict[str, Any]) -> None:
        """A race was decided: its participants (``None``: everyone, an arrows race) grab
        late from now until the next reveal (JS-5.3)."""
        self.decided.append({"seats": seats, "version": self.version + 1})
        self.coloured_ru = False  # RU coloured arrows end when the totem is grabbed (JS-6.3).
        self._prune()
        self._tick(stamp)
        self._release_outward()

    def _release_outward(self) -> None:
        """A grab settled the duels a chained simultaneous reveal waited for (JS-6.2): that
        reveal follows at once, whatever duels are still open, as the grab's command makes
        it; the state between owes it (:meth:`pending_step`)."""
        self.outward_due = self.pending_outward is not None

    def _collect_order(self, seat: int) -> list[int]:
        """Whose face-up piles ``seat`` takes when taking them all (JS-5.2, JS-7.4), in
        order: the others' clockwise from one's left, then one's own (the pot follows)."""
        return [*self._clockwise_after(seat, [s for s in self.seats if s != seat]), seat]

    def _take_piles(self, collector: int, seats: list[int]) -> None:
        """``collector`` puts the face-up piles of ``seats``, in that order, and then the
        pot under their face-down pile, as an event records it."""
        for s in seats:
            self.down[collector] += self.up[s]
            self.up[s] = []
        self.down[collector] += self.pot
        self.pot = []

    def _scratch(self) -> JungleSpeed:
        """A copy of the table on which a command works out what its event leads to:
        its piles and bookkeeping are its own, and nothing is ever triggered on it."""
        board = copy.copy(self)
        board.down = [list(p) for p in self.down]
        board.up = [list(p) for p in self.up]
        board.pot = list(self.pot)
        board.annulled = [list(p) for p in self.annulled]
        board.spent_arrows = list(self.spent_arrows)
        board.must_win = None if self.must_win is None else list(self.must_win)
        board.decided = list(self.decided)
        board.places = dict(self.places)
        board.finished = list(self.finished)
        return board

    # ---- the turn timer (JS-3.4) -------------------------------------------------------

    def fire_timer(self, stamp: ReceiveStamp) -> None:
        """The turn timer elapsed: the server acts for the table (JS-3.4).

        It reveals for the player whose turn it is; if a simultaneous reveal is waiting
        it makes it; if nobody can reveal, every face-up pile is turned over onto its
        owner's face-down pile, shuffled (decided here, so a match never stalls).
        """
        self.settle_held()
        self._require_playing()
        if not self.timer_due(stamp):
            raise RuleViolation("JS-3.4", "the turn timer has not elapsed")
        if self.pending_outward is not None and self._revealers():
            self._outward_chain(self.pending_outward, stamp)
        elif self.turn is not None:
            self._reveal(self.turn, REVEAL_TIMEOUT, stamp)
        else:
            self._recycle(stamp)
            if self._settle(stamp) and self.pending_outward is not None:
                # The simultaneous reveal nobody could make happens now (JS-6.2).
                self._outward_chain(self.pending_outward, stamp)

    def _recycle(self, stamp: ReceiveStamp) -> None:
        """Turn every face-up pile over, each shuffled (decided here).

        Turned over in order, the piles would replay the same reveals, with the same lack
        of duels, for ever; each recycling therefore shuffles each pile with the match's
        seeded random source (its own stream per recycling), and records the result.
        """
        sizes = [len(pile) for pile in self.up]
        orders = recycle_orders(self.effective_seed(), self.recycled, sizes)
        board = self._scratch()
        board._turn_over(orders)
        self._piles_recycled(orders=orders, stamp=stamp.to_dict(), turn=board._turn_from(0))

    @event(PilesRecycled)
    def _piles_recycled(
        self,
        orders: list[list[int]],
        stamp: dict[str, Any],
        turn: int | None,
        upcast: list[str] | None = None,
    ) -> None:
        self._turn_over(orders)
        self.recycled += 1
        if unrecorded(upcast, turn=turn):
            legacy.recycled_turn(self)
        else:
            self.turn = turn
        self._prune()
        self._tick(stamp)

    def _turn_over(self, orders: list[list[int]]) -> None:
        """Each face-up pile goes under its owner's face-down pile in the recorded order."""
        for seat in self.seats:
            self.down[seat] += [self.up[seat][i] for i in orders[seat]]
            self.up[seat] = []

    # ---- finishing (JS-8) -------------------------------------------------------------

    def _settle(self, stamp: ReceiveStamp) -> bool:
        """Record finishes and the end; return whether play goes on."""
        if self.status is not MatchStatus.PLAYING:
            return False
        done = [s for s in self.seats if self.active(s) and not self.down[s] and not self.up[s]]
        place = len(self.finished) + 1
        for seat in done:
            turn = self.turn
            if turn == seat:  # the finisher's turn passes on (JS-3.3, JS-8.1)
                board = self._scratch()
                board.places[seat] = place
                turn = board._turn_from(seat + 1)
            self._player_finished(seat=seat, place=place, turn=turn)
        remaining = [s for s in self.seats if self.active(s)]
        started = len(self.players)
        # JS-8.2 RU: the first to finish wins. ES: play on until two players remain (one,
        # in a match that started with two).
        over = self.is_ru or len(remaining) <= (2 if started > 2 else 1)
        if done and over:
            self._end(EndReason.COMPLETED, self._result(remaining))
        return self.status is MatchStatus.PLAYING

    def pending_step(self) -> RuleViolation | None:
        """What :meth:`_settle` and the outward chain still owe this state: a finish, the
        end, or a simultaneous reveal that runs without waiting: after a reveal of
        outward arrows, or a chained one with no duel open (not one held back until a
        grab settles the open duels, nor one nobody can make before the timer)."""
        if self.status is not MatchStatus.PLAYING:
            return None
        done = [s for s in self.seats if self.active(s) and not self.down[s] and not self.up[s]]
        if done:
            return RuleViolation("JS-8.1", f"seat {done[0]} has no card left and finishes at once")
        remaining = [s for s in self.seats if self.active(s)]
        if self.finished and (self.is_ru or len(remaining) <= (2 if len(self.players) > 2 else 1)):
            return RuleViolation("JS-8.2", "enough players have finished: the match ends at once")
        revealers = bool(self._revealers())
        waiting = self.pending_outward is not None and not self.open_duels()
        if revealers and (self.outward_due or waiting):
            return RuleViolation(
                "JS-6.2", "outward arrows are face up: the simultaneous reveal follows at once"
            )
        return None

    def seats_in_play(self) -> list[int]:
        """Finished players have left the game (JS-8.1): only the others' absence counts."""
        return [s for s in self.seats if self.active(s)]

    def standings(self) -> list[dict[str, int]]:
        """The finishing order so far, the players still in sharing the next place."""
        return self._result(self.seats_in_play())

    def _result(self, remaining: list[int]) -> list[dict[str, int]]:
        """The finishing order, then the players still in (JS-8.2). RU: everyone who
        finished is first, however many finished together, and every other player is
        second. ES: the remaining players share the place after every finisher."""
        last = 2 if self.is_ru else len(self.finished) + 1
        ranked = [{"seat": s, "place": self.places[s]} for s in self.finished]
        return ranked + [{"seat": s, "place": last} for s in remaining]

    @event(PlayerFinished)
    def _player_finished(
        self, seat: int, place: int, turn: int | None, upcast: list[str] | None = None
    ) -> None:
        self.finished.append(seat)
        self.places[seat] = place
        if unrecorded(upcast, turn=turn):
            legacy.finished_turn(self, seat)
        else:
            self.turn = turn

    # ---- helpers ----------------------------------------------------------------------

    def _require_in_game(self, seat: int) -> None:
        self._require_playing()
        self._require_seated(seat)
        if not self.active(seat):
            raise RuleViolation("JS-8.1", f"seat {seat} has finished and left the game")

    def _revealers(self) -> list[int]:
        """Seats that can reveal: still in the game, with face-down cards (JS-3.3)."""
        return [s for s in self.seats if self.active(s) and self.down[s]]

    def _clockwise_after(self, seat: int, among: list[int]) -> list[int]:
        """``among`` ordered clockwise starting from the left of ``seat``."""
        n = len(self.players)
        return sorted(among, key=lambda s: (s - seat - 1) % n)

    def _turn_from(self, seat: int) -> int | None:
        """The first active seat with face-down cards, clockwise from ``seat`` (JS-3.3)."""
        n = len(self.players)
        for i in range(n):
            s = (seat + i) % n
            if self.active(s) and self.down[s]:
                return s
        return None

    def _prune(self) -> None:
        """Forget annulments and spent races of cards that are no longer visible."""
        tops = set(self.visible().values())
        self.annulled = [p for p in self.annulled if p[0] in tops and p[1] in tops]
        self.spent_arrows = [c for c in self.spent_arrows if c in tops]
        if self.must_win is not None and (
            self.must_win[1] not in tops or self.must_win[1] in self.spent_arrows
        ):
            self.must_win = None

    def _tick(self, stamp: dict[str, Any]) -> None:
        """The kernel's clock; and a stamped event ends what the last one set off: the
        simultaneous reveal outward arrows owe is due only right after the event that
        calls for it (a reveal of them, :meth:`_release_outward`)."""
        super()._tick(stamp)
        self.outward_due = False


register_game(JungleSpeed)
