"""A refusal to a person at a terminal names the setting to change, not gRPC metadata."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner, Result

from entrypoints.totem import main
from server.access import ORGANISER_TOKEN_ENV
from server.serve import RunningServer


def _bots(port: int, *extra: str) -> Result:
    argv = ["bots", "jungle-speed", "--players", "2", "--address", f"127.0.0.1:{port}", *extra]
    return CliRunner().invoke(main, argv, env={ORGANISER_TOKEN_ENV: None})


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ((), "lets only organisers create matches: set TOTEM_ORGANISER_TOKEN"),
        (("--organiser-token", "not-a-token"), "does not know the organiser token in TOTEM_"),
    ],
)
async def test_bots_without_an_organisers_token_are_told_which_variable_to_set(
    arena: RunningServer, extra: tuple[str, ...], says: str
) -> None:
    done = await asyncio.to_thread(_bots, arena.port, *extra)
    assert done.exit_code == 1
    line = done.output.strip()
    assert line.startswith("Error: ") and "\n" not in line
    assert says in line and "totem organiser-token" in line
    assert "authorization" not in line.lower() and "Bearer" not in line
