"""What a client of one service on one channel has, whichever the service: the channel
and its address, the call timeout, the organiser token, closing, waiting for the
connection and one unary call with its bearer token. :class:`~totem_client.client.Client`
(MatchService) and :class:`~totem_client.tournament.client.TournamentClient` derive."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Self

import grpc

from totem_client.errors import TotemError

#: How long a unary call may take (seconds) unless the client is told otherwise.
DEFAULT_CALL_TIMEOUT = 30.0


def bearer_metadata(token: str | None) -> tuple[tuple[str, str], ...] | None:
    """The call metadata that carries ``token`` (docs/api.md, "Tokens"); None without."""
    return (("authorization", f"Bearer {token}"),) if token else None


class ServiceClient:
    """The channel and the calls' common handling. ``owns_channel``: closing the client
    closes the channel (a client made on another's channel leaves it open)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        address: str = "",
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        organiser_token: str | None = None,
        owns_channel: bool = True,
    ) -> None:
        self.channel = channel
        self.address = address
        self.call_timeout = call_timeout
        self.organiser_token = organiser_token
        self.closed = False
        self._owns_channel = owns_channel

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel, if it is this client's own; calls still running end with
        an error."""
        self.closed = True
        if self._owns_channel:
            await self.channel.close()

    async def wait_ready(self, seconds: float = 5.0) -> None:
        """Wait until the channel is connected; raise ``TotemError(UNAVAILABLE)`` if it is
        not within ``seconds``."""
        try:
            async with asyncio.timeout(seconds):  # not wait_for, which can lose a cancel
                await self.channel.channel_ready()
        except TimeoutError:
            raise TotemError(
                grpc.StatusCode.UNAVAILABLE, f"no connection within {seconds:g} s"
            ) from None

    async def _unary(
        self, method: Any, request: Any, token: str | None = None, bounded: bool = True
    ) -> Any:
        """One call, within the client's call timeout unless not ``bounded`` (a call the
        server answers when something happens, such as TakeSeat)."""
        seconds = self.call_timeout if bounded else None
        try:
            return await method(request, metadata=bearer_metadata(token), timeout=seconds)
        except grpc.aio.AioRpcError as error:
            raise TotemError.from_rpc_error(error) from error
