"""`totem tournament` against `totem serve` running in another process: a small Swiss
tournament run by bots to its signed result sheet, and failures said in one line."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from domain.kernel.topics import chained_event_class
from domain.tournament.sheet import verify
from replay.bundle import rebuild
from tests.client.test_client_cli import RUN_BOUND, served, totem_command

__all__ = ["served"]


def totem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [totem_command(), *args], capture_output=True, text=True, timeout=RUN_BOUND
    )


def test_run_plays_a_small_swiss_tournament_to_its_signed_sheet(
    served: str, tmp_path: Path
) -> None:
    """TO-9.1, TO-11.2: `totem tournament run` creates, enters, starts every round as
    soon as it may, and writes the sheet once the tournament has ended."""
    sheet = tmp_path / "open.sheet.jsonl"
    run = totem(
        "tournament", "run", "tribes", "--server", served, "--entrants", "4",
        "--format", "swiss", "--rounds", "2", "--bots", "--dispute-window-ms", "0",
        "--board-size", "3", "--think-ms", "0", "2", "--sheet", str(sheet),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    out = run.stdout
    found = re.search(r"^tournament id: ([0-9a-f-]{36})$", out, re.MULTILINE)
    assert found is not None
    tid = found.group(1)
    assert "4 entrants: bot-1, bot-2, bot-3, bot-4" in out
    assert "Round 1/2: 2 table(s)" in out and "Round 2/2: 2 table(s)" in out
    assert "Round 2/2: 2/2 tables finished" in out
    assert "Standings after round 1/2" in out and "Standings after round 2/2" in out
    assert f"Tournament {tid} ended" in out
    assert f"result sheet written to {sheet}" in out

    lines = sheet.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["tournament_id"] == tid
    events = [rebuild(json.loads(line), chained_event_class, lambda f: None) for line in lines[1:]]
    assert verify(events) == []

    shown = totem("tournament", "show", tid, "--server", served)
    assert shown.returncode == 0, shown.stderr
    assert "ended" in shown.stdout and "bot-4" in shown.stdout
    standings = totem("tournament", "standings", tid, "--server", served)
    assert standings.returncode == 0 and "bot-1" in standings.stdout
    again = totem("tournament", "sheet", tid, "--server", served, "-o", str(tmp_path / "b"))
    assert again.returncode == 0, again.stderr
    # The same events (the header says when each copy was written).
    assert (tmp_path / "b").read_text().splitlines()[1:] == lines[1:]


def test_tournament_commands_say_clearly_what_went_wrong(served: str) -> None:
    nobody = totem(
        "tournament", "run", "tribes", "--server", "127.0.0.1:1", "--entrants", "2",
        "--connect-timeout", "0.5",
    )  # fmt: skip
    assert nobody.returncode != 0
    assert "cannot reach the Totem server at 127.0.0.1:1" in nobody.stderr

    created = totem("tournament", "create", "village", "--server", served)
    tid = created.stdout.split()[2]
    early = totem("tournament", "start", tid, "--server", served)
    assert early.returncode != 0
    assert "TO-8.5" in early.stderr  # at least two entrants to start

    no_sheet = totem("tournament", "sheet", tid, "--server", served, "-o", "x")
    assert no_sheet.returncode != 0 and "TO-11.1" in no_sheet.stderr


def test_organiser_commands_name_the_setting_without_a_token(served: str) -> None:
    refused = subprocess.run(
        [totem_command(), "tournament", "create", "tribes", "--server", served],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
        env={**__import__("os").environ, "TOTEM_ORGANISER_TOKEN": ""},
    )
    assert refused.returncode != 0
    assert "TOTEM_ORGANISER_TOKEN" in refused.stderr


def test_entrants_come_to_their_table_by_hand_and_are_told_how_to_play_TO_9_3(
    served: str,
) -> None:
    """`totem tournament seat`: each entrant's command waits until the table's match has
    seated them all, in the pairing's seat order, then names the seat and the command
    that plays it."""
    created = totem("tournament", "create", "tribes", "--server", served, "--rounds", "1")
    assert created.returncode == 0, created.stderr
    tid = re.findall(r"^tournament id: (\S+)$", created.stdout, re.MULTILINE)[0]
    added = totem("tournament", "add", tid, "ana", "bo", "--server", served)
    assert added.returncode == 0, added.stderr
    tokens = dict(re.findall(r"^\d+\. (\w+): token (\S+)$", added.stdout, re.MULTILINE))
    started = totem("tournament", "start", tid, "--server", served)
    assert started.returncode == 0, started.stderr
    # Each command returns only once both have come, whoever came first.
    bo = subprocess.Popen(
        [totem_command(), "tournament", "seat", tid, "--server", served, "--token", tokens["bo"]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ana = totem("tournament", "seat", tid, "--server", served, "--token", tokens["ana"])
    out, err = bo.communicate(timeout=RUN_BOUND)
    assert bo.returncode == 0 and ana.returncode == 0, err + ana.stderr
    assert "round 1, table 1: seat 0 of match" in ana.stdout
    assert "round 1, table 1: seat 1 of match" in out
    match = re.findall(r"of match (\S+)$", out, re.MULTILINE)[0]
    assert f"totem play tribes --join {match} --token TOKEN" in out
