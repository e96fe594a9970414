"""A judge's terminal shows what a store holds, never obeys it: a name stored before
names were checked (or by a store someone edited) reaches the screen with its control,
format and bidi characters made visible, one for one."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from replay_support import Stamps, open_store

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import match as kernel
from entrypoints.totem_replay import main
from replay.format import printable

HOSTILE = "\x1b[2J\x1b[31mEVE\u202eevil\u200b\x07"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(kernel, "check_name", lambda rule, name: None)  # an old store
    path = tmp_path / "totem.db"
    arena = open_store(path)
    try:
        match = arena.create_match(
            lambda seed: JungleSpeed.create(Options(max_players=2), seed, b"\x01")
        )
        stamps = Stamps()
        match.join(HOSTILE, b"\x02", "hash-0", stamps())
        match.join("Bob", b"\x03", "hash-1", stamps())
        arena.save(match)
    finally:
        arena.close()
    return path


@pytest.mark.parametrize(
    "args", [["list"], ["show", "-"], ["events", "-"], ["at", "-", "2"], ["step", "-", "--to", "3"]]
)
def test_stored_control_characters_are_shown_not_obeyed(db: Path, args: list[str]) -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["--db", str(db), "list"])
    match_id = listed.output.split()[0].replace("␛", "")
    argv = ["--db", str(db), *(match_id if a == "-" else a for a in args)]
    done = runner.invoke(main, argv)
    assert done.exit_code == 0, done.output
    assert not any(c in done.output for c in "\x1b\u202e\u200b\x07")
    assert "␛[2J␛[31mEVE" in done.output


def test_printable_keeps_length_and_ordinary_text() -> None:
    assert printable("Zoë, Алёна\tand 山田\n") == "Zoë, Алёна\tand 山田\n"
    assert printable(HOSTILE) == "␛[2J␛[31mEVE\ufffdevil\ufffd␇"
    assert len(printable(HOSTILE)) == len(HOSTILE)
