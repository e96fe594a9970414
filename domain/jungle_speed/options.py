"""Match options, fixed at creation and stored in the created event."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from domain.jungle_speed.cards import Deck
from domain.kernel.errors import InvalidArgument
from domain.kernel.options import CommonOptions
from domain.kernel.ties import MAX_WINDOW_US

VARIANTS = ("ES", "RU")
MAX_TIMEOUT_MS = 3_600_000
MAX_SPECIALS_EACH = 8


@dataclass(frozen=True)
class Options(CommonOptions):
    """Options of a Jungle Speed match, with the defaults the rules name.

    ``turn_timeout_ms`` of 0 turns the turn timer off (JS-3.4).
    ``prearranged_deal`` replaces the shuffle with an explicit deck order, top first (JS-2.4).
    ``tie_window_us`` and ``call_tie_window_us`` are the server's tie windows (JS-4.2a),
    recorded when the match is created: grabs received that close after a race's first
    grab (read on an open stream; stamped when a call was admitted) are simultaneous
    with it. 0: no window, every race decided by receive order alone (a match stored
    before the windows existed).
    """

    variant: str = "ES"
    max_players: int = 8
    turn_timeout_ms: int = 10_000
    min_reveal_interval_ms: int = 0
    inward_arrows: int = 3
    outward_arrows: int = 3
    coloured_arrows: int = 2
    prearranged_deal: list[int] | None = field(default=None)
    tie_window_us: int = 0
    call_tie_window_us: int = 0

    def validate(self) -> Options:
        """Return self, or raise :class:`InvalidArgument` naming the rule of the bad field."""
        self.validate_common("JS-8.3")
        if self.variant not in VARIANTS:
            raise InvalidArgument("JS-2.1", f"variant must be one of {', '.join(VARIANTS)}")
        if not 2 <= self.max_players <= 10:
            raise InvalidArgument("JS-1.5", "max_players must be between 2 and 10")
        for name in ("turn_timeout_ms", "min_reveal_interval_ms"):
            if not 0 <= getattr(self, name) <= MAX_TIMEOUT_MS:
                raise InvalidArgument("JS-3.4", f"{name} must be between 0 and {MAX_TIMEOUT_MS}")
        for name in ("inward_arrows", "outward_arrows", "coloured_arrows"):
            if not 0 <= getattr(self, name) <= MAX_SPECIALS_EACH:
                raise InvalidArgument("JS-1.3", f"{name} must be between 0 and {MAX_SPECIALS_EACH}")
        for name in ("tie_window_us", "call_tie_window_us"):
            if not 0 <= getattr(self, name) <= MAX_WINDOW_US:
                raise InvalidArgument("JS-4.2a", f"{name} must be between 0 and {MAX_WINDOW_US}")
        if self.prearranged_deal is not None:
            size = len(self.deck())
            if sorted(self.prearranged_deal) != list(range(size)):
                raise InvalidArgument(
                    "JS-2.4",
                    f"a prearranged deal must list every card id 0 to {size - 1} exactly once",
                )
        return self

    def deck(self) -> Deck:
        return Deck(self.inward_arrows, self.outward_arrows, self.coloured_arrows)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Options:
        return cls(**data)
