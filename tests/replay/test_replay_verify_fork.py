"""``totem-replay verify`` on forks played to their end: every draw recorded after
``Forked`` is re-derived from the fork's own seed, counted on from the origin's state at
the fork (JS-9.1, JS-3.4; TR-2.1, TR-5.1; VI-2.4, VI-2.2), and a forged one is found."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from replay_support import Stamps, as_referee, forge, open_store
from replay_support import play as play_jungle_speed
from test_replay_tribes import play as play_tribes
from test_replay_village import SECRET, ZERO
from test_replay_village import play as play_village

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel import MatchStatus
from domain.kernel.fork import fork
from domain.kernel.match import MatchAggregate, event_name
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.village import Options as VillageOptions
from domain.village import Village
from entrypoints.totem_replay import main
from storage.arena import Arena, store_env

FORK_SEED = bytes(range(200, 232))
FORK_SECRET = bytes(range(150, 182))


@dataclass
class Fork:
    db: Path
    origin: MatchAggregate
    fork: MatchAggregate
    #: The fork's events (version 1 is Forked).
    events: list[Any]

    def after_fork(self, name: str) -> list[Any]:
        """The fork's own events called ``name``, after Forked."""
        return [e for e in self.events[1:] if event_name(e) == name]


def run(db: Path, *args: object) -> Result:
    argv: Sequence[str] = ["--db", str(db), *as_referee(args)]
    return CliRunner().invoke(main, argv)


def forked(
    db: Path,
    origin: Callable[[Arena, Stamps], MatchAggregate],
    play_on: Callable[[MatchAggregate, Stamps], None],
    fork_seed: bytes = FORK_SEED,
) -> Fork:
    """An origin stored as played so far, forked at its last version, and the fork played
    on to its end, as the server does it (a fork's own seed from the store)."""
    arena = open_store(db)
    try:
        stamps = Stamps()
        played = origin(arena, stamps)
        arena.save(played)
        history = list(arena.events_after(played.id))
    finally:
        arena.close()
    # The server draws the fork's seed afresh: here, another than the origin's.
    arena = Arena(store_env(str(db), {}), seed_source=lambda: fork_seed)
    try:
        tokens = [f"fork-token-hash-{s}" for s in range(len(played.players))]
        new = arena.create_match(
            lambda seed: fork(
                type(played), history, seed, FORK_SECRET, "fork-referee", tokens, stamps(5_000)
            )
        )
        play_on(new, stamps)
        assert new.status is MatchStatus.ENDED
        arena.save(new)
        events = list(arena.events_after(new.id))
    finally:
        arena.close()
    assert new.seed != played.seed
    return Fork(db, played, new, events)


def verified_ok(match: Fork) -> str:
    result = run(match.db, "verify", match.fork.id)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "random draws:    OK  every draw recorded after the fork re-derived" in out
    assert f"a fork of {match.origin.id} at version {match.origin.version}" in out
    assert "the draws it carries are the origin's" in out
    assert f"the carried history is the origin's events 1 to {match.origin.version}" in out
    return out


def forged_fails(match: Fork, version: int, reason: str, **changes: object) -> str:
    forge(match.db, match.fork.id, version, **changes)
    result = run(match.db, "verify", match.fork.id)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(f"FAILED match {match.fork.id}: first bad version {version}: ")
    assert reason in result.stdout
    assert "does not match its digest" not in result.stdout
    return result.stdout


# ---- Jungle Speed: the recyclings of the piles (JS-3.4, JS-9.1) ---------------------


def reveal_until_recycled(match: JungleSpeed, stamps: Stamps, recyclings: int) -> None:
    """Reveal and let the timer act, never grab, until the piles were recycled
    ``recyclings`` times in all (JS-3.4)."""
    while match.recycled < recyclings and match.status is MatchStatus.PLAYING:
        if match.turn is not None:
            match.reveal(match.turn, stamps())
        else:
            deadline = match.timer_deadline_ms()
            assert deadline is not None
            match.fire_timer(stamps(after_ms=deadline - stamps.wall_ms))


def jungle_speed_origin(arena: Arena, stamps: Stamps) -> MatchAggregate:
    options = JungleSpeedOptions(variant="ES", max_players=3)
    match = arena.create_match(lambda seed: JungleSpeed.create(options, seed, b"\x01"))
    assert isinstance(match, JungleSpeed)
    for seat in range(3):
        match.join(f"player{seat}", bytes([seat, 7]), f"token-hash-{seat}", stamps())
    reveal_until_recycled(match, stamps, 1)
    return match


def jungle_speed_on(match: MatchAggregate, stamps: Stamps) -> None:
    assert isinstance(match, JungleSpeed)
    reveal_until_recycled(match, stamps, 2)
    play_jungle_speed(match, stamps, random.Random(1), 100_000)


@pytest.fixture
def jungle_speed_fork(tmp_path: Path) -> Fork:
    return forked(tmp_path / "totem.db", jungle_speed_origin, jungle_speed_on)


def test_js_9_1_a_fork_recycling_is_re_derived_from_the_fork_seed(
    jungle_speed_fork: Fork,
) -> None:
    """JS-3.4, JS-9.1: the fork's recycling is the origin's second (stream 1), drawn from
    the fork's seed; the deal and the first recycling are the origin's."""
    assert len(jungle_speed_fork.after_fork("PilesRecycled")) == 1
    out = verified_ok(jungle_speed_fork)
    assert (
        "1 recyclings of the piles after the fork re-derived from its revealed seed, "
        "counted on from the origin's 1"
    ) in out


def test_js_3_4_a_forged_recycling_after_the_fork_fails_verify(jungle_speed_fork: Fork) -> None:
    (recycled,) = jungle_speed_fork.after_fork("PilesRecycled")
    orders = [list(o) for o in recycled.orders]
    longest = max(orders, key=len)
    longest[0], longest[-1] = longest[-1], longest[0]
    out = forged_fails(
        jungle_speed_fork,
        recycled.originator_version,
        "recycling 1 of the piles is not the shuffle re-derived from the seed",
        orders=orders,
    )
    assert "random draws:    FAILED" in out


# ---- Tribes: the Cards of Truth (TR-2.1) and the die (TR-5.1) -----------------------


def tribes_origin(arena: Arena, stamps: Stamps) -> MatchAggregate:
    options = TribesOptions(max_players=2, extended=True)
    match = arena.create_match(lambda seed: Tribes.create(options, seed, b"\x05"))
    assert isinstance(match, Tribes)
    for seat in range(2):
        match.join(f"tribe{seat}", bytes([seat, 9]), f"token-hash-{seat}", stamps())
    play_tribes(match, stamps, random.Random(4), 60)
    return match


def tribes_on(match: MatchAggregate, stamps: Stamps) -> None:
    assert isinstance(match, Tribes)
    play_tribes(match, stamps, random.Random(5), 100_000)


@pytest.fixture
def tribes_fork(tmp_path: Path) -> Fork:
    return forked(tmp_path / "totem.db", tribes_origin, tribes_on)


def test_tr_2_1_tr_5_1_a_fork_cards_and_rolls_are_re_derived_from_the_fork_seed(
    tribes_fork: Fork,
) -> None:
    """TR-2.1, TR-5.1: the rounds and rolls after the fork keep the origin's count and
    come from the fork's seed."""
    assert tribes_fork.after_fork("RoundStarted") and tribes_fork.after_fork("DieRolled")
    history = tribes_fork.events[0].history
    assert any(entry["topic"].endswith("DieRolled") for entry in history)
    out = verified_ok(tribes_fork)
    assert f"Cards of Truth of {len(tribes_fork.after_fork('RoundStarted'))} rounds" in out
    assert f"{len(tribes_fork.after_fork('DieRolled'))} die rolls re-derived" in out


def test_tr_5_1_a_forged_roll_after_the_fork_fails_verify(tribes_fork: Fork) -> None:
    roll = tribes_fork.after_fork("DieRolled")[0]
    rolls_before = sum(e["topic"].endswith("DieRolled") for e in tribes_fork.events[0].history)
    other = "small" if roll.face != "small" else "blank"
    forged_fails(
        tribes_fork,
        roll.originator_version,
        f"die roll {rolls_before} is not the roll re-derived from the seed (TR-5.1)",
        face=other,
    )


def test_tr_2_1_forged_cards_after_the_fork_fail_verify(tribes_fork: Fork) -> None:
    started = tribes_fork.after_fork("RoundStarted")[0]
    forged_fails(
        tribes_fork,
        started.originator_version,
        "Cards of Truth are not the draw re-derived from the seed (TR-2.1)",
        cards=list(reversed(started.cards)),
        order=list(reversed(started.order)),
    )


# ---- Village: the births (VI-2.4) and the spell reveals (VI-2.2) -------------------


def village_origin(arena: Arena, stamps: Stamps) -> MatchAggregate:
    options = VillageOptions(max_players=3, prearranged_sexes=["girl", "boy"], **ZERO)
    match = arena.create_match(lambda seed: Village.create(options, seed, b"\x05", secret=SECRET))
    assert isinstance(match, Village)
    for seat in range(3):
        match.join(f"chief{seat}", bytes([seat, 7]), f"token-hash-{seat}", stamps())
    play_village(match, stamps, 60)
    return match


def village_on(match: MatchAggregate, stamps: Stamps) -> None:
    assert isinstance(match, Village)
    play_village(match, stamps, 100_000)


@pytest.fixture
def village_fork(tmp_path: Path) -> Fork:
    return forked(tmp_path / "totem.db", village_origin, village_on)


def test_vi_2_4_a_fork_births_are_re_derived_from_the_fork_seed(village_fork: Fork) -> None:
    """VI-2.4: the prearranged sexes were used up before the fork; every sex born after
    it is drawn from the fork's seed. VI-2.2: its reveals match their commitments."""
    history = village_fork.events[0].history
    carried = [e["fields"] for e in history if e["topic"].endswith("Born")]
    assert sum(b["prearranged"] for b in carried) == 2
    born = village_fork.after_fork("Born")
    assert any(b.draws for b in born) and all(b.prearranged == 0 for b in born)
    assert any(r.reveals for r in village_fork.after_fork("SpellsRevealed"))
    out = verified_ok(village_fork)
    assert "spell reveals:   OK  every spell reveal after the fork matches its commitment" in out
    drawn = sum(len(b.draws) for b in born)
    assert f"births of {len(born)} rounds checked: 0 prearranged sexes, {drawn} re-derived" in out


def test_vi_2_4_a_forged_birth_after_the_fork_fails_verify(village_fork: Fork) -> None:
    born = next(b for b in village_fork.after_fork("Born") if b.draws)
    flipped = ["boy" if s == "girl" else "girl" for s in born.draws]
    children = [
        c if c["forced"] is not None else dict(c, girls=c["boys"], boys=c["girls"])
        for c in born.children
    ]
    out = forged_fails(
        village_fork,
        born.originator_version,
        "births are not the prearranged sexes and the draws re-derived from the seed (VI-2.4)",
        draws=flipped,
        children=children,
    )
    assert "random draws:    FAILED" in out


def test_vi_2_2_a_forged_reveal_after_the_fork_fails_verify(village_fork: Fork) -> None:
    revealed = next(e for e in village_fork.after_fork("SpellsRevealed") if e.reveals)
    reveals = [dict(r, spell="illness") for r in revealed.reveals]
    out = forged_fails(
        village_fork,
        revealed.originator_version,
        "the reveal breaks its commitment (VI-2.2)",
        reveals=reveals,
    )
    assert "spell reveals:   FAILED" in out


def test_js_9_1_a_carried_history_that_is_not_the_origin_s_fails_verify(
    jungle_speed_fork: Fork,
) -> None:
    """JS-9.1: the deal a fork carries is the origin's, checked by verifying the origin;
    so the carried history must be the origin's events, as the store holds them."""
    origin = jungle_speed_fork.origin
    arena = open_store(jungle_speed_fork.db)
    try:
        dealt = next(e for e in arena.events_after(origin.id) if event_name(e) == "Dealt")
    finally:
        arena.close()
    deck = list(dealt.deck)
    deck[0], deck[1] = deck[1], deck[0]
    forge(jungle_speed_fork.db, origin.id, dealt.originator_version, deck=deck)
    result = run(jungle_speed_fork.db, "verify", jungle_speed_fork.fork.id)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(
        f"FAILED match {jungle_speed_fork.fork.id}: first bad version 1: "
    )
    assert (
        f"the event Forked carries as its origin's version {dealt.originator_version} is not "
        f"the origin's event {dealt.originator_version} in this store"
    ) in result.stdout
    every = run(jungle_speed_fork.db, "verify", "--all")
    assert every.exit_code == 1, every.output
    assert f"FAILED match {jungle_speed_fork.fork.id}: chain: version 1: " in every.stdout
    assert f"FAILED match {origin.id}: " in every.stdout


# ---- a fork of a fork ---------------------------------------------------------------


def test_tr_5_1_a_fork_of_a_fork_counts_on_from_both_histories(tmp_path: Path) -> None:
    """TR-2.1, TR-5.1: a fork of a fork carries its origin's Forked, which carries the
    first origin's events: the draws count on from all of them, from the last seed."""
    db = tmp_path / "totem.db"

    def first_fork(arena: Arena, stamps: Stamps) -> MatchAggregate:
        origin = tribes_origin(arena, stamps)
        arena.save(origin)
        history = list(arena.events_after(origin.id))
        tokens = [f"first-fork-hash-{s}" for s in range(len(origin.players))]
        middle = fork(Tribes, history, bytes(range(50, 82)), SECRET, "r", tokens, stamps(5_000))
        play_tribes(middle, stamps, random.Random(6), 40)
        assert middle.status is MatchStatus.PLAYING
        arena.save(middle)
        return middle

    twice = forked(db, first_fork, tribes_on)
    (carried_forked, *_) = twice.events[0].history
    assert carried_forked["topic"].endswith("Forked")
    assert twice.after_fork("DieRolled")
    verified_ok(twice)
    roll = twice.after_fork("DieRolled")[0]
    other = "small" if roll.face != "small" else "blank"
    forged_fails(
        twice, roll.originator_version, "is not the roll re-derived from the seed", face=other
    )


@pytest.mark.parametrize("game", ["jungle_speed", "tribes", "village"])
def test_a_fork_and_its_origin_as_bundles_verify_with_only_registered_classes(
    tmp_path: Path, game: str
) -> None:
    """A bundle's topics, and those of the history Forked carries, are looked up among
    the classes each game registers (domain.kernel.topics): every event kind of each
    game, and a fork, travel in a bundle and verify from it alone."""
    origin, play_on = {
        "jungle_speed": (jungle_speed_origin, jungle_speed_on),
        "tribes": (tribes_origin, tribes_on),
        "village": (village_origin, village_on),
    }[game]
    match = forked(tmp_path / "totem.db", origin, play_on)
    for which in (match.origin, match.fork):
        bundle = tmp_path / f"{which.id}.jsonl"
        exported = run(match.db, "export", which.id, "-o", bundle, "--referee")
        assert exported.exit_code == 0, exported.output
        names = {json.loads(line).get("name") for line in bundle.read_text().splitlines()[1:]}
        result = run(match.db, "verify", bundle)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"OK match {which.id}: {which.version} events")
    assert "Forked" in names
