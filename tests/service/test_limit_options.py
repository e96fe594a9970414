"""Every limit is an option of ``totem serve``, with its environment variable, and of
``server.serve.start`` (a :class:`Limits`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from entrypoints.totem import main
from server import serve
from server.cli import LIMIT_FLAGS
from server.limits import ENV_NAMES, Limits

FLAGS = {name: flag for name, (flag, _, _) in LIMIT_FLAGS.items()}


def test_serve_help_names_every_limit_its_variable_and_default() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"], terminal_width=400)
    assert result.exit_code == 0
    assert set(FLAGS) == set(ENV_NAMES) == {field.name for field in dataclasses.fields(Limits)}
    for name, flag in FLAGS.items():
        assert flag in result.output
        assert ENV_NAMES[name] in result.output
        default = getattr(Limits(), name)
        assert f"[default: {default}" in result.output.split(flag, 1)[1]


def test_flags_and_variables_reach_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    async def fake_serve_forever(*args: Any, **kwargs: Any) -> None:
        seen.update(kwargs)

    monkeypatch.setattr(serve, "serve_forever", fake_serve_forever)
    monkeypatch.setenv(ENV_NAMES["streams_per_address"], "7")
    result = CliRunner().invoke(
        main,
        [
            *("serve", "--db", str(tmp_path / "t.db")),
            *("--commands-per-second", "2.5", "--idle-actor-seconds", "30"),
        ],
    )
    assert result.exit_code == 0, result.output
    limits = seen["limits"]
    assert limits.commands_per_second == 2.5
    assert limits.idle_actor_s == 30
    assert limits.streams_per_address == 7
    assert limits.pending_calls == Limits.pending_calls  # the default


def test_limits_from_the_environment_and_their_checks() -> None:
    limits = Limits.from_env({ENV_NAMES["max_concurrent_calls"]: "12", "OTHER": "x"})
    assert limits == Limits(max_concurrent_calls=12)
    with pytest.raises(ValueError, match="TOTEM_COMMAND_BURST"):
        Limits.from_env({ENV_NAMES["command_burst"]: "many"})
    with pytest.raises(ValueError, match="idle_actor_s"):
        Limits(idle_actor_s=0)
    assert ("grpc.server.max_pending_requests_hard_limit", 99) in Limits(
        pending_calls=99
    ).grpc_options()


def test_js_4_2a_tie_windows_never_go_below_the_stamp_precision() -> None:
    """The windows are at least the measured stamp precision (docs/api.md): 0.2 ms on a
    Play stream, 2 ms for an Act call; a match records them in microseconds."""
    assert Limits().tie_windows_us() == (200, 2000)
    assert Limits(tie_window_ms=1.5, call_tie_window_ms=4).tie_windows_us() == (1500, 4000)
    with pytest.raises(ValueError, match=r"tie_window_ms .*0\.2 ms.*JS-4\.2a"):
        Limits(tie_window_ms=0.1)
    with pytest.raises(ValueError, match=r"call_tie_window_ms .*2\.0 ms.*JS-4\.2a"):
        Limits(call_tie_window_ms=1)
    result = CliRunner().invoke(main, ["serve", "--tie-window-ms", "0.1"])
    assert result.exit_code == 2 and "--tie-window-ms" in result.output
