"""The end of a round and of the match.

When a round ends its spells leave the board (VI-2.2) and every chit of the round is
published, so that anyone can check each family's commitment (see
:mod:`domain.village.commitments`); the identities of spells never revealed are
recorded for the referee only (VI-2.3). After a round's phase 8 a family with 6 pieces
wins, the ties broken as VI-4.1 says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from domain.village import model
from domain.village.model import POLE_MAX

if TYPE_CHECKING:
    from domain.village.match import Village


class RoundRecord(NamedTuple):
    """What the ``RoundEnded`` event records."""

    #: Per family, every chit of its choice: placed ones in placement order, then the
    #: others sorted (``{"family", "chits"}``).
    chits: list[dict[str, Any]]
    #: Spells on the board never revealed, for the referee (``{"position", "family",
    #: "spell", "salt"}``).
    unrevealed: list[dict[str, Any]]
    #: Chosen spells never placed, for the referee (``{"family", "spell", "salt", "chit"}``).
    unplaced: list[dict[str, Any]]


def round_record(match: Village) -> RoundRecord:
    """The round's chits, published, and the spells kept secret, recorded."""
    chits = []
    unrevealed = []
    unplaced = []
    for f in match.families:
        placed = [b["chit"] for b in match.board if b["owner"] == f]
        choice = match.choices[f]
        rest: list[str] = []
        if choice is not None:
            for spell, salt, chit in zip(
                choice["spells"], choice["salts"], choice["chits"], strict=True
            ):
                if chit not in placed:
                    rest.append(chit)
                    unplaced.append({"family": f, "spell": spell, "salt": salt, "chit": chit})
        chits.append({"family": f, "chits": placed + sorted(rest)})
    for b in match.board:
        if not b["revealed"]:
            unrevealed.append(
                {
                    "position": b["position"],
                    "family": b["owner"],
                    "spell": b["spell"],
                    "salt": b["salt"],
                }
            )
    return RoundRecord(chits, unrevealed, unplaced)


def contenders(match: Village) -> list[int]:
    """Families whose pole has 6 pieces (VI-4.1): the match ends if there is one."""
    return [f for f in match.families if match.poles[f] >= POLE_MAX]


class Outcome(NamedTuple):
    """What the ``TotemCompleted`` event records, besides the contenders."""

    sizes: list[int]
    birds: list[int]
    #: The families tied for the win (none if one family wins outright).
    tied: list[int]
    winner: int | None
    winning_seats: list[int]

    def kept(self) -> dict[str, Any]:
        """The match's outcome as it keeps it and its views show it (VI-7.11: the tie
        field empty unless two or more families are tied), recorded by the event."""
        return {"winner": self.winner, "tied": list(self.tied), "seats": list(self.winning_seats)}


def outcome(match: Village, among: list[int]) -> Outcome:
    """VI-4.1: a family with 6 pieces wins; several: the largest family, then the most
    birds, else no winner. VI-4.2 / VI-7.1: a player wins with its family, and a tie
    between two families of the same player is that player's win."""
    sizes = [match.size(f) for f in match.families]
    best = model.winner_among(among, sizes, match.birds)
    return Outcome(
        sizes=sizes,
        birds=list(match.birds),
        tied=model.tie(best),
        winner=best[0] if len(best) == 1 else None,
        winning_seats=sorted({match.party_owner(f) for f in best}),
    )


def placings(winning_seats: list[int], players: int) -> list[dict[str, int]]:
    """The match's result: first place for every winning seat, second for the others."""
    return [{"seat": s, "place": 1 if s in winning_seats else 2} for s in range(players)]
