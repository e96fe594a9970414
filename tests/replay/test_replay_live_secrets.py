"""A match still in play keeps its secrets in the replay tool too (JS-9.2).

Its seed and face-down piles are the referee's and the organisers' until it ends: the
tool shows a live match as a spectator sees it, and exports or explains it only when
asked with --referee. An ended match hides nothing.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result
from replay_support import open_store, store_match

from domain.jungle_speed import JungleSpeed
from entrypoints.totem_replay import main


def run(db: Path, *args: object) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *map(str, args)])


def live_match(db: Path) -> JungleSpeed:
    """A match of three in play: dealt, a few events in, far from its end."""
    arena = open_store(db)
    try:
        match = store_match(arena, players=3, max_events=12)
    finally:
        arena.close()
    assert match.end_reason is None and match.version >= 10
    return match


def test_js_9_2_a_live_match_is_shown_as_a_spectator_sees_it(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    match = live_match(db)
    for args in (
        ("events", match.id),
        ("events", match.id, "--json"),
        ("at", match.id, match.version, "--json"),
        ("step", match.id, "--to", match.version, "--json"),
    ):
        shown = run(db, *args)
        assert shown.exit_code == 0, shown.output
        assert match.seed not in shown.stdout, args
        assert "still being played" in shown.stderr, args
    referee = run(db, "at", match.id, match.version, "--json", "--referee")
    assert referee.exit_code == 0
    assert match.seed in referee.stdout


def test_js_9_2_a_live_match_is_exported_or_explained_only_with_referee(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    match = live_match(db)
    for args in (("export", match.id), ("explain", match.id, match.version)):
        refused = run(db, *args)
        assert refused.exit_code != 0
        assert "--referee" in refused.output
        assert match.seed not in refused.output
    exported = run(db, "export", match.id, "--referee")
    assert exported.exit_code == 0
    assert match.seed in exported.stdout


def test_js_9_2_an_ended_match_hides_nothing(tmp_path: Path) -> None:
    db = tmp_path / "ended.db"
    arena = open_store(db)
    try:
        match = store_match(arena, players=2)
    finally:
        arena.close()
    assert match.end_reason is not None
    shown = run(db, "at", match.id, match.version - 1, "--json")
    assert shown.exit_code == 0
    assert match.seed in shown.stdout
    assert "still being played" not in shown.stderr
