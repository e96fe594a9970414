"""A tournament's creation and signed end are leaves of the transparency log, as a
match's are (TO-11.2): whoever holds the store and its key can re-sign a forged result
sheet, but not against a checkpoint kept outside the store. Tamperings are done on the
SQLite file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from replay_support import as_referee, execute, open_store
from tournament_store import Played, swiss_cup

from domain.kernel.translog import TOURNAMENT_CREATED, TOURNAMENT_ENDED
from entrypoints.totem_replay import main
from storage.arena import TOURNAMENT_LOG_ID
from storage.keys import load_or_create


def run(db: Path, *args: object) -> Result:
    argv: Sequence[str] = ["--db", str(db), *as_referee(args)]
    return CliRunner().invoke(main, argv)


@pytest.fixture
def cup(tmp_path: Path) -> tuple[Path, Played, Path]:
    """A store holding a tournament played to its signed sheet, and a checkpoint of its
    transparency log kept outside it."""
    db = tmp_path / "totem.db"
    arena = open_store(db)
    try:
        played = swiss_cup(arena)
        kinds = [leaf.kind for leaf in arena.logged_leaves()]
    finally:
        arena.close()
    assert kinds.count(TOURNAMENT_CREATED) == 1 and kinds[-1] == TOURNAMENT_ENDED
    key = load_or_create(tmp_path / "server.key")
    assert key.path is not None
    kept = tmp_path / "kept.checkpoint"
    signed = run(db, "checkpoint", "sign", "--key-file", key.path, "-o", kept)
    assert signed.exit_code == 0, signed.output
    return db, played, kept


def failures(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("FAILED checkpoint: ")]


def test_a_store_with_its_tournament_reproduces_the_checkpoint(
    cup: tuple[Path, Played, Path],
) -> None:
    db, _, kept = cup
    result = run(db, "verify", "--all", "--checkpoint", kept)
    assert result.exit_code == 0, result.output
    assert "matches and 1 tournaments still give their logged creation and end" in result.stdout


def test_a_deleted_tournament_fails_the_checkpoint(cup: tuple[Path, Played, Path]) -> None:
    db, played, kept = cup
    tid = played.tournament.id
    assert execute(db, "DELETE FROM stored_events WHERE originator_id = ?", tid.hex) > 0
    result = run(db, "verify", "--all", "--checkpoint", kept)
    assert result.exit_code == 1, result.output
    assert failures(result)[:1] == [
        f"FAILED checkpoint: leaf {_first_of(db, tid)}, the creation of tournament {tid} "
        "(jungle_speed): "
        "the tournament is no longer in the store (deleted)"
    ]
    assert any(f"the end of tournament {tid}" in line for line in failures(result))


def test_a_tournament_cut_before_its_sheet_fails_the_checkpoint(
    cup: tuple[Path, Played, Path],
) -> None:
    db, played, kept = cup
    tid, last = played.tournament.id, played.tournament.version
    cut = "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = ?"
    assert execute(db, cut, tid.hex, last) == 1
    result = run(db, "verify", "--all", "--checkpoint", kept)
    assert result.exit_code == 1, result.output
    assert failures(result) == [
        f"FAILED checkpoint: leaf {_leaves(db) - 1}, the end of tournament {tid} at version "
        f"{last}: the store holds only {last - 1} events, the log says it ended at version "
        f"{last} (the tournament was truncated)"
    ]


def test_a_tournament_dropped_from_its_list_fails_the_checkpoint(
    cup: tuple[Path, Played, Path],
) -> None:
    db, played, kept = cup
    tid = played.tournament.id
    dropped = "DELETE FROM stored_events WHERE originator_id = ? AND instr(state, ?) > 0"
    assert execute(db, dropped, TOURNAMENT_LOG_ID.hex, tid.hex.encode()) == 1
    result = run(db, "verify", "--all", "--checkpoint", kept)
    assert result.exit_code == 1, result.output
    assert failures(result) == [
        f"FAILED checkpoint: leaf {_first_of(db, tid)}: tournament {tid} is logged but "
        "missing from the list "
        "of tournaments (its TournamentLogged entry was deleted)"
    ]


def _leaves(db: Path) -> int:
    arena = open_store(db)
    try:
        return len(list(arena.logged_leaves()))
    finally:
        arena.close()


def _first_of(db: Path, tid: object) -> int:
    """The index of the tournament's first leaf (its creation)."""
    arena = open_store(db)
    try:
        return next(i for i, leaf in enumerate(arena.logged_leaves()) if leaf.match_id == tid)
    finally:
        arena.close()
