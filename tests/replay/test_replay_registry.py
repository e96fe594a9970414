"""The judge's tool names each game in one place: its replay modules, registered once in
``replay.games``. The generic modules ask a game's entry for what they need (its title,
its kinds of event, its explanations, its grab races, its board) and never compare a
game's name, so that a game is added with its modules and one line of registration,
and a game whose grabs race is read by ``explain`` and ``disputes`` like Jungle Speed."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from replay_support import Run, Store

import replay
from entrypoints.totem_replay import main
from replay import explain, games
from replay.html import BOARD_CSS, BOARD_SCRIPT
from replay.store import open_arena, read_records

REPLAY = Path(replay.__file__).parent
GAMES = set(games.REPLAYS)


def _per_game(module: str) -> bool:
    """A game's own module: named for its game (``jungle_speed``, ``jungle_speed_explain``)."""
    return any(module == game or module.startswith(f"{game}_") for game in GAMES)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes: they may name a game as an example."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _names_of_games(path: Path) -> list[str]:
    """Where a module names a game: in an identifier, an import or a string (but for its
    docstrings)."""
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    word = re.compile(r"\b(" + "|".join(map(re.escape, sorted(GAMES))) + r")\b")
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.alias):
            names = node.name.split(".")
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = node.module.split(".")
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            names = word.findall(node.value)
        found += [f"{path.name}:{getattr(node, 'lineno', '?')}: {n}" for n in names if n in GAMES]
        found += [
            f"{path.name}:{getattr(node, 'lineno', '?')}: {n}"
            for n in names
            if n not in GAMES and _per_game(n)
        ]
    return found


def test_only_the_registry_and_the_games_modules_name_a_game() -> None:
    generic = [
        p for p in sorted(REPLAY.glob("*.py")) if p.stem != "games" and not _per_game(p.stem)
    ]
    assert len(generic) > 10
    assert [hit for path in generic for hit in _names_of_games(path)] == []


def test_every_game_is_registered_from_its_own_module() -> None:
    for name, game in games.REPLAYS.items():
        module = game.summarise.__module__
        assert module == f"replay.{name}"
        assert game.title and game.kinds and game.explain is not None
        assert game.explain.__module__.startswith(f"replay.{name}")


def test_step_help_lists_each_games_kinds() -> None:
    shown = " ".join(CliRunner().invoke(main, ["step", "--help"]).output.split())
    for game in games.REPLAYS.values():
        kinds = ", ".join(
            f"{kind} ({game.kind_notes[kind]})" if kind in game.kind_notes else kind
            for kind in game.kinds
        )
        assert f"{game.title} {kinds}" in shown


def test_each_board_is_drawn_by_its_games_script_in_a_scope_of_its_own() -> None:
    boards = {name: game for name, game in games.REPLAYS.items() if game.board_script}
    assert set(boards) == GAMES
    for name, game in boards.items():
        assert game.board_script.count("function draw(state, board)") == 1
        assert f"{json.dumps(name)}: (() => {{{game.board_script}  return draw;\n}})()," in (
            BOARD_SCRIPT
        )
        assert game.board_css in BOARD_CSS


def test_races_are_read_for_the_games_whose_entry_has_them(
    store: Store, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``explain`` and ``disputes`` read the races a game's entry gives, whatever its
    name: without them, a Jungle Speed match has none to show."""
    with open_arena(str(store.db)) as arena:
        records = read_records(arena, store.ended.id)
    assert explain.races(records)
    assert "duel won by" in run("disputes", store.ended.id).output

    entry = games.REPLAYS["jungle_speed"]
    monkeypatch.setitem(games.REPLAYS, "jungle_speed", dataclasses.replace(entry, races=None))
    assert explain.races(records) == []
    assert explain.race_explanations(records) == {}
    shown = run("disputes", store.ended.id)
    assert shown.exit_code == 0, shown.output
    assert "no grab races: a jungle_speed match" in shown.output
    everything = run("disputes", "--all")
    assert everything.exit_code == 0, everything.output
    assert str(store.ended.id) not in everything.output
