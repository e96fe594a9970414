"""The kernel: the audit hash chain, seats (join/start), receive stamps, viewers, errors."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from datetime import datetime
from typing import Any
from uuid import UUID

import pytest
from domain_support import SEED, Stamps, new_match, refused

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import (
    GENESIS_DIGEST,
    DomainError,
    InvalidArgument,
    MatchStatus,
    ReceiveStamp,
    RuleViolation,
    Viewer,
    ViewerRole,
    canonical_bytes,
    event_digest,
)
from domain.kernel.chain import NOT_HASHED, stored_event_digest
from domain.kernel.match import payload


def played_events() -> list[Any]:
    """The events of a short match: created, joins, deal, reveals, a grab or two."""
    match, stamps = new_match(3)
    for _ in range(12):
        assert match.turn is not None
        match.reveal(match.turn, stamps())
        if match.open_duels():
            match.grab(match.open_duels()[0][0], stamps())
    match.grab(0, stamps())
    return match.pending_events


# ---- the chain ---------------------------------------------------------------------


def test_canonical_bytes_sorted_compact_utf8() -> None:
    value = {"b": [1, (2, 3)], "a": "é", "u": UUID(int=1), "t": datetime(2024, 1, 2, 3, 4, 5)}
    expected = (
        '{"a":"é","b":[1,[2,3]],"t":"2024-01-02T03:04:05",'
        '"u":"00000000-0000-0000-0000-000000000001"}'
    ).encode()
    assert canonical_bytes(value) == expected
    with pytest.raises(TypeError):
        canonical_bytes({"x": object()})


def test_event_digest_is_sha256_of_the_canonical_body_with_the_event_name() -> None:
    fields = {"x": 1, "digest": "ignored", "originator_topic": "mod:Cls"}
    body = {"event": "Thing", "x": 1, "originator_topic": "mod:Cls"}
    expected = hashlib.sha256(
        json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    ).hexdigest()
    assert event_digest("Thing", fields) == expected
    assert event_digest("Other", fields) != expected
    # The aggregate's topic is hashed too: a stored Created event cannot be re-pointed.
    assert event_digest("Thing", fields | {"originator_topic": "mod:Other"}) != expected


def test_each_event_links_to_the_previous_digest_from_genesis() -> None:
    events = played_events()
    assert len(events) > 10
    assert events[0].prev_digest == GENESIS_DIGEST
    for before, after in itertools.pairwise(events):
        assert after.prev_digest == before.digest
        assert after.originator_version == before.originator_version + 1
    assert len({e.digest for e in events}) == len(events)


def test_stored_event_digest_recomputes_every_digest() -> None:
    for evt in played_events():
        assert stored_event_digest(evt) == evt.digest


def test_aggregate_digest_is_the_last_event_digest() -> None:
    match, stamps = new_match(2)
    match.reveal(0, stamps())
    assert match.digest == match.pending_events[-1].digest


def _altered(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, UUID):
        return UUID(int=value.int ^ 1)
    if isinstance(value, datetime):
        return value.replace(microsecond=(value.microsecond + 1) % 1_000_000)
    if isinstance(value, list):
        return [*value, 0]
    if isinstance(value, dict):
        return {**value, "extra": 1}
    if value is None:
        return 0
    raise AssertionError(f"no alteration for {type(value).__name__}")


def test_changing_any_hashed_field_changes_the_digest() -> None:
    """Every field but ``digest`` (and the library's class topic) is covered by the digest."""
    checked = 0
    for evt in played_events():
        fields = dict(vars(evt))
        name = type(evt).__name__
        for key, value in fields.items():
            if key in NOT_HASHED:
                continue
            tampered = dict(fields, **{key: _altered(value)})
            assert event_digest(name, tampered) != evt.digest, (name, key)
            checked += 1
        # Removing a field is detected too.
        for key in payload(evt):
            reduced = {k: v for k, v in fields.items() if k != key}
            assert event_digest(name, reduced) != evt.digest, (name, key)
    assert checked > 50


def test_a_changed_nested_value_changes_the_digest() -> None:
    evt = next(e for e in played_events() if type(e).__name__ == "Dealt")
    fields = copy.deepcopy(dict(vars(evt)))
    fields["deck"][0], fields["deck"][1] = fields["deck"][1], fields["deck"][0]
    assert event_digest("Dealt", fields) != evt.digest
    fields = copy.deepcopy(dict(vars(evt)))
    fields["stamp"]["sequence"] += 1
    assert event_digest("Dealt", fields) != evt.digest


# ---- seats ------------------------------------------------------------------------


def new_waiting(max_players: int = 4) -> JungleSpeed:
    return JungleSpeed.create(Options(max_players=max_players), SEED, b"creator")


def test_join_fills_seats_in_order_and_records_token_hash_and_entropy() -> None:
    match, stamps = new_waiting(), Stamps()
    first = stamps()
    assert match.join("  Ann ", b"\x01\x02", "hash-a", first) == 0
    assert match.join("Bob", b"", "hash-b", stamps(), seat=1) == 1
    assert match.players == ["Ann", "Bob"]
    assert match.seat_of("hash-b") == 1
    assert match.seat_of("nobody") is None
    assert match.entropies == [b"creator".hex(), "0102", ""]
    joined = [e for e in match.pending_events if type(e).__name__ == "PlayerJoined"]
    assert (joined[0].seat, joined[0].name, joined[0].token_hash) == (0, "Ann", "hash-a")
    assert joined[0].stamp == first.to_dict()
    assert match.status is MatchStatus.WAITING


@pytest.mark.parametrize(
    ("name", "entropy", "seat", "error"),
    [
        ("", b"", None, InvalidArgument),
        ("   ", b"", None, InvalidArgument),
        ("x" * 41, b"", None, InvalidArgument),
        ("ok", b"e" * 65, None, InvalidArgument),
        ("ok", b"", 4, InvalidArgument),
        ("ok", b"", 2, RuleViolation),
    ],
)
def test_js_1_5_bad_joins_are_refused_without_an_event(
    name: str, entropy: bytes, seat: int | None, error: type[DomainError]
) -> None:
    match, stamps = new_waiting(), Stamps()
    match.join("first", b"", "h0", stamps())
    exc = refused(match, "JS-1.5", match.join, name, entropy, "h", stamps(), seat)
    assert isinstance(exc, error)


def test_js_1_5_the_match_starts_when_the_last_seat_is_taken() -> None:
    match, stamps = new_waiting(max_players=2), Stamps()
    match.join("a", b"", "h0", stamps())
    match.join("b", b"", "h1", stamps())
    assert match.status is MatchStatus.PLAYING
    refused(match, "JS-1.5", match.join, "c", b"", "h2", stamps())
    refused(match, "JS-1.5", match.start, 0, stamps())


def test_js_1_5_start_needs_two_seated_players_and_a_seated_requester() -> None:
    match, stamps = new_waiting(max_players=5), Stamps()
    match.join("a", b"", "h0", stamps())
    refused(match, "JS-1.5", match.start, 0, stamps())
    match.join("b", b"", "h1", stamps())
    refused(match, "JS-1.5", match.start, 2, stamps())
    refused(match, "JS-1.5", match.start, -1, stamps())
    match.start(1, stamps())
    assert match.status is MatchStatus.PLAYING
    assert len(match.down) == 2
    assert sum(map(len, match.down)) == 80


# ---- stamps, viewers, errors -----------------------------------------------------------


def test_js_5_1_receive_stamp_round_trips_through_its_stored_form() -> None:
    stamp = ReceiveStamp(7, 123, 4_567_000_000, seen_version=3, seen_sent_monotonic_ns=100)
    assert stamp.to_dict() == {
        "sequence": 7,
        "monotonic_ns": 123,
        "wall_ns": 4_567_000_000,
        "seen_version": 3,
        "seen_sent_monotonic_ns": 100,
    }
    assert ReceiveStamp.from_dict(stamp.to_dict()) == stamp
    # Events stored before the sent time was recorded read back with none.
    older = {"sequence": 7, "monotonic_ns": 123, "wall_ns": 4_567_000_000, "seen_version": 3}
    assert ReceiveStamp.from_dict(older).seen_sent_monotonic_ns == 0
    assert stamp.wall_ms == 4567


def test_viewers() -> None:
    assert Viewer.player(2) == Viewer(ViewerRole.PLAYER, 2)
    assert not Viewer.player(2).sees_everything
    assert not Viewer.spectator().sees_everything
    assert Viewer.spectator().seat is None
    assert Viewer.referee().sees_everything


def test_domain_error_names_its_rule() -> None:
    err = RuleViolation("JS-3.1", "not your turn")
    assert isinstance(err, DomainError)
    assert (err.rule, err.message) == ("JS-3.1", "not your turn")
    assert str(err) == "JS-3.1: not your turn"
