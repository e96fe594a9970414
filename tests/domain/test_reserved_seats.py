"""A tournament table's match keeps its seats for the table's entrants (TO-9.2): each
takes one with their own entrant token, whose hash the match was created with; nobody
else takes one; the hashes are in no view. Every game, through the kernel."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import pytest

from domain.games import GAMES
from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.kernel.match import MatchStatus
from domain.kernel.views import Viewer
from tests.domain.domain_support import Stamps

ANN, BOB = (hashlib.sha256(name.encode()).hexdigest() for name in ("ann", "bob"))
SEED = bytes(32)


def table(game: str, reserved: list[str] | None) -> Any:
    kind = GAMES[game]
    options = replace(kind.options_from_dict({}), max_players=2, reserved_for=reserved)
    extra = {"secret": bytes(kind.secret_bytes)} if kind.secret_bytes else {}
    return kind.create(options, SEED, b"", "", **extra)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_only_the_reserved_tokens_take_the_seats_TO_9_2(game: str) -> None:
    match = table(game, [ANN, BOB])
    stamps = Stamps()
    version = match.version
    with pytest.raises(RuleViolation) as refused:
        match.join("eve", b"", hashlib.sha256(b"eve").hexdigest(), stamps())
    assert refused.value.rule == "TO-9.2" and match.version == version
    assert match.reserves(BOB) and not match.reserves(hashlib.sha256(b"eve").hexdigest())
    # Seats fill in arrival order: bob first.
    assert match.join("bob", b"", BOB, stamps()) == 0
    with pytest.raises(RuleViolation) as twice:
        match.join("bob again", b"", BOB, stamps())
    assert twice.value.rule == "TO-9.2"
    assert match.join("ann", b"", ANN, stamps()) == 1
    assert match.status is MatchStatus.PLAYING
    assert match.seat_of(ANN) == 1


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_match_without_reserved_seats_takes_anyone(game: str) -> None:
    match = table(game, None)
    assert match.join("eve", b"", hashlib.sha256(b"eve").hexdigest(), Stamps()()) == 0
    assert not match.reserves(ANN)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_reserved_hashes_are_in_no_view(game: str) -> None:
    match = table(game, [ANN, BOB])
    kind = GAMES[game]
    created = match.pending_events[0]
    for viewer in (Viewer.spectator(), Viewer.player(0), Viewer.referee()):
        shown = repr(kind.state_view(match, viewer)) + repr(kind.event_view(match, created, viewer))
        assert ANN not in shown and BOB not in shown
    assert ANN in repr(vars(created))  # recorded, so that any instance keeps the seats


@pytest.mark.parametrize(
    "reserved", [["not a hash"], [ANN, ANN], [ANN.upper()]], ids=["text", "twice", "upper"]
)
def test_reserved_seats_are_distinct_hashes_TO_9_2(reserved: list[str]) -> None:
    options = replace(GAMES["tribes"].options_from_dict({}), reserved_for=reserved)
    with pytest.raises(InvalidArgument) as refused:
        options.validate()
    assert refused.value.rule == "TO-9.2"
