"""A tournament's result sheet as one portable file: JSON Lines, like a match's audit
bundle.

The first line is a header: ``format`` (:data:`FORMAT`), ``tournament_id``, ``game``,
``events`` (how many event lines follow) and ``exported_at``. Then one line per event
of the tournament, in version order, written exactly as an audit bundle writes a
match's (:func:`storage.event_lines.event_line`): its place in the chain, the view of a
viewer who sees everything (:func:`domain.tournament.views.event_view`), its hashed
fields, its ``topic`` and ``unhashed`` (the server's signature over the final event and
its key). The last line is ``TournamentEnded``, the sheet itself (TO-11.2).

Whoever holds the file rebuilds the very events the store holds and checks them
without the server: ``totem-replay tournament verify SHEET`` (docs/tournaments.md,
"Verifying a result sheet"). The server answers for a sheet with
:func:`sheet_document`; the replay tool writes one with the same function.

Only an ended tournament has a sheet: before its end, its first event holds the secret
seed from which every round's duplicate luck derives, and no file meant to travel may
carry it (``unended=True`` is the operator's own export).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from domain.kernel.views import Viewer
from domain.tournament import Tournament
from domain.tournament.aggregate import is_final
from domain.tournament.views import event_view
from storage.event_lines import LineError, dumps, event_line

FORMAT = "totem-tournament-sheet/1"


class SheetError(ValueError):
    """Events that make no result sheet: not one tournament's whole history, or not
    ended."""


def is_tournament_event(cls: type) -> bool:
    """Whether ``cls`` is one of the tournament's own event classes (each is an
    attribute of :class:`Tournament` under its own name)."""
    return getattr(Tournament, cls.__name__, None) is cls and issubclass(cls, Tournament.Event)


def sheet_header(
    tournament_id: UUID | str, game: str, events: int, now: datetime | None = None
) -> dict[str, Any]:
    """The sheet's first line, as a dict."""
    return {
        "format": FORMAT,
        "tournament_id": str(UUID(str(tournament_id))),
        "game": game,
        "events": events,
        "exported_at": (now or datetime.now(UTC)).isoformat(),
    }


def sheet_line(event: Any) -> dict[str, Any]:
    """The line of one tournament event, as a dict: an audit bundle's event line, with
    the tournament's view of the event."""
    name, view = event_view(event, Viewer.referee())
    return event_line(event, name, view)


def sheet_lines(
    tournament_id: UUID | str,
    events: Sequence[Any],
    now: datetime | None = None,
    *,
    unended: bool = False,
) -> list[str]:
    """Every line of the sheet (without newlines): the header, then one per event.
    ``events`` are the tournament's, as the store gives them (``arena.events.get(id)``),
    from version 1 to the last. Raises :class:`SheetError` when they are not one
    tournament's history from its creation, or (without ``unended``) when it has not
    ended."""
    wanted = UUID(str(tournament_id))
    events = list(events)
    if not events:
        raise SheetError(f"tournament {wanted} has no events")
    for expected, evt in enumerate(events, start=1):
        if evt.originator_id != wanted:
            raise SheetError(
                f"the event at position {expected} is of {evt.originator_id}, not of "
                f"tournament {wanted}"
            )
        if evt.originator_version != expected:
            raise SheetError(
                f"the events of tournament {wanted} are not versions 1 to {len(events)}: "
                f"version {evt.originator_version} is at position {expected}"
            )
        if not is_tournament_event(type(evt)):
            raise SheetError(
                f"the event at version {expected} ({type(evt).__name__}) is not a tournament's"
            )
    if type(events[0]) is not Tournament.Created:
        raise SheetError(f"{wanted} does not begin with a tournament's creation")
    if not unended and not is_final(events[-1]):
        raise SheetError(
            f"tournament {wanted} has not ended: it has no result sheet yet (and its "
            "events still hold the secret seed)"
        )
    game = str(vars(events[0])["game"])
    lines = [dumps(sheet_header(wanted, game, len(events), now), 0)]
    try:
        lines += [dumps(sheet_line(evt), evt.originator_version) for evt in events]
    except LineError as exc:
        raise SheetError(str(exc)) from exc
    return lines


def sheet_document(
    tournament_id: UUID | str,
    events: Sequence[Any],
    now: datetime | None = None,
    *,
    unended: bool = False,
) -> str:
    """The whole sheet file, one line per event after the header, each ending with a
    newline (see :func:`sheet_lines`)."""
    return "".join(line + "\n" for line in sheet_lines(tournament_id, events, now, unended=unended))
