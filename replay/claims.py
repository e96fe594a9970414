"""What is recorded of a match beside its events, held against its events.

The chain proves that the events read are the ones written, in order, but not that they
are all of them, nor that they are the match the reader was told they are. Two records
say more, and each is checked here as part of the ``chain`` check:

- **a bundle's header** names the match and counts its events: the lines must be events
  of that match, as many as it says (a relabelled header, or lines cut off or added);
- **the store** keeps, beside the match's events, the log of every match created (one
  ``MatchLogged`` event per match, in the match log), the projection of match summaries
  (:mod:`storage.summaries`) and the transparency log of each match's creation and signed
  end (:mod:`domain.kernel.translog`), each written in the same transaction as the events
  they describe. The match must be in the log of matches; its events must reach the
  version its summary records, and a summary that says ``ended`` needs the events that
  ended it; its first event must be the creation its leaf logged, and the event at the
  version of its logged end must be that very ``MatchEnded`` (same digest, same
  signature). So cutting the last events off an ended match, ``MatchEnded`` included,
  fails unless the summary row and the transparency log are both rewritten too; so does
  a match replaced or re-signed, even with the store's own key, unless its leaves are
  rewritten.

A tamperer who rewrites every one of these consistently is not caught here: only an
anchor kept outside the store (a receipt, a checkpoint, a published digest) shows that.

The summary and the leaves are read before the events, so a match that a running server
extends or ends between the reads is never taken for a truncated one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.kernel.translog import Leaf
from replay.audit import Problem, Report
from replay.checkpoints import event_problem, read_leaves, truncation
from replay.store import Record, ReplayError, is_end
from storage.arena import Arena
from storage.summaries import Summary

#: How the claims name the bundle's header and the store in messages.
BUNDLE_HEADER = "the bundle's header"


@dataclass(frozen=True)
class Claims:
    """What one record beside the events says of the match (None: it says nothing of
    that)."""

    #: Who says it, for messages: "the bundle's header", "the store".
    source: str
    #: The match the events must be of.
    match_id: UUID | None = None
    #: How many events there must be, exactly (a bundle's header).
    events: int | None = None
    #: The store's summary of the match; ``summarised`` False: the store has none.
    summary: Summary | None = None
    summarised: bool | None = None
    #: Whether the store's match log lists the match (None: not known).
    logged: bool | None = None
    #: The log position of the match, when known.
    position: int | None = None
    #: Why the store's records could not be compared, if they could not.
    unreadable: str | None = None
    #: The leaves the store's transparency log holds of the match, each with its index
    #: in the log (None: not known, as for a bundle).
    leaves: tuple[tuple[int, Leaf], ...] | None = None
    #: Why the transparency log was not read whole (a gap in it, or it fails), if so.
    log_note: str | None = None


#: A match's leaves in the store's transparency log, each with its index.
MatchLeaves = dict[UUID, tuple[tuple[int, Leaf], ...]]


def bundle_claims(header: dict[str, Any], match_id: UUID) -> Claims:
    events = header.get("events")
    count = events if isinstance(events, int) and not isinstance(events, bool) else -1
    return Claims(BUNDLE_HEADER, match_id=match_id, events=count)


def store_claims(arena: Arena, match_id: UUID) -> Claims:
    """The store's summary row of the match, whether its log lists it, and the match's
    leaves in the transparency log. Read before the match's events (see the module
    docstring)."""
    leaves, log_note = logged_leaves(arena)
    logged_of = leaves.get(match_id, ())
    try:
        summary = arena.summaries.select_summary(match_id)
        logged: bool | None = None
        position = None
        if summary is not None:
            at = (summary.position or 1) - 1
            entry = next(iter(arena.logged_matches(after=at, limit=1)), None)
            logged = entry is not None and entry.match_id == match_id
            position = summary.position
        if not logged:
            found = next((e for e in arena.logged_matches() if e.match_id == match_id), None)
            logged = found is not None
            position = found.originator_version if found is not None else position
    except Exception as exc:  # an old store without the table, a store that fails
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Claims(
            "the store",
            match_id=match_id,
            unreadable=reason,
            leaves=logged_of,
            log_note=log_note,
        )
    return Claims(
        "the store",
        match_id=match_id,
        summary=summary,
        summarised=summary is not None,
        logged=logged,
        position=position,
        leaves=logged_of,
        log_note=log_note,
    )


def logged_leaves(arena: Arena) -> tuple[MatchLeaves, str | None]:
    """The leaves of the store's transparency log by match, up to its first gap, and
    why the log was not read whole (None when it was): one reading serves ``verify
    --all``. A store written before the log has none: its matches give no leaf."""
    try:
        leaves, gap = read_leaves(arena)
    except ReplayError as exc:
        return {}, f"{exc}: the events are not compared with it"
    found: dict[UUID, list[tuple[int, Leaf]]] = {}
    for index, leaf in enumerate(leaves):
        found.setdefault(leaf.match_id, []).append((index, leaf))
    note = None if gap is None else f"{gap}: the events are compared with the leaves before it"
    return {match_id: tuple(each) for match_id, each in found.items()}, note


#: Summary rows read at a time by ``verify --all`` and ``list``.
SUMMARY_PAGE = 1000


def all_summaries(arena: Arena) -> dict[UUID, Summary] | None:
    """Every row of the store's summary of matches, by match id; None when they cannot
    be read (a store written before summaries existed, read without creating tables)."""
    rows: dict[UUID, Summary] = {}
    after = 0
    try:
        while True:
            page = arena.list_summaries(after, SUMMARY_PAGE)
            rows.update((s.match_id, s) for s in page)
            if len(page) < SUMMARY_PAGE:
                return rows
            after = page[-1].position or after + len(page)
    except Exception:
        return None


def summary_problem(
    summary: Summary | None,
    records: list[Record],
    leaves: tuple[tuple[int, Leaf], ...] = (),
) -> str | None:
    """Why ``records`` disagree with the store's summary of their match, or with its
    ``leaves`` in the transparency log, if they do (``list``: a match cut short is not
    shown as merely "playing", even with its summary row rewritten)."""
    report = Report(events=len(records), digest=None)
    if summary is not None:
        _check_summary(summary, records, records[-1].version if records else 0, report)
    _check_leaves(Claims("the store", leaves=leaves), records, report)
    if report.ok:
        return None
    return f"version {report.first_bad_version}: {report.problems[0].reason}"


def check_claims(claims: Claims, records: list[Record], report: Report) -> None:
    """Add to ``report`` (as ``chain`` problems) every way the events disagree with
    ``claims``."""
    _check_records(claims, records, report)
    _check_leaves(claims, records, report)


def _check_records(claims: Claims, records: list[Record], report: Report) -> None:
    """The events against the bundle's header, or the store's log of matches and its
    summary of the match."""
    problems = report.problems
    if claims.unreadable is not None:
        report.notes.append(
            f"the store's log and summary of this match could not be read ({claims.unreadable}): "
            "the events are not compared with them"
        )
        return
    if claims.match_id is not None:
        other = next((r for r in records if _match_of(r) not in (None, claims.match_id)), None)
        if other is not None:
            problems.append(
                Problem(
                    other.version,
                    f"{claims.source} names match {claims.match_id}, but the event at version "
                    f"{other.version} is of match {other.event.originator_id}: the header and "
                    "the events disagree",
                )
            )
    last = records[-1].version if records else 0
    if claims.events is not None:
        _check_count(claims, records, report)
    if claims.logged is False:
        problems.append(
            Problem(
                1,
                "the store's log of matches has no entry for this match (its MatchLogged "
                "record was deleted): the store's list of matches does not show it",
            )
        )
    if claims.summarised is False:
        problems.append(
            Problem(
                1,
                "the store's summary of matches has no row for this match: what the store "
                "recorded of its status and length cannot be compared (a store written before "
                "summaries existed needs `totem rebuild-summaries`)",
            )
        )
    if claims.summary is not None:
        _check_summary(claims.summary, records, last, report)


def _check_leaves(claims: Claims, records: list[Record], report: Report) -> None:
    """The match's events against the leaves the store's transparency log holds of it:
    its first event is the creation logged, and the event at the version of its logged
    end is that ``MatchEnded`` (see the module docstring)."""
    if claims.log_note is not None:
        report.notes.append(claims.log_note)
    last = records[-1].version if records else 0
    at = {r.version: r for r in records}
    for index, leaf in claims.leaves or ():
        where = f"leaf {index} of the store's transparency log, {leaf.describe()}"
        record = at.get(leaf.version)
        if record is None:
            if leaf.version > last:
                cut = f"missing: {where}: {truncation(last, leaf)}"
                report.problems.append(Problem(last + 1, cut))
            continue  # a gap in the versions: the chain names it
        if record.event is None:
            continue  # an event that cannot be read: the chain names it
        changed = event_problem(leaf, record.event)
        if changed is not None:
            report.problems.append(Problem(leaf.version, f"{where}: {changed}"))


def _match_of(record: Record) -> UUID | None:
    return getattr(record.event, "originator_id", None) if record.event is not None else None


def _check_count(claims: Claims, records: list[Record], report: Report) -> None:
    said, count = claims.events, len(records)
    assert said is not None
    if said < 0:
        report.problems.append(Problem(1, f"{claims.source} gives no count of events"))
    elif count < said:
        versions = {r.version for r in records}
        report.problems.append(
            Problem(
                next(v for v in range(1, said + 1) if v not in versions),
                f"missing: {claims.source} counts {said} events, but the bundle holds {count}: "
                "lines were removed",
            )
        )
    elif count > said:
        report.problems.append(
            Problem(
                said + 1,
                f"{claims.source} counts {said} events, but the bundle holds {count}: lines "
                "were added, or the count was changed",
            )
        )


def _check_summary(summary: Summary, records: list[Record], last: int, report: Report) -> None:
    status = summary.status + (f" ({summary.end_reason})" if summary.end_reason else "")
    if summary.version > last:
        report.problems.append(
            Problem(
                last + 1,
                f"missing: the store's summary of this match records {summary.version} events, "
                f"status {status}, but the store holds events up to version {last} only: the "
                "last events were removed",
            )
        )
        return
    ended = bool(records) and is_end(records[-1].topic)
    if summary.status == "ended" and not ended:
        report.problems.append(
            Problem(
                last,
                f"the store's summary of this match says it {status} at version "
                f"{summary.version}, but its last event (version {last}) does not end it: "
                "the events that ended it were removed or replaced",
            )
        )
    elif summary.status == "ended" and last > summary.version:
        report.problems.append(
            Problem(
                summary.version + 1,
                f"the store's summary of this match says it ended at version "
                f"{summary.version}, but the store holds events up to version {last}: events "
                "were added after its end",
            )
        )
