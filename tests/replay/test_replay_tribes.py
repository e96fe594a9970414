"""``totem-replay`` on Tribes matches: show, events, at (the board as a grid, per viewer)
and verify (the Cards of Truth and die rolls re-derived from the revealed seed, TR-2.1,
TR-5.1, TR-6.2)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from replay_support import SEED, Stamps, as_referee, forge, json_lines, open_store

from domain.kernel import MatchStatus
from domain.kernel.match import METADATA_FIELDS, event_name
from domain.tribes import Options, Tribes
from domain.tribes.match import FROM_LIFTED
from entrypoints.totem_replay import main
from replay.tribes import check_draws
from storage.arena import Arena


def play(match: Tribes, stamps: Stamps, rng: random.Random, max_events: int) -> None:
    """Legal moves chosen at random, until the match ends or has ``max_events`` events."""
    while match.status is MatchStatus.PLAYING and match.version < max_events:
        seat = match.turn
        assert seat is not None
        legal = match.legal_actions(seat)
        if legal["lifts"] and (not legal["places"] or rng.random() < 0.3):
            match.lift(seat, rng.choice(legal["lifts"]), stamps())
            continue
        option = rng.choice(legal["places"])
        totem = None if option["from"] == FROM_LIFTED else option["totem"]
        match.place(seat, rng.choice(option["destinations"]), stamps(), totem)


def store_tribes(
    arena: Arena, *, players: int = 2, max_events: int = 100_000, **options: Any
) -> Tribes:
    stamps = Stamps()
    opts = Options(max_players=players, **options)
    created = arena.create_match(lambda seed: Tribes.create(opts, seed, b"\x05"))
    assert isinstance(created, Tribes)
    for seat in range(players):
        created.join(f"tribe{seat}", bytes([seat, 9]), f"token-hash-{seat}", stamps())
    play(created, stamps, random.Random(4), max_events)
    arena.save(created)
    return created


@dataclass
class TribesStore:
    db: Path
    ended: Tribes
    playing: Tribes


@pytest.fixture
def store(tmp_path: Path) -> TribesStore:
    db = tmp_path / "totem.db"
    arena = open_store(db)
    try:
        ended = store_tribes(arena, extended=True)
        playing = store_tribes(arena, players=3, max_events=30, board_size=3)
    finally:
        arena.close()
    assert ended.status is MatchStatus.ENDED and playing.status is MatchStatus.PLAYING
    return TribesStore(db, ended, playing)


def run(store: TribesStore, *args: object) -> Result:
    argv: Sequence[str] = ["--db", str(store.db), *as_referee(args)]
    return CliRunner().invoke(main, argv)


def test_show_and_list(store: TribesStore) -> None:
    shown = run(store, "show", store.ended.id)
    assert shown.exit_code == 0, shown.output
    assert "tribes, variant extended" in shown.stdout
    assert "prearranged_cards=no" in shown.stdout
    listed = run(store, "list")
    assert listed.stdout.count("tribes") == 2


def test_events_say_what_happened(store: TribesStore) -> None:
    result = run(store, "events", store.ended.id)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "play begins on a 3×3 board, Salvation Spaces 0, 2, 6, 8" in out
    assert "round 1: Cards of Truth seat 0 (tribe0)" in out
    assert "rolls " in out and "places " in out and "lifts " in out
    assert "takes the Feathers of Greatness" in out
    as_json = json_lines(run(store, "events", store.ended.id, "--json").stdout)
    assert len(as_json) == store.ended.version


def _grid(result: Result) -> str:
    """The rows of the board grid in the output of ``at``."""
    return "\n".join(line for line in result.stdout.splitlines() if line[:5].strip().isdigit())


def test_at_draws_the_board_as_a_grid_for_each_viewer(store: TribesStore) -> None:
    match = store.playing
    version = match.version
    referee = run(store, "at", match.id, version)
    assert referee.exit_code == 0, referee.output
    assert "Board 3×3 (each stack top to bottom" in referee.stdout
    stacks = [s for s in match.board if len(s) > 1]
    assert stacks, "the stored match has a stack of two"
    player = run(store, "at", match.id, version, "--seat", 1)
    spectator = run(store, "at", match.id, version, "--spectator")
    for result in (player, spectator):
        assert result.exit_code == 0, result.output
        assert "Board 3×3 (the top of each stack" in result.stdout
    # The referee's grid has a cell with several totems; the others' never do.
    assert "/" in _grid(referee)
    for result in (player, spectator):
        assert "/" not in _grid(result)
    assert "mat" in player.stdout and "badges" in player.stdout
    as_json = run(store, "at", match.id, version, "--seat", 0, "--json")
    assert '"legal"' in as_json.stdout and '"stack"' not in as_json.stdout


def test_verify_re_derives_the_cards_and_the_rolls(store: TribesStore) -> None:
    result = run(store, "verify", store.ended.id)
    assert result.exit_code == 0, result.output
    assert (
        "Cards of Truth of" in result.stdout
        and "re-derived from the revealed seed" in result.stdout
    )
    assert "die rolls re-derived from the revealed seed" in result.stdout
    unfinished = run(store, "verify", store.playing.id)
    assert unfinished.exit_code == 0, unfinished.output
    assert "seed not revealed yet" in unfinished.stdout


def test_verify_finds_forged_cards_at_their_version(store: TribesStore) -> None:
    match = store.ended
    arena = open_store(store.db)
    try:
        stored = arena.events_after(match.id)
    finally:
        arena.close()
    started = next(e for e in stored if event_name(e) == "RoundStarted")
    cards = list(reversed(started.cards))
    forge(store.db, match.id, started.originator_version, cards=cards, order=[1, 0])
    result = run(store, "verify", match.id)
    assert result.exit_code == 1
    assert f"first bad version {started.originator_version}" in result.stdout
    assert "Cards of Truth are not the draw re-derived from the seed" in result.stdout


# ---- check_draws on recorded fields --------------------------------------------------


def _fields(match: Tribes, seed: str | None) -> list[tuple[int, str, dict[str, Any]]]:
    events = [
        (
            e.originator_version,
            event_name(e),
            {k: v for k, v in vars(e).items() if k not in METADATA_FIELDS},
        )
        for e in match.pending_events
    ]
    if seed is not None and events[-1][1] != "MatchEnded":
        events.append(
            (events[-1][0] + 1, "MatchEnded", {"reason": "completed", "result": [], "seed": seed})
        )
    elif seed is not None:
        events[-1][2]["seed"] = seed
    return events


def _match(**options: Any) -> Tribes:
    stamps = Stamps()
    match = Tribes.create(Options(max_players=2, **options), SEED, b"c")
    for seat in range(2):
        match.join(f"p{seat}", bytes([seat]), f"h{seat}", stamps())
    play(match, stamps, random.Random(1), 120)
    return match


def test_rolls_and_cards_are_re_derived_and_a_forged_roll_is_found() -> None:
    match = _match(extended=True)
    recorded = _fields(match, SEED.hex())
    problems, _ = check_draws(recorded)
    assert problems == []
    rolls = [i for i, (_, n, _) in enumerate(recorded) if n == "DieRolled"]
    version, name, data = recorded[rolls[2]]
    other = "small" if data["face"] != "small" else "blank"
    recorded[rolls[2]] = (version, name, dict(data, face=other))
    problems, _ = check_draws(recorded)
    assert problems == [(version, "die roll 2 is not the roll re-derived from the seed (TR-5.1)")]


def test_another_seed_gives_other_draws() -> None:
    problems, _ = check_draws(_fields(_match(extended=True), "ff" * 32))
    assert problems


def test_prearranged_draws_are_checked_against_the_options() -> None:
    match = _match(extended=True, prearranged_cards=[[2, 1]], prearranged_dice=["blank", "small"])
    recorded = _fields(match, None)
    problems, notes = check_draws(recorded)
    assert problems == []
    assert any("prearranged in the options" in n for n in notes)
    index = next(i for i, (_, n, _) in enumerate(recorded) if n == "RoundStarted")
    version, name, data = recorded[index]
    recorded[index] = (version, name, dict(data, cards=[1, 2], order=[0, 1]))
    problems, _ = check_draws(recorded)
    assert problems == [
        (version, "round 1's Cards of Truth are not the prearranged cards (TR-2.1)")
    ]
