"""Tournaments played to the end in a real event store, for the tests of ``totem-replay
tournament``: every table's match created, seated and ended in the store as the server
would (played, forked and replayed, or stopped by the referee), every result recorded
from the ended match, disputes filed and ruled each way, the sheet signed."""

from __future__ import annotations

import copy
import hashlib
import random
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from replay_support import Stamps, play

from domain.games import GAMES
from domain.jungle_speed import JungleSpeed, Options
from domain.kernel.chain import stored_event_digest
from domain.kernel.fork import fork
from domain.kernel.match import MatchStatus
from domain.tournament import Format, Penalise, ReplaceWith, ReplayFrom, Stands, Tournament
from storage.arena import Arena
from storage.keys import ServerKey, ephemeral
from storage.tournaments import TournamentStore

GAME = "jungle_speed"
ORGANISER = hashlib.sha256(b"the organiser's token").hexdigest()
REFEREE = "Rhea"
WINDOW_MS = 60_000
NO_SHOW_MS = 30_000
START_MS = 1_700_000_000_000
#: The organiser's options for every table (a duplicate table's luck is added to them).
OPTIONS = Options(variant="ES", max_players=2)
TITLE = 'Spring <Open> & "Cup"'


def token_hash(name: str) -> str:
    """The SHA-256 of the bearer token the application would have given ``name``."""
    return hashlib.sha256(f"token of {name}".encode()).hexdigest()


@dataclass
class Played:
    """A tournament in the store, and what the tests need to know of it."""

    tournament: Tournament
    key: ServerKey | None
    #: The match of each (round, table), and the matches voided by a replay.
    matches: dict[tuple[int, int], JungleSpeed] = field(default_factory=dict)
    voided: dict[tuple[int, int], JungleSpeed] = field(default_factory=dict)

    @property
    def id(self) -> UUID:
        return self.tournament.id


class Clock:
    """Wall milliseconds that only go forward."""

    def __init__(self) -> None:
        self.ms = START_MS

    def __call__(self, step: int = 1_000) -> int:
        self.ms += step
        return self.ms


def new_tournament(
    entrants: list[str], *, format: Format, duplicate: bool, rounds: int | None = None
) -> Tournament:
    tournament = Tournament.create(
        organiser_token_hash=ORGANISER,
        title=TITLE,
        game=GAME,
        options=OPTIONS.to_dict(),
        format=format,
        table_size=2,
        seed=secrets.token_bytes(32),
        rounds=rounds,
        dispute_window_ms=WINDOW_MS,
        no_show_ms=NO_SHOW_MS,
        duplicate=duplicate,
    )
    for name in entrants:
        tournament.add_entrant(name, token_hash(name))
    tournament.appoint_referee(REFEREE, token_hash(REFEREE))
    return tournament


def table_options(
    tournament: Tournament, round_number: int, luck_round: int | None = None
) -> Options:
    """A table's options: the organiser's, with the luck of the round's seed for a
    duplicate round (``luck_round``: another round's luck, as a faulty server would)."""
    seed = tournament.duplicate_seed_of(luck_round or round_number)
    if seed is None:
        return OPTIONS
    return GAMES[GAME].duplicate_luck(OPTIONS, seed, 2)


def save_new(arena: Arena, tournament: Tournament) -> None:
    """Save a tournament never saved before with its entry in the list of tournaments,
    as the server's creation does (storage.tournaments)."""
    logged = TournamentStore(arena).log.trigger_event(
        None, tournament_id=tournament.id, game=tournament.game
    )
    arena.save(tournament, logged)


def create_match(arena: Arena, options: Options, key: ServerKey | None) -> JungleSpeed:
    created = arena.create_match(lambda seed: GAMES[GAME].create(options, seed, b"", ""))
    assert isinstance(created, JungleSpeed)
    created.signer = key.signer() if key else None
    return created


def seat(match: JungleSpeed, seats: tuple[str, ...], stamps: Stamps) -> None:
    """The table's entrants take their seats in table order, each with their token."""
    for name in seats:
        match.join(name, b"", token_hash(name), stamps())


def places_of(match: JungleSpeed, seats: tuple[str, ...]) -> dict[str, int]:
    """The places the ended match gave the table's entrants (seat i: the i-th)."""
    assert match.status is MatchStatus.ENDED
    return {seats[r["seat"]]: r["place"] for r in match.result}


def start_round(
    arena: Arena,
    tournament: Tournament,
    now: int,
    key: ServerKey | None,
    luck: Mapping[int, int] | None = None,
) -> list[JungleSpeed]:
    """Start the next round: one match per table of its pairing, seated (``luck``: the
    round whose luck a table's match is given, by table, when not its own)."""
    paired = tournament.pairing(now)
    stamps = Stamps(now)
    matches = []
    for table in paired.tables:
        options = table_options(tournament, paired.number, (luck or {}).get(table.number))
        match = create_match(arena, options, key)
        seat(match, table.seats, stamps)
        matches.append(match)
    tournament.start_round(now, [m.id for m in matches])
    return matches


def finish(arena: Arena, tournament: Tournament, match: JungleSpeed, now: int) -> None:
    """Save the ended match and record its result."""
    arena.save(match)
    found = tournament.table_of_match(match.id)
    assert found is not None
    seats = tournament.round_state(found[0]).tables[found[1] - 1].seats
    tournament.record_result(match.id, places_of(match, seats), match.digest, match.version, now)


def played_to_the_end(arena: Arena, match: JungleSpeed, moves: int) -> JungleSpeed:
    play(match, Stamps(START_MS), random.Random(moves), 100_000)
    return match


def stopped(match: JungleSpeed, first: int) -> JungleSpeed:
    """The referee stops the match with the result they state: seat ``first`` wins."""
    result = [{"seat": s, "place": 1 if s == first else 2} for s in range(2)]
    match.stop("the referee stops the match: time is up", result)
    return match


def swiss_cup(arena: Arena, *, duplicate: bool = True) -> Played:
    """Four entrants, two Swiss rounds of two tables, duplicate tables: round 1's matches
    played (one disputed and replayed from a fork, the fork played to its end), round
    2's one played and one stopped by the referee; a dispute that stands, one replayed,
    one whose result is replaced, and a penalty. Signed."""
    key = ephemeral()
    tournament = new_tournament(
        ["Ada", "Bo", "Cy", "Di"], format=Format.SWISS, duplicate=duplicate, rounds=2
    )
    tournament.signer = key.signer()
    played = Played(tournament, key)
    clock = Clock()

    first = start_round(arena, tournament, clock(), key)
    for number, match in enumerate(first, start=1):
        played.matches[(1, number)] = played_to_the_end(arena, match, number)
        finish(arena, tournament, match, clock())
    t1, t2 = (m.id for m in first)
    disputer = tournament.round_state(1).tables[0].seats[1]
    stands = tournament.file_dispute(disputer, t1, 0, "I was distracted at the start", clock())
    tournament.rule(REFEREE, stands, Stands(), "nothing in the match supports it", clock())
    again = tournament.file_dispute(
        tournament.round_state(1).tables[1].seats[0], t2, 10, "a grab was mis-stamped", clock()
    )
    fork_of = first[1]
    history = arena.events_after(fork_of.id)[:10]
    seats = tournament.round_state(1).tables[1].seats
    replay = arena.create_match(
        lambda seed: fork(
            JungleSpeed,
            history,
            seed,
            secrets.token_bytes(32),
            "",
            [token_hash(s) for s in seats],
            Stamps(clock())(),
        )
    )
    assert isinstance(replay, JungleSpeed)
    replay.signer = key.signer()
    tournament.rule(REFEREE, again, ReplayFrom(10, str(replay.id)), "the stamps show it", clock())
    played.voided[(1, 2)] = fork_of
    played.matches[(1, 2)] = played_to_the_end(arena, replay, 7)
    finish(arena, tournament, replay, clock())

    second = start_round(arena, tournament, clock(WINDOW_MS + 1_000), key)
    played.matches[(2, 1)] = played_to_the_end(arena, second[0], 3)
    finish(arena, tournament, second[0], clock())
    played.matches[(2, 2)] = stopped(second[1], first=0)
    finish(arena, tournament, second[1], clock())
    table = tournament.round_state(2).tables[1]
    upheld = tournament.file_dispute(table.seats[1], second[1].id, 0, "the stop was wrong", clock())
    winner, loser = table.seats[1], table.seats[0]
    tournament.rule(
        REFEREE, upheld, ReplaceWith({winner: 1, loser: 2}), "the clock was mis-set", clock()
    )
    penalty = tournament.file_dispute(winner, second[1].id, 0, "they talked during play", clock())
    tournament.rule(REFEREE, penalty, Penalise(loser, 1), "talking at the table", clock())
    tournament.end(clock(WINDOW_MS + 1_000))
    save_new(arena, tournament)
    return played


def wrong_luck(arena: Arena) -> Played:
    """Two entrants, one duplicate round, whose one table's match was created with the
    luck of round 2's seed, not round 1's (TO-12.1). Stopped by the referee, signed."""
    key = ephemeral()
    tournament = new_tournament(["Eve", "Fay"], format=Format.ROUND_ROBIN, duplicate=True)
    tournament.signer = key.signer()
    played = Played(tournament, key)
    clock = Clock()
    (match,) = start_round(arena, tournament, clock(), key, luck={1: 2})
    played.matches[(1, 1)] = stopped(match, first=1)
    finish(arena, tournament, match, clock())
    tournament.end(clock(WINDOW_MS + 1_000))
    save_new(arena, tournament)
    return played


def under_way(arena: Arena) -> Played:
    """Two entrants whose one round has started: the tournament has not ended."""
    tournament = new_tournament(["Gus", "Hal"], format=Format.ROUND_ROBIN, duplicate=False)
    played = Played(tournament, None)
    (match,) = start_round(arena, tournament, Clock()(), None)
    played.matches[(1, 1)] = match
    arena.save(match)
    save_new(arena, tournament)
    return played


# ---- forging a sheet ---------------------------------------------------------------------


def rechained(events: list[Any], position: int, change: Any) -> list[Any]:
    """``events`` with ``change(fields)`` applied to the fields of the event at
    ``position`` (from 1), and the chain rewritten from it, as a forger who knows the
    chain would: every digest then holds, and the signature no longer does."""
    out = [copy.copy(e) for e in events]
    for evt in out:
        object.__setattr__(evt, "__dict__", copy.deepcopy(vars(evt)))
    change(vars(out[position - 1]))
    for i in range(position - 1, len(out)):
        data = vars(out[i])
        if i > 0:
            data["prev_digest"] = vars(out[i - 1])["digest"]
        data["digest"] = stored_event_digest(out[i])
    return out


def version_of(events: list[Any], name: str, nth: int = 0) -> int:
    return [e.originator_version for e in events if type(e).__name__ == name][nth]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
