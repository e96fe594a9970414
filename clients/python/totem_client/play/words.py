"""Words every game's screen shares: seat names, the events every game has, the result.

Nothing here knows a game: it reads ``totem.v1.common`` messages only.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content

from totem.v1 import common_pb2
from totem_client.messages import MatchEvent, MatchSummary


class Names:
    """Seat names from the newest summary: "alice (seat 0)" reads better than a number."""

    def __init__(self) -> None:
        self.by_seat: dict[int, str] = {}

    def update(self, summary: MatchSummary) -> None:
        for player in summary.players:
            self.by_seat[player.seat] = player.name

    def __call__(self, seat: int) -> str:
        return self.by_seat.get(seat, f"seat {seat}")

    def full(self, seat: int) -> str:
        return f"{self(seat)} (seat {seat})"

    def listed(self, seats: Iterable[int]) -> str:
        return ", ".join(self(s) for s in seats) or "nobody"


def end_reason(summary: MatchSummary) -> str:
    return common_pb2.EndReason.Name(summary.end_reason).removeprefix("END_REASON_").lower()


def describe_common(event: MatchEvent, names: Names) -> str | None:
    """The event in words if it is one every game has (a join, a new token, a fork's
    start, the end); None for a game's own event."""
    kind = event.WhichOneof("event")
    if kind == "player_joined":
        return f"{names.full(event.player_joined.seat)} joined"
    if kind == "token_reissued":
        return f"{names.full(event.token_reissued.seat)} was given a new token"
    if kind == "match_forked":
        forked = event.match_forked
        return (
            f"this match is a fork of match {forked.origin_match_id} "
            f"at its version {forked.origin_version}"
        )
    if kind == "match_ended":
        return "the match ended"
    return None


def result_lines(summary: MatchSummary, names: Names) -> Content:
    """The result of an ended match: placements with names, best first."""
    places = sorted(summary.result, key=lambda p: (p.place, p.seat))
    parts: list[str | tuple[str, str] | Content] = [
        (f"Match ended ({end_reason(summary)})", "bold")
    ]
    for placement in places:
        parts.append(f"\n{placement.place:>3}. {names.full(placement.seat)}")
    if not places:
        parts.append("\nno placements")
    return Content.assemble(*parts)


__all__ = ["Names", "describe_common", "end_reason", "result_lines"]
