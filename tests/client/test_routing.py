"""Routing a match's players to one instance (totem_client.routing; docs/operations.md)."""

from __future__ import annotations

import uuid

import pytest

from totem_client.routing import instance_for, instances_for

ADDRESSES = ["10.0.0.1:50051", "10.0.0.2:50051", "10.0.0.3:50051"]
MATCHES = [str(uuid.UUID(int=i * 7919 + 1)) for i in range(3000)]


def test_every_client_picks_the_same_instance_whatever_the_order_of_its_list() -> None:
    for match_id in MATCHES[:200]:
        picks = {instance_for(match_id, order) for order in (ADDRESSES, ADDRESSES[::-1])}
        assert len(picks) == 1


def test_matches_spread_over_the_instances() -> None:
    counts = {a: 0 for a in ADDRESSES}
    for match_id in MATCHES:
        counts[instance_for(match_id, ADDRESSES)] += 1
    assert all(800 <= c <= 1200 for c in counts.values()), counts


def test_removing_an_instance_moves_only_its_own_matches() -> None:
    gone = ADDRESSES[1]
    rest = [a for a in ADDRESSES if a != gone]
    for match_id in MATCHES:
        before = instance_for(match_id, ADDRESSES)
        after = instance_for(match_id, rest)
        if before != gone:
            assert after == before
        else:  # the next choice, the same for every client, takes over
            assert instances_for(match_id, ADDRESSES)[1] == after


def test_no_instance_is_an_error() -> None:
    with pytest.raises(ValueError, match="no server instance"):
        instance_for(MATCHES[0], [])


def test_the_choices_are_those_of_the_node_client() -> None:
    """The same vectors as clients/node/test/routing.test.js: players on either client
    meet on one instance."""
    assert instances_for("00000000-0000-0000-0000-000000000001", ADDRESSES) == [
        "10.0.0.1:50051",
        "10.0.0.3:50051",
        "10.0.0.2:50051",
    ]
    assert instances_for("5f1d2c3b-0000-4000-8000-00000000abcd", ADDRESSES) == [
        "10.0.0.3:50051",
        "10.0.0.1:50051",
        "10.0.0.2:50051",
    ]
