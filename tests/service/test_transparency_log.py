"""The transparency log as the application keeps it: a leaf for each match created or
ended, written in the transaction that saves the match, several matches' leaves in one
save, and none at all when the save fails (as when another instance took the log's next
position: the conflict is the caller's to retry, as any conflict)."""

from __future__ import annotations

import pytest
from eventsourcing.persistence import IntegrityError

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import merkle
from domain.kernel.translog import CREATED, ENDED, created_leaf, ended_leaf
from storage.arena import Arena


def created(arena: Arena) -> JungleSpeed:
    match = arena.create_match(lambda seed: JungleSpeed.create(Options(max_players=2), seed, b""))
    assert isinstance(match, JungleSpeed)
    return match


def kinds(arena: Arena) -> list[tuple[str, object]]:
    return [(leaf.kind, leaf.match_id) for leaf in arena.logged_leaves()]


def test_creations_and_ends_are_logged_in_the_order_saved(store_env: dict[str, str]) -> None:
    arena = Arena(store_env)
    try:
        a, b = created(arena), created(arena)
        a.abandon("nobody came")
        b.abandon("nobody came")
        arena.save(b, a)  # two ends in one transaction, as the group commit saves them
        assert kinds(arena) == [(CREATED, a.id), (CREATED, b.id), (ENDED, b.id), (ENDED, a.id)]
        events = {m.id: arena.events_after(m.id) for m in (a, b)}
        expected = [
            created_leaf(events[a.id][0], "jungle_speed"),
            created_leaf(events[b.id][0], "jungle_speed"),
            ended_leaf(events[b.id][-1]),
            ended_leaf(events[a.id][-1]),
        ]
        assert [logged.leaf() for logged in arena.logged_leaves()] == expected
        assert arena.tree_head() == (4, merkle.root([leaf.hash() for leaf in expected]))
    finally:
        arena.close()


def test_a_save_that_loses_the_log_position_writes_nothing(store_env: dict[str, str]) -> None:
    one, other = Arena(store_env), Arena(store_env)  # two instances on one store
    try:
        match = created(one)
        assert one.tree_head()[0] == 1
        created(other)  # takes leaf position 2, which `one` believes is next
        match.abandon("nobody came")
        with pytest.raises(IntegrityError):
            one.save(match)
        assert len(one.events_after(match.id)) == 1  # the end was not saved
        assert kinds(one) == [(CREATED, match.id), (CREATED, kinds(other)[1][1])]
        # Its caller loads the match again and decides again: the end is logged next.
        again = one.load(match.id)
        again.abandon("nobody came")
        one.save(again)
        assert kinds(one)[2] == (ENDED, match.id)
        assert one.tree_head()[0] == other.tree_head()[0] == 3
    finally:
        one.close()
        other.close()
