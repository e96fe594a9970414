"""What the calls of :class:`~totem_client.tournament.client.TournamentClient` return:
plain, typed values read from the contract's messages once, so that a caller never
decodes an exact value in text, a JSON field or an enum name itself.

Points and tie-breaks are exact (:class:`~fractions.Fraction`): the server sends them
as decimals or fractions in text (``"3"``, ``"1.5"``, ``"7/3"``) so that no rounding
changes the order of the standings (TO-7).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from google.protobuf.message import Message

from totem.v1 import tournament_service_pb2 as pb
from totem_client.games import GAMES_BY_ENUM

#: The formats by their names on the command line and in these values.
FORMATS: dict[str, pb.TournamentFormat.ValueType] = {
    "round-robin": pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
    "swiss": pb.TOURNAMENT_FORMAT_SWISS,
    "single-elimination": pb.TOURNAMENT_FORMAT_SINGLE_ELIMINATION,
}
#: The tie-breaks after points (TO-7.1) by their names.
TIE_BREAKS: dict[str, pb.TieBreak.ValueType] = {
    "buchholz": pb.TIE_BREAK_BUCHHOLZ,
    "median-buchholz": pb.TIE_BREAK_MEDIAN_BUCHHOLZ,
    "sonneborn-berger": pb.TIE_BREAK_SONNEBORN_BERGER,
    "head-to-head": pb.TIE_BREAK_HEAD_TO_HEAD,
}
_FORMAT_NAMES: dict[int, str] = {int(value): name for name, value in FORMATS.items()}
_TIE_BREAK_NAMES: dict[int, str] = {int(value): name for name, value in TIE_BREAKS.items()}


def exact(text: str) -> Fraction | None:
    """An exact value the server sent as text (``"3"``, ``"1.5"``, ``"7/3"``); None for
    an empty one (a tie-break not reached)."""
    return Fraction(text) if text else None


def format_name(value: int) -> str:
    return _FORMAT_NAMES.get(value, "unspecified")


def tie_break_name(value: int) -> str:
    return _TIE_BREAK_NAMES.get(value, "unspecified")


def game_name(value: int) -> str:
    """The client's name of a game (``jungle_speed``), or ``game-<n>`` for one it does
    not know."""
    info = GAMES_BY_ENUM.get(value)
    return info.name if info is not None else f"game-{value}"


@dataclass(frozen=True)
class CreatedTournament:
    """A new tournament: its id and the SHA-256 commitment to its secret seed (TO-8.1)."""

    tournament_id: str
    seed_commitment: bytes


@dataclass(frozen=True)
class EntrantTicket:
    """An entrant entered: their name, their bearer token (shown once; the server keeps
    only its hash, TO-8.2) and their place in seed order, from 1."""

    name: str
    token: str
    seed: int


@dataclass(frozen=True)
class RefereeTicket:
    """A referee appointed: their name and bearer token, shown once (TO-8.3)."""

    name: str
    token: str


@dataclass(frozen=True)
class TableInfo:
    """One table of a round: its entrants in seat order, why they sit together, the
    match whose result counts, and once recorded each seat's place, the forfeits and the
    match's final digest and version (TO-9.4; "" and 0: decided without a match)."""

    number: int
    seats: tuple[str, ...]
    reason: str
    match_id: str
    places: tuple[int, ...]
    forfeited: tuple[str, ...]
    digest: str
    version: int

    @property
    def has_result(self) -> bool:
        return bool(self.places)

    def place_of(self, entrant: str) -> int | None:
        if not self.places or entrant not in self.seats:
            return None
        return self.places[self.seats.index(entrant)]

    @classmethod
    def of(cls, table: pb.TournamentTable) -> TableInfo:
        return cls(
            number=table.number,
            seats=tuple(table.seats),
            reason=table.reason,
            match_id=table.match_id,
            places=tuple(table.places),
            forfeited=tuple(table.forfeited),
            digest=table.digest,
            version=table.version,
        )


@dataclass(frozen=True)
class ByeInfo:
    """An entrant who sits a round out, and why (TO-5.3 scores it)."""

    entrant: str
    reason: str


@dataclass(frozen=True)
class RoundInfo:
    """One round: its tables and byes, when it started, its start deadline (TO-9.3), and
    once every table has a result, when it ended and until when disputes may be filed
    (TO-9.5; 0 while it is under way)."""

    number: int
    tables: tuple[TableInfo, ...]
    byes: tuple[ByeInfo, ...]
    started_ms: int
    no_show_deadline_ms: int
    ended_ms: int
    dispute_deadline_ms: int

    @property
    def ended(self) -> bool:
        return self.ended_ms != 0

    @property
    def tables_finished(self) -> int:
        return sum(1 for t in self.tables if t.has_result)

    def table_of(self, entrant: str) -> TableInfo | None:
        return next((t for t in self.tables if entrant in t.seats), None)

    @classmethod
    def of(cls, round_: pb.TournamentRound) -> RoundInfo:
        return cls(
            number=round_.number,
            tables=tuple(TableInfo.of(t) for t in round_.tables),
            byes=tuple(ByeInfo(b.entrant, b.reason) for b in round_.byes),
            started_ms=round_.started_ms,
            no_show_deadline_ms=round_.no_show_deadline_ms,
            ended_ms=round_.ended_ms,
            dispute_deadline_ms=round_.dispute_deadline_ms,
        )


@dataclass(frozen=True)
class Seat:
    """TakeSeat's answer: the table's match, in which the entrant's token acts for
    ``seat``; the round and the table; the match's version then."""

    match_id: str
    seat: int
    round: int
    table: int
    version: int


@dataclass(frozen=True)
class EntrantInfo:
    """An entrant: name, seed, and the first round they do not play (0: still in)."""

    name: str
    seed: int
    withdrawn_from_round: int


@dataclass(frozen=True)
class StandingRow:
    """One row of the standings (TO-7): exact points and tie-breaks (None where a
    tie-break was not reached), tables played, byes, and the criterion that put the row
    ahead of the next ("" on the last row)."""

    rank: int
    entrant: str
    seed: int
    points: Fraction
    buchholz: Fraction | None
    median_buchholz: Fraction | None
    sonneborn_berger: Fraction | None
    head_to_head: Fraction | None
    played: int
    byes: int
    withdrawn: bool
    separated_by: str

    @classmethod
    def of(cls, row: pb.Standing) -> StandingRow:
        return cls(
            rank=row.rank,
            entrant=row.entrant,
            seed=row.seed,
            points=exact(row.points) or Fraction(0),
            buchholz=exact(row.buchholz),
            median_buchholz=exact(row.median_buchholz),
            sonneborn_berger=exact(row.sonneborn_berger),
            head_to_head=exact(row.head_to_head),
            played=row.played,
            byes=row.byes,
            withdrawn=row.withdrawn,
            separated_by=row.separated_by,
        )


@dataclass(frozen=True)
class Standings:
    """The standings, best first, and the tie-breaks applied after points, by name."""

    rows: tuple[StandingRow, ...]
    tie_breaks: tuple[str, ...]


@dataclass(frozen=True)
class DisputeInfo:
    """A dispute (TO-10.1): who filed it, on which match at which version (0: the result
    as a whole), the round and table, the text and when."""

    number: int
    entrant: str
    match_id: str
    version: int
    text: str
    round: int
    table: int
    filed_ms: int

    @classmethod
    def of(cls, dispute: pb.Dispute) -> DisputeInfo:
        return cls(
            number=dispute.number,
            entrant=dispute.entrant,
            match_id=dispute.match_id,
            version=dispute.version,
            text=dispute.text,
            round=dispute.round,
            table=dispute.table,
            filed_ms=dispute.filed_ms,
        )


@dataclass(frozen=True)
class RulingInfo:
    """A ruling (TO-10.3): the dispute, the referee, the kind (``stands``,
    ``replace-result``, ``replay``, ``penalty``), the reason, the table, and what it
    decided (``details``: places, the fork's match id, points)."""

    number: int
    dispute: int
    judge: str
    kind: str
    reason: str
    round: int
    table: int
    details: dict[str, Any]

    @classmethod
    def of(cls, ruling: pb.Ruling) -> RulingInfo:
        return cls(
            number=ruling.number,
            dispute=ruling.dispute,
            judge=ruling.judge,
            kind=ruling.kind,
            reason=ruling.reason,
            round=ruling.round,
            table=ruling.table,
            details=json.loads(ruling.details_json) if ruling.details_json else {},
        )


@dataclass(frozen=True)
class Ruled:
    """Rule's answer: the ruling's number and, for a replay, the fork's match id, which
    every seat of the table takes again with its entrant token (TakeSeat)."""

    ruling: int
    replay_match_id: str


@dataclass(frozen=True)
class TournamentSummary:
    """A tournament in a list: its game and format by name, its rounds (0 until the
    field is fixed), rounds started, entrants, whether it has ended, its version."""

    tournament_id: str
    title: str
    game: str
    format: str
    rounds: int
    rounds_started: int
    entrants: int
    ended: bool
    version: int

    @classmethod
    def of(cls, summary: pb.TournamentSummary) -> TournamentSummary:
        return cls(
            tournament_id=summary.tournament_id,
            title=summary.title,
            game=game_name(summary.game),
            format=format_name(summary.format),
            rounds=summary.rounds,
            rounds_started=summary.rounds_started,
            entrants=summary.entrants,
            ended=summary.ended,
            version=summary.version,
        )


@dataclass(frozen=True)
class TournamentPage:
    """One page of ListTournaments; ``next_page_token`` is empty on the last page."""

    tournaments: tuple[TournamentSummary, ...]
    next_page_token: str


@dataclass(frozen=True)
class TournamentInfo:
    """The tournament as it stands (GetTournament): its summary, its tables' match
    options (the game's options message, None if unset), its settings, entrants,
    referees, rounds, rulings, standings so far, open disputes, seed commitment, and when
    the next round may start (0: not set)."""

    summary: TournamentSummary
    options: Message | None
    table_size: int
    tie_breaks: tuple[str, ...]
    dispute_window_ms: int
    no_show_ms: int
    duplicate: bool
    entrants: tuple[EntrantInfo, ...]
    referees: tuple[str, ...]
    rounds: tuple[RoundInfo, ...]
    rulings: tuple[RulingInfo, ...]
    standings: tuple[StandingRow, ...]
    open_disputes: int
    seed_commitment: bytes
    next_round_due_ms: int
    #: The server starts every round after the first by itself (TO-9.1).
    auto_rounds: bool = False

    @property
    def tournament_id(self) -> str:
        return self.summary.tournament_id

    @property
    def ended(self) -> bool:
        return self.summary.ended

    @property
    def current_round(self) -> RoundInfo | None:
        return self.rounds[-1] if self.rounds else None

    @classmethod
    def of(cls, tournament: pb.Tournament) -> TournamentInfo:
        which = tournament.WhichOneof("options")
        return cls(
            summary=TournamentSummary.of(tournament.summary),
            options=getattr(tournament, which) if which else None,
            table_size=tournament.table_size,
            tie_breaks=tuple(tie_break_name(t) for t in tournament.tie_breaks),
            dispute_window_ms=tournament.dispute_window_ms,
            no_show_ms=tournament.no_show_ms,
            duplicate=tournament.duplicate,
            entrants=tuple(
                EntrantInfo(e.name, e.seed, e.withdrawn_from_round) for e in tournament.entrants
            ),
            referees=tuple(tournament.referees),
            rounds=tuple(RoundInfo.of(r) for r in tournament.rounds),
            rulings=tuple(RulingInfo.of(r) for r in tournament.rulings),
            standings=tuple(StandingRow.of(s) for s in tournament.standings),
            open_disputes=tournament.open_disputes,
            seed_commitment=bytes(tournament.seed_commitment),
            next_round_due_ms=tournament.next_round_due_ms,
            auto_rounds=tournament.auto_rounds,
        )


@dataclass(frozen=True)
class ResultSheet:
    """The signed result sheet of an ended tournament (TO-11.2): the file (JSON Lines,
    UTF-8) that ``totem-replay tournament verify`` checks offline, the final event's
    digest (hex), the server's Ed25519 signature over the sheet's message (64 bytes) and
    its raw public key."""

    sheet: bytes
    digest: str
    signature: bytes
    public_key: bytes


@dataclass(frozen=True)
class TournamentEvent:
    """One event of a tournament as the caller may see it: its name (``RoundStarted``,
    ``ResultRecorded``, ``TournamentEnded``...), its fields decoded from JSON, and its
    digest in the tournament's chain."""

    tournament_id: str
    version: int
    name: str
    fields: dict[str, Any]
    digest: str

    @classmethod
    def of(cls, event: pb.TournamentEvent) -> TournamentEvent:
        return cls(
            tournament_id=event.tournament_id,
            version=event.version,
            name=event.name,
            fields=json.loads(event.fields_json) if event.fields_json else {},
            digest=event.digest,
        )


# ---- verdicts (TO-10.3) ------------------------------------------------------------


@dataclass(frozen=True)
class Stands:
    """The result stands: nothing changes."""

    def to_proto(self) -> pb.Verdict:
        return pb.Verdict(stands=pb.Stands())


@dataclass(frozen=True)
class Replace:
    """The table's result is replaced (TO-6.1): every seat's place by entrant (1 first;
    equal places tie), and who forfeits."""

    places: dict[str, int]
    forfeited: tuple[str, ...] = ()

    def to_proto(self) -> pb.Verdict:
        return pb.Verdict(
            replace=pb.ReplaceResult(
                places=[pb.EntrantPlace(entrant=e, place=p) for e, p in self.places.items()],
                forfeited=list(self.forfeited),
            )
        )


@dataclass(frozen=True)
class Replay:
    """The match is played again from a fork of it at ``version`` (from 1)."""

    version: int

    def to_proto(self) -> pb.Verdict:
        return pb.Verdict(replay=pb.ReplayFrom(version=self.version))


@dataclass(frozen=True)
class Penalise:
    """``points`` taken off ``entrant`` (TO-6.2): more than 0, at most 100."""

    entrant: str
    points: Fraction | int | str

    def to_proto(self) -> pb.Verdict:
        return pb.Verdict(
            penalise=pb.Penalise(entrant=self.entrant, points=str(Fraction(self.points)))
        )


#: What a referee decides.
Verdict = Stands | Replace | Replay | Penalise
