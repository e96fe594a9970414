"""The Village match aggregate: the order of play, and every event of the game.

The match is a loop of rounds of eight phases (VI-2). Between the players' decisions it
runs by itself: :meth:`Village._advance` looks at the state, triggers the next automatic
step (a phase beginning, the births, the catch, the feast, the census, the checks of
VI-3 after every phase) or opens the next decision (``DecisionAwaited``, with its
deadline), and stops while a decision is owed. A command or a timer firing answers the
decision, then advances again.

Command methods check the rules and raise a ``DomainError`` naming the rule; only then
do they trigger events. Every consequence (each child's sex, each claim, each victim,
every default applied at a deadline, who places or chooses next, what ageing makes of
each member, the poles a family starts with, the outcome) is decided in the command
layer and recorded in an event; event bodies only apply what the event says, so that
changing a rule's code cannot change how a stored match replays. An event class whose
fields grew is version 2 (``class_version``): an event stored before it is upcast with
the new fields None, and its body works them out with the frozen code of the release
that stored it (:mod:`~domain.village.legacy`).

The checks and outcomes of each phase are functions of their own, which read the match
and never change it: :mod:`~domain.village.arrangement` (phase 1),
:mod:`~domain.village.magic` (phase 2), :mod:`~domain.village.revealing` (VI-2.3),
:mod:`~domain.village.births`, :mod:`~domain.village.catch`, :mod:`~domain.village.feast`,
:mod:`~domain.village.illness`, :mod:`~domain.village.ageing`, :mod:`~domain.village.census`
(phases 3 to 8) and :mod:`~domain.village.ending` (VI-4); :mod:`~domain.village.defaults`
builds what a deadline plays and :mod:`~domain.village.legal` what a view offers. This
class keeps the loop, the public commands and queries, and every ``@event`` method: a
stored event names its class by topic (``domain.village.match:Village.Arranged``), so
the events stay here, on the aggregate, where stored matches find them.

Hidden facts live in the aggregate (the spells each family chose, their salts, the
identity of each face-down spell, feast_b names and spells_b placements before they are
revealed); :mod:`domain.village.views` is the one place that hides them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eventsourcing.domain import event

from domain.kernel.commands import Command
from domain.kernel.decisions import Decision
from domain.kernel.errors import DomainError, InvalidArgument, NotPermitted, RuleViolation
from domain.kernel.match import EndReason, MatchAggregate, MatchStatus, acting, check_entropy
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.topics import register_game
from domain.kernel.versions import fill_in, unrecorded
from domain.village import (
    ageing,
    births,
    catch,
    census,
    commitments,
    defaults,
    ending,
    feast,
    illness,
    legacy,
    legal,
    magic,
    model,
    revealing,
)
from domain.village.arrangement import check_arrangement
from domain.village.commands import (
    Arrange,
    ChooseSpells,
    ChooseVictims,
    FamilyCommand,
    PassSpells,
    PlaceSpell,
    RevealSpells,
    SpareFromAge,
    SubmitPlacements,
)
from domain.village.commitments import SECRET_BYTES
from domain.village.founding import (
    RESTART_POLE,
    START_BIRDS,
    START_KIT,
    START_POLE,
    families_for,
    restart_kit,
)
from domain.village.model import COTTAGES, ELDER, SPELL_PHASE, Counts, Person
from domain.village.options import Options
from domain.village.phases import (
    DECISION_RULES,
    DECISION_TIMEOUTS,
    DECISION_WORDS,
    FAMILY_RULE,
    PHASE_NAMES,
    PHASE_RULES,
    PHASE_STAGES,
)


class Village(MatchAggregate):
    """One match of Village (Totem, 1995) for 2 to 4 players."""

    GAME = "village"
    MIN_PLAYERS = 2
    PLAYERS_RULE = "VI-1.1"
    #: Families are set up (VI-1.3) when the match starts.
    START_RULE = "VI-1.3"
    #: The match ends after a round's phase 8 (VI-4.1); it has no other ending.
    END_RULES = dict.fromkeys(EndReason, "VI-4.1")

    class Aged(MatchAggregate.Event):
        """A generation passes (VI-2.8): everyone but the ``spared`` ages one step and
        elders die. ``cottages``: every family's cottages after it; ``newcomers``: who in
        each cottage was a child before it, the next phase 1's new members (VI-7.8)."""

        class_version = 2
        spared: list[dict[str, Any]]
        cottages: list[list[Counts]] | None
        newcomers: list[list[Counts]] | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "cottages", "newcomers")

    class Founded(MatchAggregate.Event):
        """The match starts (VI-1.3): ``families`` families, played by the seats
        ``owners``, each with ``members``, ``birds`` birds and a totem pole of ``pole``
        pieces."""

        class_version = 2
        families: int
        owners: list[int]
        members: dict[str, int]
        birds: int
        stamp: dict[str, Any]
        pole: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "pole")

    class RoundBegan(MatchAggregate.Event):
        """Round ``round`` begins with ``start_family`` (VI-2); the wiped-out families
        ``restarts`` restart with ``members``, ``birds`` birds and a pole of ``pole``
        pieces (VI-2.1, VI-7.2)."""

        class_version = 2
        round: int
        start_family: int
        restarts: list[int]
        members: dict[str, int]
        birds: int
        stamp: dict[str, Any]
        pole: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "pole")

    class SpellPlaced(MatchAggregate.Event):
        """A spell placed face down (VI-2.2) at board ``position``; ``place_next``: where
        the placing rotation goes on after it, counted in turn order from the start
        player."""

        class_version = 2
        family: int
        position: int
        target_family: int
        cottage: int
        chit: str
        spell: str
        salt: str
        by_default: bool
        stamp: dict[str, Any]
        place_next: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "place_next")

    class SpellsPassed(MatchAggregate.Event):
        """``spells_a``: a family passes and loses the ``lost`` spells it has left
        (VI-2.2); ``place_next`` as in ``SpellPlaced``."""

        class_version = 2
        family: int
        lost: int
        stamp: dict[str, Any]
        place_next: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "place_next")

    class VictimsChosen(MatchAggregate.Event):
        """``family`` chose ``victims`` of the ``starving`` family (VI-2.6, ``feast_a``).
        ``owed``: the starving families still owed deaths after it, ``[family, deaths]``
        each, in turn order; ``turn``: how many victims the others have chosen so far
        for the first of them (``feast_a``: who chooses next follows from it)."""

        class_version = 2
        starving: int
        family: int
        victims: list[dict[str, Any]]
        by_default: bool
        stamp: dict[str, Any]
        owed: list[list[int]] | None
        turn: int | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "owed", "turn")

    class TotemCompleted(MatchAggregate.Event):
        """The match is won or drawn (VI-4): among the ``contenders`` with 6 pieces, by
        ``sizes`` then ``birds``, the ``winner`` (None when ``tied``, VI-7.11) and the
        ``winning_seats`` (VI-4.2, VI-7.1). ``outcome``: the match's outcome as it keeps
        it, ``{"winner", "tied", "seats"}``."""

        class_version = 2
        contenders: list[int]
        sizes: list[int]
        birds: list[int]
        tied: list[int]
        winner: int | None
        winning_seats: list[int]
        outcome: dict[str, Any] | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            fill_in(state, "outcome")

    # ---- creation ----------------------------------------------------------------

    @classmethod
    def create(
        cls,
        options: Options,
        seed: bytes,
        entropy: bytes = b"",
        referee_token_hash: str = "",
        *,
        secret: bytes,
    ) -> Village:
        """A new match waiting for players.

        ``seed`` is the server's secret seed (revealed at the end); ``secret`` is the
        match's other secret, from which the salts of the spell commitments derive
        (VI-2.2). It is never revealed to a player, so that an unrevealed spell stays
        secret for good (VI-2.3), even once the seed is public.
        """
        options.validate()
        check_entropy(cls.PLAYERS_RULE, entropy)
        if len(secret) != SECRET_BYTES:
            raise InvalidArgument("VI-2.2", f"the match secret must be {SECRET_BYTES} bytes")
        return cls(
            options=options.to_dict(),
            seed=seed.hex(),
            entropy=entropy.hex(),
            referee_token_hash=referee_token_hash,
            secret=secret.hex(),
        )

    @event("Created")
    def __init__(
        self,
        options: dict[str, Any],
        seed: str,
        entropy: str,
        referee_token_hash: str,
        secret: str,
    ) -> None:
        self._init_match(options, seed, entropy, referee_token_hash)
        self.options = Options.from_dict(options)
        self.secret = secret
        self.family_count = 0
        self.round = 0
        self.phase = 0
        #: What the current phase is doing: "round", "arrange", "choose", "place",
        #: "submit", "reveal", "feast", "victims", "name_victims", "youth", "census".
        self.stage = ""
        self.start_family = 0
        #: Families that answered the current stage's decisions.
        self.acted: list[int] = []
        self.cottages: list[list[Counts]] = []
        #: Members not yet in a cottage: a new family's, a restart's (VI-2.1).
        self.pool: list[Counts] = []
        #: Per cottage, members who were children at the last generation change: the
        #: "new members" of the phase 1 default (VI-7.8).
        self.newcomers: list[list[Counts]] = []
        self.birds: list[int] = []
        self.poles: list[int] = []
        self.wiped: list[bool] = []
        #: VI-3.2 applied this round: the family builds no piece in phase 8.
        self.elderless: list[bool] = []
        #: This round's secret choices: {"spells", "salts", "chits", "birds", "commitment"}.
        self.choices: list[dict[str, Any] | None] = []
        #: Chosen spells not placed yet (secret), in the order of SPELLS.
        self.hands: list[list[str]] = []
        self.passed: list[bool] = []
        #: Position in turn order where the placing rotation goes on (VI-2.2).
        self.place_next = 0
        #: spells_b: submitted placements, secret until all are in.
        self.submissions: list[list[list[Any]] | None] = []
        #: Spells on the board, by position: {"position", "owner", "family", "cottage",
        #: "spell", "salt", "chit", "revealed"}.
        self.board: list[dict[str, Any]] = []
        #: Phase 5: starving families still to lose members, [family, deaths], in turn order.
        self.feast_queue: list[list[int]] = []
        #: feast_a: how many victims have been chosen for the first starving family.
        self.feast_turn = 0
        #: feast_b: names given so far for the first starving family, [namer, victims].
        self.names: list[list[Any]] = []
        #: Phase 7: people youth spares, [family, cottage, kind].
        self.spared: list[list[Any]] = []
        #: How many prearranged sexes have been used (VI-2.4).
        self.sexes_used = 0
        #: The decision the match waits for (see domain.kernel.decisions), as recorded.
        self.decision_data: dict[str, Any] | None = None
        self.outcome: dict[str, Any] | None = None

    @property
    def max_players(self) -> int:
        return self.options.max_players

    @property
    def variant(self) -> str:
        return "+".join(self.options.variations())

    # ---- queries -------------------------------------------------------------------

    @property
    def families(self) -> range:
        return range(self.family_count)

    def parties_of(self, seat: int) -> list[int]:
        """The families ``seat`` plays (VI-7.1: with two players, seat 0 plays families 0
        and 2, seat 1 families 1 and 3)."""
        players = len(self.players)
        if players == 0:
            return []
        return [f for f in self.families if f % players == seat]

    def party_owner(self, party: int) -> int:
        return party % len(self.players)

    @property
    def decision(self) -> Decision | None:
        return Decision.from_dict(self.decision_data) if self.decision_data else None

    def turn_order(self) -> list[int]:
        """Families in turn order from the start player (VI-2)."""
        n = self.family_count
        return [(self.start_family + i) % n for i in range(n)]

    def members(self, family: int) -> Counts:
        """Every member of a family, housed or not."""
        return model.added(*self.cottages[family], self.pool[family])

    def size(self, family: int) -> int:
        return model.total(self.members(family))

    def spells_on(self, family: int, cottage: int, phase: int | None = None) -> list[str]:
        """The revealed spells on a cottage (of one phase, if given)."""
        return [
            b["spell"]
            for b in self.board
            if b["family"] == family
            and b["cottage"] == cottage
            and b["revealed"]
            and (phase is None or SPELL_PHASE[b["spell"]] == phase)
        ]

    def unrevealed(self, owner: int) -> list[dict[str, Any]]:
        return [b for b in self.board if b["owner"] == owner and not b["revealed"]]

    def renew_secret(self, secret: bytes) -> None:
        """Salts of later rounds derive from the fork's own secret (VI-2.2): the origin
        may have revealed salts of the same round, family and spell."""
        self.secret = secret[:SECRET_BYTES].hex()

    def restart_clock(self, wall_ms: int) -> None:
        """The awaited decision keeps the time it had left (see the kernel's method)."""
        shift = wall_ms - self.clock_ms
        super().restart_clock(wall_ms)
        if self.decision_data is not None:
            self.decision_data = dict(
                self.decision_data, deadline_ms=self.decision_data["deadline_ms"] + shift
            )

    def pending_step(self) -> RuleViolation | None:
        """The match runs by itself (:meth:`_advance`) until a decision is owed: a state in
        play where none is owed lies inside those automatic steps."""
        if self.status is not MatchStatus.PLAYING or self.decision_data is not None:
            return None
        if self.stage == "round":
            return RuleViolation("VI-2", "the next round begins at once")
        return RuleViolation(
            PHASE_RULES[self.phase],
            f"round {self.round}, phase {self.phase} ({PHASE_NAMES[self.phase]}) runs by "
            "itself until the next decision: none is awaited here",
        )

    def timer_deadline_ms(self) -> int | None:
        """The deadline of the decision the match waits for (the server's timer)."""
        if self.status is not MatchStatus.PLAYING or self.decision_data is None:
            return None
        deadline: int = self.decision_data["deadline_ms"]
        return deadline

    # ---- start (VI-1) ------------------------------------------------------------------

    def _on_start(self, stamp: ReceiveStamp) -> None:
        n = families_for(len(self.players))
        self._founded(
            families=n,
            owners=[f % len(self.players) for f in range(n)],
            members=model.counts(START_KIT),
            birds=START_BIRDS,
            stamp=stamp.to_dict(),
            pole=START_POLE,
        )
        self._advance(stamp)

    @event(Founded)
    def _founded(
        self,
        families: int,
        owners: list[int],
        members: dict[str, int],
        birds: int,
        stamp: dict[str, Any],
        pole: int | None,
        upcast: list[str] | None = None,
    ) -> None:
        n = families
        self.family_count = n
        self.cottages = [[model.empty() for _ in range(COTTAGES)] for _ in range(n)]
        self.pool = [dict(members) for _ in range(n)]
        self.newcomers = [[model.empty() for _ in range(COTTAGES)] for _ in range(n)]
        self.birds = [birds] * n
        if unrecorded(upcast, pole=pole):
            legacy.founded(self)
        else:
            assert pole is not None
            self.poles = [pole] * n
        self.wiped = [False] * n
        self.status = MatchStatus.PLAYING
        self.stage = "round"
        self._reset_round()
        self._tick(stamp)

    def _reset_round(self) -> None:
        n = self.family_count
        self.elderless = [False] * n
        self.choices = [None] * n
        self.hands = [[] for _ in range(n)]
        self.passed = [False] * n
        self.submissions = [None] * n
        self.board = []
        self.place_next = 0
        self.spared = []

    # ---- the loop ------------------------------------------------------------------------

    def _advance(self, stamp: ReceiveStamp) -> None:
        """Run the automatic steps until a decision is owed or the match ends."""
        while self.status is MatchStatus.PLAYING and self.decision_data is None:
            self._step(stamp)

    def _step(self, stamp: ReceiveStamp) -> None:
        """One automatic step: each call triggers at least one event."""
        stage = self.stage
        if stage == "round":
            self._begin_round(stamp)
        elif stage == "arrange":
            nxt = next(
                (f for f in self.turn_order() if f not in self.acted and self.size(f) > 0), None
            )
            if nxt is None:
                self._end_phase(stamp)
            else:
                self._await("arrange", [nxt], stamp)
        elif stage == "choose":
            if not self.acted:
                self._await("choose", self.turn_order(), stamp)
            else:
                self._placing(stamp)
        elif stage == "place":
            self._placing(stamp)
        elif stage == "submit":
            self._reveal_placements()
            self._end_phase(stamp)
        elif stage == "reveal":
            nxt = next(
                (f for f in self.turn_order() if f not in self.acted and self.unrevealed(f)),
                None,
            )
            if nxt is not None:
                self._await("reveal", [nxt], stamp, {"phase": self.phase})
            else:
                self._phase_action(stamp)
        elif stage == "youth":
            self._youth(stamp)
        elif stage == "feast":
            self._feast()
        elif stage in ("victims", "name_victims"):
            self._victims(stamp)
        elif stage == "census":
            self._census()
            self._end_phase(stamp)
        else:  # pragma: no cover - every stage is handled above
            raise AssertionError(f"unknown stage {stage!r}")

    def _await(
        self,
        kind: str,
        families: Sequence[int],
        stamp: ReceiveStamp,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        timeout = self.options.timeout_ms(DECISION_TIMEOUTS[kind])
        decision = Decision.open(kind, DECISION_RULES[kind], families, stamp, timeout, detail)
        self._decision_awaited(decision=decision.to_dict())

    @event("DecisionAwaited")
    def _decision_awaited(self, decision: dict[str, Any]) -> None:
        if decision["kind"] != self.stage:
            self.stage = decision["kind"]
            self.acted = []
        self.decision_data = decision

    def _answered(self, family: int) -> None:
        """Event-body helper: ``family`` answered the current decision."""
        self.acted.append(family)
        decision = self.decision
        assert decision is not None
        rest = decision.answered(family)
        self.decision_data = rest.to_dict() if rest else None

    def _begin_round(self, stamp: ReceiveStamp) -> None:
        """VI-2: the start player moves one seat (family, VI-7.1) left every round; a
        wiped-out family restarts in phase 1 (VI-2.1, VI-7.2)."""
        number = self.round + 1
        kit, birds = restart_kit(self.options)
        self._round_began(
            round=number,
            start_family=(number - 1) % self.family_count,
            restarts=[f for f in self.families if self.wiped[f]],
            members=model.counts(kit),
            birds=birds,
            stamp=stamp.to_dict(),
            pole=RESTART_POLE,
        )

    @event(RoundBegan)
    def _round_began(
        self,
        round: int,
        start_family: int,
        restarts: list[int],
        members: dict[str, int],
        birds: int,
        stamp: dict[str, Any],
        pole: int | None,
        upcast: list[str] | None = None,
    ) -> None:
        self.round = round
        self.start_family = start_family
        self.phase = 1
        self.stage = "arrange"
        self.acted = []
        self._reset_round()
        for f in restarts:
            self.cottages[f] = [model.empty() for _ in range(COTTAGES)]
            self.newcomers[f] = [model.empty() for _ in range(COTTAGES)]
            self.pool[f] = dict(members)
            self.birds[f] = birds
            if unrecorded(upcast, pole=pole):
                legacy.restarted(self, f)
            else:
                assert pole is not None
                self.poles[f] = pole
            self.wiped[f] = False
        self._tick(stamp)

    def _end_phase(self, stamp: ReceiveStamp) -> None:
        """The checks of VI-3 after every phase, then the next phase or the round's end."""
        self._checks()
        if self.phase < 8:
            self._phase_began(round=self.round, phase=self.phase + 1)
            return
        self._end_round()

    @event("PhaseBegan")
    def _phase_began(self, round: int, phase: int) -> None:
        self.phase = phase
        self.stage = PHASE_STAGES[phase]
        self.acted = []

    # ---- VI-3: checks after every phase ---------------------------------------------------

    def _checks(self) -> None:
        """VI-3.1 wipe-out, then VI-3.2 elders, each family in turn order."""
        for f in self.turn_order():
            if not self.wiped[f] and not model.can_multiply(self.members(f)):
                self._wiped_out(family=f, phase=self.phase, lost=self.members(f))
        for f in self.turn_order():
            if not self.elderless[f] and self.members(f)[ELDER] == 0:
                floor = 0 if self.options.totem_a else 1
                pole = 0 if self.options.totem_a else max(floor, self.poles[f] - 1)
                self._dismantled(family=f, phase=self.phase, pole=pole)

    @event("WipedOut")
    def _wiped_out(self, family: int, phase: int, lost: dict[str, int]) -> None:
        self.cottages[family] = [model.empty() for _ in range(COTTAGES)]
        self.newcomers[family] = [model.empty() for _ in range(COTTAGES)]
        self.pool[family] = model.empty()
        self.wiped[family] = True

    @event("Dismantled")
    def _dismantled(self, family: int, phase: int, pole: int) -> None:
        self.poles[family] = pole
        self.elderless[family] = True

    # ---- phase 1: the village (VI-2.1) ----------------------------------------------

    def _arrange(self, seat: int, cmd: Arrange, by_default: bool, stamp: ReceiveStamp) -> None:
        self._require_decision(seat, cmd.family, "arrange")
        cottages, discarded = check_arrangement(cmd, self.members(cmd.family))
        self._arranged(
            family=cmd.family,
            cottages=cottages,
            discarded=discarded,
            by_default=by_default,
            stamp=stamp.to_dict(),
        )

    @event("Arranged")
    def _arranged(
        self,
        family: int,
        cottages: list[dict[str, int]],
        discarded: dict[str, int],
        by_default: bool,
        stamp: dict[str, Any],
    ) -> None:
        self.cottages[family] = [dict(c) for c in cottages]
        self.pool[family] = model.empty()
        self.newcomers[family] = [model.empty() for _ in range(COTTAGES)]
        self._answered(family)
        self._tick(stamp)

    # ---- phase 2: magic (VI-2.2) ------------------------------------------------------

    def _choose(self, seat: int, cmd: ChooseSpells, by_default: bool, stamp: ReceiveStamp) -> None:
        self._require_decision(seat, cmd.family, "choose")
        f = cmd.family
        spells = magic.check_choice(cmd, self.poles[f], self.birds[f])
        salts, chits = magic.sealed(bytes.fromhex(self.secret), self.round, f, spells)
        self._spells_chosen(
            family=f,
            count=len(spells),
            birds=cmd.birds,
            commitment=commitments.commitment(chits),
            spells=spells,
            salts=salts,
            chits=chits,
            by_default=by_default,
            stamp=stamp.to_dict(),
        )

    @event("SpellsChosen")
    def _spells_chosen(
        self,
        family: int,
        count: int,
        birds: int,
        commitment: str,
        spells: list[str],
        salts: list[str],
        chits: list[str],
        by_default: bool,
        stamp: dict[str, Any],
    ) -> None:
        self.choices[family] = {
            "spells": list(spells),
            "salts": list(salts),
            "chits": list(chits),
            "birds": birds,
            "commitment": commitment,
        }
        self.hands[family] = list(spells)
        self.birds[family] -= birds
        self._answered(family)
        self._tick(stamp)

    def next_placer(self) -> int | None:
        """The family that places next (see :func:`domain.village.magic.next_placer`)."""
        return magic.next_placer(self)

    def _placing(self, stamp: ReceiveStamp) -> None:
        if self.options.spells_b:
            if self.stage == "choose":
                holders = [f for f in self.turn_order() if self.hands[f]]
                if holders:
                    self._await("submit", holders, stamp)
                    return
            self._end_phase(stamp)
            return
        nxt = magic.next_placer(self)
        if nxt is None:
            self._end_phase(stamp)
        else:
            self._await("place", [nxt], stamp)

    def _place(self, seat: int, cmd: PlaceSpell, by_default: bool, stamp: ReceiveStamp) -> None:
        self._require_decision(seat, cmd.family, "place")
        chit, salt = magic.check_placement(self, cmd)
        self._spell_placed(
            family=cmd.family,
            position=len(self.board),
            target_family=cmd.target_family,
            cottage=cmd.cottage,
            chit=chit,
            spell=cmd.spell,
            salt=salt,
            by_default=by_default,
            stamp=stamp.to_dict(),
            place_next=magic.rotation_after(self, cmd.family),
        )

    @event(SpellPlaced)
    def _spell_placed(
        self,
        family: int,
        position: int,
        target_family: int,
        cottage: int,
        chit: str,
        spell: str,
        salt: str,
        by_default: bool,
        stamp: dict[str, Any],
        place_next: int | None,
        upcast: list[str] | None = None,
    ) -> None:
        self._put(family, position, target_family, cottage, chit, spell, salt)
        self._placing_moved(family, place_next, upcast)
        self._answered(family)
        self._tick(stamp)

    def _placing_moved(self, family: int, place_next: int | None, upcast: list[str] | None) -> None:
        """Event-body helper: the placing rotation goes on where the event says, or, for an
        event recorded without it, where that release's code put it."""
        if unrecorded(upcast, place_next=place_next):
            legacy.placed(self, family)
        else:
            assert place_next is not None
            self.place_next = place_next

    def _put(
        self,
        family: int,
        position: int,
        target_family: int,
        cottage: int,
        chit: str,
        spell: str,
        salt: str,
    ) -> None:
        self.hands[family].remove(spell)
        self.board.append(
            {
                "position": position,
                "owner": family,
                "family": target_family,
                "cottage": cottage,
                "spell": spell,
                "salt": salt,
                "chit": chit,
                "revealed": False,
            }
        )

    def _pass(self, seat: int, cmd: PassSpells, stamp: ReceiveStamp) -> None:
        self._require_decision(seat, cmd.family, "place")
        magic.check_pass(self.options.spells_a)
        self._spells_passed(
            family=cmd.family,
            lost=len(self.hands[cmd.family]),
            stamp=stamp.to_dict(),
            place_next=magic.rotation_after(self, cmd.family),
        )

    @event(SpellsPassed)
    def _spells_passed(
        self,
        family: int,
        lost: int,
        stamp: dict[str, Any],
        place_next: int | None,
        upcast: list[str] | None = None,
    ) -> None:
        self.passed[family] = True
        self._placing_moved(family, place_next, upcast)
        self._answered(family)
        self._tick(stamp)

    def _submit(
        self, seat: int, cmd: SubmitPlacements, by_default: bool, stamp: ReceiveStamp
    ) -> None:
        self._require_decision(seat, cmd.family, "submit")
        placements = magic.check_submission(self, cmd)
        self._placements_submitted(
            family=cmd.family,
            count=len(placements),
            placements=placements,
            by_default=by_default,
            stamp=stamp.to_dict(),
        )

    @event("PlacementsSubmitted")
    def _placements_submitted(
        self,
        family: int,
        count: int,
        placements: list[list[Any]],
        by_default: bool,
        stamp: dict[str, Any],
    ) -> None:
        self.submissions[family] = [list(p) for p in placements]
        self._answered(family)
        self._tick(stamp)

    def _reveal_placements(self) -> None:
        self._placements_revealed(placements=magic.revealed_placements(self))

    @event("PlacementsRevealed")
    def _placements_revealed(self, placements: list[dict[str, Any]]) -> None:
        for p in placements:
            self._put(
                p["family"],
                p["position"],
                p["target_family"],
                p["cottage"],
                p["chit"],
                p["spell"],
                p["salt"],
            )
        self.submissions = [None] * self.family_count

    # ---- revealing (VI-2.3) -------------------------------------------------------------

    def revealable(self, family: int) -> list[int]:
        """Board positions of the family's face-down spells that act in this phase."""
        return revealing.revealable(self, family)

    def _reveal(self, seat: int, cmd: RevealSpells, by_default: bool, stamp: ReceiveStamp) -> None:
        self._require_decision(seat, cmd.family, "reveal")
        self._spells_revealed(
            family=cmd.family,
            phase=self.phase,
            reveals=revealing.check_reveal(self, cmd),
            by_default=by_default,
            stamp=stamp.to_dict(),
        )

    @event("SpellsRevealed")
    def _spells_revealed(
        self,
        family: int,
        phase: int,
        reveals: list[dict[str, Any]],
        by_default: bool,
        stamp: dict[str, Any],
    ) -> None:
        for r in reveals:
            self.board[r["position"]]["revealed"] = True
        self._answered(family)
        self._tick(stamp)

    def _phase_action(self, stamp: ReceiveStamp) -> None:
        if self.phase == 3:
            self._births()
        elif self.phase == 4:
            self._catch()
        elif self.phase == 6:
            self._illness()
        elif self.phase == 7:
            self._youth(stamp)
            return
        self._end_phase(stamp)

    # ---- phase 3: births (VI-2.4) -------------------------------------------------------

    def _births(self) -> None:
        born = births.draw(self)
        self._born(children=born.children, draws=born.draws, prearranged=born.prearranged)

    @event("Born")
    def _born(self, children: list[dict[str, Any]], draws: list[str], prearranged: int) -> None:
        for child in children:
            cottage = self.cottages[child["family"]][child["cottage"]]
            cottage[model.GIRL] += child["girls"]
            cottage[model.BOY] += child["boys"]
        self.sexes_used += prearranged

    # ---- phase 4: the catch (VI-2.5) -----------------------------------------------------

    def _catch(self) -> None:
        size, claims = catch.shared(self)
        self._catch_shared(catch=size, claims=claims)

    @event("CatchShared")
    def _catch_shared(self, catch: int, claims: list[dict[str, int]]) -> None:
        for c in claims:
            self.birds[c["family"]] += c["got"]

    # ---- phase 5: the feast (VI-2.6) -------------------------------------------------

    @property
    def elders_may_die(self) -> bool:
        """Under feast_a and feast_b the other families may choose elders (VI-2.6)."""
        return feast.elders_may_die(self.options)

    def _feast(self) -> None:
        self._feasted(meals=feast.meals(self))

    @event("Feasted")
    def _feasted(self, meals: list[dict[str, int]]) -> None:
        for m in meals:
            self.birds[m["family"]] -= m["eaten"] + m["discarded"]
        self.feast_queue = [[m["family"], m["deaths"]] for m in meals if m["deaths"] > 0]
        self.feast_turn = 0
        self.names = []
        self.stage = "victims"
        self.acted = []

    def victim_choosers(self, starving: int) -> list[int]:
        """feast_a / feast_b: the other families, in turn order from the start player."""
        return feast.victim_choosers(self, starving)

    def feast_shares(self, starving: int, deaths: int) -> list[list[int]]:
        """feast_b: each other family's share of the deaths (see
        :func:`domain.village.feast.shares`)."""
        return feast.shares(self, starving, deaths)

    def _victims(self, stamp: ReceiveStamp) -> None:
        if self.names:
            self._resolve_names()
            return
        if not self.feast_queue:
            self._end_phase(stamp)
            return
        kind, families, detail = feast.victims_awaited(self)
        self._await(kind, families, stamp, detail)

    def _choose_victims(
        self, seat: int, cmd: ChooseVictims, by_default: bool, stamp: ReceiveStamp
    ) -> None:
        kind = feast.victims_kind(self.options)
        self._require_decision(seat, cmd.family, kind)
        starving, count, victims = feast.check_victims(self, cmd)
        if kind == "name_victims":
            self._victims_named(
                starving=starving,
                family=cmd.family,
                count=count,
                victims=victims,
                by_default=by_default,
                stamp=stamp.to_dict(),
            )
        else:
            owed, turn = feast.after_victims(self, len(victims))
            self._victims_chosen(
                starving=starving,
                family=cmd.family,
                victims=victims,
                by_default=by_default,
                stamp=stamp.to_dict(),
                owed=owed,
                turn=turn,
            )

    def _remove(self, family: int, victims: Sequence[Mapping[str, Any]]) -> None:
        for v in victims:
            self.cottages[family][v["cottage"]][v["kind"]] -= 1

    @event(VictimsChosen)
    def _victims_chosen(
        self,
        starving: int,
        family: int,
        victims: list[dict[str, Any]],
        by_default: bool,
        stamp: dict[str, Any],
        owed: list[list[int]] | None,
        turn: int | None,
        upcast: list[str] | None = None,
    ) -> None:
        self._remove(starving, victims)
        if unrecorded(upcast, owed=owed, turn=turn):
            legacy.victims_done(self, len(victims))
        else:
            assert owed is not None and turn is not None
            self.feast_queue = [list(q) for q in owed]
            self.feast_turn = turn
        self._answered(family)
        self._tick(stamp)

    @event("VictimsNamed")
    def _victims_named(
        self,
        starving: int,
        family: int,
        count: int,
        victims: list[dict[str, Any]],
        by_default: bool,
        stamp: dict[str, Any],
    ) -> None:
        self.names.append([family, [dict(v) for v in victims]])
        self._answered(family)
        self._tick(stamp)

    def _resolve_names(self) -> None:
        names, deaths = feast.resolved_names(self)
        self._victims_revealed(starving=self.feast_queue[0][0], names=names, deaths=deaths)

    @event("VictimsRevealed")
    def _victims_revealed(
        self, starving: int, names: list[dict[str, Any]], deaths: list[dict[str, Any]]
    ) -> None:
        self._remove(starving, deaths)
        self.names = []
        self.feast_queue.pop(0)
        self.feast_turn = 0

    # ---- phase 6: illness (VI-2.7) -----------------------------------------------------

    def _illness(self) -> None:
        deaths = illness.deaths(self)
        if deaths:
            self._illness_struck(deaths=deaths)

    @event("IllnessStruck")
    def _illness_struck(self, deaths: list[dict[str, Any]]) -> None:
        for d in deaths:
            cottage = self.cottages[d["family"]][d["cottage"]]
            for kind, n in d["killed"].items():
                cottage[kind] -= n

    # ---- phase 7: generation change (VI-2.8) ------------------------------------------

    def youth_needs(self, family: int) -> list[int]:
        """How many people each cottage of the family keeps from ageing (see
        :func:`domain.village.ageing.youth_needs`)."""
        return ageing.youth_needs(self, family)

    def youth_minimum(self, family: int) -> list[int]:
        """How many a family must spare per cottage (see
        :func:`domain.village.ageing.youth_minimum`)."""
        return ageing.youth_minimum(self, family)

    def _youth(self, stamp: ReceiveStamp) -> None:
        nxt = ageing.next_to_spare(self)
        if nxt is not None:
            self._await("youth", [nxt], stamp, {"needs": ageing.youth_needs(self, nxt)})
            return
        self._age()
        self._end_phase(stamp)

    def _spare(self, seat: int, cmd: SpareFromAge, by_default: bool, stamp: ReceiveStamp) -> None:
        self._require_decision(seat, cmd.family, "youth")
        self._youth_chosen(
            family=cmd.family,
            spared=ageing.check_spared(self, cmd),
            by_default=by_default,
            stamp=stamp.to_dict(),
        )

    @event("YouthChosen")
    def _youth_chosen(
        self, family: int, spared: list[dict[str, Any]], by_default: bool, stamp: dict[str, Any]
    ) -> None:
        self.spared += [[family, s["cottage"], s["kind"]] for s in spared]
        self._answered(family)
        self._tick(stamp)

    def _age(self) -> None:
        """The generation change (VI-2.8), worked out here and recorded whole: the event
        says what every cottage holds after it."""
        cottages, newcomers = ageing.generation(self, self.spared)
        self._aged(
            spared=[{"family": f, "cottage": c, "kind": k} for f, c, k in self.spared],
            cottages=cottages,
            newcomers=newcomers,
        )

    @event(Aged)
    def _aged(
        self,
        spared: list[dict[str, Any]],
        cottages: list[list[Counts]] | None,
        newcomers: list[list[Counts]] | None,
        upcast: list[str] | None = None,
    ) -> None:
        if unrecorded(upcast, cottages=cottages, newcomers=newcomers):
            legacy.age(self, spared)
        else:
            assert cottages is not None and newcomers is not None
            self.cottages = [[dict(c) for c in family] for family in cottages]
            self.newcomers = [[dict(c) for c in family] for family in newcomers]
        self.spared = []

    # ---- phase 8: totem construction (VI-2.9) and the end (VI-4) --------------------

    def _census(self) -> None:
        taken = census.take(self)
        self._census_taken(
            sizes=taken.sizes, pieces=taken.pieces, blocked=taken.blocked, birds=taken.birds
        )

    @event("CensusTaken")
    def _census_taken(
        self, sizes: list[int], pieces: list[int], blocked: list[int], birds: list[int]
    ) -> None:
        for f in pieces:
            self.poles[f] += 1
        for f in birds:
            self.birds[f] += 1

    def _end_round(self) -> None:
        """Spells leave the board (VI-2.2); the round's chits are published (VI-2.2),
        the identities of unrevealed spells kept for the referee only; then VI-4."""
        record = ending.round_record(self)
        self._round_ended(
            round=self.round,
            chits=record.chits,
            unrevealed=record.unrevealed,
            unplaced=record.unplaced,
        )
        contenders = ending.contenders(self)
        if contenders:
            self._finish(contenders)

    @event("RoundEnded")
    def _round_ended(
        self,
        round: int,
        chits: list[dict[str, Any]],
        unrevealed: list[dict[str, Any]],
        unplaced: list[dict[str, Any]],
    ) -> None:
        self._reset_round()
        self.stage = "round"

    def _finish(self, contenders: list[int]) -> None:
        """VI-4: the winner among the families with 6 pieces, then the match ends."""
        end = ending.outcome(self, contenders)
        self._totem_completed(
            contenders=contenders,
            sizes=end.sizes,
            birds=end.birds,
            tied=end.tied,
            winner=end.winner,
            winning_seats=end.winning_seats,
            outcome=end.kept(),
        )
        self._end(EndReason.COMPLETED, ending.placings(end.winning_seats, len(self.players)))

    @event(TotemCompleted)
    def _totem_completed(
        self,
        contenders: list[int],
        sizes: list[int],
        birds: list[int],
        tied: list[int],
        winner: int | None,
        winning_seats: list[int],
        outcome: dict[str, Any] | None,
        upcast: list[str] | None = None,
    ) -> None:
        if unrecorded(upcast, outcome=outcome):
            legacy.completed(self, winner, tied, winning_seats)
        else:
            assert outcome is not None
            self.outcome = dict(outcome, tied=list(outcome["tied"]), seats=list(outcome["seats"]))

    # ---- commands ---------------------------------------------------------------------

    def execute(self, command: Command, seat: int | None, stamp: ReceiveStamp) -> None:
        if isinstance(command, FamilyCommand):
            self.act(acting(seat), command, stamp)
        else:
            super().execute(command, seat, stamp)

    def act(self, seat: int, command: FamilyCommand, stamp: ReceiveStamp) -> None:
        """Take a decision for one of the seat's families; the match then runs on to the
        next decision it waits for."""
        self._apply(seat, command, False, stamp)
        self._advance(stamp)

    def _apply(
        self, seat: int, command: FamilyCommand, by_default: bool, stamp: ReceiveStamp
    ) -> None:
        if isinstance(command, Arrange):
            self._arrange(seat, command, by_default, stamp)
        elif isinstance(command, ChooseSpells):
            self._choose(seat, command, by_default, stamp)
        elif isinstance(command, PlaceSpell):
            self._place(seat, command, by_default, stamp)
        elif isinstance(command, PassSpells):
            self._pass(seat, command, stamp)
        elif isinstance(command, SubmitPlacements):
            self._submit(seat, command, by_default, stamp)
        elif isinstance(command, RevealSpells):
            self._reveal(seat, command, by_default, stamp)
        elif isinstance(command, ChooseVictims):
            self._choose_victims(seat, command, by_default, stamp)
        else:
            self._spare(seat, command, by_default, stamp)

    def decision_refusal(self, seat: int, family: int, kind: str) -> DomainError | None:
        """Why ``seat`` may not take a decision of ``kind`` for ``family`` now, or None:
        the one check behind every command and the legal actions of a view."""
        rule = DECISION_RULES[kind]
        if self.status is MatchStatus.WAITING:
            return RuleViolation(self.START_RULE, "the match has not started yet")
        seated = 0 <= seat < len(self.players)
        exists = 0 <= family < self.family_count
        if seated and exists and family not in self.parties_of(seat):
            # VI-7.9: refused like a command for another seat, whatever the decision and
            # whether or not the match has ended, naming VI-2.2.
            return NotPermitted(
                FAMILY_RULE, f"seat {seat} does not play family {family}: it cannot act for it"
            )
        if self.status is MatchStatus.ENDED:
            return self._ended()
        if not seated:
            return RuleViolation(self.PLAYERS_RULE, f"seat {seat} is not taken in this match")
        if not exists:
            return InvalidArgument(
                rule, f"family {family} does not exist: families are 0 to {self.family_count - 1}"
            )
        decision = self.decision
        if decision is None or decision.kind != kind or not decision.owed_by(family):
            return RuleViolation(
                rule,
                f"family {family} owes no {DECISION_WORDS[kind]} now "
                f"(round {self.round}, phase {self.phase}: {PHASE_NAMES.get(self.phase, '')})",
            )
        return None

    def _require_decision(self, seat: int, family: int, kind: str) -> None:
        refusal = self.decision_refusal(seat, family, kind)
        if refusal is not None:
            raise refusal

    # ---- deadlines -------------------------------------------------------------------

    def fire_timer(self, stamp: ReceiveStamp) -> None:
        """The deadline passed: the documented default applies for every family that
        still owes the decision (VI-2.1 … VI-2.8), then the match runs on."""
        decision = self.decision
        if self.status is not MatchStatus.PLAYING or decision is None:
            self._require_playing()
            raise RuleViolation(self.PLAYERS_RULE, "no decision is awaited")
        if not decision.due(stamp):
            raise RuleViolation(
                decision.rule, "the deadline of the awaited decision has not passed"
            )
        for family in decision.parties:
            self._apply(self.party_owner(family), self.default_command(family), True, stamp)
        self._advance(stamp)

    def default_command(self, family: int) -> FamilyCommand:
        """What the deadline does for ``family`` (each phase's timeout default)."""
        return defaults.default_command(self, family)

    def default_arrangement(self, family: int) -> tuple[list[Counts], Counts]:
        """The phase 1 default (see :func:`domain.village.defaults.default_arrangement`):
        the cottages and the discarded members."""
        return defaults.default_arrangement(self, family)

    def default_victims(self, family: int) -> list[Person]:
        """The victims the deadline names for ``family`` (VI-2.6, VI-7.7)."""
        return defaults.default_victims(self, family)

    def default_spared(self, family: int) -> list[Person]:
        """The people the deadline spares from ageing for ``family`` (VI-2.8)."""
        return defaults.default_spared(self, family)

    # ---- legal actions -------------------------------------------------------------------

    def legal_actions(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may do now (its view shows it): see
        :func:`domain.village.legal.legal_actions`."""
        return legal.legal_actions(self, seat)

    # ---- helpers ---------------------------------------------------------------------------


register_game(Village)
