"""The snapshot encoding of a match's state (:mod:`domain.kernel.snapshots`): every value
comes back with its type, and a stored snapshot can name no class outside the domain."""

from __future__ import annotations

import json
from typing import Any

import pytest

from domain.jungle_speed.cards import Deck, Kind
from domain.kernel.match import EndReason, MatchStatus
from domain.kernel.snapshots import SnapshotError, freeze, thaw


def round_trip(value: Any) -> Any:
    """Through JSON, as the store's transcoder keeps the frozen value."""
    return thaw(json.loads(json.dumps(freeze(value))))


def test_values_come_back_with_their_types() -> None:
    value = {
        "status": MatchStatus.PLAYING,
        "end": EndReason.ABANDONED,
        "places": {0: 2, 1: 1},
        "pair": (1, (2, 3)),
        "seen": {3, 4},
        "frozen": frozenset({"a"}),
        "nested": [{"_type_": "x", "_data_": 1}, {"__t": "tuple"}, None, True, 1.5],
    }
    back = round_trip(value)
    assert back == value
    assert type(back["pair"]) is tuple and type(back["pair"][1]) is tuple
    assert type(back["seen"]) is set and type(back["frozen"]) is frozenset
    assert list(back["places"]) == [0, 1]
    assert back["status"] is MatchStatus.PLAYING


def test_domain_objects_come_back_equal() -> None:
    deck = Deck()
    back = round_trip(deck)
    assert type(back) is Deck
    assert back.cards == deck.cards
    assert type(back.cards) is tuple
    assert back.cards[-1].kind is Kind.COLOURED_ARROWS


def test_no_class_outside_the_domain_is_snapshotted_or_rebuilt() -> None:
    class Outside:
        pass

    with pytest.raises(SnapshotError):
        freeze(Outside())
    with pytest.raises(SnapshotError):
        thaw({"__t": "obj", "c": "collections:OrderedDict", "d": {}})
    with pytest.raises(SnapshotError):
        thaw({"__t": "enum", "c": "signal:Signals", "v": 9})
