"""Reading the event store: opening it read-only, finding matches, decoding their events.

Events are read as raw records and decoded one at a time, so that a record too damaged
to decode is reported at its own version instead of hiding the whole match.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.kernel.match import MatchAggregate
from domain.kernel.refusals import RefusalLog
from domain.kernel.topics import UnknownTopic, chained_event_class
from storage.arena import (
    MATCH_LOG_ID,
    TOURNAMENT_LOG_ID,
    TRANSPARENCY_LOG_ID,
    Arena,
    MatchLogged,
    store_env,
)
from storage.sheets import is_tournament_event

HEX_DIGITS = frozenset("0123456789abcdef")


class ReplayError(Exception):
    """Something the user must hear about in one line: no traceback, exit status 2."""


def read_only_env(db: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The store settings of ``totem serve --db DB``, opened so that nothing is written.

    A SQLite file must exist (it is opened read-only, never created); PostgreSQL is
    selected exactly as the server selects it. Tables are never created.
    """
    env = store_env(db, environ)
    env["CREATE_TABLE"] = "no"
    if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        path = Path(env["SQLITE_DBNAME"])
        if not path.exists():
            raise ReplayError(f"no event store at {path}: the file does not exist (see --db)")
        if not path.is_file():
            raise ReplayError(f"no event store at {path}: not a file (see --db)")
        env["SQLITE_DBNAME"] = path.resolve().as_uri() + "?mode=ro"
    return env


def describe_store(env: Mapping[str, str]) -> str:
    if env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite":
        return str(env.get("SQLITE_DBNAME", "")).removeprefix("file://").removesuffix("?mode=ro")
    return "PostgreSQL"


@contextmanager
def open_arena(db: str, environ: Mapping[str, str] | None = None) -> Iterator[Arena]:
    """The store, read-only, closed on exit. Any failure to reach it is a ReplayError."""
    env = read_only_env(db, environ)
    try:
        arena = Arena(env)
    except Exception as exc:  # the library raises many kinds; each means "cannot open"
        raise ReplayError(f"cannot open the event store {describe_store(env)}: {exc}") from exc
    try:
        yield arena
    finally:
        arena.close()


def logged_matches(arena: Arena) -> list[MatchLogged]:
    try:
        return list(arena.logged_matches())
    except Exception as exc:
        raise ReplayError(f"cannot read the list of matches: {_reason(exc)}") from exc


#: Events read at a time when every match id of the store is listed.
ID_PAGE = 1000


#: Streams of the store that are no match: the log of matches, the transparency log, the
#: log of tournaments.
NOT_MATCHES = frozenset({MATCH_LOG_ID, TRANSPARENCY_LOG_ID, TOURNAMENT_LOG_ID})
#: Events of a match's refusal log (:mod:`domain.kernel.refusals`): a stream beside the
#: match, no match of its own.
REFUSAL_TOPICS = frozenset(
    get_topic(getattr(RefusalLog, name)) for name in ("Opened", "Refused", "NotKept")
)


@lru_cache(maxsize=256)
def is_tournament_topic(topic: str) -> bool:
    """Whether a stored event's topic names a tournament's event: a tournament shares the
    store with the matches, and is none."""
    try:
        return is_tournament_event(chained_event_class(topic))
    except UnknownTopic:
        return False


def stored_match_ids(arena: Arena) -> dict[UUID, int]:
    """Every match that has events in the store, whatever its log says, with its number
    of stored events: read from the store's notification log, in pages. The store's own
    logs, the matches' refusal logs and the tournaments are not matches."""
    found: dict[UUID, int] = {}
    start = 1
    try:
        while True:
            page = arena.recorder.select_notifications(start, ID_PAGE)
            for item in page:
                if (
                    item.originator_id not in NOT_MATCHES
                    and item.topic not in REFUSAL_TOPICS
                    and not is_tournament_topic(item.topic)
                ):
                    match_id = UUID(str(item.originator_id))
                    found[match_id] = found.get(match_id, 0) + 1
            if len(page) < ID_PAGE:
                return found
            start = page[-1].id + 1
    except Exception as exc:
        raise ReplayError(f"cannot read the store's events: {_reason(exc)}") from exc


def resolve_match(arena: Arena, text: str) -> UUID:
    """The match whose id is ``text`` or begins with it (dashes and case do not matter)."""
    wanted = text.strip().lower()
    try:
        return UUID(wanted)
    except ValueError:
        pass
    digits = wanted.replace("-", "")
    if not digits or not set(digits) <= HEX_DIGITS:
        raise ReplayError(f"{text!r} is not a match id or the beginning of one")
    found = [e.match_id for e in logged_matches(arena) if e.match_id.hex.startswith(digits)]
    if not found:
        raise ReplayError(f"no match id begins with {text!r}")
    if len(found) > 1:
        shown = ", ".join(str(m) for m in found[:5]) + (", ..." if len(found) > 5 else "")
        raise ReplayError(
            f"match id prefix {text!r} is ambiguous: {len(found)} matches ({shown}); "
            "give more characters"
        )
    return found[0]


@dataclass(frozen=True)
class Record:
    """One stored event: decoded when it could be, else why it could not."""

    version: int
    topic: str
    state: bytes
    event: Any = None
    error: str | None = None


def read_records(arena: Arena, match_id: UUID, upto: int | None = None) -> list[Record]:
    """Every stored event of a match in version order (up to version ``upto`` if given:
    the later ones are not even read), each decoded on its own."""
    try:
        stored = arena.recorder.select_events(match_id, lte=upto)
    except Exception as exc:
        raise ReplayError(f"cannot read the events of match {match_id}: {_reason(exc)}") from exc
    if not stored:
        raise ReplayError(f"no match {match_id} in this store")
    records = []
    for item in stored:
        try:
            event = arena.mapper.to_domain_event(item)
        except Exception as exc:
            records.append(
                Record(item.originator_version, item.topic, bytes(item.state), error=_reason(exc))
            )
        else:
            records.append(Record(item.originator_version, item.topic, bytes(item.state), event))
    return records


def is_end(topic: str) -> bool:
    """Whether the event of ``topic`` ends a match (it is always its last)."""
    return topic.rsplit(".", 1)[-1] == "MatchEnded"


def last_event(arena: Arena, match_id: UUID) -> tuple[int, str]:
    """The version and topic of a match's last stored event, read alone."""
    try:
        last = arena.recorder.select_events(match_id, desc=True, limit=1)
    except Exception as exc:
        raise ReplayError(f"cannot read the events of match {match_id}: {_reason(exc)}") from exc
    if not last:
        raise ReplayError(f"no match {match_id} in this store")
    return last[0].originator_version, last[0].topic


def apply(match: MatchAggregate | None, event: Any) -> MatchAggregate:
    """Apply one stored event to the state (``None`` before the first)."""
    try:
        result = event.mutate(match)
    except Exception as exc:
        version = getattr(event, "originator_version", "?")
        raise ReplayError(
            f"the event at version {version} cannot be applied: {_reason(exc)}; "
            "run `totem-replay verify` for details"
        ) from exc
    if not isinstance(result, MatchAggregate):
        raise ReplayError(
            f"the events of this id do not build a match (got {type(result).__name__})"
        )
    return result


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0]
    return first if len(first) <= 300 else first[:297] + "..."


def walk(records: list[Record], upto: int | None = None) -> Iterator[tuple[Any, MatchAggregate]]:
    """Step through the match: each event with the state it leads to, one event applied
    at a time. Raises ReplayError on reaching a gap or a damaged record."""
    match: MatchAggregate | None = None
    for event in _checked(records, upto):
        match = apply(match, event)
        yield event, match


def _checked(records: list[Record], upto: int | None) -> Iterator[Any]:
    for expected, record in enumerate(records, start=1):
        if upto is not None and record.version > upto:
            return
        if record.version != expected:
            raise ReplayError(
                f"event version {expected} is missing from the store; "
                "run `totem-replay verify` for details"
            )
        if record.event is None:
            raise ReplayError(
                f"the event at version {record.version} cannot be read ({record.error}); "
                "run `totem-replay verify` for details"
            )
        yield record.event
