"""Tribes match options, fixed at creation and stored in the created event.

No published edition of Tribes could be found, so the rules decide the board size, the
Dice of Fate, the Salvation Spaces and a few other points; each decision is an option
here, with the default the rules give (see docs/rules/tribes.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from domain.kernel.errors import InvalidArgument
from domain.kernel.options import CommonOptions
from domain.tribes.pieces import DEFAULT_FACES, FACES, MAX_BOARD, MIN_BOARD

MIN_PLAYERS = 2
MAX_PLAYERS = 4
MAX_TIMEOUT_MS = 3_600_000
DEFAULT_TIMEOUT_MS = 60_000
DEFAULT_MOVE_LIMIT = 200
MAX_MOVE_LIMIT = 10_000
MAX_FACES = 12
#: Bound on each prearranged sequence, so that a created event stays small.
MAX_PREARRANGED = 1_000


@dataclass(frozen=True)
class Options(CommonOptions):
    """Options of a Tribes match, with the defaults the rules give.

    - ``board_size`` (TR-1.2): None lets the number of players at the start decide (3×3
      for two, 4×4 for three or four).
    - ``turn_timeout_ms``: the turn timer; 0 turns it off.
    - ``round_move_limit`` (TR-2.5): moves in a round without a winner before it is drawn.
    - ``extended`` (TR-5): the Dice of Fate, the special totems and the Salvation Spaces.
    - ``dice_faces`` (TR-5.1): the faces of the die, each ``blank``, ``large`` or ``small``.
    - ``salvation_spaces`` (TR-5.6): None means the four corners; a list needs
      ``board_size``, since the spaces are numbered on a board of that size.
    - ``prearranged_cards`` / ``prearranged_dice``: a sequence given instead of the
      seeded draws, used in order and from the start again when it runs out, so that
      every table of a duplicate tournament gets the same luck. Each card entry gives
      the Card of Truth of each seat (a permutation of 1 … ``max_players``); each die
      entry is a face of the die.
    """

    max_players: int = MAX_PLAYERS
    board_size: int | None = None
    turn_timeout_ms: int = DEFAULT_TIMEOUT_MS
    round_move_limit: int = DEFAULT_MOVE_LIMIT
    extended: bool = False
    dice_faces: list[str] = field(default_factory=lambda: list(DEFAULT_FACES))
    salvation_spaces: list[int] | None = None
    prearranged_cards: list[list[int]] | None = None
    prearranged_dice: list[str] | None = None

    def validate(self) -> Options:
        """Return self, or raise :class:`InvalidArgument` naming the rule of the bad field."""
        self.validate_common("TR-3.5")
        if not MIN_PLAYERS <= self.max_players <= MAX_PLAYERS:
            raise InvalidArgument(
                "TR-1.1", f"max_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}"
            )
        if self.board_size is not None and not MIN_BOARD <= self.board_size <= MAX_BOARD:
            raise InvalidArgument(
                "TR-1.2", f"board_size must be between {MIN_BOARD} and {MAX_BOARD}"
            )
        if not 0 <= self.turn_timeout_ms <= MAX_TIMEOUT_MS:
            raise InvalidArgument(
                "TR-2.2", f"turn_timeout_ms must be between 0 and {MAX_TIMEOUT_MS}"
            )
        if not 1 <= self.round_move_limit <= MAX_MOVE_LIMIT:
            raise InvalidArgument(
                "TR-2.5", f"round_move_limit must be between 1 and {MAX_MOVE_LIMIT}"
            )
        self._validate_die()
        self._validate_salvation()
        self._validate_cards()
        return self

    def _validate_die(self) -> None:
        if not 1 <= len(self.dice_faces) <= MAX_FACES:
            raise InvalidArgument("TR-5.1", f"the die has 1 to {MAX_FACES} faces")
        if any(face not in FACES for face in self.dice_faces):
            raise InvalidArgument("TR-5.1", f"each face of the die is one of {', '.join(FACES)}")
        if self.prearranged_dice is not None:
            if not self.extended:
                raise InvalidArgument("TR-5.1", "prearranged die rolls need the extended game")
            if not 1 <= len(self.prearranged_dice) <= MAX_PREARRANGED:
                raise InvalidArgument(
                    "TR-5.1", f"prearranged die rolls hold 1 to {MAX_PREARRANGED} faces"
                )
            if any(face not in self.dice_faces for face in self.prearranged_dice):
                raise InvalidArgument("TR-5.1", "each prearranged roll must be a face of the die")

    def _validate_salvation(self) -> None:
        if self.salvation_spaces is None:
            return
        if self.board_size is None:
            raise InvalidArgument(
                "TR-5.6", "salvation_spaces are numbered on a board: set board_size too"
            )
        spaces = self.board_size**2
        if any(not 0 <= s < spaces for s in self.salvation_spaces):
            raise InvalidArgument("TR-5.6", f"salvation spaces are 0 to {spaces - 1}")
        if len(set(self.salvation_spaces)) != len(self.salvation_spaces):
            raise InvalidArgument("TR-5.6", "a salvation space is listed twice")

    def _validate_cards(self) -> None:
        if self.prearranged_cards is None:
            return
        if not 1 <= len(self.prearranged_cards) <= MAX_PREARRANGED:
            raise InvalidArgument(
                "TR-2.1", f"prearranged Cards of Truth hold 1 to {MAX_PREARRANGED} rounds"
            )
        expected = list(range(1, self.max_players + 1))
        for cards in self.prearranged_cards:
            if sorted(cards) != expected:
                raise InvalidArgument(
                    "TR-2.1",
                    "each round of prearranged Cards of Truth gives every seat one card: "
                    f"the numbers 1 to {self.max_players}, each once",
                )

    @property
    def prearranged(self) -> bool:
        return self.prearranged_cards is not None or self.prearranged_dice is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Options:
        return cls(**data)
