"""Audit bundles: one match in one portable JSON Lines file, verifiable without the store.

The first line is a header (``format``, ``match_id``, ``game``, ``events``,
``refusals``, ``exported_at``); then one line per event: the ``events --json`` export
(:func:`replay.export.event_record`) plus the event's ``topic``, which names its class,
and ``unhashed``: the server's signature over the match digest and its public key, where
the event carries them (written by :mod:`storage.event_lines`, as a tournament's result
sheet is); then one line per event of the match's refusal log
(:func:`refusal_line`, ``"log": "refusals"``), as many as the header's ``refusals``,
rebuilt as one of that log's three classes only and read by
:func:`replay.refusals.kept_refusals`, which checks their chain and count.
With the class, the hashed fields and the chain metadata, :func:`read_bundle` rebuilds
the very domain event the store holds, so ``verify`` recomputes the same digests and the
state is rebuilt the same way. Nothing in a line is trusted: a changed field breaks its
digest, a removed or moved line breaks the chain, exactly as in a tampered store. A bundle
never chooses code: its topics are looked up among the event classes of the games
(:mod:`domain.kernel.topics`), and a line naming anything else is refused, with nothing
imported. The header's match id and event count are bound to the lines by ``verify``
(:mod:`replay.claims`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.kernel.chain import NOT_HASHED, UPCAST
from domain.kernel.match import MatchAggregate
from domain.kernel.refusals import RefusalLog
from domain.kernel.topics import check_fields, event_class
from replay.export import referee_view
from replay.store import Record, ReplayError
from storage import event_lines
from storage.event_lines import METADATA, UNHASHED

FORMAT = "totem-audit-bundle/1"

#: The only classes a refusal line may name, by topic: nothing else is rebuilt.
REFUSAL_CLASSES: dict[str, type] = {
    get_topic(cls): cls
    for cls in (getattr(RefusalLog, name) for name in ("Opened", "Refused", "NotKept"))
}


@dataclass(frozen=True)
class RefusalLines:
    """A bundle's refusal lines: the events of the match's refusal log, each rebuilt on
    its own (a Record, as an event line is), and how many the header says there are
    (-1 when it gives no number)."""

    count: int
    records: list[Record]


@dataclass(frozen=True)
class Bundle:
    header: dict[str, Any]
    match_id: UUID
    records: list[Record]
    #: None when the header has no ``refusals`` count: a bundle exported before bundles
    #: carried the refused commands, which are then not in the evidence.
    refusals: RefusalLines | None = None


def header(
    match: MatchAggregate, events: int, now: datetime | None = None, refusals: int = 0
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "match_id": str(match.id),
        "game": type(match).GAME,
        "events": events,
        "refusals": refusals,
        "exported_at": (now or datetime.now(UTC)).isoformat(),
    }


def event_line(match: MatchAggregate, event: Any) -> dict[str, Any]:
    """The bundle line of one event; ``match`` is the state the event has been applied to.
    Written by :func:`storage.event_lines.event_line` with the game's referee view:
    ``unhashed`` carries the signature and its key, so the bundle alone proves who
    vouched for the match."""
    return event_lines.event_line(event, *referee_view(match, event))


#: The ``log`` of a refusal line, which tells it from an event line.
REFUSAL_LOG = "refusals"


def refusal_line(match_id: UUID, event: Any) -> dict[str, Any]:
    """The bundle line of one event of the match's refusal log: as an event line, its
    place in the log's chain, its class and its fields exactly as hashed, whole (an
    export is the referee's view, who sees every refusal whole, ``refusal_view``)."""
    data = vars(event)
    return {
        "log": REFUSAL_LOG,
        "match_id": str(match_id),
        "log_id": str(event.originator_id),
        "version": event.originator_version,
        "name": type(event).__name__,
        "timestamp": event.timestamp.isoformat(),
        "digest": event.digest,
        "prev_digest": event.prev_digest,
        "hashed": {k: v for k, v in data.items() if k not in METADATA and k not in NOT_HASHED},
        "topic": get_topic(type(event)),
    }


def bundle_lines(
    steps: Iterable[tuple[Any, MatchAggregate]], events: int, refusals: Sequence[Any] = ()
) -> Iterable[str]:
    """The bundle's lines (without newlines) for every ``(event, state after it)``, read
    as they come (the state is one aggregate, changed in place by each event), then one
    line per event of the match's refusal log (``refusals``), counted in the header."""
    first = True
    match: MatchAggregate | None = None
    for event, match in steps:
        if first:
            yield _dumps(header(match, events, refusals=len(refusals)), 0)
            first = False
        yield _dumps(event_line(match, event), event.originator_version)
    if match is not None:
        for event in refusals:
            yield _dumps(refusal_line(match.id, event), event.originator_version)


def _dumps(obj: dict[str, Any], version: int) -> str:
    try:
        return event_lines.dumps(obj, version)
    except event_lines.LineError as exc:
        raise ReplayError(str(exc)) from exc


def read_bundle(path: str | Path) -> list[Record]:
    """The records of a bundle file, each event rebuilt on its own (see :func:`open_bundle`)."""
    return open_bundle(path).records


def open_bundle(path: str | Path) -> Bundle:
    """Read a bundle. A bad header or an unreadable file is a ReplayError; a bad event
    line becomes a Record error at its version, as a damaged stored event does."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ReplayError(f"cannot read the bundle {file}: {exc.strerror or exc}") from exc
    lines = [line for line in raw.splitlines() if line.strip()]
    if not lines:
        raise ReplayError(f"{file} is empty: not an audit bundle")
    head = _header(file, lines[0])
    match_id = UUID(head["match_id"])
    records: list[Record] = []
    refused: list[Record] = []
    for position, line in enumerate(lines[1:], start=1):
        if b'"log"' in line and _is_refusal_line(line):
            refused.append(_refusal_record(line, position, len(refused) + 1))
        else:
            records.append(record_of_line(line, len(records) + 1, position))
    if not records:
        raise ReplayError(f"the bundle {file} holds no events")
    said = head.get("refusals")
    if said is None and not refused:
        return Bundle(head, match_id, records)
    count = said if isinstance(said, int) and not isinstance(said, bool) else -1
    return Bundle(head, match_id, records, RefusalLines(count, refused))


def _is_refusal_line(line: bytes) -> bool:
    try:
        data = json.loads(line)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("log") == REFUSAL_LOG


def _refusal_record(line: bytes, position: int, number: int) -> Record:
    """One refusal line as a Record of the refusal log's event; ``number`` (its place
    among the refusal lines) stands in for the version when the line does not say it."""
    data = json.loads(line)
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        return Record(number, "", line, error=f"line {position + 1} has no integer version")
    topic = str(data.get("topic") or "")
    try:
        cls = REFUSAL_CLASSES[topic]
        hashed = data["hashed"]
        if not isinstance(hashed, dict):
            raise ValueError("no hashed fields")
        fields = dict(hashed)
        fields.update(
            originator_id=UUID(str(data.get("log_id"))),
            originator_version=version,
            timestamp=datetime.fromisoformat(str(data.get("timestamp"))),
            prev_digest=data.get("prev_digest"),
            digest=data.get("digest"),
        )
    except KeyError as exc:
        reason = f"{exc.args[0]!r} is not an event of a refusal log: refused, nothing imported"
        return Record(version, topic, line, error=f"line {position + 1}: {reason}")
    except (TypeError, ValueError) as exc:
        return Record(version, topic, line, error=f"line {position + 1}: {exc}")
    event: Any = object.__new__(cls)
    object.__setattr__(event, "__dict__", fields)
    return Record(version, topic, line, event)


def file_header(file: Path, line: bytes, form: str, kind: str, id_key: str) -> dict[str, Any]:
    """The first line of a file of lines (an audit bundle, a result sheet): a JSON object
    of format ``form`` naming a valid id under ``id_key``; refused in words otherwise."""
    try:
        head = json.loads(line)
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("format") != form:
        raise ReplayError(f"{file} is not {kind}: its first line is no {form} header")
    try:
        UUID(str(head.get(id_key)))
    except ValueError:
        what = id_key.replace("_", " ")
        raise ReplayError(f"{file} names no valid {what} in its header") from None
    return head


def _header(file: Path, line: bytes) -> dict[str, Any]:
    return file_header(file, line, FORMAT, "an audit bundle", "match_id")


#: Rebuilds the domain event of one decoded line (:func:`rebuild` for a match's).
Rebuild = Callable[[dict[str, Any]], Any]


def record_of_line(
    line: bytes, number: int, position: int, decode: Rebuild | None = None
) -> Record:
    """One event line as a Record, its event rebuilt by ``decode`` (a match's event by
    :func:`rebuild` when None). ``number`` (its place among the event lines) stands in
    for the version when the line does not say it; ``position`` is its place after the
    header, for messages."""
    decode = decode or rebuild
    try:
        data = json.loads(line)
    except ValueError as exc:
        return Record(number, "", line, error=f"line {position + 1} is not JSON: {exc}")
    if not isinstance(data, dict):
        return Record(number, "", line, error=f"line {position + 1} is not a JSON object")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        return Record(number, "", line, error=f"line {position + 1} has no integer version")
    topic = data.get("topic")
    try:
        event = decode(data)
    except Exception as exc:  # every way a line can be wrong means "cannot be decoded"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Record(version, str(topic or ""), line, error=f"line {position + 1}: {reason}")
    return Record(version, str(topic), line, event)


def rebuild(
    data: dict[str, Any],
    classes: Callable[[object], type] = event_class,
    check: Callable[[dict[str, Any]], None] = check_fields,
) -> Any:
    """The domain event of a bundle line, as the store's mapper would have decoded it:
    an object of the topic's class whose fields are the hashed fields plus the metadata.
    The class is one ``classes`` knows (by default the games',
    :func:`domain.kernel.topics.event_class`), and ``check`` holds the fields to it (by
    default: the match class a creation names is a game's): nothing the line names is
    imported. A tournament's sheet line is rebuilt with its own two
    (:mod:`replay.sheet_file`)."""
    topic = data.get("topic")
    if not isinstance(topic, str):
        raise ValueError("no topic naming the event's class")
    cls = classes(topic)
    hashed = data.get("hashed")
    if not isinstance(hashed, dict):
        raise ValueError("no hashed fields")
    check(hashed)
    timestamp = datetime.fromisoformat(str(data.get("timestamp")))
    unhashed = data.get("unhashed", {})
    if not isinstance(unhashed, dict) or not set(unhashed) <= UNHASHED:
        raise ValueError("unhashed holds fields other than the signature and its key")
    fields = dict(hashed) | unhashed
    filled = data.get("upcast") or []
    if not isinstance(filled, list) or not all(isinstance(f, str) for f in filled):
        raise ValueError("upcast is not a list of field names")
    if filled:  # recorded before these fields existed: as the store's upcaster gives them
        fields = {name: None for name in filled} | fields | {UPCAST: filled}
    fields.update(
        originator_id=UUID(str(data.get("match_id"))),
        originator_version=data["version"],
        timestamp=timestamp,
        prev_digest=data.get("prev_digest"),
        digest=data.get("digest"),
    )
    event: Any = object.__new__(cls)
    object.__setattr__(event, "__dict__", fields)
    return event
