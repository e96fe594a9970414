"""``tournament verify``: every check of a tournament and of the matches its sheet lists.

The tournament's own events (a sheet file's, or the store's):

- ``sheet file`` (a sheet only): the header's claims (its tournament id, game, count of
  events and time of export, and no other key) hold for the lines, and every line is
  what the sheet's writer gives for the event it rebuilds (:mod:`replay.sheet_file`);
- ``chain``, ``pairings``, ``duplicate seeds``, ``seed commitment``, ``result sheet``:
  :func:`domain.tournament.sheet.verify`, the events' versions run 1, 2, 3 … and each is
  a tournament's, the first its creation; a tournament that has not ended has no sheet;
- ``signature``: the server's Ed25519 signature in ``TournamentEnded`` over
  :func:`domain.tournament.sheet.sheet_message`, by the key the sheet names or, with
  ``--key``, by that key only (TO-11.2).

Each match the sheet lists (a voided one too), read from the store:

- ``matches``: it verifies as ``totem-replay verify MATCH`` verifies it
  (:func:`replay.verifying.verify_stored`), its final version and digest are those the
  sheet lists, it is a match of the tournament's game, and a replay's match is a fork
  of the match it replaced (TO-9.4, TO-10.3);
- ``match results``: it has ended, each of its seats was taken with the token of the
  table's entrant at that seat (TO-8.2), and the places it gave are those the tournament
  recorded for the table (:mod:`domain.tournament.match_places`);
- ``duplicate luck``: with duplicate tables, its options hold the luck its round's seed
  gives: ``duplicate_luck(options, round seed, seats) == options`` (TO-12.1).

Each problem is a :class:`Finding` of one check, at a position: a version of the
tournament, or a round, table and match.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from domain.games import GAMES
from domain.kernel.match import MatchAggregate, MatchStatus, event_name
from domain.tournament import Tournament
from domain.tournament import sheet as sheets
from domain.tournament.aggregate import is_final
from domain.tournament.match_places import recorded_places, seat_entrants, table_places
from replay.audit import FAILED, NOT_APPLICABLE, OK
from replay.store import Record, ReplayError, apply, open_arena, walk
from replay.tournament_source import LoadedTournament
from replay.verifying import verify_stored
from storage.keys import fingerprint
from storage.keys import verify as verify_signature

SHEET_FILE, SIGNATURE, MATCHES, RESULTS, LUCK = (
    "sheet file",
    "signature",
    "matches",
    "match results",
    "duplicate luck",
)
CHAIN, PAIRINGS, DUPLICATES, SEED, SHEET = (
    sheets.CHAIN,
    sheets.PAIRINGS,
    sheets.DUPLICATES,
    sheets.SEED,
    sheets.SHEET,
)
#: Every check, in the order reported.
CHECKS = (SHEET_FILE, CHAIN, PAIRINGS, DUPLICATES, SEED, SHEET, SIGNATURE, MATCHES, RESULTS, LUCK)
#: The checks that read the tournament's replayed events: not run on a broken chain.
REPLAYED = (PAIRINGS, DUPLICATES, SEED, SHEET)
#: The keys of a sheet's header, each checked.
HEADER_KEYS = frozenset({"format", "tournament_id", "game", "events", "exported_at"})


@dataclass(frozen=True)
class Finding:
    """One problem: the check that found it, where, and what is wrong in a sentence.
    Where is a version of the tournament's events, or a table's match."""

    check: str
    reason: str
    version: int | None = None
    round: int | None = None
    table: int | None = None
    match_id: str | None = None

    @property
    def where(self) -> str:
        if self.round is not None:
            match = f", match {self.match_id}" if self.match_id else ""
            return f"round {self.round} table {self.table}{match}"
        if self.version is not None:
            return f"version {self.version}"
        return "the sheet"

    def as_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "version": self.version,
            "round": self.round,
            "table": self.table,
            "match_id": self.match_id,
            "reason": self.reason,
        }


@dataclass
class TournamentReport:
    tournament_id: UUID
    source: str
    events: int
    #: The digest of the last event, when every event could be read.
    digest: str | None = None
    game: str | None = None
    ended: bool = False
    findings: list[Finding] = field(default_factory=list)
    #: Why a check did not apply, by check.
    skipped: dict[str, str] = field(default_factory=dict)
    #: What a check that held found, by check.
    found: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def fail(self, check: str, reason: str, **where: Any) -> None:
        self.findings.append(Finding(check, reason, **where))

    def status(self, check: str) -> tuple[str, str]:
        """A check's outcome and what it says: its first finding (and how many more),
        why it did not apply, or what it found."""
        failed = [f for f in self.findings if f.check == check]
        if failed:
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            return FAILED, f"{failed[0].where}: {failed[0].reason}{more}"
        if check in self.skipped:
            return NOT_APPLICABLE, self.skipped[check]
        return OK, self.found.get(check, "holds")

    def as_json(self) -> dict[str, Any]:
        """The stable JSON object of ``tournament verify --json`` (docs/tournaments.md)."""
        checks = {}
        for check in CHECKS:
            status, detail = self.status(check)
            checks[check] = {
                "status": status,
                "detail": detail,
                "problems": [f.as_json() for f in self.findings if f.check == check],
            }
        first = self.findings[0] if self.findings else None
        return {
            "tournament_id": str(self.tournament_id),
            "source": self.source,
            "ok": self.ok,
            "events": self.events,
            "digest": self.digest,
            "game": self.game,
            "ended": self.ended,
            "first_failure": None if first is None else {"check": first.check, **first.as_json()},
            "checks": checks,
            "notes": list(self.notes),
        }


def verify_tournament(
    loaded: LoadedTournament, db: str, expected_key: bytes | None = None
) -> TournamentReport:
    """Every check of the module's docstring; the matches are read from the store of
    ``db`` (opened read-only)."""
    report = TournamentReport(loaded.tournament_id, loaded.source, len(loaded.records))
    events = _check_records(loaded, report)
    if loaded.header is not None:
        _check_header(loaded.header, loaded.records, events, report)
    if events is None:
        for check in (*REPLAYED, SIGNATURE, MATCHES, RESULTS, LUCK):
            report.skipped.setdefault(check, "not checked: the events are not all readable")
        return report
    report.digest = vars(events[-1]).get("digest")
    report.game = str(vars(events[0]).get("game"))
    report.ended = is_final(events[-1])
    for finding in sheets.verify(events):
        report.fail(finding.check, finding.message, version=finding.version)
    chain_broken = any(f.check == CHAIN for f in report.findings)
    if chain_broken:
        for check in REPLAYED:
            report.skipped.setdefault(check, "not checked: the chain is broken")
    else:
        report.found[CHAIN] = f"versions 1 to {len(events)}, every digest recomputed"
        _found_replayed(events, report)
    _check_signature(loaded.tournament_id, events, expected_key, report)
    try:
        tournament = sheets.replay(events)
    except Exception as exc:
        for check in (MATCHES, RESULTS, LUCK):
            report.skipped[check] = f"not checked: the events do not build a tournament ({exc})"
        return report
    _check_matches(tournament, events, db, expected_key, report)
    return report


def _check_records(loaded: LoadedTournament, report: TournamentReport) -> list[Any] | None:
    """The records are versions 1, 2, 3 … each readable, the first a tournament's
    creation; a sheet's lines are as written. The events, or None if one is unreadable."""
    if loaded.header is None:
        report.skipped[SHEET_FILE] = "read from the store, not from a sheet file"
    for problem in loaded.problems:
        report.fail(SHEET_FILE, problem.reason, version=problem.version)
    expected = 1
    for record in loaded.records:
        if record.version != expected:
            report.fail(
                CHAIN,
                f"missing: there is no event at version {expected} (the next is "
                f"{record.version}): an event was removed",
                version=expected,
            )
        expected = record.version + 1
        if record.event is None:
            report.fail(CHAIN, f"the event cannot be read: {record.error}", version=record.version)
    events = loaded.events()
    if events is None:
        return None
    if type(events[0]) is not Tournament.Created:
        report.fail(CHAIN, f"{type(events[0]).__name__} does not create a tournament", version=1)
        return None
    if loaded.header is not None:
        for evt in events:
            if evt.originator_id != loaded.tournament_id:
                report.fail(
                    SHEET_FILE,
                    f"the line is an event of {evt.originator_id}, but the header names "
                    f"tournament {loaded.tournament_id}",
                    version=evt.originator_version,
                )
    return events


def _check_header(
    header: dict[str, Any],
    records: list[Record],
    events: list[Any] | None,
    report: TournamentReport,
) -> None:
    """The header's claims against the lines (the id is checked line by line; the game
    when the events can be read)."""
    extra = sorted(set(header) - HEADER_KEYS)
    if extra:
        report.fail(SHEET_FILE, f"the header holds keys no sheet has: {', '.join(extra)}")
    count = header.get("events")
    if isinstance(count, bool) or not isinstance(count, int) or count != len(records):
        report.fail(
            SHEET_FILE,
            f"the header counts {count!r} events, but the sheet holds {len(records)}: "
            "lines were removed or added",
        )
    game = vars(events[0]).get("game") if events else header.get("game")
    if header.get("game") != game:
        report.fail(
            SHEET_FILE, f"the header names the game {header.get('game')!r}, the tournament {game!r}"
        )
    try:
        datetime.fromisoformat(str(header.get("exported_at")))
    except ValueError:
        when = header.get("exported_at")
        report.fail(SHEET_FILE, f"the header's exported_at {when!r} is not a time")
    if not any(f.check == SHEET_FILE for f in report.findings):
        report.found[SHEET_FILE] = (
            f"the header's claims hold; each of the {len(records)} lines is as written"
        )


def _found_replayed(events: list[Any], report: TournamentReport) -> None:
    """What the checks of the replayed events found, or why they do not apply."""
    created = vars(events[0])
    rounds = sum(1 for e in events if type(e).__name__ == "RoundStarted")
    report.found[PAIRINGS] = (
        f"the tables and byes of {_count(rounds, 'round', 'rounds')} are the rules'"
    )
    if created.get("duplicate"):
        report.found[DUPLICATES] = "each round's seed is the one the tournament's seed gives"
    else:
        report.found[DUPLICATES] = "no duplicate tables: no round has a seed"
    if not report.ended:
        report.skipped[SEED] = "the seed is revealed at the end: the tournament has not ended"
        last = events[-1]
        report.fail(
            SHEET,
            f"the tournament has not ended (its last event, version "
            f"{last.originator_version}, is {type(last).__name__}): it has no result sheet",
            version=last.originator_version,
        )
        return
    report.found[SEED] = "the revealed seed matches the commitment made at creation"
    report.found[SHEET] = "the standings, the matches and the rulings are those the events give"


def _check_signature(
    tournament_id: UUID, events: list[Any], expected_key: bytes | None, report: TournamentReport
) -> None:
    final = events[-1]
    version = final.originator_version
    if not is_final(final):
        report.fail(SIGNATURE, "nothing is signed: the tournament has not ended", version=version)
        return
    data = vars(final)
    signature, public_key = str(data.get("signature") or ""), str(data.get("public_key") or "")
    if not signature:
        report.fail(
            SIGNATURE,
            "TournamentEnded carries no server signature: the sheet is not signed",
            version=version,
        )
        return
    try:
        signature_bytes, key = bytes.fromhex(signature), bytes.fromhex(public_key)
    except ValueError as exc:
        report.fail(SIGNATURE, f"the signature or its key is not hex: {exc}", version=version)
        return
    if expected_key is not None and key != expected_key:
        report.fail(
            SIGNATURE,
            f"the sheet is signed by key {fingerprint(key)}, not by the expected key "
            f"{fingerprint(expected_key)}",
            version=version,
        )
        return
    if not verify_signature(key, signature_bytes, sheets.sheet_message(tournament_id, final)):
        report.fail(
            SIGNATURE,
            f"the signature is not valid for the sheet's digest by key {fingerprint(key)}: "
            "the signature or the sheet was forged",
            version=version,
        )
        return
    against = "the expected key" if expected_key is not None else "the key the sheet names"
    report.found[SIGNATURE] = (
        f"valid Ed25519 signature of the sheet's digest by {fingerprint(key)} ({against})"
    )


# ---- the matches ------------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """One match the sheet lists: the table's match now, or one a replay voided."""

    round: int
    table: int
    match_id: str
    digest: str
    version: int
    voided: bool


def _listed(tournament: Tournament, events: list[Any], report: TournamentReport) -> list[Listed]:
    """Every match the sheet lists (the tables' so far, before the end), each entry
    read as untrusted data."""
    final = events[-1]
    entries = vars(final).get("matches") if is_final(final) else tournament.match_list()
    out: list[Listed] = []
    for entry in entries if isinstance(entries, list) else []:
        try:
            rnd, tbl = int(entry["round"]), int(entry["table"])
            for item, voided in [(entry, False), *((v, True) for v in entry["voided"])]:
                out.append(
                    Listed(
                        rnd,
                        tbl,
                        str(item["match_id"]),
                        str(item["digest"]),
                        int(item["version"]),
                        voided,
                    )
                )
        except (KeyError, TypeError, ValueError) as exc:
            report.fail(MATCHES, f"the sheet lists a match it does not describe: {exc!r}")
    return out


def _check_matches(
    tournament: Tournament,
    events: list[Any],
    db: str,
    expected_key: bytes | None,
    report: TournamentReport,
) -> None:
    listed = _listed(tournament, events, report)
    results = {
        str(vars(e)["match_id"]): vars(e) for e in events if type(e).__name__ == "ResultRecorded"
    }
    if not tournament.duplicate:
        report.skipped[LUCK] = "the tournament has no duplicate tables"
    kinds: Counter[str] = Counter()
    try:
        with open_arena(db) as arena:
            for item in listed:
                kinds[_check_match(tournament, item, results, arena, expected_key, report)] += 1
    except ReplayError as exc:  # each match's own errors are findings: this is the store's
        report.fail(MATCHES, f"the matches cannot be read from the store: {exc}")
        report.skipped[RESULTS] = report.skipped[LUCK] = "not checked: the store cannot be read"
        return
    counted = [_count(kinds[PLAYED], "match", "matches") + " checked"]
    if kinds[WITHOUT]:
        counted.append(_count(kinds[WITHOUT], "table", "tables") + " decided without a match")
    if kinds[PENDING]:
        counted.append(_count(kinds[PENDING], "table", "tables") + " with no result yet")
    report.found[MATCHES] = (
        ", ".join(counted) + ": each verifies, ends as the sheet lists and is of its game"
    )
    report.found[RESULTS] = "each match's places are those the tournament recorded"
    report.found[LUCK] = "each match plays the luck of its round's seed"


#: What a listed match was: a match checked, a table decided without one, a table of a
#: round under way with no result yet.
PLAYED, WITHOUT, PENDING = "played", "without", "pending"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _check_match(
    tournament: Tournament,
    item: Listed,
    results: dict[str, dict[str, Any]],
    arena: Any,
    expected_key: bytes | None,
    report: TournamentReport,
) -> str:
    """Check one listed match; say what it was (:data:`PLAYED`, :data:`WITHOUT`,
    :data:`PENDING`)."""
    where = {"round": item.round, "table": item.table, "match_id": item.match_id}
    try:
        table = tournament.round_state(item.round).tables[item.table - 1]
        assert item.table >= 1
    except (IndexError, AssertionError):
        report.fail(MATCHES, "the tournament has no such table", **where)
        return PLAYED
    recorded = results.get(item.match_id)
    if item.digest == "" and item.version == 0 and not item.voided:
        if recorded is None:
            return PENDING
        if recorded.get("match_digest"):
            report.fail(MATCHES, "the sheet lists no match, but one was recorded", **where)
        return WITHOUT
    try:
        match_id = UUID(item.match_id)
        records, verified = verify_stored(arena, match_id, expected_key)
    except (ValueError, ReplayError) as exc:
        report.fail(MATCHES, f"the store holds no such match: {exc}", **where)
        return PLAYED
    if not verified.ok:
        bad = verified.first_bad_version
        report.fail(
            MATCHES,
            f"the match fails verification at its version {bad}: "
            + "; ".join(verified.reasons_at(bad)),
            **where,
        )
    last = records[-1]
    digest = vars(last.event).get("digest") if last.event is not None else None
    if (last.version, digest) != (item.version, item.digest):
        report.fail(
            MATCHES,
            f"the store's match ends at version {last.version} with digest {digest}; the sheet "
            f"lists version {item.version}, digest {item.digest}",
            **where,
        )
    try:
        opening = apply(None, records[0].event)
        match = list(walk(records))[-1][1]
    except ReplayError as exc:
        report.fail(RESULTS, f"the match cannot be replayed: {exc}", **where)
        return PLAYED
    if tournament.game != type(match).GAME:
        report.fail(
            MATCHES,
            f"the match is of {type(match).GAME}, the tournament of {tournament.game}",
            **where,
        )
        return PLAYED
    _check_origin(table.voided, records[0].event, item, report)
    _check_result(tournament, table.seats, match, opening, recorded, item, report)
    if tournament.duplicate:
        _check_luck(tournament, len(table.seats), opening, item, report)
    return PLAYED


def _check_origin(voided: list[dict[str, Any]], first: Any, item: Listed, report: Any) -> None:
    """A replay's match is a fork of a match the table played before (TO-10.3)."""
    if event_name(first) != "Forked":
        return
    origin = dict(vars(first).get("origin") or {})
    earlier = [v["match_id"] for v in voided]
    if origin.get("match_id") not in earlier:
        report.fail(
            MATCHES,
            f"the match is a fork of {origin.get('match_id')}, which the table did not play",
            round=item.round,
            table=item.table,
            match_id=item.match_id,
        )


def _check_result(
    tournament: Tournament,
    seats: tuple[str, ...],
    match: MatchAggregate,
    opening: MatchAggregate,
    recorded: dict[str, Any] | None,
    item: Listed,
    report: TournamentReport,
) -> None:
    where = {"round": item.round, "table": item.table, "match_id": item.match_id}
    if recorded is None:
        report.fail(RESULTS, "the tournament recorded no result for this match", **where)
        return
    if match.status is not MatchStatus.ENDED:
        report.fail(RESULTS, "the match has not ended: it has no result", **where)
        return
    forfeited = list(recorded["forfeited"])
    at = seat_entrants(seats, tournament.token_hashes, match.token_hashes)
    for seat, entrant in enumerate(at):
        if entrant is None:
            report.fail(
                RESULTS,
                f"seat {seat} of the match was taken with no entrant's token of this table "
                "(TO-9.2)",
                **where,
            )
    if None not in at and at != [e for e in seats if e in at]:
        report.fail(
            RESULTS,
            f"the match seats {', '.join(str(e) for e in at)}: not in the pairing's seat order "
            f"({', '.join(seats)}, TO-9.3)",
            **where,
        )
    given = table_places(forfeited, match.result, at)
    said = recorded_places(recorded["seats"], recorded["places"], forfeited)
    if given != said:
        report.fail(
            RESULTS,
            f"the match places {_places(given)}, the tournament recorded {_places(said)} (TO-9.4)",
            **where,
        )


def _places(places: dict[str, int]) -> str:
    return ", ".join(f"{e} {p}" for e, p in sorted(places.items(), key=lambda x: (x[1], x[0])))


def _check_luck(
    tournament: Tournament, seats: int, opening: MatchAggregate, item: Listed, report: Any
) -> None:
    """The match's options hold the luck of its round's seed (TO-12.1)."""
    seed = tournament.round_state(item.round).duplicate_seed
    options = getattr(opening, "options", None)
    try:
        wanted = GAMES[tournament.game].duplicate_luck(options, bytes.fromhex(seed), seats)
    except Exception as exc:
        wanted = exc
    if wanted != options:
        report.fail(
            LUCK,
            f"the match was created with other luck than round {item.round}'s seed gives (TO-12.1)",
            round=item.round,
            table=item.table,
            match_id=item.match_id,
        )
