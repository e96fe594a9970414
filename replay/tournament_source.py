"""Where a tournament's events come from: a result sheet file, or the event store.

``tournament verify``, ``show`` and ``export`` take SHEET|ID: an existing file (or a name
ending in ``.jsonl``) is a sheet, anything else a tournament id, read from the store
of ``--db`` as the other commands read matches. A stored event that is not one of the
tournament's (another aggregate's written under its id) is a record that cannot be
read, reported at its version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from replay.sheet_file import LineProblem, read_sheet
from replay.source import is_bundle
from replay.store import Record, ReplayError, open_arena, read_records
from storage.sheets import is_tournament_event


@dataclass(frozen=True)
class LoadedTournament:
    tournament_id: UUID
    records: list[Record]
    #: Where the records were read, for messages: ``sheet FILE`` or ``store``.
    source: str
    #: A sheet's header (None: read from the store).
    header: dict[str, Any] | None = None
    #: Lines of a sheet that are not what the writer gives for their events.
    problems: list[LineProblem] = field(default_factory=list)

    @property
    def from_sheet(self) -> bool:
        return self.header is not None

    def events(self) -> list[Any] | None:
        """The events in version order, or None when one is missing or unreadable."""
        if any(r.event is None for r in self.records):
            return None
        if [r.version for r in self.records] != list(range(1, len(self.records) + 1)):
            return None
        return [r.event for r in self.records]


def tournament_id(text: str) -> UUID:
    try:
        return UUID(text.strip())
    except ValueError:
        raise ReplayError(
            f"{text!r} is neither a sheet file nor a tournament id (a whole UUID)"
        ) from None


def load_tournament(db: str, text: str) -> LoadedTournament:
    """The records of SHEET|ID (see the module's docstring)."""
    if is_bundle(text):
        path = Path(text)
        if not path.is_file():
            raise ReplayError(f"no result sheet at {path}: not an existing file")
        sheet = read_sheet(path)
        return LoadedTournament(
            sheet.tournament_id, sheet.records, f"sheet {path}", sheet.header, sheet.problems
        )
    wanted = tournament_id(text)
    with open_arena(db) as arena:
        return LoadedTournament(wanted, stored_tournament(arena, wanted), "store")


def stored_tournament(arena: Any, wanted: UUID) -> list[Record]:
    """A tournament's stored records, each decoded on its own; one that decodes as
    anything but a tournament's event is kept as unreadable."""
    try:
        records = read_records(arena, wanted)
    except ReplayError:
        raise ReplayError(f"no tournament {wanted} in this store") from None
    out = []
    for record in records:
        if record.event is not None and not is_tournament_event(type(record.event)):
            name = type(record.event).__name__
            record = Record(
                record.version, record.topic, record.state, error=f"{name} is not a tournament's"
            )
        out.append(record)
    return out
