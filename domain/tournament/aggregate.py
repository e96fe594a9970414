"""The tournament aggregate: entrants, rounds and their tables, results, disputes, rulings.

A tournament is stored like a match, in the same event store: its own events, chained
(:mod:`domain.kernel.chained`), the last one signed by the server. Its commands check
the rules (docs/tournaments.md, TO-8 to TO-12) and raise a
:class:`~domain.kernel.errors.DomainError` naming the rule, recording nothing; only then
do they trigger ``@event`` methods, whose bodies apply the fields the command decided:
each round's pairing with its reasons, each table's match id, each round's duplicate
seed, each result as places and forfeits, each ruling with its judge and reason. So a
change to the pairing or standings code can never change what a stored tournament
says happened; and anyone holding its events recomputes the standings from them alone
(:meth:`Tournament.standings`, :mod:`domain.tournament.sheet`).

What the domain does not do, the application does (no clock, no I/O, no random draw
here): it draws the tournament's seed and passes it in; it makes every bearer token and
passes only its SHA-256; it creates each table's match and passes the match ids to
:meth:`Tournament.start_round`; it reads each ended match's result and final digest and
passes them to :meth:`Tournament.record_result`; it passes the time (wall milliseconds,
from the command's receive stamp) to every command that depends on it.

Why one event per round start and not two (pairing, then match ids): the application
asks :meth:`Tournament.pairing` for the round it would start (a pure function of the
events so far), creates one match per table, and then starts the round with their ids:
:meth:`start_round` pairs again, gets the same tables, and records them with their
match ids in ``RoundStarted``; the tournament and the matches are saved in one
transaction. No state exists in which a round has started and a table has no match.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any
from uuid import UUID

from eventsourcing.domain import event

from domain.kernel.chain import canonical_bytes
from domain.kernel.chained import ChainedAggregate
from domain.kernel.errors import InvalidArgument, NotPermitted, RuleViolation
from domain.kernel.match import MAX_NAME_LENGTH, check_name, is_clean_text
from domain.kernel.randomness import commitment
from domain.kernel.signing import TOURNAMENT_PREFIX
from domain.kernel.snapshots import FrozenSnapshot
from domain.kernel.topics import register_aggregate
from domain.tournament.duplicate import SEED_BYTES, duplicate_seed
from domain.tournament.elimination import elimination_rounds
from domain.tournament.formats import Format, pair_round
from domain.tournament.model import (
    TABLE_SIZES,
    Bye,
    MatchResult,
    Penalty,
    ReplaceResult,
    Round,
    Ruling,
    check_places,
    check_table_size,
)
from domain.tournament.round_robin import round_robin_rounds
from domain.tournament.standings import (
    DEFAULT_TIE_BREAKS,
    Standing,
    TieBreak,
    check_tie_breaks,
    standings,
)
from domain.tournament.verdicts import (
    Penalise,
    ReplaceWith,
    ReplayFrom,
    RulingKind,
    Stands,
    Verdict,
)

#: At most this many entrants (TO-8.2), referees (TO-8.3) and Swiss rounds (TO-8.1).
MAX_ENTRANTS = 256
MAX_REFEREES = 16
MAX_ROUNDS = 64
#: The longest dispute window and no-show time (TO-8.1): a week, in milliseconds.
MAX_WINDOW_MS = 7 * 24 * 3600 * 1000
#: A dispute's text and a ruling's reason (TO-10.1, TO-10.2).
MAX_TEXT_CHARS = 500
#: The most points one penalty takes (TO-10.3).
MAX_PENALTY = Fraction(100)
#: The name of a tournament.
MAX_TITLE_CHARS = 80

_HEX64 = re.compile(r"[0-9a-f]{64}")


def check_token_hash(rule: str, token_hash: str) -> None:
    """A bearer token's SHA-256 (64 hex digits, lower case): the tournament never holds a
    token in clear."""
    if not isinstance(token_hash, str) or not _HEX64.fullmatch(token_hash):
        raise InvalidArgument(rule, "a token is given as its SHA-256, 64 lower-case hex digits")


def check_text(rule: str, text: str, what: str) -> str:
    """A dispute's text or a ruling's reason: 1 to :data:`MAX_TEXT_CHARS` printable
    characters, surrounding spaces dropped."""
    text = text.strip()
    if not 1 <= len(text) <= MAX_TEXT_CHARS or not is_clean_text(text):
        raise InvalidArgument(
            rule, f"{what} needs 1 to {MAX_TEXT_CHARS} printable characters on one line"
        )
    return text


def check_match_id(rule: str, match_id: str | UUID) -> str:
    """A match id as the store names it: a UUID, in its canonical text."""
    try:
        return str(UUID(str(match_id)))
    except ValueError:
        raise InvalidArgument(rule, f"{str(match_id)[:60]!r} is not a match id") from None


def check_ms(rule: str, value: int, what: str, low: int = 0, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidArgument(rule, f"{what} must be a whole number of milliseconds from {low}")
    if high is not None and value > high:
        raise InvalidArgument(rule, f"{what} is at most {high} milliseconds")


# ---- state: plain values built by the event bodies ---------------------------------------


@dataclass
class TableState:
    """One table of a round as the events left it."""

    number: int
    seats: tuple[str, ...]
    reason: str
    #: The match played at the table now (a replay's, after a replay ruling).
    match_id: str
    #: Seats that forfeit: absent at the start deadline (TO-9.3), or withdrawn once
    #: seated (TO-8.4).
    forfeits: list[str] = field(default_factory=list)
    #: The entrants who have taken their seats, in the order they came (TO-9.3).
    arrived: list[str] = field(default_factory=list)
    result: MatchResult | None = None
    #: The final digest and version of the match that gave the result ("" and 0: decided
    #: without a match, TO-9.4).
    digest: str = ""
    version: int = 0
    #: Matches played here before a replay ruling voided them: ``{"match_id", "digest",
    #: "version"}`` each.
    voided: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RoundState:
    number: int
    tables: list[TableState]
    byes: tuple[Bye, ...]
    started_ms: int
    no_show_deadline_ms: int
    #: The round's duplicate seed (hex), "" without duplicate tables (TO-12.1).
    duplicate_seed: str
    #: When its last result was recorded (None: under way), and the end of its dispute
    #: window (TO-9.5).
    ended_ms: int | None = None
    dispute_deadline_ms: int | None = None

    @property
    def ended(self) -> bool:
        return self.ended_ms is not None

    def table_of(self, entrant: str) -> TableState | None:
        return next((t for t in self.tables if entrant in t.seats), None)


@dataclass
class Dispute:
    number: int
    entrant: str
    round: int
    table: int
    match_id: str
    version: int
    text: str
    filed_ms: int
    #: The number of the ruling that answered it (None: open, in the referees' queue).
    ruled: int | None = None


@dataclass
class RulingRecord:
    """A ruling as its event recorded it."""

    number: int
    dispute: int
    judge: str
    kind: RulingKind
    reason: str
    at_ms: int
    round: int
    table: int
    #: REPLACE: the places in the table's seat order, and the seats that forfeit.
    places: tuple[int, ...] = ()
    forfeited: tuple[str, ...] = ()
    #: REPLAY: the fork's match id and the version of the disputed match it forks.
    match_id: str = ""
    version: int = 0
    #: PENALTY: who loses how many points (a fraction as text, ``1/2``).
    entrant: str = ""
    points: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ruling as the result sheet lists it."""
        return {
            "ruling": self.number,
            "dispute": self.dispute,
            "judge": self.judge,
            "kind": self.kind.value,
            "reason": self.reason,
            "at_ms": self.at_ms,
            "round": self.round,
            "table": self.table,
            "places": list(self.places),
            "forfeited": list(self.forfeited),
            "match_id": self.match_id,
            "version": self.version,
            "entrant": self.entrant,
            "points": self.points,
        }


def standing_fields(row: Standing) -> dict[str, Any]:
    """A standings row as the result sheet records it: points as exact fractions in
    text (``3/2``), tie-breaks by name."""

    def text(value: Fraction | None) -> str | None:
        return None if value is None else str(value)

    return {
        "rank": row.rank,
        "entrant": row.entrant,
        "seed": row.seed,
        "points": text(row.points),
        "buchholz": text(row.buchholz),
        "median_buchholz": text(row.median_buchholz),
        "sonneborn_berger": text(row.sonneborn_berger),
        "head_to_head": text(row.head_to_head),
        "played": row.played,
        "byes": row.byes,
        "withdrawn": row.withdrawn,
        "separated_by": row.separated_by.value if row.separated_by else None,
    }


class Tournament(ChainedAggregate):
    """A tournament of one game: see the module's docstring and docs/tournaments.md."""

    SIGNATURE_PREFIX = TOURNAMENT_PREFIX

    class Snapshot(FrozenSnapshot):
        """The tournament's whole state at one version (:mod:`domain.kernel.snapshots`)."""

    class TournamentEnded(ChainedAggregate.Event):
        """The last event: the result sheet (TO-11.2). ``signature`` and ``public_key``
        (hex; empty: not signed) are outside the digest, which the signature covers."""

        standings: list[dict[str, Any]]
        matches: list[dict[str, Any]]
        rulings: list[dict[str, Any]]
        seed: str
        at_ms: int
        signature: str = ""
        public_key: str = ""

    @classmethod
    def signs(cls, event_class: type) -> bool:
        return issubclass(event_class, Tournament.TournamentEnded)

    # ---- creation (TO-8.1) ---------------------------------------------------------

    @classmethod
    def create(
        cls,
        *,
        organiser_token_hash: str,
        game: str,
        options: Mapping[str, Any],
        format: Format,
        table_size: int,
        seed: bytes,
        title: str = "",
        rounds: int | None = None,
        tie_breaks: Sequence[TieBreak] = DEFAULT_TIE_BREAKS,
        dispute_window_ms: int = 10 * 60 * 1000,
        no_show_ms: int = 10 * 60 * 1000,
        duplicate: bool = False,
        auto_rounds: bool = False,
        min_seats: int = 2,
        max_seats: int = max(TABLE_SIZES),
    ) -> Tournament:
        """A new tournament, open for entrants.

        ``game`` and ``options`` are the match options every table's match is created
        with (the application checks them with the game's own options first, and passes
        the seats a table of that game may have as ``min_seats`` and ``max_seats``).
        ``seed`` is the secret seed the application drew (:data:`SEED_BYTES` bytes): its
        SHA-256 is the public commitment, it is revealed in the final event, and each
        round's duplicate seed derives from it. ``rounds``: Swiss only (TO-3.7; None: as
        many as a bracket); a round robin and a bracket have the rounds of their format.
        """
        rule = "TO-8.1"
        check_token_hash(rule, organiser_token_hash)
        title = title.strip()
        if len(title) > MAX_TITLE_CHARS or not is_clean_text(title):
            raise InvalidArgument(
                rule, f"a title has at most {MAX_TITLE_CHARS} printable characters"
            )
        if not game or not isinstance(game, str):
            raise InvalidArgument(rule, "a tournament plays one game, named")
        try:
            canonical_bytes(dict(options))
        except (TypeError, ValueError):
            raise InvalidArgument(rule, "the match options are plain values (JSON)") from None
        if not isinstance(format, Format):
            raise InvalidArgument(rule, "the format is round robin, Swiss or single elimination")
        if not 2 <= min_seats <= max_seats:
            raise InvalidArgument(rule, "the game's seats at a table go from 2 up")
        if not min_seats <= table_size <= max_seats:
            raise InvalidArgument(
                rule, f"this game seats {min_seats} to {max_seats} at a table, not {table_size}"
            )
        check_table_size(table_size, min_seats)
        if format is Format.SINGLE_ELIMINATION and table_size != 2:
            raise InvalidArgument("TO-4.1", "single elimination is played at two-seat tables")
        if rounds is not None:
            if format is not Format.SWISS:
                raise InvalidArgument(
                    rule, "only a Swiss tournament sets its rounds: the others have their format's"
                )
            if isinstance(rounds, bool) or not 1 <= rounds <= MAX_ROUNDS:
                raise InvalidArgument(rule, f"a Swiss tournament has 1 to {MAX_ROUNDS} rounds")
        tie_breaks = tuple(tie_breaks)
        if not all(isinstance(t, TieBreak) for t in tie_breaks):
            raise InvalidArgument("TO-7.1", "tie-breaks are named from the known ones")
        check_tie_breaks(tie_breaks)
        check_ms(rule, dispute_window_ms, "the dispute window", high=MAX_WINDOW_MS)
        check_ms(rule, no_show_ms, "the no-show time", high=MAX_WINDOW_MS)
        if len(seed) != SEED_BYTES:
            raise InvalidArgument(rule, f"the tournament's seed is {SEED_BYTES} bytes")
        return cls(
            organiser_token_hash=organiser_token_hash,
            title=title,
            game=game,
            options=dict(options),
            format=format.value,
            table_size=table_size,
            min_seats=min_seats,
            rounds=rounds or 0,
            tie_breaks=[t.value for t in tie_breaks],
            dispute_window_ms=dispute_window_ms,
            no_show_ms=no_show_ms,
            duplicate=bool(duplicate),
            auto_rounds=bool(auto_rounds),
            seed=seed.hex(),
        )

    @event("Created")
    def __init__(
        self,
        organiser_token_hash: str,
        title: str,
        game: str,
        options: dict[str, Any],
        format: str,
        table_size: int,
        min_seats: int,
        rounds: int,
        tie_breaks: list[str],
        dispute_window_ms: int,
        no_show_ms: int,
        duplicate: bool,
        seed: str,
        auto_rounds: bool = False,
    ) -> None:
        #: SHA-256 of the organiser's bearer token. Never in a view.
        self.organiser_token_hash = organiser_token_hash
        self.title = title
        self.game = game
        self.options = dict(options)
        self.format = Format(format)
        self.table_size = table_size
        self.min_seats = min_seats
        #: The rounds asked for (0: the format's); :attr:`rounds` once the field is fixed.
        self.rounds_asked = rounds
        self.rounds = 0
        self.tie_breaks = tuple(TieBreak(t) for t in tie_breaks)
        self.dispute_window_ms = dispute_window_ms
        self.no_show_ms = no_show_ms
        self.duplicate = duplicate
        #: The server starts each round by itself once the one before allows it (TO-9.1);
        #: otherwise the organiser does. (Created events before it existed: False.)
        self.auto_rounds = auto_rounds
        #: The secret seed (hex): in the store like a match's, in no view before the end.
        self.seed = seed
        self.seed_commitment = commitment(bytes.fromhex(seed))
        #: Everyone who entered, in the order added (seed order), and their token hashes.
        self.registered: list[str] = []
        self.token_hashes: dict[str, str] = {}
        #: The field, fixed when the first round starts (TO-8.5).
        self.entrants: list[str] = []
        #: Each withdrawn entrant with the first round they do not play (TO-8.4).
        self.withdrawn: dict[str, int] = {}
        #: Referees by name, with their token hashes (TO-8.3).
        self.referees: dict[str, str] = {}
        self.round_states: list[RoundState] = []
        self.disputes: list[Dispute] = []
        self.ruling_records: list[RulingRecord] = []
        self.ended = False
        #: The final standings as the last event recorded them.
        self.final_standings: list[dict[str, Any]] = []

    # ---- who is who -----------------------------------------------------------------

    def is_organiser(self, token_hash: str) -> bool:
        return token_hash == self.organiser_token_hash

    def entrant_of(self, token_hash: str) -> str | None:
        """The entrant whose token has this hash: whoever takes that entrant's seat at a
        table's match with it (the application gives the match the same hash)."""
        return next((e for e, h in self.token_hashes.items() if h == token_hash), None)

    def referee_of(self, token_hash: str) -> str | None:
        return next((r for r, h in self.referees.items() if h == token_hash), None)

    # ---- entrants and referees (TO-8.2 to TO-8.5) -----------------------------------

    def add_entrant(self, name: str, token_hash: str) -> str:
        """Enter ``name`` (its id from now on), whose bearer token has ``token_hash``.
        Seed order is the order of entry."""
        rule = "TO-8.2"
        name = self._person(rule, "an entrant", name, token_hash)
        if self.round_states:
            raise RuleViolation(rule, "the first round has started: entries are closed")
        if len(self.registered) >= MAX_ENTRANTS:
            raise RuleViolation(rule, f"a tournament has at most {MAX_ENTRANTS} entrants")
        if name.casefold() in {e.casefold() for e in self.registered}:
            raise RuleViolation(rule, f"an entrant is already called {name}")
        if name.casefold() in {r.casefold() for r in self.referees}:
            raise RuleViolation("TO-8.3", f"{name} is a referee of this tournament")
        if self._token_taken(token_hash):
            raise RuleViolation(rule, "this token is already someone's in this tournament")
        self._entrant_added(entrant=name, token_hash=token_hash)
        return name

    @event("EntrantAdded")
    def _entrant_added(self, entrant: str, token_hash: str) -> None:
        self.registered.append(entrant)
        self.token_hashes[entrant] = token_hash

    def appoint_referee(self, name: str, token_hash: str) -> None:
        """Appoint a referee (at the organiser's request; the application checks who asks),
        whose bearer token has ``token_hash``."""
        rule = "TO-8.3"
        name = self._person(rule, "a referee", name, token_hash)
        if name.casefold() in {e.casefold() for e in self.registered}:
            raise RuleViolation(rule, f"{name} is an entrant: no entrant referees a tournament")
        if name.casefold() in {r.casefold() for r in self.referees}:
            raise RuleViolation(rule, f"{name} is already a referee")
        if len(self.referees) >= MAX_REFEREES:
            raise RuleViolation(rule, f"a tournament has at most {MAX_REFEREES} referees")
        if self._token_taken(token_hash):
            raise RuleViolation(rule, "this token is already someone's in this tournament")
        self._referee_appointed(name=name, token_hash=token_hash)

    @event("RefereeAppointed")
    def _referee_appointed(self, name: str, token_hash: str) -> None:
        self.referees[name] = token_hash

    def _person(self, rule: str, who: str, name: str, token_hash: str) -> str:
        """The name of ``who`` (an entrant, a referee) to add, checked as every person's
        of a tournament is, with the hash of their token; the tournament not ended."""
        self._require_not_ended()
        name = name.strip()
        if not name or len(name) > MAX_NAME_LENGTH:
            raise InvalidArgument(rule, f"{who}'s name has 1 to {MAX_NAME_LENGTH} characters")
        check_name(rule, name)
        check_token_hash(rule, token_hash)
        return name

    def _token_taken(self, token_hash: str) -> bool:
        return (
            token_hash == self.organiser_token_hash
            or token_hash in self.token_hashes.values()
            or token_hash in self.referees.values()
        )

    def withdraw(self, entrant: str, now_ms: int) -> None:
        """``entrant`` withdraws (or the organiser withdraws them): not paired from the
        next round on; at a table of the round under way that has no result, they forfeit
        it (TO-8.4)."""
        rule = "TO-8.4"
        self._require_not_ended()
        check_ms(rule, now_ms, "the time")
        if entrant not in self.registered:
            raise InvalidArgument(rule, f"{entrant!r} has not entered this tournament")
        if entrant in self.withdrawn:
            raise RuleViolation(rule, f"{entrant} has already withdrawn")
        table = 0
        current = self._current_round()
        if current is not None and not current.ended:
            seated = current.table_of(entrant)
            if seated is not None and seated.result is None:
                table = seated.number
        self._withdrew(
            entrant=entrant, first_missed=len(self.round_states) + 1, table=table, at_ms=now_ms
        )

    @event("Withdrew")
    def _withdrew(self, entrant: str, first_missed: int, table: int, at_ms: int) -> None:
        self.withdrawn[entrant] = first_missed
        if table:
            seated = self.round_states[-1].tables[table - 1]
            seated.forfeits.append(entrant)

    # ---- rounds (TO-9) --------------------------------------------------------------

    def field(self) -> list[str]:
        """The entrants who play, in seed order: fixed when the first round starts; until
        then, those entered who have not withdrawn (TO-8.5)."""
        if self.round_states:
            return list(self.entrants)
        return [e for e in self.registered if e not in self.withdrawn]

    def total_rounds(self) -> int:
        """The tournament's rounds: fixed with the field (TO-8.5); until then, as the
        field now would have."""
        if self.rounds:
            return self.rounds
        return self._rounds_for(self.field())

    def _rounds_for(self, entrants: list[str]) -> int:
        if len(entrants) < 2:
            return 0
        if self.format is Format.ROUND_ROBIN:
            return round_robin_rounds(entrants, self.table_size, self.min_seats)
        if self.format is Format.SWISS and self.rounds_asked:
            return self.rounds_asked
        return elimination_rounds(len(entrants))

    def start_refusal(self, now_ms: int) -> RuleViolation | None:
        """Why the next round may not start at ``now_ms``, or None if it may (TO-9.1)."""
        if self.ended:
            return RuleViolation("TO-11.1", "the tournament has ended")
        number = len(self.round_states) + 1
        if not self.round_states:
            if len(self.field()) < 2:
                return RuleViolation("TO-8.5", "a tournament needs at least two entrants to start")
            return None
        if number > self.total_rounds():
            return RuleViolation(
                "TO-9.1", f"the tournament has {self.total_rounds()} rounds: all have started"
            )
        last = self.round_states[-1]
        if not last.ended:
            waiting = sum(1 for t in last.tables if t.result is None)
            return RuleViolation(
                "TO-9.1", f"round {last.number} has not ended: {waiting} table(s) have no result"
            )
        assert last.dispute_deadline_ms is not None
        if now_ms < last.dispute_deadline_ms:
            return RuleViolation(
                "TO-9.1",
                f"round {last.number}'s dispute window is open until {last.dispute_deadline_ms} ms",
            )
        if self.open_disputes():
            return RuleViolation(
                "TO-9.1", f"round {last.number} has disputes no referee has ruled on yet"
            )
        return None

    def pairing(self, now_ms: int) -> Round:
        """The round :meth:`start_round` would start at ``now_ms``: its tables, each with
        its reason, and its byes. The application creates one match per table from it.
        Refused as :meth:`start_round` would be."""
        refusal = self.start_refusal(now_ms)
        if refusal is not None:
            raise refusal
        return self.next_pairing()

    def next_pairing(self) -> Round:
        """The pairing of the next round as the rules give it from the events so far
        (TO-2 to TO-4), whether or not it may start now: what a verifier compares with
        the pairing a ``RoundStarted`` recorded."""
        entrants = self.field()
        return pair_round(
            self.format,
            entrants,
            len(self.round_states) + 1,
            self.results(),
            self.rulings(),
            {e: r for e, r in self.withdrawn.items() if e in entrants},
            self.table_size,
            self.min_seats,
        )

    def duplicate_seed_of(self, round_number: int) -> bytes | None:
        """The seed every table of ``round_number`` shares, or None without duplicate
        tables (TO-12.1). The application needs it to create the round's matches."""
        if not self.duplicate:
            return None
        return duplicate_seed(bytes.fromhex(self.seed), round_number)

    def start_round(self, now_ms: int, match_ids: Sequence[str | UUID]) -> Round:
        """Start the next round at ``now_ms`` (the organiser's request or the server's
        timer), with the match the application created for each table of
        :meth:`pairing`, in table order. The first round fixes the field and the number
        of rounds (TO-8.5). Returns the round recorded."""
        rule = "TO-9.2"
        check_ms(rule, now_ms, "the time")
        paired = self.pairing(now_ms)
        ids = [check_match_id(rule, m) for m in match_ids]
        if len(ids) != len(paired.tables):
            raise InvalidArgument(
                rule,
                f"round {paired.number} has {len(paired.tables)} table(s): "
                f"one match each, not {len(ids)}",
            )
        used = self._match_ids()
        if len(set(ids)) != len(ids) or used & set(ids):
            raise InvalidArgument(rule, "each table has a match of its own, never used before")
        if not self.round_states:
            entrants = self.field()
            self._field_fixed(entrants=entrants, rounds=self._rounds_for(entrants))
        seed = self.duplicate_seed_of(paired.number)
        self._round_started(
            round=paired.number,
            tables=[
                {"table": t.number, "seats": list(t.seats), "reason": t.reason, "match_id": m}
                for t, m in zip(paired.tables, ids, strict=True)
            ],
            byes=[{"entrant": b.entrant, "reason": b.reason} for b in paired.byes],
            started_ms=now_ms,
            no_show_deadline_ms=now_ms + self.no_show_ms,
            duplicate_seed=seed.hex() if seed is not None else "",
        )
        if not paired.tables:
            self._round_ended(round=paired.number, ended_ms=now_ms, dispute_deadline_ms=now_ms)
        return paired

    @event("FieldFixed")
    def _field_fixed(self, entrants: list[str], rounds: int) -> None:
        self.entrants = list(entrants)
        self.rounds = rounds

    @event("RoundStarted")
    def _round_started(
        self,
        round: int,
        tables: list[dict[str, Any]],
        byes: list[dict[str, str]],
        started_ms: int,
        no_show_deadline_ms: int,
        duplicate_seed: str,
    ) -> None:
        self.round_states.append(
            RoundState(
                number=round,
                tables=[
                    TableState(t["table"], tuple(t["seats"]), t["reason"], t["match_id"])
                    for t in tables
                ],
                byes=tuple(Bye(b["entrant"], b["reason"]) for b in byes),
                started_ms=started_ms,
                no_show_deadline_ms=no_show_deadline_ms,
                duplicate_seed=duplicate_seed,
            )
        )

    def arrive(self, entrant: str, now_ms: int) -> bool:
        """``entrant`` takes their seat at their table of the round under way (TO-9.3):
        the server seats a table's entrants in its match, in the pairing's seat order,
        once all have come (or, at the start deadline, those who came). Returns whether
        this was news: coming again records nothing."""
        rule = "TO-9.3"
        self._require_not_ended()
        check_ms(rule, now_ms, "the time")
        current = self._current_round()
        table = current.table_of(entrant) if current is not None and not current.ended else None
        if current is None or table is None:
            raise RuleViolation("TO-9.2", f"{entrant} has no table in a round under way")
        if entrant in table.forfeits:
            raise RuleViolation(rule, f"{entrant} forfeits table {table.number}")
        if table.result is not None:
            raise RuleViolation("TO-9.4", f"table {table.number} already has its result")
        if entrant in table.arrived:
            return False
        self._arrived(round=current.number, table=table.number, entrant=entrant, at_ms=now_ms)
        return True

    @event("Arrived")
    def _arrived(self, round: int, table: int, entrant: str, at_ms: int) -> None:
        self.round_states[round - 1].tables[table - 1].arrived.append(entrant)

    def record_no_show(self, entrant: str, now_ms: int) -> None:
        """``entrant`` had not taken their seat at the round's start deadline: they forfeit
        their table (TO-9.3): they never came (:meth:`arrive`), as the application observed
        at the deadline."""
        rule = "TO-9.3"
        self._require_not_ended()
        check_ms(rule, now_ms, "the time")
        current = self._current_round()
        if current is None or current.ended:
            raise RuleViolation(rule, "no round is under way")
        seated = current.table_of(entrant)
        if seated is None:
            raise InvalidArgument(rule, f"{entrant!r} has no table in round {current.number}")
        if seated.result is not None:
            raise RuleViolation(rule, f"table {seated.number} already has its result")
        if entrant in seated.forfeits:
            raise RuleViolation(rule, f"{entrant} already forfeits table {seated.number}")
        if entrant in seated.arrived:
            raise RuleViolation(rule, f"{entrant} took their seat at table {seated.number}")
        if now_ms < current.no_show_deadline_ms:
            raise RuleViolation(
                rule,
                f"the start deadline of round {current.number} is "
                f"{current.no_show_deadline_ms} ms: nobody is absent before it",
            )
        self._no_show(round=current.number, table=seated.number, entrant=entrant, at_ms=now_ms)

    @event("NoShow")
    def _no_show(self, round: int, table: int, entrant: str, at_ms: int) -> None:
        self.round_states[round - 1].tables[table - 1].forfeits.append(entrant)

    def record_result(
        self,
        match_id: str | UUID,
        places: Mapping[str, int],
        digest: str,
        version: int,
        now_ms: int,
    ) -> None:
        """The result of the table whose match is ``match_id`` (TO-9.4): the place of each
        seat that did not forfeit, by entrant (as the ended match placed them; the
        application maps each seat to its entrant by token hash), and the match's final
        version and digest (the digest its ``MatchEnded`` carries, which the server
        signed). Forfeiting seats are placed after the rest. A table where fewer than the
        game's seats were present is decided without a match: ``digest`` "" and
        ``version`` 0. The round ends with its last result (TO-9.5)."""
        rule = "TO-9.4"
        self._require_not_ended()
        check_ms(rule, now_ms, "the time")
        mid = check_match_id(rule, match_id)
        current = self._current_round()
        table = None
        if current is not None and not current.ended:
            table = next((t for t in current.tables if t.match_id == mid), None)
        if current is None or table is None:
            raise InvalidArgument(rule, f"match {mid} is not a table of the round under way")
        if table.result is not None:
            raise RuleViolation(
                rule, f"table {table.number} has its result: only a ruling changes it (TO-10.3)"
            )
        present = [e for e in table.seats if e not in table.forfeits]
        if set(places) != set(present):
            raise InvalidArgument(
                rule,
                f"a result places every seat that played ({', '.join(present) or 'none'}) "
                "and no other",
            )
        check_places(rule, [places[e] for e in present])
        if len(present) >= self.min_seats:
            if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
                raise InvalidArgument(rule, "a match's final digest is 64 lower-case hex digits")
            if isinstance(version, bool) or not isinstance(version, int) or version < 1:
                raise InvalidArgument(rule, "a match's final version is 1 or more")
        elif digest or version:
            raise InvalidArgument(
                rule,
                f"table {table.number} had {len(present)} seat(s) present: it is decided "
                "without a match (no digest, version 0)",
            )
        last = len(present) + 1 if present else 1
        seat_places = [places.get(e, last) for e in table.seats]
        self._result_recorded(
            round=current.number,
            table=table.number,
            match_id=mid,
            seats=list(table.seats),
            places=seat_places,
            forfeited=[e for e in table.seats if e in table.forfeits],
            match_digest=digest,
            match_version=version,
            at_ms=now_ms,
        )
        if all(t.result is not None for t in current.tables):
            self._round_ended(
                round=current.number,
                ended_ms=now_ms,
                dispute_deadline_ms=now_ms + self.dispute_window_ms,
            )

    @event("ResultRecorded")
    def _result_recorded(
        self,
        round: int,
        table: int,
        match_id: str,
        seats: list[str],
        places: list[int],
        forfeited: list[str],
        match_digest: str,
        match_version: int,
        at_ms: int,
    ) -> None:
        state = self.round_states[round - 1].tables[table - 1]
        state.result = MatchResult(round, table, tuple(seats), tuple(places), frozenset(forfeited))
        state.digest = match_digest
        state.version = match_version

    @event("RoundEnded")
    def _round_ended(self, round: int, ended_ms: int, dispute_deadline_ms: int) -> None:
        state = self.round_states[round - 1]
        state.ended_ms = ended_ms
        state.dispute_deadline_ms = dispute_deadline_ms

    # ---- disputes and rulings (TO-10) -------------------------------------------------

    def file_dispute(
        self, entrant: str, match_id: str | UUID, version: int, text: str, now_ms: int
    ) -> int:
        """``entrant`` disputes the match ``match_id`` at ``version`` (0: its result as a
        whole), saying why in ``text`` (TO-10.1). Returns the dispute's number, from 1:
        the referees' queue is :meth:`open_disputes`."""
        rule = "TO-10.1"
        self._require_not_ended()
        check_ms(rule, now_ms, "the time")
        mid = check_match_id(rule, match_id)
        text = check_text(rule, text, "a dispute")
        if entrant not in self.registered:
            raise InvalidArgument(rule, f"{entrant!r} has not entered this tournament")
        found = self._table_of_match(mid)
        if found is None:
            raise InvalidArgument(rule, f"match {mid} is not a table of this tournament")
        state, table = found
        if entrant not in table.seats:
            raise NotPermitted(rule, f"{entrant} did not sit at table {table.number}")
        if table.result is None:
            raise RuleViolation(rule, f"table {table.number} has no result to dispute yet")
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidArgument(rule, "a version is a whole number")
        if not 0 <= version <= table.version:
            raise InvalidArgument(
                rule, f"match {mid} has versions 1 to {table.version} (0: the result itself)"
            )
        if state.dispute_deadline_ms is not None and now_ms > state.dispute_deadline_ms:
            raise RuleViolation(
                rule,
                f"the dispute window of round {state.number} closed at "
                f"{state.dispute_deadline_ms} ms",
            )
        if any(
            d.ruled is None and d.entrant == entrant and d.match_id == mid for d in self.disputes
        ):
            raise RuleViolation(rule, f"{entrant} already has an open dispute on this match")
        number = len(self.disputes) + 1
        self._dispute_filed(
            dispute=number,
            entrant=entrant,
            round=state.number,
            table=table.number,
            match_id=mid,
            version=version,
            text=text,
            at_ms=now_ms,
        )
        return number

    @event("DisputeFiled")
    def _dispute_filed(
        self,
        dispute: int,
        entrant: str,
        round: int,
        table: int,
        match_id: str,
        version: int,
        text: str,
        at_ms: int,
    ) -> None:
        self.disputes.append(
            Dispute(dispute, entrant, round, table, match_id, version, text, at_ms)
        )

    def open_disputes(self) -> list[Dispute]:
        """The referees' queue: disputes not ruled yet, oldest first."""
        return [d for d in self.disputes if d.ruled is None]

    def rule(self, judge: str, dispute: int, verdict: Verdict, reason: str, now_ms: int) -> int:
        """``judge``, a referee of the tournament (the application authenticated them by
        :meth:`referee_of`), rules on ``dispute`` (TO-10.2, TO-10.3). Returns the
        ruling's number, from 1."""
        rule = "TO-10.2"
        self._require_not_ended()
        check_ms(rule, now_ms, "the time")
        if judge not in self.referees:
            raise NotPermitted(rule, f"{judge!r} is not a referee of this tournament")
        if isinstance(dispute, bool) or not 1 <= dispute <= len(self.disputes):
            raise InvalidArgument(rule, f"there is no dispute {dispute}")
        filed = self.disputes[dispute - 1]
        if filed.ruled is not None:
            raise RuleViolation(rule, f"dispute {dispute} was ruled on (ruling {filed.ruled})")
        reason = check_text(rule, reason, "a ruling's reason")
        table = self.round_states[filed.round - 1].tables[filed.table - 1]
        details = self._verdict_fields(verdict, table)
        number = len(self.ruling_records) + 1
        self._ruled(
            ruling=number,
            dispute=dispute,
            judge=judge,
            kind=verdict.kind.value,
            reason=reason,
            at_ms=now_ms,
            round=filed.round,
            table=filed.table,
            **details,
        )
        return number

    def _verdict_fields(self, verdict: Verdict, table: TableState) -> dict[str, Any]:
        """What the ``Ruled`` event records of ``verdict``, checked (TO-10.3): every field,
        those of another kind of ruling empty."""
        fields: dict[str, Any] = {
            "places": [],
            "forfeited": [],
            "match_id": "",
            "version": 0,
            "entrant": "",
            "points": "",
        }
        return fields | self._verdict_details(verdict, table)

    def _verdict_details(self, verdict: Verdict, table: TableState) -> dict[str, Any]:
        rule = "TO-10.3"
        if isinstance(verdict, Stands):
            return {}
        if isinstance(verdict, ReplaceWith):
            if set(verdict.places) != set(table.seats):
                raise InvalidArgument(rule, "a replaced result places every seat of the table")
            places = [verdict.places[e] for e in table.seats]
            check_places(rule, places)
            if not set(verdict.forfeited) <= set(table.seats):
                raise InvalidArgument(rule, "only a seat of the table can forfeit")
            return {
                "places": places,
                "forfeited": [e for e in table.seats if e in verdict.forfeited],
            }
        if isinstance(verdict, ReplayFrom):
            if table.version < 1:
                raise RuleViolation(rule, f"no match was played at table {table.number} to replay")
            if not 1 <= verdict.version <= table.version:
                raise InvalidArgument(
                    rule, f"a replay forks the match at a version from 1 to {table.version}"
                )
            mid = check_match_id(rule, verdict.match_id)
            if mid in self._match_ids():
                raise InvalidArgument(rule, "the replay is a match of its own, never used before")
            return {"match_id": mid, "version": verdict.version}
        if isinstance(verdict, Penalise):
            if verdict.entrant not in self.entrants:
                raise InvalidArgument(rule, f"{verdict.entrant!r} is not in the field")
            points = Fraction(verdict.points)
            if not 0 < points <= MAX_PENALTY:
                raise InvalidArgument(
                    rule, f"a penalty takes more than 0 and at most {MAX_PENALTY} points"
                )
            return {"entrant": verdict.entrant, "points": str(points)}
        raise InvalidArgument(rule, "a ruling is stands, replace result, replay or penalty")

    @event("Ruled")
    def _ruled(
        self,
        ruling: int,
        dispute: int,
        judge: str,
        kind: str,
        reason: str,
        at_ms: int,
        round: int,
        table: int,
        places: list[int],
        forfeited: list[str],
        match_id: str,
        version: int,
        entrant: str,
        points: str,
    ) -> None:
        record = RulingRecord(
            ruling,
            dispute,
            judge,
            RulingKind(kind),
            reason,
            at_ms,
            round,
            table,
            tuple(places),
            tuple(forfeited),
            match_id,
            version,
            entrant,
            points,
        )
        self.ruling_records.append(record)
        self.disputes[dispute - 1].ruled = ruling
        if record.kind is RulingKind.REPLAY:
            state = self.round_states[round - 1]
            seated = state.tables[table - 1]
            seated.voided.append(
                {"match_id": seated.match_id, "digest": seated.digest, "version": seated.version}
            )
            seated.match_id = match_id
            seated.result = None
            seated.digest = ""
            seated.version = 0
            state.ended_ms = None
            state.dispute_deadline_ms = None

    # ---- results, rulings, standings (TO-5 to TO-7, TO-10.4) --------------------------

    def results(self, through_round: int | None = None) -> list[MatchResult]:
        """Every result recorded (byes included), as played: rulings not applied."""
        out: list[MatchResult] = []
        for state in self.round_states:
            if through_round is not None and state.number > through_round:
                break
            out += [MatchResult.bye(state.number, b.entrant) for b in state.byes]
            out += [t.result for t in state.tables if t.result is not None]
        return out

    def rulings(self, through_round: int | None = None) -> list[Ruling]:
        """The rulings that change results and points, in the order recorded (TO-6): a
        replacement (TO-6.1) and a penalty (TO-6.2) each; a replay voids every earlier
        replacement of its table (TO-10.3); a result that stands changes nothing."""
        out: list[Ruling] = []
        for r in self.ruling_records:
            if through_round is not None and r.round > through_round:
                continue
            if r.kind is RulingKind.REPLACE:
                out.append(
                    ReplaceResult(r.round, r.table, r.places, frozenset(r.forfeited), r.reason)
                )
            elif r.kind is RulingKind.PENALTY:
                out.append(Penalty(r.round, r.entrant, Fraction(r.points), r.reason))
            elif r.kind is RulingKind.REPLAY:
                out = [
                    x
                    for x in out
                    if not (
                        isinstance(x, ReplaceResult) and (x.round, x.table) == (r.round, r.table)
                    )
                ]
        return out

    def standings(self, through_round: int | None = None) -> tuple[Standing, ...]:
        """The standings from the recorded results and rulings (TO-7), after round
        ``through_round`` (None: everything so far), the tie-breaks the organiser named."""
        return standings(
            self.field(),
            self.results(through_round),
            self.rulings(through_round),
            self.tie_breaks,
            [e for e in self.withdrawn if e in self.field()],
        )

    # ---- the end (TO-11) ----------------------------------------------------------

    def end_refusal(self, now_ms: int) -> RuleViolation | None:
        """Why the tournament may not end at ``now_ms``, or None (TO-11.1)."""
        rule = "TO-11.1"
        if self.ended:
            return RuleViolation(rule, "the tournament has ended")
        if not self.round_states or len(self.round_states) < self.total_rounds():
            return RuleViolation(
                rule, f"{len(self.round_states)} of {self.total_rounds()} rounds have started"
            )
        last = self.round_states[-1]
        if not last.ended:
            return RuleViolation(rule, f"round {last.number} has not ended")
        assert last.dispute_deadline_ms is not None
        if now_ms < last.dispute_deadline_ms:
            return RuleViolation(
                rule, f"the last dispute window is open until {last.dispute_deadline_ms} ms"
            )
        if self.open_disputes():
            return RuleViolation(rule, "some disputes have not been ruled on")
        return None

    def end(self, now_ms: int) -> None:
        """End the tournament with its result sheet (TO-11.2), signed when the server gave
        a signer; the seed is revealed in it."""
        check_ms("TO-11.1", now_ms, "the time")
        refusal = self.end_refusal(now_ms)
        if refusal is not None:
            raise refusal
        self._tournament_ended(
            standings=[standing_fields(row) for row in self.standings()],
            matches=self.match_list(),
            rulings=[r.to_dict() for r in self.ruling_records],
            seed=self.seed,
            at_ms=now_ms,
        )

    def match_list(self) -> list[dict[str, Any]]:
        """Every match of the tournament with its final digest and version, table by
        table: the one whose result counts, and any a replay voided."""
        return [
            {
                "round": state.number,
                "table": t.number,
                "match_id": t.match_id,
                "digest": t.digest,
                "version": t.version,
                "voided": [dict(v) for v in t.voided],
            }
            for state in self.round_states
            for t in state.tables
        ]

    @event(TournamentEnded)
    def _tournament_ended(
        self,
        standings: list[dict[str, Any]],
        matches: list[dict[str, Any]],
        rulings: list[dict[str, Any]],
        seed: str,
        at_ms: int,
        signature: str = "",
        public_key: str = "",
    ) -> None:
        self.ended = True
        self.final_standings = [dict(row) for row in standings]

    # ---- helpers ---------------------------------------------------------------------

    def _require_not_ended(self) -> None:
        if self.ended:
            raise RuleViolation("TO-11.1", "the tournament has ended")

    def _current_round(self) -> RoundState | None:
        return self.round_states[-1] if self.round_states else None

    def _match_ids(self) -> set[str]:
        return {
            mid
            for state in self.round_states
            for t in state.tables
            for mid in (t.match_id, *(v["match_id"] for v in t.voided))
        }

    def _table_of_match(self, match_id: str) -> tuple[RoundState, TableState] | None:
        for state in self.round_states:
            for t in state.tables:
                if t.match_id == match_id:
                    return state, t
        return None

    def table_of_match(self, match_id: str | UUID) -> tuple[int, int] | None:
        """The round and table whose match is ``match_id`` now, if any."""
        found = self._table_of_match(str(match_id))
        return None if found is None else (found[0].number, found[1].number)

    def round_state(self, number: int) -> RoundState:
        return self.round_states[number - 1]

    def next_round_due_ms(self) -> int | None:
        """The earliest time the next round may start (TO-9.1), for the server's timer:
        the end of the last round's dispute window; None while a round is under way,
        before the first round (the organiser starts it) and once all have started. Open
        disputes hold it back further (:meth:`start_refusal`). Each round's start
        deadline, for no-shows, is its :attr:`RoundState.no_show_deadline_ms`."""
        current = self._current_round()
        if self.ended or current is None or not current.ended:
            return None
        if len(self.round_states) >= self.total_rounds():
            return None
        return current.dispute_deadline_ms


def is_final(evt: object) -> bool:
    """Whether this is a tournament's last event: nothing is recorded after it."""
    return isinstance(evt, Tournament.TournamentEnded)


#: Rows of the store may name the tournament and its events (domain.kernel.topics).
register_aggregate(Tournament)

__all__ = [
    "Dispute",
    "RoundState",
    "RulingRecord",
    "TableState",
    "Tournament",
    "check_token_hash",
    "is_final",
    "standing_fields",
]
