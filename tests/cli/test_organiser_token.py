"""``totem organiser-token``: a lost organiser token is replaced by a new one."""

from __future__ import annotations

import signal
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from entrypoints.totem import main
from tests.cli.test_serve import file_mode_and_text, free_port, launch
from tests.service.helpers import bearer, stub
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms


async def _creates(port: int, token: str) -> bool:
    """Whether the server on ``port`` lets the holder of ``token`` create a match."""
    channel, client = stub(port)
    async with channel:
        request = ms.CreateMatchRequest(game=common_pb2.GAME_JUNGLE_SPEED)
        try:
            await client.CreateMatch(request, metadata=bearer(token), timeout=30)
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
            return False
    return True


async def test_a_new_token_replaces_the_lost_one_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    port = free_port()
    first: list[str] = []
    process = launch(db, port, seen=first, organiser=False)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    lost = next(line for line in first if "organiser token (shown once" in line)
    lost_token = lost.rsplit(" ", 1)[1].strip()

    issued = CliRunner().invoke(main, ["organiser-token", "--db", str(db)])
    assert issued.exit_code == 0, issued.output
    token = issued.stdout.strip()
    assert token and token != lost_token
    mode, text = file_mode_and_text(f"{db}.organisers")
    assert mode == 0o600
    assert token not in text
    assert text.startswith("# Organisers")  # the comment is kept

    process = launch(db, port, organiser=False)
    try:
        assert await _creates(port, token)
        assert not await _creates(port, lost_token)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_a_new_name_adds_an_organiser_beside_the_others(tmp_path: Path) -> None:
    organisers = tmp_path / "org"
    organisers.write_text("# ours\norganiser " + "a" * 64 + "\n")
    done = CliRunner().invoke(
        main, ["organiser-token", "--organisers", str(organisers), "--name", "alice"]
    )
    assert done.exit_code == 0, done.output
    lines = organisers.read_text().splitlines()
    assert lines[:2] == ["# ours", "organiser " + "a" * 64]
    assert lines[2].startswith("alice ") and len(lines) == 3


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--organisers", "{tmp}/missing"], "`totem serve` creates it on its first start"),
        (["--organisers", "{tmp}/org", "--name", "two words"], "one word"),
    ],
)
def test_it_refuses_what_it_cannot_do_and_writes_nothing(
    tmp_path: Path, argv: list[str], says: str
) -> None:
    (tmp_path / "org").write_text("organiser " + "a" * 64 + "\n")
    args = [arg.format(tmp=tmp_path) for arg in argv]
    done = CliRunner().invoke(main, ["organiser-token", *args])
    assert done.exit_code == 1 and says in done.output
    assert not (tmp_path / "missing").exists()
    assert (tmp_path / "org").read_text() == "organiser " + "a" * 64 + "\n"
