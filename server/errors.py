"""How refusals reach clients: a gRPC status, the rule id and a plain sentence.

The rule id travels three ways, for clients of every kind: at the start of the status
message (``"JS-3.1: only the player whose turn it is may reveal"``), as trailing metadata
``totem-rule``, and as a ``google.rpc.ErrorInfo`` in the rich status details.

A refusal that is worth trying again later (the server is shutting down, a quota is
spent) says when: a ``google.rpc.RetryInfo`` in the details and the ``grpc-retry-pushback-ms``
trailer that gRPC's own retry policies read.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from domain.kernel.errors import DomainError, InvalidArgument, NotPermitted
from server import failures
from storage.arena import MatchNotFound
from storage.tournaments import TournamentNotFound

RULE_METADATA_KEY = "totem-rule"
RETRY_METADATA_KEY = "grpc-retry-pushback-ms"
ERROR_DOMAIN = "totem.v1"


class ServiceError(Exception):
    """A refusal decided by the server rather than by the rules (auth, bad fields)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        rule: str = "",
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rule = rule
        #: When trying again may succeed; None: not a refusal to retry as it is.
        self.retry_after_ms = retry_after_ms


#: The status of each refusal of the application (:mod:`server.failures`).
FAILURE_CODES: dict[type[failures.Refused], grpc.StatusCode] = {
    failures.Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    failures.PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    failures.BadRequest: grpc.StatusCode.INVALID_ARGUMENT,
    failures.OutOfRange: grpc.StatusCode.OUT_OF_RANGE,
    failures.Exhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
}


def to_service_error(error: Exception) -> ServiceError | None:
    """The status for an exception the service knows how to explain, else None."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, failures.Refused):
        code = FAILURE_CODES[type(error)]
        return ServiceError(code, error.message, retry_after_ms=error.retry_after_ms)
    if isinstance(error, InvalidArgument):
        return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, error.message, error.rule)
    if isinstance(error, NotPermitted):
        return ServiceError(grpc.StatusCode.PERMISSION_DENIED, error.message, error.rule)
    if isinstance(error, DomainError):
        return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, error.message, error.rule)
    if isinstance(error, MatchNotFound):
        return ServiceError(grpc.StatusCode.NOT_FOUND, f"there is no match {error.match_id}")
    if isinstance(error, TournamentNotFound):
        return ServiceError(
            grpc.StatusCode.NOT_FOUND, f"there is no tournament {error.tournament_id}"
        )
    return None


def rich_status(error: ServiceError) -> status_pb2.Status:
    """The refusal as a ``google.rpc.Status``: what ``grpc-status-details-bin`` carries
    when a call ends with it, and what a Play stream answers a refused command with."""
    info = error_details_pb2.ErrorInfo(
        reason=error.rule or error.code.name, domain=ERROR_DOMAIN, metadata={"rule": error.rule}
    )
    details = [_packed(info)]
    if error.retry_after_ms is not None:
        delay = duration_pb2.Duration()
        delay.FromMilliseconds(error.retry_after_ms)
        details.append(_packed(error_details_pb2.RetryInfo(retry_delay=delay)))
    return status_pb2.Status(code=error.code.value[0], message=status_text(error), details=details)


def trailing_metadata(error: ServiceError) -> tuple[tuple[str, str | bytes], ...]:
    metadata: list[tuple[str, str | bytes]] = [(RULE_METADATA_KEY, error.rule)]
    if error.retry_after_ms is not None:
        metadata.append((RETRY_METADATA_KEY, str(error.retry_after_ms)))
    metadata.append(("grpc-status-details-bin", rich_status(error).SerializeToString()))
    return tuple(metadata)


def _packed(message: Message) -> any_pb2.Any:
    detail = any_pb2.Any()
    detail.Pack(message)
    return detail


def status_text(error: ServiceError) -> str:
    return f"{error.rule}: {error.message}" if error.rule else error.message


#: When a client told that the server is shutting down may try again: another instance,
#: or this one restarted, is likely to answer by then.
SHUTDOWN_RETRY_MS = 1000


def shutting_down(then: str) -> ServiceError:
    """UNAVAILABLE while the server shuts down; ``then`` says what the client should do."""
    return ServiceError(
        grpc.StatusCode.UNAVAILABLE,
        f"the server is shutting down; {then}",
        retry_after_ms=SHUTDOWN_RETRY_MS,
    )
