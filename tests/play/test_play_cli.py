"""`totem play`: its commands, options and help, and what it refuses before starting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from entrypoints.totem import main
from tests.play.support import SIZE, player_at, until
from totem_client.play import cli as play_cli
from totem_client.play.jungle_speed_bots import NewMatch
from totem_client.play.openings import Opening, TakeSeat


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_totem_lists_the_play_group_and_its_games() -> None:
    code, output = run("--help")
    assert code == 0 and "play" in output and "bots" in output
    code, output = run("play", "--help")
    assert code == 0 and "jungle-speed" in output and "tribes" in output


def test_the_help_names_every_option_and_key() -> None:
    code, output = run("play", "jungle-speed", "--help")
    assert code == 0
    for option in (
        "--address",
        "TOTEM_ADDRESS",
        "--name",
        "--join MATCH",
        "--seat",
        "--token TOKEN",
        "--spectate MATCH",
        "--players",
        "--variant [es|ru]",
        "--turn-timeout-ms",
        "--bot-reaction-ms LOW HIGH",
        "--bot-reveal-delay-ms LOW HIGH",
        "--connect-timeout",
    ):
        assert option in output
    for key in ("space reveal", "g grab", "a grab for the arrows", "s start", "q quit"):
        assert key in " ".join(output.split())


def test_the_tribes_help_names_every_option_and_key() -> None:
    code, output = run("play", "tribes", "--help")
    assert code == 0
    for option in (
        "--address",
        "--name",
        "--join MATCH",
        "--seat",
        "--spectate MATCH",
        "--players INTEGER RANGE",
        "--extended",
        "--board-size",
        "--turn-timeout-ms",
        "--bot-think-ms LOW HIGH",
        "--connect-timeout",
    ):
        assert option in output
    words = " ".join(output.split())
    for key in ("h j k l", "tab", "1-5", "x the special", "enter or space", "esc", "b chooses"):
        assert key in words


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--join", "m1", "--extended"], "--extended is for a new match"),
        (["--spectate", "m1", "--players", "3"], "--players is for a new match"),
        (["--join", "m1", "--bot-think-ms", "1", "2"], "--bot-think-ms is for a new match"),
        (["--players", "5"], "5 is not in the range 2<=x<=4"),
        (["--board-size", "6"], "6 is not in the range 3<=x<=5"),
        (["--bot-think-ms", "5", "1"], "give LOW HIGH with 0 <= LOW <= HIGH"),
    ],
)
def test_tribes_options_that_cannot_go_together_are_refused(
    args: list[str], complaint: str
) -> None:
    code, output = run("play", "tribes", *args)
    assert code == 2
    assert complaint in " ".join(output.split())


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--join", "m1", "--spectate", "m2"], "give --join or --spectate, not both"),
        (["--seat", "1"], "--seat goes with --join"),
        (["--token", "t0"], "--token goes with --join MATCH"),
        (["--join", "m1", "--token", "t0", "--seat", "1"], "give --seat or --token, not both"),
        (["--join", "m1", "--token", "t0", "--name", "eve"], "--name is for a free seat"),
        (["--join", "m1", "--token", "t0", "--players", "3"], "--players is for a new match"),
        (["--join", "m1", "--players", "3"], "--players is for a new match"),
        (["--spectate", "m1", "--variant", "RU"], "--variant is for a new match"),
        (["--join", "m1", "--turn-timeout-ms", "0"], "--turn-timeout-ms is for a new match"),
        (["--join", "m1", "--bot-reaction-ms", "1", "2"], "--bot-reaction-ms is for a new"),
        (["--players", "11"], "11 is not in the range 2<=x<=10"),
        (["--bot-reaction-ms", "5", "1"], "give LOW HIGH with 0 <= LOW <= HIGH"),
    ],
)
def test_options_that_cannot_go_together_are_refused(args: list[str], complaint: str) -> None:
    code, output = run("play", "jungle-speed", *args)
    assert code == 2
    assert complaint in " ".join(output.split())


@pytest.mark.parametrize("game", ["jungle-speed", "tribes", "village"])
def test_join_with_a_token_takes_the_seat_it_holds(
    game: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Opening] = []
    monkeypatch.setattr(
        play_cli, "run_player", lambda entry, opening, *args: opened.append(opening)
    )
    code, output = run("play", game, "--join", "m1", "--token", "t0")
    assert code == 0, output
    assert opened == [TakeSeat("m1", "t0")]
    assert opened[0].description == "taking your seat in match m1"
    assert "t0" not in repr(opened[0])  # a token is not printed where a repr may go


def test_connection_options_go_with_join(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """How to reach the server is not an option of a new match: TLS goes with --join."""
    ca = tmp_path / "ca.pem"
    ca.write_text("not read before the player opens\n")
    opened: list[Opening] = []
    monkeypatch.setattr(
        play_cli, "run_player", lambda entry, opening, *args: opened.append(opening)
    )
    code, output = run("play", "tribes", "--join", "m1", "--token", "t0", "--tls-ca", str(ca))
    assert code == 0, output
    assert opened == [TakeSeat("m1", "t0")]


def test_totem_starts_without_textual() -> None:
    # The server's command line loads the players' screens only when one is played.
    probe = "import sys, entrypoints.totem; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_an_unreachable_server_is_reported_and_nothing_is_opened() -> None:
    app = player_at("127.0.0.1:1", NewMatch(name="alice"))
    app.connect_timeout = 0.2
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.failure is not None, "a failure")
    assert app.return_code == 1
    assert app.failure is not None
    assert app.failure.startswith(
        "creating a match for 4 players at 127.0.0.1:1: cannot reach the Totem server"
    )
    assert app.match_id is None


def test_the_village_help_names_every_option_and_key() -> None:
    code, output = run("play", "village", "--help")
    assert code == 0
    for option in ("--join MATCH", "--spectate MATCH", "--players", "--variation"):
        assert option in output
    for option in ("--deadline-ms", "--bot-think-ms LOW HIGH"):
        assert option in output
    for key in ("d sends the default", "tab selects", "enter sends the draft", "q quits"):
        assert key in " ".join(output.split())
    code, output = run("play", "village", "--spectate", "m", "--variation", "feast_a")
    assert code != 0 and "--variation is for a new match" in output
