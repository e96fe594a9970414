"""Options every match has, whatever its game.

Each game's options dataclass extends :class:`CommonOptions`, so that the options stored
in a match's ``Created`` event hold these too (a match stored before an option existed
takes its default).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.kernel.errors import InvalidArgument

#: A match whose remaining players have all been away this long ends as abandoned.
DEFAULT_ABANDON_AFTER_MS = 300_000
MIN_ABANDON_AFTER_MS = 1_000
MAX_ABANDON_AFTER_MS = 86_400_000
_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class CommonOptions:
    #: How long every remaining player may be away (no open stream, no command) before
    #: the match ends as abandoned (each game's rule for it, ``END_RULES``).
    abandon_after_ms: int = DEFAULT_ABANDON_AFTER_MS
    #: The SHA-256 token hashes of the only people who may take a seat, each with their
    #: own token: a tournament table's entrants (TO-9.2), whose entrant token is then
    #: their seat's. None: anyone may join. Never in a view.
    reserved_for: list[str] | None = None

    def validate_common(self, rule: str) -> None:
        """Raise :class:`InvalidArgument` citing ``rule`` (the game's rule for how a match
        ends without its players) for a common option out of range."""
        if self.reserved_for is not None and (
            not isinstance(self.reserved_for, list)
            or not all(isinstance(h, str) and _HASH.fullmatch(h) for h in self.reserved_for)
            or len(set(self.reserved_for)) != len(self.reserved_for)
        ):
            raise InvalidArgument(
                "TO-9.2", "the reserved seats are distinct token hashes, 64 hex digits each"
            )
        if not MIN_ABANDON_AFTER_MS <= self.abandon_after_ms <= MAX_ABANDON_AFTER_MS:
            raise InvalidArgument(
                rule,
                f"abandon_after_ms must be between {MIN_ABANDON_AFTER_MS} and "
                f"{MAX_ABANDON_AFTER_MS}",
            )
