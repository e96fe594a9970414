"""The chained base (domain.kernel.chained): a match's chain and end-signing, shared by
every aggregate whose events are audited, without changing what a match records."""

from __future__ import annotations

import copy
import hashlib
from typing import Any
from uuid import UUID

import pytest
from domain_support import new_match
from eventsourcing.domain import event
from eventsourcing.utils import get_topic

from domain.jungle_speed import JungleSpeed
from domain.kernel.chain import GENESIS_DIGEST, first_broken_link, stored_event_digest
from domain.kernel.chained import ChainedAggregate
from domain.kernel.match import MatchAggregate
from domain.kernel.refusals import RefusalLog
from domain.kernel.signing import PREFIX, TOURNAMENT_PREFIX, Signer, signed_message
from domain.kernel.topics import (
    UnknownTopic,
    aggregate_class,
    chained_aggregate_class,
    chained_event_class,
    event_class,
    register_aggregate,
)


def fake_signer() -> Signer:
    """Signs with a hash, which is all the domain needs to see: which bytes are signed."""
    return Signer(b"k" * 32, lambda message: hashlib.sha256(b"key" + message).digest())


def test_a_match_the_refusal_log_and_their_events_derive_from_the_chained_base() -> None:
    assert issubclass(MatchAggregate, ChainedAggregate)
    assert issubclass(RefusalLog, ChainedAggregate)
    assert issubclass(MatchAggregate.Event, ChainedAggregate.Event)
    assert issubclass(JungleSpeed.MatchEnded, ChainedAggregate.Event)


def test_the_topics_a_store_holds_still_name_the_same_classes() -> None:
    """Rows written before the chained base (tests/fixtures) name these topics."""
    assert get_topic(MatchAggregate.Snapshot) == "domain.kernel.match:MatchAggregate.Snapshot"
    assert get_topic(RefusalLog.Opened) == "domain.kernel.refusals:RefusalLog.Opened"
    match, _ = new_match(2)
    match.stop("a test ends it")
    topics = {get_topic(type(e)) for e in match.pending_events}
    assert "domain.kernel.match:MatchAggregate.PlayerJoined" in topics
    assert "domain.kernel.match:MatchAggregate.MatchEnded" in topics
    assert "domain.jungle_speed.match:JungleSpeed.Created" in topics


def test_the_match_signature_covers_the_match_prefix_version_and_digest() -> None:
    match, _ = new_match(2)
    match.signer = fake_signer()
    match.stop("a test ends it")
    ended = match.pending_events[-1]
    message = signed_message(match.id, ended.originator_version, ended.digest)
    assert message.startswith(PREFIX)
    assert ended.signature == fake_signer().sign(message).hex()
    assert ended.public_key == (b"k" * 32).hex()
    # The signature is outside the digest: the chain holds with it.
    assert stored_event_digest(ended) == ended.digest
    assert first_broken_link(match.pending_events) is None


def test_a_signature_under_another_prefix_is_another_message() -> None:
    match_id = UUID(int=7)
    assert signed_message(match_id, 3, "ab") != signed_message(match_id, 3, "ab", TOURNAMENT_PREFIX)
    fields = fake_signer().signature_fields(match_id, 3, "ab", TOURNAMENT_PREFIX)
    assert fields["signature"] != fake_signer().signature_fields(match_id, 3, "ab")["signature"]


def test_the_refusal_log_is_chained_from_genesis_and_never_signed() -> None:
    log = RefusalLog.open(UUID(int=1), quota=2)
    log.signer = fake_signer()
    events = log.pending_events
    assert events[0].prev_digest == GENESIS_DIGEST
    assert "signature" not in vars(events[0])
    assert first_broken_link(events) is None


def _tampered(events: list[Any], position: int, **changes: Any) -> list[Any]:
    out = [copy.copy(e) for e in events]
    for key, value in changes.items():
        object.__setattr__(out[position - 1], key, value)
    return out


def test_first_broken_link_names_the_first_changed_removed_or_reordered_event() -> None:
    match, stamps = new_match(3)
    for _ in range(4):
        assert match.turn is not None
        match.reveal(match.turn, stamps())
    events = list(match.pending_events)
    assert first_broken_link(events) is None
    assert first_broken_link([]) is None
    # Changed: its digest no longer hashes its content.
    assert first_broken_link(_tampered(events, 3, stamp={"changed": 1})) == 3
    assert first_broken_link(_tampered(events, 4, stamp={"changed": 1})) == 4
    # Re-hashed after the change: the next event's prev_digest gives it away.
    changed = _tampered(events, 4, stamp={"changed": 1})
    object.__setattr__(changed[3], "digest", stored_event_digest(changed[3]))
    assert first_broken_link(changed) == 5
    # Removed, reordered.
    assert first_broken_link(events[:2] + events[3:]) == 3
    assert first_broken_link([events[0], events[2], events[1], *events[3:]]) == 2


class _NotAGame(ChainedAggregate):
    """A chained aggregate of no game, for the topics registry."""

    @event("Created")
    def __init__(self, note: str) -> None:
        self.note = note

    @classmethod
    def make(cls) -> _NotAGame:
        return cls(note="hello")


def test_another_chained_aggregate_is_allowed_apart_from_the_games() -> None:
    register_aggregate(_NotAGame)
    topic = get_topic(_NotAGame)
    assert chained_aggregate_class(topic) is _NotAGame
    created = get_topic(_NotAGame.Created)
    assert issubclass(_NotAGame.Created, ChainedAggregate.Event)
    assert chained_event_class(created) is _NotAGame.Created
    # A match's history or a game's bundle can never name it.
    with pytest.raises(UnknownTopic):
        aggregate_class(topic)
    with pytest.raises(UnknownTopic):
        event_class(created)
    # The games are known to both lookups.
    assert chained_aggregate_class(get_topic(JungleSpeed)) is JungleSpeed
    with pytest.raises(UnknownTopic):
        chained_event_class("os:system")
    with pytest.raises(TypeError):
        register_aggregate(JungleSpeed)
    made = _NotAGame.make()
    assert first_broken_link(made.pending_events) is None
