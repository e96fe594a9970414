"""A match's refused commands, read from the store for a judge (docs/replay.md).

The server keeps each refused command of a seated player or the referee in the match's
refusal log (:mod:`domain.kernel.refusals`): receive number, the match's version then,
seat, the command in short, the status, rule id and message, the receive stamp. This
module reads that log, checks its hash chain, and places each refusal among the match's
events (:func:`refusals_at`), for ``events`` and for anyone ruling on a race.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any
from uuid import UUID

import click
from eventsourcing.utils import get_topic
from rich.text import Text

from domain.kernel.chain import GENESIS_DIGEST, stored_event_digest
from domain.kernel.refusals import Refusal, RefusalLog, refusal_log_id, refusal_view
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.views import Viewer
from replay import format as fmt
from replay.source import Loaded
from replay.store import Record, ReplayError, open_arena
from storage.arena import Arena

#: The only classes a refusal log's stored events may name: nothing else is decoded.
TOPICS = frozenset(
    get_topic(getattr(RefusalLog, name)) for name in ("Opened", "Refused", "NotKept")
)
#: The class a log's ``Opened`` must name: nothing else is created.
LOG_TOPIC = get_topic(RefusalLog)


@dataclass(frozen=True)
class Refusals:
    """What a match's refusal log holds, and whether its chain holds."""

    match_id: UUID
    #: Every refusal kept, in receive order.
    refusals: list[Refusal] = field(default_factory=list)
    #: Refused commands of each seat (None: the referee) beyond its quota, only counted.
    not_kept: dict[int | None, int] = field(default_factory=dict)
    #: Records kept per seat at most; None when the match has no refusal log.
    quota: int | None = None
    #: What is wrong with the log's chain, first problem first; empty when it holds.
    problems: list[str] = field(default_factory=list)

    def at(self, version: int) -> list[Refusal]:
        """The refusals made while the match was at ``version``, in receive order."""
        return [r for r in self.refusals if r.version == version]


def read_refusals(arena: Arena, match_id: UUID) -> Refusals:
    """The refused commands of ``match_id`` as its refusal log holds them, its hash chain
    checked: each event's digest recomputed and linked to the one before, versions
    without gaps, every event one of the log's own classes (no other topic is even
    decoded), and the log naming this match. A log whose chain fails is still read up to
    the first problem, which :attr:`Refusals.problems` names; a match that refused
    nothing has none (empty :class:`Refusals`, ``quota`` None).

    This is the seam for evidence tools (``events``, ``explain``, ``disputes``): a
    refusal's ``version`` says after which event it came, its ``receive`` number where
    it falls among the numbered stamps of the match's events (``ReceiveStamp.receive``)."""
    log_id = refusal_log_id(match_id)
    try:
        stored = arena.recorder.select_events(log_id)
    except Exception as exc:
        raise ReplayError(f"cannot read the refused commands of match {match_id}: {exc}") from exc
    items = [
        (item.originator_version, item.topic, partial(arena.mapper.to_domain_event, item))
        for item in stored
    ]
    return read_log(match_id, items)


#: One event of a refusal log to read: its version, its topic, and how to decode it
#: (called only once the topic is found to be one of the log's own).
LogItem = tuple[int, str, Callable[[], Any]]


def read_log(match_id: UUID, items: Sequence[LogItem]) -> Refusals:
    """A refusal log from its events, wherever they were read (the store, a bundle's
    refusal lines), its chain checked as :func:`read_refusals` says."""
    if not items:
        return Refusals(match_id)
    log: Any = None
    problems: list[str] = []
    prev = GENESIS_DIGEST
    for expected, (version, topic, decode) in enumerate(items, start=1):
        where = f"refusal log event {version}"
        if version != expected:
            problems.append(f"refusal log event {expected} is missing")
            break
        if topic not in TOPICS:
            problems.append(f"{where} names {topic!r}, not an event of a refusal log")
            break
        try:
            evt: Any = decode()
        except Exception as exc:
            problems.append(f"{where} cannot be read: {exc}")
            break
        if evt.prev_digest != prev or stored_event_digest(evt) != evt.digest:
            problems.append(f"{where} does not match its digest or the event before it")
            break
        if evt.originator_id != refusal_log_id(match_id) or (
            expected == 1
            and (
                getattr(evt, "match_id", None) != str(match_id)
                or getattr(evt, "originator_topic", None) != LOG_TOPIC
            )
        ):
            problems.append(f"{where} opens the refusals of another match")
            break
        log = evt.mutate(log)
        prev = evt.digest
    if log is None:
        return Refusals(match_id, problems=problems)
    return Refusals(match_id, list(log.refusals), dict(log.not_kept), log.quota, problems)


def kept_refusals(db: str, loaded: Loaded) -> Refusals | None:
    """The refused commands kept of the loaded match: its refusal log in the store, or
    the refusal lines of its bundle (their count held to the header's, a problem
    otherwise); None when the match was read from a bundle that holds none (one
    exported before bundles carried them): the refusals are then not in the evidence."""
    if loaded.source == "store":
        return load_refusals(db, loaded.match_id)
    lines = loaded.refusal_lines
    if lines is None:
        return None
    items = [(r.version, r.topic, partial(_decoded, r)) for r in lines.records]
    found = read_log(loaded.match_id, items)
    if lines.count != len(lines.records):
        said = lines.count if lines.count >= 0 else "no number of"
        found.problems.insert(
            0,
            f"the bundle's header counts {said} refusal lines, but the bundle holds "
            f"{len(lines.records)}: lines were removed or added",
        )
    return found


def refusal_events(db: str, loaded: Loaded) -> list[Any]:
    """The events of the loaded match's refusal log, as stored, for an export: from the
    store, or from the bundle being exported again (none when it holds none). Only the
    log's own classes are decoded; a log event that cannot be read stops the export
    (``verify`` and ``events`` say why)."""
    if loaded.source != "store":
        lines = loaded.refusal_lines
        return [r.event for r in lines.records if r.event is not None] if lines else []
    found: list[Any] = []
    with open_arena(db) as arena:
        for item in arena.recorder.select_events(refusal_log_id(loaded.match_id)):
            if item.topic not in TOPICS:
                raise ReplayError(
                    f"the refusal log of match {loaded.match_id} holds an event "
                    f"{item.originator_version} that is not of a refusal log ({item.topic!r}): "
                    "run `totem-replay verify`"
                )
            try:
                found.append(arena.mapper.to_domain_event(item))
            except Exception as exc:
                raise ReplayError(
                    f"the refusal log of match {loaded.match_id} cannot be exported: its "
                    f"event {item.originator_version} cannot be read ({exc})"
                ) from exc
    return found


def _decoded(record: Record) -> Any:
    if record.event is None:
        raise ValueError(record.error or "unreadable")
    return record.event


def load_refusals(db: str, match_id: UUID) -> Refusals:
    """:func:`read_refusals` from the store of ``--db``, opened read-only."""
    with open_arena(db) as arena:
        return read_refusals(arena, match_id)


def numbers_accounted(receives: Iterable[int], refusals: Refusals) -> list[int]:
    """The receive numbers missing below the highest one, given the numbers of the
    match's events (``ReceiveStamp.receive``, 0 where there is none) and its refusals:
    empty when every number from 1 is accounted for."""
    seen = {n for n in receives if n} | {r.receive for r in refusals.refusals}
    return [n for n in range(1, max(seen, default=0) + 1) if n not in seen]


def refusal_line(refusal: Refusal, viewer: Viewer) -> str:
    """One refusal as ``events`` prints it, as ``viewer`` may see it."""
    view = refusal_view(refusal, viewer)
    who = "the referee" if view["seat"] is None else f"seat {view['seat']}"
    why = view["code"] + (f" {view['rule']}" if view["rule"] else "")
    text = f"{who}: {view.get('command', view['action'])}: {why}"
    if "message" in view:
        text += f": {view['message']}"
    return f"{text} {fmt.stamp(fmt.received(view['stamp']))}".rstrip()


def not_kept_line(refusals: Refusals) -> str | None:
    """What ``events`` says of the refusals only counted, if any."""
    if not refusals.not_kept:
        return None
    parts = [
        f"{'the referee' if seat is None else f'seat {seat}'}: {count}"
        for seat, count in sorted(refusals.not_kept.items(), key=lambda i: (i[0] is None, i[0]))
    ]
    return f"more refused commands, not kept (beyond {refusals.quota} per seat): " + ", ".join(
        parts
    )


#: What every command showing refusals says of a bundle that holds none.
NOT_IN_EVIDENCE = (
    "the refused commands are not in the evidence: this bundle holds the match's events "
    "only (it was exported without its refusal log)"
)


class Interleaved:
    """The refusals ``events`` shows among a match's events: each after the event it
    followed (its ``version``), in receive order, as the viewer may see it, from the
    store or from the bundle's refusal lines (a bundle without them: a note says they
    are not in the evidence); with --json, refusals are shown only if asked for, so
    that an audit export stays events."""

    def __init__(
        self,
        db: str,
        loaded: Loaded,
        viewer: Viewer,
        first: int | None,
        as_json: bool,
        wanted: bool,
    ) -> None:
        self.viewer = viewer
        self.first = first or 1
        self.as_json = as_json
        found = kept_refusals(db, loaded) if wanted or not as_json else Refusals(loaded.match_id)
        #: None: read from a bundle that holds no refused commands.
        self.in_evidence = found is not None
        self.kept = found or Refusals(loaded.match_id)
        self._last: int | None = None
        self._out = fmt.console()

    def before(self, version: int) -> None:
        """Event ``version`` is about to be shown: the refusals after the one before."""
        self._show(version - 1)
        self._last = version

    def end(self, last: int | None) -> None:
        """The last event shown was shown; ``last`` is the --to given, if any."""
        if self._last is not None:
            self._show(self._last)
        for problem in self.kept.problems[:1]:
            click.echo(f"warning: the log of refused commands fails: {problem}", err=True)
        if not self.in_evidence and not self.as_json:
            click.echo(f"note: {NOT_IN_EVIDENCE}", err=True)
        if last is not None or not self.kept.not_kept:
            return
        if self.as_json:
            counts = {"referee" if s is None else str(s): n for s, n in self.kept.not_kept.items()}
            click.echo(json.dumps({"not_kept": counts, "quota": self.kept.quota}))
        else:
            self._out.print(Text(not_kept_line(self.kept) or "", style="yellow"))

    def _show(self, version: int) -> None:
        if version < self.first:
            return
        for refusal in self.kept.at(version):
            if self.as_json:
                view = refusal_view(refusal, self.viewer)
                click.echo(json.dumps({"refused": view}, ensure_ascii=False))
                continue
            received = datetime.fromtimestamp(
                ReceiveStamp.from_dict(refusal.stamp).wall_ns / 1e9, UTC
            )
            line = Text(f"{'':>5}  {fmt.when(received)}  ")
            line.append(f"{'REFUSED':<15}", style="bold red")
            line.append(f" {refusal_line(refusal, self.viewer)}")
            self._out.print(line)
