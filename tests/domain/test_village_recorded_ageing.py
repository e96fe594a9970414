"""Village's generation change is decided by its command and recorded whole (VI-2.8):
the ``Aged`` event (version 2) holds every cottage after it, so that changing the
ageing rule's code cannot change how a stored match replays; an ``Aged`` of version 1
(spared people only) is upcast and worked out by the code of the release that stored it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from domain_support import stored_without
from eventsourcing.application import Application
from village_support import drive, new_village

from domain.kernel.chain import UPCAST, stored_event_digest
from domain.village import Village, ageing, legacy, model

ADDED = {"Aged": ("cottages", "newcomers")}


def aged_match(players: int = 3) -> Village:
    """A match played by its defaults until a generation has passed twice."""
    match, stamps = new_village(players)
    drive(match, stamps, lambda m: len(events_named(m.pending_events, "Aged")) >= 2)
    return match


def events_named(events: list[Any], name: str) -> list[Any]:
    return [e for e in events if type(e).__name__ == name]


def state_of(match: Village) -> dict[str, Any]:
    return copy.deepcopy({k: v for k, v in vars(match).items() if k != "_pending_events"})


def rebuild(events: list[Any]) -> Village:
    match = None
    for evt in events:
        match = evt.mutate(match)
    assert isinstance(match, Village)
    return match


def failing(*_: Any, **__: Any) -> Any:
    raise AssertionError("a replay ran rule code")


def test_vi_2_8_the_generation_change_replays_from_its_event_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match = aged_match()
    aged = events_named(match.pending_events, "Aged")
    assert all(e.cottages is not None and e.newcomers is not None for e in aged)
    monkeypatch.setattr(ageing, "generation", failing)
    monkeypatch.setattr(model, "aged", failing)
    monkeypatch.setattr(legacy, "age", failing)
    assert state_of(rebuild(list(match.pending_events))) == state_of(match)


def test_vi_2_8_an_aged_of_version_1_upcasts_replays_and_verifies_as_before() -> None:
    match = aged_match()
    loaded = [Application().mapper.to_domain_event(e) for e in stored_without(match, ADDED)]
    upcast = events_named(loaded, "Aged")
    assert upcast
    for evt in upcast:
        assert getattr(evt, UPCAST) == ["cottages", "newcomers"]
        assert evt.cottages is None and evt.newcomers is None
    for evt in loaded:
        assert stored_event_digest(evt) == evt.digest
    replayed, played = state_of(rebuild(loaded)), state_of(match)
    assert replayed.pop("digest") != played.pop("digest")  # chained again without them
    assert replayed == played
