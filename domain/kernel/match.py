"""The base aggregate every game's match extends: chain, seed, seats, the end.

A match aggregate follows the ``eventsourcing`` pattern: public command methods check
the rules and raise a :class:`~domain.kernel.errors.DomainError` without triggering
anything, then call private ``@event`` methods whose bodies only mutate state. Those
bodies run again, unchanged, whenever the match is rebuilt from its stored events.

Every event carries the audit chain (:mod:`domain.kernel.chain`): the kernel's chained
base (:mod:`domain.kernel.chained`) adds ``prev_digest`` and ``digest`` as each event is
triggered, so no game has to think of it, and signs ``MatchEnded``.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Mapping
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.kernel.chained import ChainedAggregate
from domain.kernel.commands import Command, Start, Stop
from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.kernel.options import DEFAULT_ABANDON_AFTER_MS
from domain.kernel.randomness import commitment, effective_seed
from domain.kernel.snapshots import FrozenSnapshot
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.ties import Held, stamps_of

MAX_NAME_LENGTH = 40
MAX_ENTROPY_BYTES = 64
#: A referee's statement when stopping a match.
MAX_STATEMENT_CHARS = 200


def check_entropy(rule: str, entropy: bytes) -> None:
    """A player's contribution to the seed is bounded (see docs/randomness.md)."""
    if len(entropy) > MAX_ENTROPY_BYTES:
        raise InvalidArgument(rule, f"entropy is limited to {MAX_ENTROPY_BYTES} bytes")


class MatchStatus(enum.Enum):
    WAITING = "waiting"
    PLAYING = "playing"
    ENDED = "ended"


class EndReason(enum.Enum):
    COMPLETED = "completed"
    ABANDONED = "abandoned"
    STOPPED = "stopped"


class MatchAggregate(ChainedAggregate):
    """What every match has: options, a committed seed, seats, a status and a result.

    Subclasses set ``GAME``, ``MIN_PLAYERS``, ``PLAYERS_RULE``, ``START_RULE`` and
    ``END_RULES``, define an
    ``@event("Created") __init__(self, options, seed, entropy, referee_token_hash)`` that calls
    ``_init_match`` and then sets up the game, implement ``_on_start`` (what happens when
    the seats are settled), and report ``max_players``.
    """

    GAME: ClassVar[str] = ""
    MIN_PLAYERS: ClassVar[int] = 2
    #: The rule id cited when a seat cannot be taken.
    PLAYERS_RULE: ClassVar[str] = ""
    #: The rule id cited when a command needs a match in play that has not started: the
    #: game's rule for what happens at the start.
    START_RULE: ClassVar[str] = ""
    #: The rule ids cited when a command needs a match in play that has ended, by how it
    #: ended: the game's rules that say so.
    END_RULES: ClassVar[Mapping[EndReason, str]] = {}

    class Event(ChainedAggregate.Event):
        def mutate(self, aggregate: Any) -> Any:
            agg = super().mutate(aggregate)
            stamp = getattr(self, "stamp", None)
            receive = ReceiveStamp.from_dict(stamp).receive if isinstance(stamp, dict) else 0
            if receive:
                agg.last_receive = receive
            if getattr(self, "tie", None):  # contenders received after the winner
                numbers = [s.receive for s in stamps_of(vars(self))]
                agg.last_receive = max(agg.last_receive, *numbers)
            return agg

    class Created(Event, Aggregate.Created):
        pass

    class MatchEnded(Event):
        """Every match's last event, however it ended (:func:`is_final`): the one event
        the kernel signs as it is triggered (:meth:`signs`), each game's own
        ``MatchEnded`` deriving from this one. ``signature`` and ``public_key`` (hex;
        empty: not signed) are outside the digest; ``statement``: why a match that did not
        complete ended (a referee's words, or the server's observation of an
        abandonment)."""

        reason: str
        result: list[dict[str, int]]
        seed: str
        signature: str = ""
        public_key: str = ""
        statement: str = ""

    #: Attributes no event sets, never put in a snapshot: the server's signer holds its
    #: private key, and is given again to every match an actor takes.
    TRANSIENT: ClassVar[frozenset[str]] = frozenset({"signer", "held"})

    class Snapshot(FrozenSnapshot):
        """The match's whole state at one version, as its events built it, each value
        kept with its type (:mod:`domain.kernel.snapshots`)."""

    #: The receive number in the stamp of the latest event that has one
    #: (:attr:`~domain.kernel.stamps.ReceiveStamp.receive`): the last applied command's.
    last_receive: int = 0
    #: A decision held open for simultaneous commands (:mod:`domain.kernel.ties`):
    #: only ever set between the commands of one batch of the server's actor.
    held: Held | None = None

    # ---- the audit chain (domain.kernel.chained) ------------------------------------

    @classmethod
    def signs(cls, event_class: type) -> bool:
        """``MatchEnded`` is the event the kernel signs: every game's ends a match."""
        return issubclass(event_class, MatchAggregate.MatchEnded)

    # ---- creation ----------------------------------------------------------------

    def _init_match(
        self, options: dict[str, Any], seed: str, entropy: str, referee_token_hash: str
    ) -> None:
        """State every match has; called by each game's ``Created`` event body, which
        is the game's ``__init__`` (the library binds the created event to it)."""
        self.options_data = options
        self.seed = seed
        self.seed_commitment = commitment(bytes.fromhex(seed))
        self.entropies = [entropy]
        self.players: list[str] = []
        #: SHA-256 of each seat's bearer token, and of the referee's. Never in a view.
        self.token_hashes: list[str] = []
        self.referee_token_hash = referee_token_hash
        self.status = MatchStatus.WAITING
        self.result: list[dict[str, int]] = []
        self.end_reason: EndReason | None = None
        #: A fork's origin, ``{"match_id", "version", "digest"}`` (domain.kernel.fork).
        self.origin: dict[str, Any] | None = None
        #: The match's clock (wall ms): the receive time of the latest event that moved it
        #: (:meth:`_tick`), from which its timers count. Never the time a replay runs.
        self.clock_ms = 0

    @property
    def max_players(self) -> int:
        raise NotImplementedError

    @property
    def variant(self) -> str:
        return ""

    # ---- commands ----------------------------------------------------------------

    def execute(self, command: Command, seat: int | None, stamp: ReceiveStamp) -> None:
        """Run ``command`` for ``seat`` (None for a referee command), received at
        ``stamp``: the one way a command reaches a match (:mod:`domain.kernel.commands`).

        Each game extends this with one ``match`` on its own commands and hands the
        others here. Who may send a command (``Command.REFEREE``) was checked by whoever
        authenticated the sender; the rules are checked by the method it runs."""
        match command:
            case Start():
                self.start(acting(seat), stamp)
            case Stop(statement=statement, result=result):
                self.stop(statement, list(result))
            case _:
                raise InvalidArgument(
                    self.PLAYERS_RULE, f"{type(command).__name__} is not a command of {self.GAME}"
                )

    # ---- seats -------------------------------------------------------------------

    def join(
        self,
        name: str,
        entropy: bytes,
        token_hash: str,
        stamp: ReceiveStamp,
        seat: int | None = None,
    ) -> int:
        """Take a seat (``seat=None``: the lowest free one) and return it.

        ``token_hash`` is the SHA-256 of the bearer token the server gives the player;
        storing it in the event lets any server instance authenticate the seat after a
        restart. The match starts by itself when the last seat is taken.
        """
        name = name.strip()
        if not name or len(name) > MAX_NAME_LENGTH:
            raise InvalidArgument(
                self.PLAYERS_RULE, f"a player name must have 1 to {MAX_NAME_LENGTH} characters"
            )
        check_name(self.PLAYERS_RULE, name)
        check_entropy(self.PLAYERS_RULE, entropy)
        self._require_not_ended()
        if self.status is not MatchStatus.WAITING:
            raise RuleViolation(self.PLAYERS_RULE, "the match has started: no seat is free")
        if self.options_data.get("reserved_for") is not None:
            if not self.reserves(token_hash):
                raise RuleViolation(
                    "TO-9.2",
                    "this match is a tournament table: only its entrants take its seats, "
                    "seated by their tournament",
                )
            if token_hash in self.token_hashes:
                raise RuleViolation("TO-9.2", "this entrant has already taken a seat here")
        taken = len(self.players)
        if seat is None:
            seat = taken
        elif seat >= self.max_players:
            raise InvalidArgument(
                self.PLAYERS_RULE,
                f"seat {seat} does not exist: seats are 0 to {self.max_players - 1}",
            )
        elif seat != taken:
            # Seats fill in order so that seat numbers stay dense (clockwise order).
            raise RuleViolation(
                self.PLAYERS_RULE, f"seat {seat} is not the next free seat; seat {taken} is"
            )
        self._player_joined(
            seat=seat,
            name=name,
            entropy=entropy.hex(),
            token_hash=token_hash,
            stamp=stamp.to_dict(),
        )
        if len(self.players) == self.max_players:
            self._on_start(stamp)
        return seat

    @event("PlayerJoined")
    def _player_joined(
        self, seat: int, name: str, entropy: str, token_hash: str, stamp: dict[str, Any]
    ) -> None:
        self.players.append(name)
        self.token_hashes.append(token_hash)
        self.entropies.append(entropy)

    def start(self, seat: int, stamp: ReceiveStamp) -> None:
        """Start with the seats taken so far, at a seated player's request."""
        refusal = self.start_refusal(seat)
        if refusal is not None:
            raise refusal
        self._on_start(stamp)

    def start_refusal(self, seat: int) -> RuleViolation | None:
        """Why ``seat`` may not start the match now, or None if it may: the one check
        behind both :meth:`start` and the legal actions of a view."""
        if not 0 <= seat < len(self.players):
            return RuleViolation(self.PLAYERS_RULE, f"seat {seat} is not taken in this match")
        if self.status is MatchStatus.ENDED:
            return self._ended()
        if self.status is not MatchStatus.WAITING:
            return RuleViolation(self.PLAYERS_RULE, "the match has already started")
        if len(self.players) < self.MIN_PLAYERS:
            return RuleViolation(
                self.PLAYERS_RULE, f"at least {self.MIN_PLAYERS} players are needed to start"
            )
        return None

    def reissue_token(self, seat: int, token_hash: str) -> None:
        """Give ``seat`` a new bearer token (its hash), at the referee's request: the
        player lost theirs. The previous token stops working."""
        self._require_seated(seat)
        self._require_not_ended()
        self._token_reissued(seat=seat, token_hash=token_hash)

    @event("TokenReissued")
    def _token_reissued(self, seat: int, token_hash: str) -> None:
        self.token_hashes[seat] = token_hash

    def _on_start(self, stamp: ReceiveStamp) -> None:
        raise NotImplementedError

    def reserves(self, token_hash: str) -> bool:
        """Whether this match keeps a seat for the holder of this token (a tournament
        table's entrant, TO-9.2): their own token is then their seat's."""
        reserved = self.options_data.get("reserved_for")
        return reserved is not None and token_hash in reserved

    def seat_of(self, token_hash: str) -> int | None:
        """The seat whose token has this hash, if any."""
        try:
            return self.token_hashes.index(token_hash)
        except ValueError:
            return None

    def effective_seed(self) -> bytes:
        """The seed every draw of this match derives from (see docs/randomness.md)."""
        return effective_seed(bytes.fromhex(self.seed), (bytes.fromhex(e) for e in self.entropies))

    def _require_seated(self, seat: int) -> None:
        if not 0 <= seat < len(self.players):
            raise RuleViolation(self.PLAYERS_RULE, f"seat {seat} is not taken in this match")

    # ---- parties: the sides a seat plays -------------------------------------------

    def parties_of(self, seat: int) -> list[int]:
        """The parties (sides that take decisions) ``seat`` plays: by default the seat
        itself. A game where a seat plays several sides (Village's families with two
        players) overrides this and :meth:`party_owner`."""
        return [seat]

    def party_owner(self, party: int) -> int:
        """The seat that plays ``party``."""
        return party

    def _require_playing(self) -> None:
        """Refuse a command outside play, citing the rule that starts or ended the match
        (not the rule of the command: that one says nothing about it)."""
        if self.status is MatchStatus.WAITING:
            raise RuleViolation(self.START_RULE, "the match has not started yet")
        self._require_not_ended()

    def _require_not_ended(self) -> None:
        if self.status is MatchStatus.ENDED:
            raise self._ended()

    def _ended(self) -> RuleViolation:
        """The refusal of any command once the match has ended, naming the rule that
        ended it."""
        assert self.end_reason is not None
        return RuleViolation(self.END_RULES[self.end_reason], "the match has ended")

    # ---- simultaneous commands (domain.kernel.ties) -----------------------------

    def held_until_ns(self) -> int | None:
        """The receive time (``monotonic_ns`` of the stamps) until which this match holds
        a decision open for simultaneous commands, or None when it holds none.

        The server then runs the commands of the same kind received until that time, and
        calls :meth:`settle_held` before it saves or answers anything."""
        return None if self.held is None else self.held.deadline_ns

    def settle_held(self) -> None:
        """Decide what is held (a game that holds decisions overrides it); nothing held,
        nothing to do."""
        if self.held is not None:
            del self.held

    # ---- timers ------------------------------------------------------------------

    def timer_deadline_ms(self) -> int | None:
        """When this match's timer fires next (wall ms), or None. The server owns the
        timer and rebuilds it from this after a restart."""
        return None

    def timer_due(self, stamp: ReceiveStamp) -> bool:
        deadline = self.timer_deadline_ms()
        return deadline is not None and stamp.wall_ms >= deadline

    def _tick(self, stamp: dict[str, Any]) -> None:
        """Move the clock to the receive time of ``stamp`` (as an event stores it): called
        by the bodies of the events a game's timers count from, so that a replay's clock
        is the recorded one."""
        self.clock_ms = ReceiveStamp.from_dict(stamp).wall_ms

    def restart_clock(self, wall_ms: int) -> None:
        """Run the match's clock from ``wall_ms`` on: a fork (:mod:`domain.kernel.fork`)
        resumes a position recorded earlier, and its timers count from the fork's start,
        not from the origin's last event. Games with deadlines of their own move them too.
        """
        self.clock_ms = wall_ms

    def pending_step(self) -> RuleViolation | None:
        """The automatic step this state owes before anyone may act, or None when it
        waits for a command or a timer.

        A command records several events (a move, the round it wins, the next round's
        draw): the states between them are stored, and shown, but no command ever meets
        them, and nothing would run their step if play resumed there (a fork,
        :mod:`domain.kernel.fork`). The answer names the rule of the step and says it in a
        sentence. Games with such steps override this; a state out of play owes none."""
        return None

    def renew_secret(self, secret: bytes) -> None:
        """Take a fresh secret of the server's, beside the seed, for a fork: a game with
        a secret of its own (Village's salts, VI-2.2) must not reuse the origin's, whose
        outcomes the origin may have shown. Games without one ignore it."""

    def fire_timer(self, stamp: ReceiveStamp) -> None:
        """Act for the table because the timer elapsed; the stamp is when it fired."""
        raise RuleViolation(self.PLAYERS_RULE, "this match has no timer")

    # ---- the end -----------------------------------------------------------------

    @property
    def abandon_after_ms(self) -> int:
        """How long every remaining player may be away before the match is abandoned (a
        match stored before the option existed takes its default)."""
        return int(self.options_data.get("abandon_after_ms", DEFAULT_ABANDON_AFTER_MS))

    def seats_in_play(self) -> list[int]:
        """The seats still playing, whose absence abandons the match: by default every
        seat taken. A game where players leave before the end (Jungle Speed's finished
        players, JS-8.1) overrides this."""
        return list(range(len(self.players)))

    def standings(self) -> list[dict[str, int]]:
        """The result if the match ended now without a winner: by default every seat
        shares first place. Games with a partial order so far override this."""
        return [{"seat": seat, "place": 1} for seat in range(len(self.players))]

    def abandon(self, statement: str) -> None:
        """End the match as abandoned: waiting with nobody joining, or in play with every
        remaining player away for :attr:`abandon_after_ms` (the game's rule for it in
        ``END_RULES``: JS-8.3 in Jungle Speed). Whether they were
        away is the server's observation (streams and commands are not events): the
        server states it, and the statement is recorded with the end."""
        self._require_not_ended()
        self._end(EndReason.ABANDONED, self.standings(), statement)

    def stop(self, statement: str, result: list[dict[str, int]] | None = None) -> None:
        """A referee stops the match (the game's rule for it in ``END_RULES``), saying
        why in ``statement``, with the result they state (every seat taken exactly once,
        places from 1) or, without one, the standings so far."""
        rule = self.END_RULES[EndReason.STOPPED]
        self._require_not_ended()
        text = statement.strip()
        if not 1 <= len(text) <= MAX_STATEMENT_CHARS or not is_clean_text(text):
            raise InvalidArgument(
                rule,
                f"a stop needs a statement of 1 to {MAX_STATEMENT_CHARS} printable characters",
            )
        if result:
            seats = sorted(p["seat"] for p in result)
            if seats != list(range(len(self.players))):
                raise InvalidArgument(rule, "the result must place every seat taken exactly once")
            if any(not 1 <= p["place"] <= len(self.players) for p in result):
                raise InvalidArgument(rule, "places go from 1 to the number of seats")
        self._end(EndReason.STOPPED, list(result) if result else self.standings(), text)

    def _end(self, reason: EndReason, result: list[dict[str, int]], statement: str = "") -> None:
        self._match_ended(reason=reason.value, result=result, seed=self.seed, statement=statement)

    @event(MatchEnded)
    def _match_ended(
        self,
        reason: str,
        result: list[dict[str, int]],
        seed: str,
        signature: str = "",
        public_key: str = "",
        statement: str = "",
    ) -> None:
        """``signature`` and ``public_key`` are filled in as the event is triggered
        (:meth:`ChainedAggregate.trigger_event`) from :attr:`signer`."""
        self.status = MatchStatus.ENDED
        self.end_reason = EndReason(reason)
        self.result = result


#: Names of the fields every stored event has that are not part of what it says.
METADATA_FIELDS = frozenset(
    {
        "originator_id",
        "originator_version",
        "timestamp",
        "originator_topic",
        "digest",
        "prev_digest",
    }
)


def payload(evt: object) -> dict[str, Any]:
    """An event's own fields, without the metadata every event carries."""
    return {k: v for k, v in vars(evt).items() if k not in METADATA_FIELDS}


#: Unicode categories a name may not hold: control (Cc), format (Cf: bidi overrides,
#: zero-width characters), surrogates, private use, unassigned, line and paragraph
#: separators. They reorder, hide or forge what a judge's terminal and every other
#: player's screen show.
UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def is_clean_text(text: str) -> bool:
    """Whether ``text`` holds only printable characters (see :data:`UNPRINTABLE`)."""
    return all(unicodedata.category(c) not in UNPRINTABLE for c in text)


def check_name(rule: str, name: str) -> None:
    for position, character in enumerate(name, start=1):
        if unicodedata.category(character) in UNPRINTABLE:
            raise InvalidArgument(
                rule,
                f"a player name may hold only printable characters; character {position} "
                f"is U+{ord(character):04X} ({unicodedata.name(character, 'unnamed')})",
            )


def acting(seat: int | None) -> int:
    """The acting seat of a player's command: one is always given (only a referee
    command, ``Command.REFEREE``, acts for no seat)."""
    assert seat is not None, "a player's command acts for a seat"
    return seat


def event_name(evt: object) -> str:
    return type(evt).__name__


def is_final(evt: object) -> bool:
    """Whether this is a match's last event: nothing is ever recorded after it."""
    return isinstance(evt, MatchAggregate.MatchEnded)
