"""Reading a tournament's result sheet file (:mod:`storage.sheets` writes it).

Nothing in the file is trusted. Each event line is rebuilt as the event of the class its
topic names, looked up among the tournament's own event classes only
(:func:`domain.kernel.topics.chained_event_class`): a line naming a match's event, or
anything else, is refused, with nothing imported; so is a creation that names another
aggregate than the tournament. Every field of a line is then checked: the line must be
exactly the one :func:`storage.sheets.sheet_line` writes for the event it rebuilds, so
that no field (a view, a name, an extra key) can say what the hashed fields do not. The
header's claims (the tournament's id, its game, the count of events, the time of
export) are held to the lines by ``tournament verify`` (:mod:`replay.tournament_checks`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from domain.kernel.topics import UnknownTopic, chained_aggregate_class, chained_event_class
from domain.tournament import Tournament
from replay.bundle import file_header, rebuild, record_of_line
from replay.store import Record, ReplayError
from storage.sheets import FORMAT, is_tournament_event, sheet_line


@dataclass(frozen=True)
class LineProblem:
    """A line that is not what the sheet's writer gives for its event: at the event's
    version (or the line's place), why."""

    version: int
    reason: str


@dataclass(frozen=True)
class SheetFile:
    path: Path
    header: dict[str, Any]
    tournament_id: UUID
    records: list[Record]
    problems: list[LineProblem] = field(default_factory=list)


def tournament_event_class(topic: object) -> type:
    """The tournament's event class ``topic`` names; any other is refused."""
    cls = chained_event_class(topic)
    if not is_tournament_event(cls):
        raise UnknownTopic(f"{str(topic)[:120]!r} is not an event of a tournament: refused")
    return cls


def check_tournament_fields(fields: dict[str, Any]) -> None:
    """A creation names the tournament's class, and nothing else."""
    topic = fields.get("originator_topic")
    if "originator_topic" in fields and chained_aggregate_class(topic) is not Tournament:
        raise UnknownTopic(f"{str(topic)[:120]!r} is not the tournament: refused")


def rebuild_event(data: dict[str, Any]) -> Any:
    """The tournament event of one decoded line (:func:`replay.bundle.rebuild`)."""
    return rebuild(data, tournament_event_class, check_tournament_fields)


def read_sheet(path: str | Path) -> SheetFile:
    """Read a sheet file. A file that cannot be read, or whose first line is no sheet
    header naming a tournament id, is a ReplayError; a bad event line becomes a Record
    error at its version (as a damaged stored event does), and a line that rebuilds but
    is not what the writer gives for its event a :class:`LineProblem`."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ReplayError(f"cannot read the sheet {file}: {exc.strerror or exc}") from exc
    lines = [line for line in raw.splitlines() if line.strip()]
    if not lines:
        raise ReplayError(f"{file} is empty: not a result sheet")
    head = _header(file, lines[0])
    records: list[Record] = []
    problems: list[LineProblem] = []
    for position, line in enumerate(lines[1:], start=1):
        record = record_of_line(line, len(records) + 1, position, rebuild_event)
        records.append(record)
        if record.event is not None:
            problem = _not_as_written(json.loads(line), record.event)
            if problem:
                problems.append(LineProblem(record.version, f"line {position + 1}: {problem}"))
    if not records:
        raise ReplayError(f"the sheet {file} holds no events")
    return SheetFile(file, head, UUID(str(head["tournament_id"])), records, problems)


def _not_as_written(data: dict[str, Any], event: Any) -> str | None:
    """What differs between a line and the line the writer gives for the event it
    rebuilds, or None."""
    try:
        written = json.loads(json.dumps(sheet_line(event), ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        return f"its event cannot be written again: {exc}"
    if data == written:
        return None
    keys = sorted(set(data) | set(written))
    differ = [k for k in keys if data.get(k, ...) != written.get(k, ...)]
    return "its " + ", ".join(differ) + " is not what the event it holds gives"


def _header(file: Path, line: bytes) -> dict[str, Any]:
    return file_header(file, line, FORMAT, "a result sheet", "tournament_id")
