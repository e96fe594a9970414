"""Invariants of Village over long random matches, with random and silent players (VI-6).

- VI-6.1 no cottage above 6 at the end of phase 1; no pen above 5 after phase 5.
- VI-6.2 poles stay within 1..6 (0..6 under ``totem_a``).
- VI-6.3 a family casts each spell at most once a round, and no more spells than pieces
  plus sacrificed birds.
- VI-6.4 replaying the recorded events reproduces every state exactly: through the JSON
  transcoder of an ``eventsourcing`` application, version by version (and the stored
  events still carry a valid hash chain).

Besides: a refused command changes nothing and its message names no hidden fact; every
command built from the choices a player's legal actions offer is accepted, and the
default each decision shows is accepted; a seat that owes nothing has every command
refused.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from domain_support import Stamps, state_of
from eventsourcing.application import Application
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.kernel import GENESIS_DIGEST, DomainError, MatchStatus
from domain.kernel.chain import stored_event_digest
from domain.village import (
    Arrange,
    ChooseSpells,
    ChooseVictims,
    FamilyCommand,
    Options,
    PassSpells,
    PlaceSpell,
    RevealSpells,
    SpareFromAge,
    SubmitPlacements,
    Village,
    model,
)

VARIATIONS = ("village", "spells_a", "spells_b", "feast_a", "feast_b", "totem_a", "totem_b")


def random_legal(match: Village, seat: int, rng: random.Random) -> list[FamilyCommand]:
    """Commands built only from what ``seat``'s legal actions offer."""
    commands: list[FamilyCommand] = []
    for decision in match.legal_actions(seat)["decisions"]:
        family, kind, choices = decision["family"], decision["kind"], decision["choices"]
        if kind == "arrange":
            people = [k for k, n in choices["members"].items() for _ in range(n)]
            rng.shuffle(people)
            cottages: list[dict[str, int]] = [{}, {}, {}]
            for kind_ in people[: choices["house"]]:
                room = [c for c in cottages if sum(c.values()) < choices["capacity"]]
                target = rng.choice(room)
                target[kind_] = target.get(kind_, 0) + 1
            commands.append(Arrange(family, cottages))
        elif kind == "choose":
            k = rng.randint(0, choices["max_spells"])
            spells = rng.sample(choices["spells"], k)
            commands.append(ChooseSpells(family, spells, max(0, k - choices["pieces"])))
        elif kind == "place":
            if choices["can_pass"] and rng.random() < 0.2:
                commands.append(PassSpells(family))
            else:
                target, cottage = rng.choice(choices["targets"])
                commands.append(PlaceSpell(family, rng.choice(choices["hand"]), target, cottage))
        elif kind == "submit":
            hand = list(choices["hand"])
            if not choices["all_required"]:
                hand = rng.sample(hand, rng.randint(0, len(hand)))
            placements = [(s, *rng.choice(choices["targets"])) for s in hand]
            commands.append(SubmitPlacements(family, placements))
        elif kind == "reveal":
            able = choices["revealable"]
            commands.append(RevealSpells(family, rng.sample(able, rng.randint(0, len(able)))))
        elif kind in ("victims", "name_victims"):
            pool = [
                (c["cottage"], c["kind"]) for c in choices["candidates"] for _ in range(c["count"])
            ]
            commands.append(ChooseVictims(family, rng.sample(pool, choices["count"])))
        else:
            spared: list[tuple[int, str]] = []
            for cottage, (least, most) in enumerate(
                zip(choices["minimum"], choices["needs"], strict=True)
            ):
                pool = [
                    (c["cottage"], c["kind"])
                    for c in choices["candidates"]
                    if c["cottage"] == cottage
                    for _ in range(c["count"])
                ]
                spared += rng.sample(pool, rng.randint(least, most))
            commands.append(SpareFromAge(family, spared))
    return commands


def junk(match: Village, rng: random.Random) -> tuple[int, FamilyCommand]:
    """A command from anyone, about anything: mostly refused."""
    seat = rng.randrange(-1, 5)
    family = rng.randrange(-1, 5)
    kinds = [*list(model.KINDS), "wolf"]
    person = (rng.randrange(-1, 4), rng.choice(kinds))
    spells = [*list(model.SPELLS), "fireball"]
    options: list[FamilyCommand] = [
        Arrange(
            family, [{rng.choice(kinds): rng.randrange(-1, 8)} for _ in range(rng.randrange(4))]
        ),
        ChooseSpells(family, rng.sample(spells, rng.randrange(4)), rng.randrange(-1, 4)),
        PlaceSpell(family, rng.choice(spells), rng.randrange(-1, 5), rng.randrange(-1, 4)),
        PassSpells(family),
        SubmitPlacements(family, [(rng.choice(spells), rng.randrange(5), rng.randrange(4))]),
        RevealSpells(family, [rng.randrange(-1, 12) for _ in range(rng.randrange(3))]),
        ChooseVictims(family, [person] * rng.randrange(3)),
        SpareFromAge(family, [person] * rng.randrange(3)),
    ]
    return seat, rng.choice(options)


def hidden_facts(match: Village, seat: int) -> list[str]:
    """What ``seat`` must never read: the secret, the salts of other families' spells
    that are not revealed."""
    facts = [match.secret]
    for choice_family, choice in enumerate(match.choices):
        if choice is None or match.party_owner(choice_family) == seat:
            continue
        revealed = {b["salt"] for b in match.board if b["revealed"]}
        facts += [s for s in choice["salts"] if s not in revealed]
    return facts


class Checker:
    def __init__(self, match: Village, seed: int, silent: bool) -> None:
        self.match = match
        self.rng = random.Random(seed)
        self.silent = silent
        self.states: dict[int, dict[str, Any]] = {match.version: state_of(match)}
        self.refusals = 0

    def step(self, stamps: Stamps) -> None:
        match = self.match
        roll = self.rng.random()
        deadline = match.timer_deadline_ms()
        assert deadline is not None
        if self.silent or roll < 0.3:
            # The deadline passes; sometimes a firing comes too early and is refused.
            early = self.rng.random() < 0.1 and deadline > stamps.wall_ms
            when = stamps.wall_ms if early else max(stamps.wall_ms, deadline)
            self.attempt(lambda: match.fire_timer(stamps.at(when)), None)
            return
        if roll < 0.45:
            seat, command = junk(match, self.rng)
            self.attempt(lambda: match.act(seat, command, stamps()), seat)
            return
        decision = match.decision
        assert decision is not None
        seat = match.party_owner(self.rng.choice(decision.parties))
        commands = random_legal(match, seat, self.rng)
        assert commands, "the owner of an awaited decision is offered it"
        if self.rng.random() < 0.25:  # copies are costly: a sample of the steps
            self.check_defaults(seat, stamps)
            self.check_idle_seats(stamps)
        command = self.rng.choice(commands)
        self.attempt(lambda: match.act(seat, command, stamps()), seat, must_pass=True)

    def attempt(self, run: Any, seat: int | None, must_pass: bool = False) -> None:
        match = self.match
        before = state_of(match)
        version, pending = match.version, len(match.pending_events)
        try:
            run()
        except DomainError as error:
            assert not must_pass, f"a legal command was refused: {error}"
            self.refusals += 1
            assert match.version == version
            assert len(match.pending_events) == pending
            assert state_of(match) == before
            if seat is not None and 0 <= seat < len(match.players):
                for fact in hidden_facts(match, seat):
                    assert fact not in str(error)
            return
        assert match.version > version
        self.states[match.version] = state_of(match)

    def check_defaults(self, seat: int, stamps: Stamps) -> None:
        """Each decision's shown default is a command the match accepts."""
        for decision in self.match.legal_actions(seat)["decisions"]:
            trial = copy.deepcopy(self.match)
            trial.act(seat, default_from(decision["default"]), stamps())

    def check_idle_seats(self, stamps: Stamps) -> None:
        """A seat with no decision offered has its commands refused."""
        match = self.match
        for seat in range(len(match.players)):
            if match.legal_actions(seat)["decisions"]:
                continue
            for family in match.parties_of(seat):
                try:
                    copy.deepcopy(match).act(seat, RevealSpells(family, []), stamps())
                except DomainError:
                    continue
                raise AssertionError(f"seat {seat} acted without a decision offered")


def default_from(data: dict[str, Any]) -> FamilyCommand:
    family = data["family"]
    name = data["command"]
    if name == "Arrange":
        return Arrange(family, data["cottages"])
    if name == "ChooseSpells":
        return ChooseSpells(family, data["spells"], data["birds"])
    if name == "PlaceSpell":
        return PlaceSpell(family, data["spell"], data["target_family"], data["cottage"])
    if name == "SubmitPlacements":
        return SubmitPlacements(family, [tuple(p) for p in data["placements"]])  # type: ignore[misc]
    if name == "RevealSpells":
        return RevealSpells(family, data["positions"])
    if name == "ChooseVictims":
        return ChooseVictims(family, [(v["cottage"], v["kind"]) for v in data["victims"]])
    return SpareFromAge(family, [(v["cottage"], v["kind"]) for v in data["spared"]])


def replay_and_check(match: Village, states: dict[int, dict[str, Any]]) -> None:
    """VI-6.4 through the store, and VI-6.1 … VI-6.3 at every version of the replay."""
    app: Application[Any] = Application(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    app.save(match)
    rebuilt: Any = None
    previous = GENESIS_DIGEST
    floor = 0 if match.options.totem_a else 1
    for stored in app.events.get(match.id):
        assert stored_event_digest(stored) == stored.digest
        assert stored.prev_digest == previous
        previous = stored.digest
        name = type(stored).__name__
        if name == "SpellsChosen":  # VI-6.3, against the state before the choice
            assert len(set(stored.spells)) == len(stored.spells) == stored.count
            assert stored.count <= rebuilt.poles[stored.family] + stored.birds
            assert stored.birds <= rebuilt.birds[stored.family]
        rebuilt = stored.mutate(rebuilt)
        if name == "PhaseBegan" and stored.phase == 2:  # VI-6.1, end of phase 1
            for f in rebuilt.families:
                assert all(model.total(c) <= model.COTTAGE_CAPACITY for c in rebuilt.cottages[f])
        if name == "PhaseBegan" and stored.phase == 6:  # VI-6.1, after phase 5
            assert all(b <= model.PEN_LIMIT for b in rebuilt.birds)
        if rebuilt.family_count:  # VI-6.2
            assert all(floor <= p <= model.POLE_MAX for p in rebuilt.poles)
        version = stored.originator_version
        if version in states:
            assert state_of(rebuilt) == states[version], f"version {version}"
    assert rebuilt is not None and rebuilt.version == match.version
    assert state_of(rebuilt) == states[match.version]
    for version in sorted(states)[:: max(1, len(states) // 4)]:
        assert state_of(app.repository.get(match.id, version=version)) == states[version]


@st.composite
def matches(draw: st.DrawFn) -> tuple[Village, Stamps]:
    players = draw(st.integers(2, 4))
    flags = {v: draw(st.booleans()) for v in VARIATIONS}
    sexes = draw(st.one_of(st.none(), st.lists(st.sampled_from(["girl", "boy"]), max_size=30)))
    options = Options(
        max_players=players,
        prearranged_sexes=sexes,
        arrange_timeout_ms=draw(st.sampled_from([0, 1_000, 120_000])),
        **flags,
    )
    stamps = Stamps()
    match = Village.create(
        options,
        draw(st.binary(min_size=32, max_size=32)),
        draw(st.binary(max_size=4)),
        secret=draw(st.binary(min_size=32, max_size=32)),
    )
    for s in range(players):
        match.join(f"p{s}", draw(st.binary(max_size=4)), f"h{s}", stamps())
    return match, stamps


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    start=matches(),
    script=st.integers(0, 2**32),
    length=st.integers(1, 400),
    silent=st.booleans(),
)
def test_vi_6_invariants_over_random_matches(
    start: tuple[Village, Stamps], script: int, length: int, silent: bool
) -> None:
    match, stamps = start
    checker = Checker(match, script, silent)
    for _ in range(length):
        if match.status is not MatchStatus.PLAYING:
            break
        checker.step(stamps)
    replay_and_check(match, checker.states)


def test_vi_6_4_a_silent_match_replays_to_its_end() -> None:
    """Silent players: the deadlines alone run a match to its end; every version in
    between replays exactly."""
    stamps = Stamps()
    match = Village.create(
        Options(max_players=2, feast_b=True, spells_b=True, totem_b=True),
        b"\x09" * 32,
        secret=b"\x01" * 32,
    )
    match.join("a", b"", "h0", stamps())
    match.join("b", b"", "h1", stamps())
    checker = Checker(match, 1, silent=True)
    while match.status is MatchStatus.PLAYING:
        checker.step(stamps)
    assert type(match.pending_events[-1]).__name__ == "MatchEnded"
    local: dict[int, dict[str, Any]] = {}
    aggregate: Any = None
    for evt in match.pending_events:
        aggregate = evt.mutate(aggregate)
        local[evt.originator_version] = state_of(aggregate)
    assert local[match.version] == state_of(match)
    replay_and_check(match, local)
