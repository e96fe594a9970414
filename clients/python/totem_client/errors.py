"""The one exception type of the client: a refusal or failure reported by gRPC."""

from __future__ import annotations

import re
from typing import Any

import grpc

#: Trailing metadata key in which the server names the rule behind a refusal.
RULE_METADATA_KEY = "totem-rule"

_RULE_PREFIX = re.compile(r"^([A-Z]+-\d+(?:\.\d+)*[a-z]?): ")


class TotemError(Exception):
    """A call failed: the gRPC status code, the rule id (if any) and the message.

    ``rule`` is the id of the rule the server cited (``"JS-3.1"``), or ``""`` when the
    refusal is not about the game's rules (a bad field, a bad token, an unreachable
    server). ``message`` is the server's sentence without the rule prefix.
    """

    def __init__(self, code: grpc.StatusCode, message: str, rule: str = "") -> None:
        self.code = code
        self.rule = rule
        self.message = message
        text = f"{rule}: {message}" if rule else message
        super().__init__(f"{code.name}: {text}")

    @classmethod
    def from_rpc_error(cls, error: grpc.aio.AioRpcError) -> TotemError:
        """Read the code, the rule id and the sentence of a failed call."""
        details: str = error.details() or ""
        rule = _metadata_value(error.trailing_metadata(), RULE_METADATA_KEY)
        match = _RULE_PREFIX.match(details)
        if match is not None:
            rule = rule or match.group(1)
            if match.group(1) == rule:
                details = details[match.end() :]
        return cls(error.code(), details, rule)

    @property
    def is_rule_refusal(self) -> bool:
        """True when the server refused a command under a game rule (FAILED_PRECONDITION
        with a rule id): the state did not allow it, nothing changed."""
        return self.code == grpc.StatusCode.FAILED_PRECONDITION and bool(self.rule)


def _metadata_value(metadata: Any, key: str) -> str:
    """The first text value of ``key`` in gRPC metadata, or ``""``."""
    for item in metadata or ():
        if isinstance(item, tuple) and len(item) == 2 and item[0] == key:
            value = item[1]
            return value if isinstance(value, str) else value.decode(errors="replace")
    return ""
