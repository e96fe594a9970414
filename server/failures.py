"""Why a use case refuses its caller, in the application's own words.

The use cases (:mod:`server.application`) know nothing of gRPC: they raise these, and
the gRPC adapter gives each its status (:func:`server.errors.to_service_error`), as it
does the domain's errors.
"""

from __future__ import annotations


class Refused(Exception):
    """A refusal decided by the application rather than by the rules."""

    def __init__(self, message: str, retry_after_ms: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: When trying again may succeed; None: not a refusal to retry as it is.
        self.retry_after_ms = retry_after_ms


class Unauthenticated(Refused):
    """The caller's token is not valid for what it names."""


class PermissionDenied(Refused):
    """The caller is known, and may not do this."""


class BadRequest(Refused):
    """A field of the request is wrong whatever the match's state."""


class OutOfRange(Refused):
    """A number names something beyond what exists (a version after the last)."""


class Unavailable(Refused):
    """The server cannot do this now (it is shutting down): try again, elsewhere."""


class Exhausted(Refused):
    """A quota is spent: try again after ``retry_after_ms``."""
