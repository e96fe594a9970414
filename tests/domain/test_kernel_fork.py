"""Forks in the domain: the same state as the origin's, new tokens, a new seed, a clock
that restarts (domain.kernel.fork)."""

from __future__ import annotations

from typing import Any

import pytest
from domain_support import Stamps, new_match, play_turns
from tribes_support import new_tribes
from village_support import fire, new_village, to_decision

from domain.games import game_of
from domain.kernel.errors import RuleViolation
from domain.kernel.fork import Forked, fork, fork_refusal
from domain.kernel.match import MatchAggregate, MatchStatus
from domain.kernel.randomness import commitment, effective_seed
from domain.kernel.views import Viewer
from domain.village import Village

FORK_SEED = bytes(range(200, 232))
#: What a fork changes on purpose: the seed and secret, and deadlines that run from its start.
CHANGED = {"seed", "seed_commitment", "secret", "turn_deadline_ms", "deadline_ms"}


def forked(
    origin: MatchAggregate, stamps: Stamps, after_ms: int = 5_000, seed: bytes = FORK_SEED
) -> MatchAggregate:
    """A fork of ``origin`` as it is now, made ``after_ms`` later."""
    history = list(origin.collect_events())
    tokens = [f"new-token-hash-{s}" for s in range(len(origin.players))]
    secret = bytes(reversed(seed))
    return fork(type(origin), history, seed, secret, "new-referee-hash", tokens, stamps(after_ms))


def without_changes(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_changes(v) for k, v in value.items() if k not in CHANGED}
    if isinstance(value, list):
        return [without_changes(v) for v in value]
    return value


def same_views(origin: MatchAggregate, fork_: MatchAggregate) -> None:
    game = game_of(origin)
    viewers = [Viewer.referee(), Viewer.spectator()]
    viewers += [Viewer.player(s) for s in range(len(origin.players))]
    for viewer in viewers:
        assert without_changes(game.state_view(fork_, viewer)) == without_changes(
            game.state_view(origin, viewer)
        ), viewer


def test_a_jungle_speed_fork_has_the_origin_state_and_its_own_seed_and_tokens() -> None:
    origin, stamps = new_match(3, turn_timeout_ms=2_000)
    play_turns(origin, stamps, 4)
    origin_seed = origin.seed
    new = forked(origin, stamps)
    same_views(origin, new)
    assert new.version == 1 and new.status is MatchStatus.PLAYING
    assert [type(e) for e in new.pending_events] == [Forked]
    assert new.token_hashes == ["new-token-hash-0", "new-token-hash-1", "new-token-hash-2"]
    assert new.seat_of("token-hash-0") is None
    assert new.referee_token_hash == "new-referee-hash"
    # Later draws (JS-3.4 recyclings) come from the fork's own seed, never the origin's.
    assert new.seed_commitment == commitment(FORK_SEED)
    assert new.effective_seed() == effective_seed(FORK_SEED, [b""])
    assert new.effective_seed() != origin.effective_seed()
    # The origin's secret seed is not carried, even in the stored history.
    event = new.pending_events[0]
    assert isinstance(event, Forked)
    assert origin_seed not in str(vars(event))
    assert event.origin == {
        "match_id": str(origin.id),
        "version": origin.version,
        "digest": origin.digest,
    }


def test_a_fork_turn_timer_runs_from_the_fork_creation() -> None:
    origin, stamps = new_match(2, turn_timeout_ms=2_000)
    play_turns(origin, stamps, 2)
    new = forked(origin, stamps, after_ms=60_000)
    # JS-3.4: a full turn from the fork's creation, not one long expired.
    assert new.timer_deadline_ms() == stamps.wall_ms + 2_000
    assert origin.timer_deadline_ms() is not None
    assert origin.timer_deadline_ms() < stamps.wall_ms


def test_a_tribes_fork_has_the_origin_state() -> None:
    origin, stamps = new_tribes(3, turn_timeout_ms=1_000)
    same_views(origin, forked(origin, stamps))


def test_a_village_fork_keeps_the_time_left_for_the_awaited_decision() -> None:
    origin, stamps = new_village(2)
    to_decision(origin, stamps, "arrange")
    fire(origin, stamps)
    left = origin.timer_deadline_ms()
    assert left is not None
    left -= origin.clock_ms
    new = forked(origin, stamps, after_ms=90_000)
    same_views(origin, new)
    assert new.timer_deadline_ms() == stamps.wall_ms + left
    # VI-2.2: later salts derive from the fork's own secret, which the origin never had.
    assert isinstance(new, Village) and isinstance(origin, Village)
    assert new.secret == bytes(reversed(FORK_SEED)).hex() != origin.secret
    assert origin.secret not in str(vars(new.pending_events[0]))


def test_only_a_match_in_play_can_be_forked() -> None:
    playing, stamps = new_match(2)
    waiting = type(playing).create(playing.options, bytes(32))
    waiting.join("solo", b"", "hash", stamps())
    refusal = fork_refusal(waiting)
    # Nothing has been dealt yet (JS-2.1): there is no position to play again.
    assert isinstance(refusal, RuleViolation) and refusal.rule == "JS-2.1"
    assert fork_refusal(playing) is None


@pytest.mark.parametrize("players", [2, 4])
def test_a_fork_of_a_fork_is_the_same_state(players: int) -> None:
    origin, stamps = new_match(players)
    play_turns(origin, stamps, players)
    first = forked(origin, stamps)
    second = forked(first, stamps, seed=bytes(32))
    same_views(origin, second)
    assert second.origin == {"match_id": str(first.id), "version": 1, "digest": first.digest}
    assert first.seed not in str(vars(second.pending_events[0]))
