"""Small text helpers shared by every game's rendering."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from domain.kernel.match import MatchAggregate
from domain.kernel.stamps import ReceiveStamp

T = TypeVar("T")


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


def received(data: object) -> ReceiveStamp | None:
    """The receive stamp a view holds in its stored form, None where it holds none."""
    if isinstance(data, dict) and "sequence" in data:
        return ReceiveStamp.from_dict(data)
    return None


def stamp(given: ReceiveStamp | None) -> str:
    """What a receive stamp says in a summary: the receive order, the server instance
    whose order it is when several served the store, and the command's receive number
    in its match when it has one (refused commands have one too: docs/replay.md)."""
    if given is None:
        return ""
    instance = given.instance
    number = f", in match #{given.receive}" if given.receive else ""
    return f"[recv #{given.sequence}{'@' + instance if instance else ''}{number}]"


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
        return f"{text} {stamp(received(view.get('stamp')))}".rstrip()
    if name == "MatchEnded":
        text = f"match {view.get('reason', 'ended')}: {result(match, view.get('result', []))}"
        if view.get("statement"):
            text += f" ({view['statement']})"
        if view.get("seed"):
            text += f"; seed revealed {view['seed']}"
        return text
    return None


#: Characters a terminal acts on instead of showing: controls (C0, DEL, C1), format
#: characters (bidi overrides, zero-width), line and paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _shown(character: str) -> str:
    if character in "\n\t":
        return character
    if unicodedata.category(character) not in _HIDDEN:
        return character
    code = ord(character)
    if code < 0x20:
        return chr(0x2400 + code)  # the control's own picture: ESC shows as ␛
    if code == 0x7F:
        return "\u2421"  # ␡
    return "\ufffd"


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on replaced by a visible one,
    one for one (so styled spans keep their places): stored names and values reach a
    judge's terminal as what they are, never as escape sequences or reordered text."""
    return "".join(_shown(c) for c in text)


class SafeConsole(Console):
    """A console that shows, never obeys, control characters in what it prints."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(_safe(o) for o in objects), **kwargs)


def _safe(renderable: Any) -> Any:
    if isinstance(renderable, Text):
        safe = renderable.copy()
        safe.plain = printable(renderable.plain)
        return safe
    if isinstance(renderable, str):
        return printable(renderable)
    return renderable


def console() -> SafeConsole:
    return SafeConsole(soft_wrap=True, highlight=False, markup=False, emoji=False)


def progress(items: Iterable[T], total: int, label: str) -> Iterator[T]:
    """``items`` as they come, with a progress bar on standard error while they do (gone
    when done; none when standard error is not a terminal), so that long work over a
    store or a long match shows how far it has got without touching standard output."""
    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task(label, total=total)
        for item in items:
            yield item
            bar.advance(task)
