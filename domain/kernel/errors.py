"""Domain errors. Each names the rule it enforces, so a rejection can cite it."""

from __future__ import annotations


class DomainError(Exception):
    """A command the rules refuse. The aggregate triggers nothing when it raises one.

    ``rule`` is a stable rule id (``JS-5.2``) or a kernel rule name; ``message`` is a plain
    sentence for the player. Messages never mention hidden facts.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message


class InvalidArgument(DomainError):
    """A malformed or out-of-range value: wrong whatever the state of the match."""


class RuleViolation(DomainError):
    """A well-formed command the rules forbid in the current state."""


class NotPermitted(DomainError):
    """A command its sender may not give whatever the state: one for a party (a Village
    family) that the sender's seat does not play. Answered like a command for another
    seat (PERMISSION_DENIED), not as a rule of play broken now."""
