"""`totem bots` against a server running in another process."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.service import tribes_helpers as tribes
from tests.service.helpers import stub
from totem.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc
from totem_client.bots.jungle_speed import BotStats
from totem_client.bots.tribes import TribesBotStats
from totem_client.bots.village import VillageBotStats

#: Bounds on waits, so that a broken test fails instead of hanging (not timing checks).
START_BOUND = 30.0
RUN_BOUND = 300.0


def totem_command() -> str:
    """The `totem` script installed next to this interpreter, or the one on PATH."""
    beside = Path(sys.executable).with_name("totem")
    found = str(beside) if beside.exists() else shutil.which("totem")
    if found is None:
        pytest.skip("the `totem` command is not installed")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def wait_until_listening(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_BOUND
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"`totem serve` exited with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"`totem serve` did not listen on port {port}")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """The address of `totem serve` running in a subprocess on a fresh SQLite store."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("w")
    process = subprocess.Popen(
        [totem_command(), "serve", "--address", address, "--db", str(tmp_path / "served.db")],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_listening(port, process)
        yield address
    finally:
        process.terminate()
        try:
            process.wait(timeout=START_BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_bots_play_a_match_on_a_running_server(served: str) -> None:
    run = subprocess.run(
        [
            totem_command(),
            "bots",
            "jungle-speed",
            "--players",
            "4",
            "--address",
            served,
            "--turn-timeout-ms",
            "200",
            "--seed-entropy",
            "judges' dice",
            "--stats",
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "match ended (completed)" in out
    standings = re.findall(r"^\s+(\d+)\. (bot-\d) \(seat (\d)\)$", out, re.MULTILINE)
    assert sorted(name for _, name, _ in standings) == ["bot-1", "bot-2", "bot-3", "bot-4"]
    assert standings[0][0] == "1"
    found = re.search(r"^match id: ([0-9a-f-]{36})$", out, re.MULTILINE)
    assert found is not None
    match_id = found.group(1)
    assert f"totem-replay show {match_id}" in out

    # The server agrees: the match ended with a placement for every seat.
    with grpc.insecure_channel(served) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        view = stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=match_id), timeout=30)
        events = stub.Watch(match_service_pb2.WatchRequest(match_id=match_id), timeout=30)
        created = next(events)
        events.cancel()
    assert view.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert sorted(p.seat for p in view.summary.result) == [0, 1, 2, 3]
    placed = {p.seat: p.place for p in view.summary.result}
    assert {int(seat): int(place) for place, _, seat in standings} == placed
    assert view.summary.variant == "ES"
    assert view.jungle_speed.options.turn_timeout_ms == 200
    assert created.jungle_speed.created.entropy == b"judges' dice"


def test_bots_say_clearly_when_no_server_answers() -> None:
    address = f"127.0.0.1:{free_port()}"
    run = subprocess.run(
        [
            totem_command(),
            "bots",
            "jungle-speed",
            "--address",
            address,
            "--connect-timeout",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode != 0
    assert f"cannot reach the Totem server at {address}" in run.stderr
    assert "Traceback" not in run.stderr


def test_bots_refuse_too_much_seed_entropy() -> None:
    run = subprocess.run(
        [totem_command(), "bots", "jungle-speed", "--seed-entropy", "x" * 65],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 2
    assert "at most 64 bytes" in run.stderr


@pytest.mark.parametrize(
    ("game", "option"),
    [
        ("jungle-speed", "--reaction-ms"),
        ("jungle-speed", "--reveal-delay-ms"),
        ("tribes", "--think-ms"),
        ("village", "--think-ms"),
    ],
)
def test_bots_refuse_a_delay_range_upside_down(game: str, option: str) -> None:
    run = subprocess.run(
        [totem_command(), "bots", game, option, "5", "1"],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 2
    assert "give LOW HIGH with 0 <= LOW <= HIGH" in run.stderr


def test_tribes_bots_play_a_match_to_the_feathers_on_a_running_server(served: str) -> None:
    run = subprocess.run(
        [
            totem_command(),
            "bots",
            "tribes",
            "--players",
            "2",
            "--extended",
            "--address",
            served,
            "--think-ms",
            "0",
            "2",
            "--stats",
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "Tribes extended, 2 bots: match ended (completed)" in out
    standings = re.findall(r"^\s+(\d+)\. (bot-\d) \(seat (\d)\)$", out, re.MULTILINE)
    assert sorted(name for _, name, _ in standings) == ["bot-1", "bot-2"]
    assert [place for place, _, _ in standings] == ["1", "2"]
    assert out.count(", the Feathers") == 1
    found = re.search(r"^match id: ([0-9a-f-]{36})$", out, re.MULTILINE)
    assert found is not None
    with grpc.insecure_channel(served) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        view = stub.GetMatch(match_service_pb2.GetMatchRequest(match_id=found.group(1)), timeout=30)
    assert view.summary.game == common_pb2.GAME_TRIBES
    assert view.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert view.summary.variant == "extended"


def test_village_bots_play_a_match_with_variations_on_a_running_server(served: str) -> None:
    run = subprocess.run(
        [
            totem_command(),
            "bots",
            "village",
            "--players",
            "3",
            "--variation",
            "feast_a",
            "--variation",
            "totem_b",
            "--address",
            served,
            "--think-ms",
            "0",
            "1",
            "--stats",
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "Village feast_a+totem_b, 3 bots: match ended (completed)" in out
    standings = re.findall(r"^\s+(\d+)\. (bot-\d) \(seat (\d)\)$", out, re.MULTILINE)
    assert sorted(name for _, name, _ in standings) == ["bot-1", "bot-2", "bot-3"]
    assert "0 by a deadline, 0 refused commands" in out
    assert re.search(r"^match id: ([0-9a-f-]{36})$", out, re.MULTILINE)


def totem_replay_command() -> str:
    """The `totem-replay` script installed next to this interpreter, or the one on PATH."""
    beside = Path(sys.executable).with_name("totem-replay")
    found = str(beside) if beside.exists() else shutil.which("totem-replay")
    if found is None:
        pytest.skip("the `totem-replay` command is not installed")
    return found


async def _tribes_origin(port: int) -> tuple[str, int, str]:
    """A Tribes match of two after its second move (a seat's turn, nothing pending): its
    id, that version, and its referee token."""
    channel, client = stub(port)
    async with channel:
        origin, referee, tokens = await tribes.create_tribes(client, 2, turn_timeout_ms=60_000)
        for _ in range(2):
            moved = await tribes.play_first_legal(client, origin, tokens)
    return origin, moved.version, referee


def test_bots_play_the_seats_of_a_fork_with_the_tokens_it_printed(served: str) -> None:
    origin, version, referee = asyncio.run(_tribes_origin(int(served.rsplit(":", 1)[1])))
    forked = subprocess.run(
        [
            totem_replay_command(),
            *("fork", origin, str(version)),
            *("--server", served, "--token", referee, "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert forked.returncode == 0, forked.stderr
    record = json.loads(forked.stdout)
    fork_id = record["match_id"]
    tokens = [seat["token"] for seat in record["seats"]]

    run = subprocess.run(
        [
            totem_command(),
            *("bots", "tribes", "--address", served, "--join", fork_id),
            *("--token", tokens[1], "--token", tokens[0], "--think-ms", "0", "2", "--stats"),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 0, run.stderr
    assert f"match {fork_id}: 2 bots seated, playing" in run.stderr
    out = run.stdout
    assert "Tribes base, 2 bots: match ended (completed)" in out
    # The seats keep the origin's names: the bots play them, they do not join.
    standings = re.findall(r"^\s+(\d+)\. (player \d) \(seat (\d)\)$", out, re.MULTILINE)
    assert sorted((name, seat) for _, name, seat in standings) == [
        ("player 0", "0"),
        ("player 1", "1"),
    ]
    assert f"match id: {fork_id}" in out
    with grpc.insecure_channel(served) as channel:
        view = match_service_pb2_grpc.MatchServiceStub(channel).GetMatch(
            match_service_pb2.GetMatchRequest(match_id=fork_id), timeout=30
        )
    assert view.summary.status == common_pb2.MATCH_STATUS_ENDED

    wrong = subprocess.run(
        [
            totem_command(),
            *("bots", "tribes", "--address", served, "--join", fork_id),
            *("--token", "not-a-token"),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert wrong.returncode == 1
    assert f"UNAUTHENTICATED: this token holds no seat in match {fork_id}" in wrong.stderr
    assert "Traceback" not in wrong.stderr


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--token", "t0"], "--token goes with --join MATCH"),
        (["--join", "m1"], "add --token TOKEN for each"),
        (["--join", "m1", "--token", "t0", "--players", "3"], "--players is for a new match"),
        (["--join", "m1", "--token", "t0", "--seed-entropy", "x"], "--seed-entropy is for a new"),
    ],
)
def test_bots_refuse_seat_options_that_do_not_go_together(args: list[str], complaint: str) -> None:
    run = subprocess.run(
        [totem_command(), "bots", "tribes", *args],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 2
    assert complaint in " ".join(run.stderr.split())


def test_each_games_stats_say_what_a_bot_did_in_one_line() -> None:
    refusal = [(3, "reveal", "JS-3.1")]
    jungle = BotStats(reveals=5, timed_out=1, grabs=4, duels_won=2, duels_lost=1, refusals=refusal)
    jungle.arrows_won = jungle.wrong_grabs = 1
    assert jungle.line() == (
        "5 reveals (1 by the timer), 4 grabs, duels 2 won / 1 lost, arrows 1 won, "
        "1 wrong and 0 late grabs, 1 refused commands"
    )
    tribes = TribesBotStats(moves=7, lifts=2, timed_out=1, passes=0, rounds_won=5, feathers=True)
    assert tribes.line() == (
        "7 moves (2 lifts), 1 by the timer, 0 passes, 5 rounds won, the Feathers, "
        "0 refused commands"
    )
    village = VillageBotStats(decisions=12, by_default=0)
    assert village.line() == "12 decisions, 0 by a deadline, 0 refused commands"
