"""Decisions a match waits for: who owes one, under which rule, and by when.

A turn-based game waits for its players: one party in turn, or every party at once for
a secret choice. Whoever owes a decision may answer before its deadline; when the
deadline passes, the server fires the match's timer and the game applies the documented
default for every party that has not answered, so a match never stalls.

A *party* is what takes decisions: a seat, or a side a seat plays (Village's families,
several per seat with two players). :meth:`~domain.kernel.match.MatchAggregate.parties_of`
says which parties a seat plays.

A decision is stored in the aggregate as plain data (a dict, as recorded in the event
that opened it), so that replaying the events rebuilds it exactly and the server can
rebuild its timer from the deadline after a restart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.kernel.stamps import ReceiveStamp


@dataclass(frozen=True)
class Decision:
    """A decision the match waits for.

    ``kind`` names it (a game's word: ``"arrange"``, ``"choose"``), ``rule`` is the rule
    id cited when a command comes at the wrong moment, ``parties`` are those who still owe
    it (one party for a decision in turn; several for one made at once), and
    ``deadline_ms`` is the wall time (ms) at which the default applies. ``detail`` holds
    public facts the players need to answer (never a hidden one: every viewer sees it).
    """

    kind: str
    rule: str
    parties: tuple[int, ...]
    opened_ms: int
    deadline_ms: int
    detail: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def open(
        cls,
        kind: str,
        rule: str,
        parties: Sequence[int],
        stamp: ReceiveStamp,
        timeout_ms: int,
        detail: Mapping[str, Any] | None = None,
    ) -> Decision:
        """A decision opened by the command (or timer firing) received at ``stamp``: its
        deadline runs from that moment."""
        return cls(
            kind, rule, tuple(parties), stamp.wall_ms, stamp.wall_ms + timeout_ms, detail or {}
        )

    def owed_by(self, party: int) -> bool:
        return party in self.parties

    def answered(self, party: int) -> Decision | None:
        """The decision once ``party`` has answered; None when nobody owes it any more."""
        rest = tuple(p for p in self.parties if p != party)
        if not rest:
            return None
        return Decision(self.kind, self.rule, rest, self.opened_ms, self.deadline_ms, self.detail)

    def due(self, stamp: ReceiveStamp) -> bool:
        """Whether the deadline has passed at ``stamp``."""
        return stamp.wall_ms >= self.deadline_ms

    def to_dict(self) -> dict[str, Any]:
        """The form recorded in events and kept in the aggregate (JSON-compatible)."""
        return {
            "kind": self.kind,
            "rule": self.rule,
            "parties": list(self.parties),
            "opened_ms": self.opened_ms,
            "deadline_ms": self.deadline_ms,
            "detail": dict(self.detail),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Decision:
        return cls(
            data["kind"],
            data["rule"],
            tuple(data["parties"]),
            data["opened_ms"],
            data["deadline_ms"],
            dict(data["detail"]),
        )
