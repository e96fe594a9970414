"""`totem bots jungle-speed` against a server running in another process."""

from __future__ import annotations

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

from totem.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc

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
