"""Small text helpers shared by every game's rendering."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from domain.kernel.match import MatchAggregate


def when(moment: datetime) -> str:
    """A stored timestamp in UTC, to the millisecond."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def seat(match: MatchAggregate, number: int) -> str:
    """``seat 2 (Ana)``, or ``seat 2`` while nobody sits there."""
    players = getattr(match, "players", [])
    if 0 <= number < len(players):
        return f"seat {number} ({players[number]})"
    return f"seat {number}"


def seats(match: MatchAggregate, numbers: list[int]) -> str:
    return ", ".join(seat(match, n) for n in numbers) if numbers else "nobody"


def stamp(data: object) -> str:
    """What a receive stamp says in a summary: the receive order."""
    if isinstance(data, dict) and "sequence" in data:
        return f"[recv #{data['sequence']}]"
    return ""


def result(match: MatchAggregate, ranking: list[dict[str, int]]) -> str:
    """``1st seat 2 (Ana); 2nd seat 0 (Bo), seat 1 (Cy)``."""
    by_place: dict[int, list[int]] = {}
    for entry in ranking:
        by_place.setdefault(entry["place"], []).append(entry["seat"])
    return "; ".join(f"{ordinal(p)} {seats(match, s)}" for p, s in sorted(by_place.items()))


def compact(value: Any) -> str:
    """Any value as short JSON, for fields no summary knows."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def fields(view: dict[str, Any]) -> str:
    """``key=value`` pairs: the fallback summary of an event."""
    return " ".join(f"{k}={compact(v)}" for k, v in view.items())


def short(digest: str, length: int = 16) -> str:
    return digest[:length] + "…" if len(digest) > length else digest


def kernel_summary(match: MatchAggregate, name: str, view: dict[str, Any]) -> str | None:
    """Summaries of the events every game shares (the kernel's)."""
    if name == "PlayerJoined":
        text = f"{seat(match, view['seat'])} joins"
        if view.get("entropy"):
            text += f", entropy {view['entropy']}"
        return f"{text} {stamp(view.get('stamp'))}".rstrip()
    if name == "MatchEnded":
        text = f"match {view.get('reason', 'ended')}: {result(match, view.get('result', []))}"
        if view.get("seed"):
            text += f"; seed revealed {view['seed']}"
        return text
    return None
