"""Coming back after a restart (``totem_client.reconnect``): the channel's backoff, the
pauses between attempts and the server's retry hints."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from totem_client import TotemError, connect
from totem_client.reconnect import CHANNEL_OPTIONS, channel_options, pause
from totem_client.streams import EventStream


def hinted(code: grpc.StatusCode, seconds: float | None) -> TotemError:
    return TotemError(code, "try again later", retry_delay=seconds)


def test_the_channel_tries_again_within_a_second_unless_told_otherwise() -> None:
    assert dict(CHANNEL_OPTIONS)["grpc.max_reconnect_backoff_ms"] == 1000
    assert channel_options() == list(CHANNEL_OPTIONS)
    given = dict(channel_options([("grpc.max_reconnect_backoff_ms", 5000), ("grpc.x", 1)]))
    assert given == {
        "grpc.max_reconnect_backoff_ms": 5000,
        "grpc.x": 1,
        "grpc.initial_reconnect_backoff_ms": 100,
    }


async def test_connect_gives_its_channel_the_reconnection_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[object] = []
    original = grpc.aio.insecure_channel

    def spy(target: str, options: Any = None) -> grpc.aio.Channel:
        seen.append(options)
        return original(target, options)

    monkeypatch.setattr(grpc.aio, "insecure_channel", spy)
    async with connect("127.0.0.1:9", options=[("grpc.x", 1)]):
        pass
    assert seen == [[("grpc.x", 1), *CHANNEL_OPTIONS]]


def test_without_a_hint_the_pause_doubles_from_50_ms_up_to_a_second() -> None:
    pauses = [pause(failures) for failures in (1, 2, 3, 4, 5, 6, 7, 30)]
    assert pauses == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    assert pause(3, hinted(grpc.StatusCode.UNAVAILABLE, None)) == 0.2


def test_the_servers_retry_hint_is_waited_as_it_is() -> None:
    assert pause(1, hinted(grpc.StatusCode.RESOURCE_EXHAUSTED, 1.5)) == 1.5
    assert pause(9, hinted(grpc.StatusCode.UNAVAILABLE, 0.2)) == 0.2
    assert pause(9, hinted(grpc.StatusCode.UNAVAILABLE, 0.0)) == 0.0


def test_a_watch_stream_waits_what_the_server_said_before_it_resumes() -> None:
    stream = EventStream.__new__(EventStream)
    # A stream that fell behind is opened again at once, unless the server said when.
    assert stream._backoff(1, hinted(grpc.StatusCode.RESOURCE_EXHAUSTED, None)) == 0.0
    assert stream._backoff(1, hinted(grpc.StatusCode.RESOURCE_EXHAUSTED, 1.0)) == 1.0
    # A server shutting down says a second (server.errors.SHUTDOWN_RETRY_MS).
    assert stream._backoff(1, hinted(grpc.StatusCode.UNAVAILABLE, 1.0)) == 1.0
    assert stream._backoff(8, hinted(grpc.StatusCode.UNAVAILABLE, None)) == 1.0
