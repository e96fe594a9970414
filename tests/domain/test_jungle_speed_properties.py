"""Invariants of Jungle Speed over random command sequences, legal and illegal (JS-10).

- JS-10.1 conservation: after every command the face-down piles, face-up piles and the
  pot hold every card of the deck exactly once.
- JS-10.2 at most one outcome per duel: a DuelWon's winner was in a duel open at the
  time and its losers are the rest of that duel (but for annulled pairs, JS-4.6); a
  duel that was resolved or annulled
  never gets another outcome while its cards stay visible.
- JS-10.3 replaying the recorded events reproduces every state: through the JSON
  transcoder of an ``eventsourcing`` application, version by version (and the stored
  events still carry a valid hash chain).

Refused commands (``DomainError``) must trigger nothing and change nothing.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from typing import Any

from domain_support import Stamps, check_pending_steps, check_personal_views, state_of
from eventsourcing.application import Application
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.jungle_speed import JungleSpeed, Kind, Options, views
from domain.kernel import GENESIS_DIGEST, DomainError, MatchStatus
from domain.kernel.chain import stored_event_digest


@dataclass(frozen=True)
class Command:
    kind: str  # reveal_turn, reveal, grab_duel, grab, timer, start
    index: int  # a seat, or an index into the candidates the state offers
    target: str = "default"
    after_ms: int = 0


KINDS = ["reveal_turn", "reveal", "grab_duel", "grab", "timer", "start"]
WEIGHTS = [55, 5, 24, 4, 10, 2]
TARGETS = ["default"] * 6 + ["duel", "arrows", "hand"]


def random_script(seed: int, length: int) -> list[Command]:
    """A long command sequence, mostly plausible play and some nonsense. Hypothesis draws
    the seed; long scripts reach late-game states that short drawn lists never do."""
    rng = random.Random(seed)
    script = []
    for _ in range(length):
        kind = rng.choices(KINDS, WEIGHTS)[0]
        if kind == "timer":
            after_ms = rng.choice([0, 50, 5_000, 10_000, 20_000])
        else:
            after_ms = rng.choice([0, 100, 200, 300])
        script.append(Command(kind, rng.randrange(-1, 11), rng.choice(TARGETS), after_ms))
    return script


@st.composite
def matches(draw: st.DrawFn, min_players: int = 2) -> tuple[JungleSpeed, Stamps]:
    n = draw(st.integers(min_players, 10))
    variant = draw(st.sampled_from(["ES", "RU"]))
    deck = draw(st.one_of(st.none(), st.permutations(range(80)).map(list)))
    seed = draw(st.binary(min_size=32, max_size=32))
    options = Options(
        variant=variant,
        max_players=n,
        turn_timeout_ms=draw(st.sampled_from([0, 10_000])),
        min_reveal_interval_ms=draw(st.sampled_from([0, 0, 150])),
        prearranged_deal=deck,
    )
    stamps = Stamps()
    match = JungleSpeed.create(options, seed, draw(st.binary(max_size=4)))
    for s in range(n):
        match.join(f"p{s}", draw(st.binary(max_size=4)), f"h{s}", stamps())
    return match, stamps


def run(match: JungleSpeed, stamps: Stamps, command: Command) -> None:
    """Run one command; the index picks among what the state offers."""
    stamp = stamps(after_ms=command.after_ms)
    if command.kind == "reveal_turn":
        match.reveal(match.turn if match.turn is not None else 0, stamp)
    elif command.kind == "reveal":
        match.reveal(command.index, stamp)
    elif command.kind == "grab_duel":
        # A participant of an open duel; with none, anyone for an arrows race; with no
        # race at all, a reveal instead.
        seats = [s for d in match.open_duels() for s in d]
        if not seats and match.open_arrows():
            seats = [s for s in match.seats if match.active(s)]
        if seats:
            match.grab(seats[command.index % len(seats)], stamp, command.target)
        else:
            match.reveal(match.turn if match.turn is not None else 0, stamp)
    elif command.kind == "grab" and command.index == 10:
        # Someone still in the game, whoever it is.
        active = [s for s in match.seats if match.active(s)] or [0]
        match.grab(active[command.after_ms % len(active)], stamp, command.target)
    elif command.kind == "grab":
        match.grab(command.index, stamp, command.target)
    elif command.kind == "timer":
        match.fire_timer(stamp)
    else:
        match.start(command.index, stamp)


def all_cards(match: JungleSpeed) -> list[int]:
    return (
        [c for pile in match.down for c in pile]
        + [c for pile in match.up for c in pile]
        + list(match.pot)
    )


Identity = frozenset[tuple[int, int]]


def identity(match: JungleSpeed, seats: list[int]) -> Identity:
    """A duel as the visible cards it is made of."""
    tops = match.visible()
    return frozenset((s, tops[s]) for s in seats)


class Checker:
    """Checks JS-10.1 and JS-10.2 around each command and records states for JS-10.3."""

    def __init__(self, match: JungleSpeed) -> None:
        self.match = match
        self.size = len(match.deck)
        #: Duels resolved or annulled whose cards are all still visible.
        self.settled: set[Identity] = set()
        #: Live state after each command, by version.
        self.states: dict[int, dict[str, Any]] = {match.version: state_of(match)}
        self.refusals = 0
        self.conserve()

    def conserve(self) -> None:
        """JS-10.1."""
        assert sorted(all_cards(self.match)) == list(range(self.size))
        assert self.match.card_count() == self.size

    def step(self, stamps: Stamps, command: Command) -> None:
        match = self.match
        before = state_of(match)
        version, pending = match.version, len(match.pending_events)
        duels = match.open_duels()
        arrows = match.open_arrows()
        try:
            run(match, stamps, command)
        except DomainError:
            self.refusals += 1
            assert match.version == version
            assert len(match.pending_events) == pending
            assert state_of(match) == before
            return
        new = [e for e in match.pending_events if e.originator_version > version]
        assert new, "an accepted command records at least one event"
        self.conserve()
        self.outcomes(duels, arrows, new, before)
        self.states[match.version] = state_of(match)

    def outcomes(
        self, duels: list[list[int]], arrows: list[int], new: list[Any], before: dict[str, Any]
    ) -> None:
        """JS-10.2 (and what a grab outcome presupposes)."""
        match = self.match
        tops = {s: pile[-1] for s, pile in enumerate(before["up"]) if pile}
        names = [type(e).__name__ for e in new]
        assert names.count("DuelWon") + names.count("ArrowsWon") <= 1
        for evt in new:
            name = type(evt).__name__
            if name == "DuelWon":
                duel = next(d for d in duels if evt.winner in d)
                # The losers: the rest of the duel but those whose pair with the winner
                # was annulled (JS-4.6).
                annulled = before["annulled"]
                opponents = [
                    s
                    for s in duel
                    if s != evt.winner and sorted((tops[s], tops[evt.winner])) not in annulled
                ]
                assert evt.losers == opponents and opponents
                key = frozenset((s, tops[s]) for s in duel)
                assert key not in self.settled, "a duel got a second outcome"
            elif name == "ArrowsWon":
                assert arrows, "an arrows race was open"
            elif name == "WrongGrab":
                assert not arrows
                assert all(evt.seat not in d for d in duels)
            elif name == "LateGrab":
                assert len(new) == 1
                after = state_of(match)
                changed = {k for k in after if after[k] != before[k]}
                assert changed <= {"_version", "_modified_on", "digest"}
        if "DuelWon" in names or "ArrowsWon" in names:
            # One race resolved, every other open duel annulled.
            self.settled |= {frozenset((s, tops[s]) for s in d) for d in duels}
        visible = set(match.visible().items())
        self.settled = {key for key in self.settled if key <= visible}
        for duel in match.open_duels():
            assert identity(match, duel) not in self.settled


def replay_everything(match: JungleSpeed, states: dict[int, dict[str, Any]]) -> None:
    """JS-10.3: store the events, reload them through the transcoder, compare states."""
    app: Application[Any] = Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    app.save(match)
    rebuilt: Any = None
    previous = GENESIS_DIGEST
    for stored in app.events.get(match.id):
        # The audit chain survives the store: digests recompute and link up.
        assert stored_event_digest(stored) == stored.digest
        assert stored.prev_digest == previous
        previous = stored.digest
        rebuilt = stored.mutate(rebuilt)
        version = stored.originator_version
        if version in states:
            assert state_of(rebuilt) == states[version], f"version {version}"
    assert rebuilt is not None and rebuilt.version == match.version
    assert state_of(rebuilt) == states[match.version]
    # The repository gives the same state at any past version.
    for version in sorted(states)[:: max(1, len(states) // 4)]:
        assert state_of(app.repository.get(match.id, version=version)) == states[version]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 500))
def test_js_10_invariants_over_random_commands(
    start: tuple[JungleSpeed, Stamps], script_seed: int, length: int
) -> None:
    match, stamps = start
    checker = Checker(match)
    for command in random_script(script_seed, length):
        checker.step(stamps, command)
    replay_everything(match, checker.states)


def test_js_10_3_every_intermediate_version_replays_to_the_same_state() -> None:
    """Commands can trigger several events; replaying the original event objects one by
    one, and the stored ones, gives the same state at every version in between."""
    match = JungleSpeed.create(Options(variant="ES", max_players=4), b"\x07" * 32)
    stamps = Stamps()
    for s in range(4):
        match.join(f"p{s}", b"", f"h{s}", stamps())
    while match.status is MatchStatus.PLAYING and match.version < 400:
        duels = match.open_duels()
        if duels:
            match.grab(duels[-1][-1], stamps())
        elif match.open_arrows():
            match.grab(match.version % 4, stamps())
        elif match.turn is not None and match.pending_outward is None:
            match.reveal(match.turn, stamps())
        else:
            match.fire_timer(stamps(after_ms=10_000))
    events = match.pending_events
    local: dict[int, dict[str, Any]] = {}
    aggregate: Any = None
    for evt in events:
        aggregate = evt.mutate(aggregate)
        local[evt.originator_version] = state_of(aggregate)
    assert local[match.version] == state_of(match)
    assert len(local) == match.version
    replay_everything(match, local)


def sharing_the_symbol(
    match: JungleSpeed, tops: dict[int, int], coloured_ru: bool, winner: int
) -> set[int]:
    """The seats whose visible card (``tops``, just before a DuelWon) shared the symbol of
    the winner's card (JS-4.1): its shape, or its colour in coloured mode (JS-6.3: RU
    while ``coloured_ru`` was on, ES while a coloured-arrows card was visible).

    Worked out from the rule text, not from the aggregate's late-grab bookkeeping."""
    if match.is_ru:
        by_colour = coloured_ru
    else:
        by_colour = any(match.card(c).kind is Kind.COLOURED_ARROWS for c in tops.values())
    symbol = match.card(tops[winner]).key(by_colour)
    assert symbol is not None
    return {s for s, c in tops.items() if match.card(c).key(by_colour) == symbol}


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    # Three players at least, for a duel with an annulled pair inside it; long scripts.
    start=matches(min_players=3),
    script_seed=st.integers(0, 2**32),
    length=st.integers(200, 500),
)
def test_js_5_3_a_grab_by_a_participant_of_a_just_resolved_duel_is_late_never_wrong(
    start: tuple[JungleSpeed, Stamps], script_seed: int, length: int
) -> None:
    """JS-5.3 (with JS-4.6): after a duel is resolved and before any later reveal, a grab
    by any player whose card shared the duel's symbol when it was resolved (the winner, a
    loser, or one whose pair with the winner had been annulled) is recorded late
    (``LateGrab``) when no race is open for it, and is never a wrong grab (``WrongGrab``).

    Random play in both variants, as for JS-10, with extra grabs by those participants
    before the script goes on (which is most often a reveal)."""
    match, stamps = start
    rng = random.Random(script_seed ^ 0x5A5A)
    #: Seats that took part in a duel resolved since the last reveal.
    participants: set[int] = set()
    for command in random_script(script_seed, length):
        commands = [command]
        if participants and rng.random() < 0.7:
            # Most often one whose card is still visible: neither the winner nor a loser.
            showing = sorted(participants & set(match.visible()))
            pick = showing if showing and rng.random() < 0.7 else sorted(participants)
            commands.insert(0, Command("grab", rng.choice(pick)))
        for cmd in commands:
            version = match.version
            tops, coloured_ru = match.visible(), match.coloured_ru
            open_for = {s for d in match.open_duels() for s in d}
            arrows = bool(match.open_arrows())
            try:
                run(match, stamps, cmd)
            except DomainError:
                continue
            new = [e for e in match.pending_events if e.originator_version > version]
            names = [type(e).__name__ for e in new]
            if cmd.kind == "grab" and cmd.index in participants - open_for and not arrows:
                assert names == ["LateGrab"], names  # nothing open for it: late, no effect
            for evt in new:
                name = type(evt).__name__
                if name == "WrongGrab":
                    assert evt.seat not in participants, "a late grab was taken as wrong"
                elif name == "LateGrab":
                    assert evt.decided_at_version <= version
                elif name == "DuelWon":
                    participants |= sharing_the_symbol(match, tops, coloured_ru, evt.winner)
                elif name in ("Revealed", "OutwardReveal"):
                    participants = set()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 300))
def test_js_2_2_a_seat_sees_what_a_spectator_sees_and_its_legal_actions(
    start: tuple[JungleSpeed, Stamps], script_seed: int, length: int
) -> None:
    """JS-2.2: nobody, not even a pile's owner, may look at face-down cards; a seat's
    state adds only what that seat may do now."""
    match, stamps = start
    check_personal_views(match, views)
    for command in random_script(script_seed, length):
        with contextlib.suppress(DomainError):
            run(match, stamps, command)
        check_personal_views(match, views)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=matches(), script_seed=st.integers(0, 2**32), length=st.integers(1, 400))
def test_a_state_owes_an_automatic_step_exactly_inside_a_command(
    start: tuple[JungleSpeed, Stamps], script_seed: int, length: int
) -> None:
    """A finish (JS-8.1), the end (JS-8.2) or a simultaneous reveal (JS-6.2) still due
    is owed only between the events of one command: what refuses a fork there, and
    only there (domain.kernel.fork)."""
    match, stamps = start
    ended = {e.originator_version for e in match.pending_events}  # creation, each join
    for command in random_script(script_seed, length):
        with contextlib.suppress(DomainError):
            run(match, stamps, command)
        ended.add(match.version)
    check_pending_steps(match, ended)
