"""The one exception type of the client: a refusal or failure reported by gRPC.

A refusal reaches the client two ways, and both become the same :class:`TotemError`: a
call that ends with a status (an AioRpcError: its code, its message, the ``totem-rule``
trailer and the ``google.rpc.Status`` in ``grpc-status-details-bin``), and a Play stream's
``refused`` answer, which is that same ``google.rpc.Status`` as a message.
"""

from __future__ import annotations

import re
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

#: Trailing metadata key in which the server names the rule behind a refusal.
RULE_METADATA_KEY = "totem-rule"
#: Trailing metadata key with the milliseconds after which a refused call may succeed.
RETRY_METADATA_KEY = "grpc-retry-pushback-ms"
#: Trailing metadata key of the rich status (a serialized ``google.rpc.Status``).
DETAILS_METADATA_KEY = "grpc-status-details-bin"

_RULE_PREFIX = re.compile(r"^([A-Z]+-\d+(?:\.\d+)*[a-z]?): ")
_CODES: dict[int, grpc.StatusCode] = {code.value[0]: code for code in grpc.StatusCode}


class TotemError(Exception):
    """A call failed: the gRPC status code, the rule id (if any) and the message.

    ``rule`` is the id of the rule the server cited (``"JS-3.1"``), or ``""`` when the
    refusal is not about the game's rules (a bad field, a bad token, an unreachable
    server). ``message`` is the server's sentence without the rule prefix.
    ``retry_delay`` is the number of seconds after which the server said trying again may
    succeed (a spent command rate, a server shutting down), or None when it said nothing.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        rule: str = "",
        retry_delay: float | None = None,
    ) -> None:
        self.code = code
        self.rule = rule
        self.message = message
        self.retry_delay = retry_delay
        text = f"{rule}: {message}" if rule else message
        super().__init__(f"{code.name}: {text}")

    @classmethod
    def from_rpc_error(cls, error: grpc.aio.AioRpcError) -> TotemError:
        """Read the code, the rule id, the sentence and the retry delay of a failed call."""
        trailers = error.trailing_metadata()
        status = _rich_status(_metadata_bytes(trailers, DETAILS_METADATA_KEY))
        rule = _metadata_value(trailers, RULE_METADATA_KEY)
        if not rule and status is not None:
            rule = _error_info_rule(status)
        retry_delay = _retry_delay(status) if status is not None else None
        if retry_delay is None:
            retry_delay = _pushback(_metadata_value(trailers, RETRY_METADATA_KEY))
        details: str = error.details() or ""
        return cls._read(error.code(), details, rule, retry_delay)

    @classmethod
    def from_status(cls, status: status_pb2.Status) -> TotemError:
        """The error a ``google.rpc.Status`` describes: a Play stream's refusal of one
        command. It is the error :meth:`from_rpc_error` makes of an Act call that ends
        with that same status, so that a caller handles a refusal the same way whichever
        way its command went."""
        code = _CODES.get(status.code, grpc.StatusCode.UNKNOWN)
        return cls._read(code, status.message, _error_info_rule(status), _retry_delay(status))

    @classmethod
    def _read(
        cls, code: grpc.StatusCode, details: str, rule: str, retry_delay: float | None
    ) -> TotemError:
        """The error of a status: the rule id is the server's, else the message's prefix,
        which the message loses when it names that rule."""
        match = _RULE_PREFIX.match(details)
        if match is not None:
            rule = rule or match.group(1)
            if match.group(1) == rule:
                details = details[match.end() :]
        return cls(code, details, rule, retry_delay)

    def copy(self) -> TotemError:
        """The same error as a new exception: one failure (a stream's end) is raised in
        every task that waited on it, each with its own traceback."""
        return TotemError(self.code, self.message, self.rule, self.retry_delay)

    @property
    def is_rule_refusal(self) -> bool:
        """True when the server refused a command under a game rule (FAILED_PRECONDITION
        with a rule id): the state did not allow it, nothing changed."""
        return self.code == grpc.StatusCode.FAILED_PRECONDITION and bool(self.rule)


class CreationRefused(TotemError):
    """``CreateMatch`` refused with PERMISSION_DENIED: the server lets only organisers
    create matches, and this client had no organiser token (``had_token`` False) or one
    the server does not know. Its own type, so that a tool can tell its user which
    setting gives the token, where the server can only name the gRPC metadata."""

    def __init__(self, error: TotemError, had_token: bool) -> None:
        super().__init__(error.code, error.message, error.rule, error.retry_delay)
        self.had_token = had_token

    def copy(self) -> CreationRefused:
        return CreationRefused(self, self.had_token)


def _metadata_raw(metadata: Any, key: str) -> str | bytes | None:
    for item in metadata or ():
        if isinstance(item, tuple) and len(item) == 2 and item[0] == key:
            value: str | bytes = item[1]
            return value
    return None


def _metadata_value(metadata: Any, key: str) -> str:
    """The first text value of ``key`` in gRPC metadata, or ``""``."""
    value = _metadata_raw(metadata, key)
    if value is None:
        return ""
    return value if isinstance(value, str) else value.decode(errors="replace")


def _metadata_bytes(metadata: Any, key: str) -> bytes:
    """The first binary value of ``key`` in gRPC metadata, or ``b""``."""
    value = _metadata_raw(metadata, key)
    if value is None:
        return b""
    return value if isinstance(value, bytes) else value.encode()


def _rich_status(data: bytes) -> status_pb2.Status | None:
    """The ``google.rpc.Status`` of ``grpc-status-details-bin``; None if absent or broken
    (the plain status and trailers still say most of it)."""
    if not data:
        return None
    status = status_pb2.Status()
    try:
        status.ParseFromString(data)
    except DecodeError:
        return None
    return status


def _error_info_rule(status: status_pb2.Status) -> str:
    """The rule id in the status's ``google.rpc.ErrorInfo`` (``metadata["rule"]``), or ``""``."""
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Is(info.DESCRIPTOR) and detail.Unpack(info):
            return str(info.metadata.get("rule", ""))
    return ""


def _retry_delay(status: status_pb2.Status) -> float | None:
    """Seconds of the status's ``google.rpc.RetryInfo``, or None without one."""
    for detail in status.details:
        retry = error_details_pb2.RetryInfo()
        if detail.Is(retry.DESCRIPTOR) and detail.Unpack(retry):
            return float(retry.retry_delay.ToMilliseconds()) / 1000.0
    return None


def _pushback(text: str) -> float | None:
    """Seconds of a ``grpc-retry-pushback-ms`` value, or None if there is none."""
    try:
        return int(text) / 1000.0 if text else None
    except ValueError:
        return None
