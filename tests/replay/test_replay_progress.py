"""Long work shows how far it has got, on standard error only, and only at a terminal:
reading every match (`list`), verifying every match (`verify --all`), exporting a match."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from replay_support import Store

from entrypoints.totem_replay import main

#: Rich draws live displays when this says the terminal is interactive.
TERMINAL = {"TTY_INTERACTIVE": "1", "TTY_COMPATIBLE": "1", "COLUMNS": "100"}


def _argv(store: Store, tmp_path: Path, command: str) -> list[str]:
    return {
        "list": ["list"],
        "verify": ["verify", "--all"],
        "export": ["export", str(store.ended.id), "-o", str(tmp_path / "m.jsonl")],
    }[command]


@pytest.mark.parametrize(
    ("command", "label"), [("list", "reading"), ("verify", "verifying"), ("export", "exporting")]
)
def test_a_progress_bar_at_a_terminal_on_standard_error_only(
    store: Store, tmp_path: Path, command: str, label: str
) -> None:
    argv = ["--db", str(store.db), *_argv(store, tmp_path, command)]
    at_terminal = CliRunner().invoke(main, argv, env=TERMINAL)
    piped = CliRunner().invoke(main, argv)
    assert at_terminal.exit_code == piped.exit_code == 0, at_terminal.output
    assert label in at_terminal.stderr
    assert label not in piped.stderr
    # The output itself is untouched (at a terminal it is styled, nothing more).
    assert re.sub(r"\x1b\[[0-9;]*m", "", at_terminal.stdout) == piped.stdout
