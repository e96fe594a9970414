"""How refusals reach clients: a gRPC status, the rule id and a plain sentence.

The rule id travels three ways, for clients of every kind: at the start of the status
message (``"JS-3.1: only the player whose turn it is may reveal"``), as trailing metadata
``totem-rule``, and as a ``google.rpc.ErrorInfo`` in the rich status details.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from domain.kernel.errors import DomainError, InvalidArgument
from server.application import MatchNotFound

RULE_METADATA_KEY = "totem-rule"
ERROR_DOMAIN = "totem.v1"


class ServiceError(Exception):
    """A refusal decided by the server rather than by the rules (auth, bad fields)."""

    def __init__(self, code: grpc.StatusCode, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rule = rule


def to_service_error(error: Exception) -> ServiceError | None:
    """The status for an exception the service knows how to explain, else None."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, InvalidArgument):
        return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, error.message, error.rule)
    if isinstance(error, DomainError):
        return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, error.message, error.rule)
    if isinstance(error, MatchNotFound):
        return ServiceError(grpc.StatusCode.NOT_FOUND, f"there is no match {error.match_id}")
    return None


def trailing_metadata(error: ServiceError) -> tuple[tuple[str, str | bytes], ...]:
    text = f"{error.rule}: {error.message}" if error.rule else error.message
    info = error_details_pb2.ErrorInfo(
        reason=error.rule or error.code.name, domain=ERROR_DOMAIN, metadata={"rule": error.rule}
    )
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=error.code.value[0], message=text, details=[detail])
    return (
        (RULE_METADATA_KEY, error.rule),
        ("grpc-status-details-bin", status.SerializeToString()),
    )


def status_text(error: ServiceError) -> str:
    return f"{error.rule}: {error.message}" if error.rule else error.message
