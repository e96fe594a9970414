"""What every handler of the web port reads from its call, and how it answers a refusal:
the Connect side of what :mod:`server.service` does for gRPC."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.request import RequestContext
from protobuf.wkt import Any as ConnectAny

from server import auth
from server.errors import ServiceError, rich_status, status_text, to_service_error
from server.service import incident

#: The context of a call of any method.
Context = RequestContext[Any, Any]


def connect_error(error: Exception) -> ConnectError:
    """A refusal as a Connect error: the gRPC status's code (Connect's codes are gRPC's,
    by name), its ``"<rule id>: <sentence>"`` and the same details (``ErrorInfo``, and
    ``RetryInfo`` when trying again may succeed). Anything unforeseen is an incident."""
    refusal: ServiceError = to_service_error(error) or incident(error)
    details = [
        ErrorDetail(ConnectAny(type_url=detail.type_url, value=detail.value))
        for detail in rich_status(refusal).details
    ]
    return ConnectError(Code[refusal.code.name], status_text(refusal), details)


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """Answer what a handler raises as :func:`connect_error` does."""
    try:
        yield
    except ConnectError:
        raise
    except Exception as error:
        raise connect_error(error) from None


def caller_token(ctx: RequestContext[Any, Any]) -> str | None:
    """The bearer token of the ``authorization`` header, as gRPC metadata carries it."""
    return auth.bearer_token(ctx.request_headers.items())


def connection_of(ctx: RequestContext[Any, Any]) -> tuple[str, str]:
    """The client's connection (``host:port``) and address, written as the gRPC port
    writes it (:func:`server.service.client_address`: an IPv6 host in brackets), so
    that a client spends one quota (streams, creations) whichever port it calls."""
    peer = ctx.client_address or ""
    host = peer.rsplit(":", 1)[0]
    return peer, f"[{host}]" if ":" in host else host
