"""A session opens its Play stream again when it is refused as UNAVAILABLE: nothing has
been sent on it, so nothing can be applied twice (a connection broken but not yet known
to be, a server restarting). Any other refusal, and the last of the attempts, is raised."""

from __future__ import annotations

from typing import Any, cast

import grpc
import pytest

import totem_client.session
from totem_client.client import Client
from totem_client.errors import TotemError
from totem_client.session import OPEN_ATTEMPTS, Session


class FakeStream:
    """A Play stream whose opening fails with the next of ``failures`` (None: opens)."""

    def __init__(self, failure: TotemError | None) -> None:
        self.failure = failure
        self.done = False
        self.opened = False

    async def open(self) -> None:
        if self.failure is not None:
            self.done = True
            raise self.failure
        self.opened = True


class FakeClient:
    """Hands out one fake stream per ``play`` call, failing as told."""

    def __init__(self, failures: list[TotemError | None]) -> None:
        self.failures = failures
        self.streams: list[FakeStream] = []

    def play(self, token: str) -> FakeStream:
        stream = FakeStream(self.failures[len(self.streams)])
        self.streams.append(stream)
        return stream


def unavailable() -> TotemError:
    return TotemError(grpc.StatusCode.UNAVAILABLE, "Stream removed (sendmsg: Broken pipe)")


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(totem_client.session, "pause", lambda *_: 0.0)


def session_of(client: FakeClient) -> Session:
    return Session(cast(Client, client), "match", token="token", seat=0)


async def test_a_stream_refused_as_unavailable_is_opened_again() -> None:
    client = FakeClient([unavailable(), None])
    session = session_of(client)
    stream: Any = await session.open_play()
    assert stream is client.streams[1] and stream.opened
    assert session.on_stream


async def test_another_refusal_is_raised_at_once() -> None:
    client = FakeClient([TotemError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many"), None])
    session = session_of(client)
    with pytest.raises(TotemError) as refused:
        await session.open_play()
    assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert len(client.streams) == 1 and not session.on_stream


async def test_unavailable_every_time_is_raised_after_the_last_attempt() -> None:
    client = FakeClient([unavailable() for _ in range(OPEN_ATTEMPTS)] + [None])
    session = session_of(client)
    with pytest.raises(TotemError) as refused:
        await session.open_play()
    assert refused.value.code == grpc.StatusCode.UNAVAILABLE
    assert len(client.streams) == OPEN_ATTEMPTS and not session.on_stream
