"""``totem serve``: starts, answers, shuts down cleanly on SIGTERM and SIGINT, restarts."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from entrypoints.totem import main
from server.access import ORGANISER_TOKEN_ENV
from tests.service.helpers import bearer, create_and_join, stub
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(
    db: Path, port: int, *options: str, seen: list[str] | None = None, organiser: bool = True
) -> subprocess.Popen[str]:
    """``totem serve`` on ``db``, once it says it is ready; ``seen`` collects what it
    printed until then. ``organiser``: the tests' organiser token in its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGRES_", "PERSISTENCE"))}
    if not organiser:
        env.pop(ORGANISER_TOKEN_ENV, None)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server",
            "serve",
            "--address",
            f"127.0.0.1:{port}",
            "--db",
            str(db),
            *options,
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    for line in process.stderr:  # blocks until the server says it is ready (or dies)
        if seen is not None:
            seen.append(line)
        if "serving on" in line:
            assert f"127.0.0.1:{port}" in line
            return process
    raise AssertionError(f"the server did not start (exit {process.wait()})")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_serve_stops_cleanly_and_restarts_on_the_same_file(
    tmp_path: Path, sig: signal.Signals
) -> None:
    db = tmp_path / "arena.db"
    port = free_port()
    process = launch(db, port)
    try:
        channel, client = stub(port)
        async with channel:
            # No turn timer (JS-3.4 off with 0): nothing but this test moves the match,
            # however long the restart takes on a loaded machine.
            match_id, _, _ = await asyncio.wait_for(
                create_and_join(client, 2, turn_timeout_ms=0), 30
            )
    finally:
        process.send_signal(sig)
        assert process.wait(timeout=30) == 0
    assert db.exists()

    process = launch(db, port)
    try:
        channel, client = stub(port)
        async with channel:
            listed = await asyncio.wait_for(client.ListMatches(ms.ListMatchesRequest()), 30)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert [m.match_id for m in listed.matches] == [match_id]
    assert listed.matches[0].version == 4


async def test_a_second_signal_ends_the_drain_window(tmp_path: Path) -> None:
    """Under a drain window far longer than the test, the first SIGTERM begins the
    shutdown (commands refused) and the second ends the window: the server exits."""
    port = free_port()
    process = launch(tmp_path / "arena.db", port, "--drain-seconds", "3600")
    assert process.stderr is not None
    try:
        process.send_signal(signal.SIGTERM)
        for line in process.stderr:
            if "draining for 3600.0 s" in line:
                break
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.wait()


def file_mode_and_text(path: str) -> tuple[int, str]:
    with open(path) as file:
        return stat.S_IMODE(os.fstat(file.fileno()).st_mode), file.read()


async def test_the_first_start_prints_an_organiser_token_once(tmp_path: Path) -> None:
    """The organiser file is created 0600 holding only a hash; the token it prints lets
    its holder create a match; a restart prints no token."""
    db = tmp_path / "arena.db"
    port = free_port()
    first: list[str] = []
    process = launch(db, port, seen=first, organiser=False)
    try:
        printed = [line for line in first if "organiser token (shown once" in line]
        assert len(printed) == 1
        token = printed[0].rsplit(" ", 1)[1].strip()
        mode, text = file_mode_and_text(f"{db}.organisers")
        assert mode == 0o600
        assert token not in text
        channel, client = stub(port)
        async with channel:
            request = ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED)
            with pytest.raises(grpc.aio.AioRpcError):
                await client.CreateMatch(request)
            created = await client.CreateMatch(request, metadata=bearer(token))
            assert created.referee_token
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    again: list[str] = []
    process = launch(db, port, seen=again, organiser=False)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    assert not any("organiser token" in line for line in again)


def test_serve_help_names_its_settings() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for text in (
        "--address",
        "TOTEM_ADDRESS",
        "--db",
        "TOTEM_DB",
        "127.0.0.1:50051",
        "totem.db",
        "--drain-seconds",
        "TOTEM_DRAIN_SECONDS",
        "--organisers",
        "TOTEM_ORGANISERS",
        "--open-creation",
        "--creations-per-minute",
    ):
        assert text in result.output


def _experiments_seen_by_grpc(env: dict[str, str], module: str = "entrypoints.totem") -> str:
    """GRPC_EXPERIMENTS as it stands when ``grpc`` is first imported, in a fresh
    interpreter that loads ``module`` the way the ``totem`` command (or ``python -m
    server``) starts."""
    probe = (
        "import builtins, os\n"
        "real, seen = builtins.__import__, []\n"
        "def spy(name, *args, **kwargs):\n"
        "    if name.split('.')[0] == 'grpc' and not seen:\n"
        "        seen.append(os.environ.get('GRPC_EXPERIMENTS', '<unset>'))\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = spy\n"
        f"import {module}\n"
        "print(seen[0] if seen else '<grpc not imported>')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_server_turns_off_the_listener_that_reorders_simultaneous_grabs() -> None:
    """JS-6.1: receive order decides a grab race, so the listener that hands requests to
    the loop out of arrival order is turned off before gRPC first reads its settings."""
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    assert _experiments_seen_by_grpc(env) == "-event_engine_listener"
    assert _experiments_seen_by_grpc(env, "server.cli") == "-event_engine_listener"


def test_an_operators_grpc_experiments_are_kept_as_given() -> None:
    env = dict(os.environ, GRPC_EXPERIMENTS="event_engine_listener")
    assert _experiments_seen_by_grpc(env) == "event_engine_listener"


def _modes(folder: Path, prefix: str) -> dict[str, int]:
    return {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir() if p.name.startswith(prefix)}


async def test_a_new_sqlite_store_and_its_wal_are_readable_by_their_owner_only(
    tmp_path: Path,
) -> None:
    """The store holds every live match's seed and deck: 0600 from the start, never
    0644 (whatever the umask allows others)."""
    db = tmp_path / "arena.db"
    port = free_port()
    mask = os.umask(0o022)
    try:
        process = launch(db, port)
    finally:
        os.umask(mask)
    try:
        channel, client = stub(port)
        async with channel:
            await asyncio.wait_for(create_and_join(client, 2), 30)
        modes = _modes(tmp_path, "arena.db")
        assert "arena.db" in modes and "arena.db-wal" in modes
        assert set(modes.values()) == {0o600}, modes
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
