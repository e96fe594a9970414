"""Whole tournaments played by bots through the Python client, against a real server on
loopback: every entrant's bot takes its seat at each round's table with its entrant token
and plays the match (TO-9.2), the organiser starts each round once the rules allow it
(TO-9.1), disputes are filed and ruled on (TO-10), the server ends the tournament and its
result sheet verifies offline (TO-11).

The sheet is verified with ``domain.tournament.sheet.verify`` over the events decoded
from the sheet file, its Ed25519 signature with the server's key, and by
``totem-replay tournament verify`` with the store and that key; the standings are
recomputed from those events (TO-10.4) and compared with those GetStandings serves.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.kernel.topics import chained_event_class
from domain.tournament.aggregate import is_final
from domain.tournament.sheet import recompute_standings, sheet_message, verify
from entrypoints.totem_replay import main as totem_replay
from replay.bundle import rebuild
from tests.client.support import BOUND
from totem.v1 import common_pb2
from totem_client import Client
from totem_client.bots import TABLES
from totem_client.bots.command import CountingBot
from totem_client.games.jungle_speed import jungle_speed_options
from totem_client.games.tribes import tribes_options
from totem_client.games.village import village_options
from totem_client.session import Session
from totem_client.tournament import (
    Penalise,
    Replace,
    Stands,
    TournamentClient,
    TournamentEvent,
)
from totem_client.tournament.entrant import play_entrant
from totem_client.tournament.organiser import Broadcast, conduct

#: A whole tournament is longer than one wait; still a bound, not a timing assertion.
TOURNAMENT_BOUND = 300.0
#: Long enough for the test to file its disputes on round 1's tables (it files them as
#: the first result of round 1 is recorded, before the round has ended); each round
#: then waits this long before the next starts.
DISPUTE_WINDOW_MS = 1500


def _options(game: str) -> Any:
    """Small matches, as the bots' own tests play them."""
    if game == "jungle_speed":
        return jungle_speed_options(turn_timeout_ms=200)
    if game == "tribes":
        return tribes_options(board_size=3)
    return village_options(deadline_ms=600_000)


def _bot(game: str) -> Callable[[Session], CountingBot]:
    table = TABLES[game]
    fast: dict[str, Any] = {
        "jungle_speed": {"reaction_ms": (1.0, 5.0), "reveal_delay_ms": (1.0, 3.0)},
        "tribes": {"think_ms": (0.0, 2.0)},
        "village": {"think_ms": (0.0, 1.0)},
    }[game]
    return lambda session: table.bot(session, **fast)


def decoded_sheet(sheet: bytes) -> tuple[dict[str, Any], list[Any]]:
    """The sheet's header and its events, rebuilt from their lines as the store held
    them (nothing the lines name is imported)."""
    lines = sheet.decode().splitlines()
    header = json.loads(lines[0])
    events = [
        rebuild(json.loads(line), chained_event_class, lambda fields: None) for line in lines[1:]
    ]
    return header, events


@dataclass
class Referee:
    """Files two disputes on the first table of round 1 to have a result, one by each
    seat, and rules on them at once: the first stands, the second replaces the result
    with the places swapped (TO-10.1, TO-10.3)."""

    tournaments: TournamentClient
    tournament_id: str
    tokens: dict[str, str]
    referee_token: str
    penalise: bool = False
    ruled: list[int] = field(default_factory=list)
    disputed: dict[str, Any] = field(default_factory=dict)

    async def follow(self, events: Any) -> None:
        async for event in events:
            if not self.disputed and event.name == "ResultRecorded":
                await self._dispute(event)

    async def _dispute(self, event: TournamentEvent) -> None:
        result = event.fields
        self.disputed = result
        first, second = result["seats"][:2]
        tid, match_id = self.tournament_id, result["match_id"]
        d1 = await self.tournaments.file_dispute(
            tid, match_id, "the totem was grabbed late", token=self.tokens[first]
        )
        d2 = await self.tournaments.file_dispute(
            tid, match_id, "my last move was not counted", token=self.tokens[second], version=1
        )
        queue = await self.tournaments.list_disputes(tid, token=self.referee_token)
        assert [(d.number, d.entrant) for d in queue] == [(d1, first), (d2, second)]
        stands = await self.tournaments.rule(
            tid, d1, Stands(), "the grab was in time", token=self.referee_token
        )
        if self.penalise:
            verdict: Any = Penalise(first, "1/2")
        else:
            places = result["places"]
            verdict = Replace({first: places[1], second: places[0]})
        other = await self.tournaments.rule(
            tid, d2, verdict, "the move counts: places swapped", token=self.referee_token
        )
        self.ruled = [stands.ruling, other.ruling]


@pytest.mark.parametrize(
    ("game", "penalise"), [("jungle_speed", False), ("tribes", True), ("village", False)]
)
async def test_an_eight_entrant_swiss_tournament_is_played_to_a_verified_sheet(
    client: Client, game: str, penalise: bool, tmp_path: Path
) -> None:
    """TO-3, TO-9, TO-10, TO-11: eight bots play a three-round Swiss tournament to its
    end; one dispute stands and one replaces the result (or penalises); the standings
    recomputed from the sheet's events are those the server serves, and the sheet
    verifies offline with the server's signature, by the domain's checks and by
    `totem-replay tournament verify`."""
    tournaments = TournamentClient.of(client)
    created = await tournaments.create(
        game,
        _options(game),
        format="swiss",
        rounds=3,
        dispute_window_ms=DISPUTE_WINDOW_MS,
        title=f"{game} open",
    )
    tid = created.tournament_id
    tickets = [await tournaments.add_entrant(tid, f"bot-{i}") for i in range(1, 9)]
    referee_token = (await tournaments.appoint_referee(tid, "Ada")).token
    referee = Referee(tournaments, tid, {t.name: t.token for t in tickets}, referee_token, penalise)
    broadcast = Broadcast()
    bot = _bot(game)
    async with asyncio.timeout(TOURNAMENT_BOUND), asyncio.TaskGroup() as group:
        group.create_task(broadcast.feed(tournaments.watch(tid)))
        group.create_task(referee.follow(broadcast.reader()))
        players = [
            group.create_task(
                play_entrant(
                    client,
                    tid,
                    ticket.token,
                    bot,
                    tournaments=tournaments,
                    events=broadcast.reader(),
                    name=ticket.name,
                    game=game,
                )
            )
            for ticket in tickets
        ]
        final = await conduct(tournaments, tid, events=broadcast.reader())

    # Every round played, every entrant at one table a round (eight: no byes).
    assert final.ended and final.summary.rounds == 3 and len(final.rounds) == 3
    assert all(len(r.tables) == 4 and r.tables_finished == 4 for r in final.rounds)
    for task in players:
        run = task.result()
        assert [t.seat.round for t in run.tables] == [1, 2, 3]
        assert all(t.summary.status == common_pb2.MATCH_STATUS_ENDED for t in run.tables)
    # TO-3.4: nobody met anyone twice.
    pairs = [frozenset(t.seats) for r in final.rounds for t in r.tables]
    assert len(set(pairs)) == len(pairs)

    # One dispute stood, one changed the result (TO-10.3).
    assert referee.ruled == [1, 2]
    kinds = [r.kind for r in final.rulings]
    assert kinds == ["stands", "penalty" if penalise else "replace-result"]
    assert all(r.judge == "Ada" and r.round == 1 for r in final.rulings)
    assert final.open_disputes == 0

    # The standings served are those recomputed from the sheet's events (TO-10.4).
    served = await tournaments.standings(tid)
    sheet = await asyncio.wait_for(tournaments.result_sheet(tid), BOUND)
    header, events = decoded_sheet(sheet.sheet)
    assert header["tournament_id"] == tid and header["events"] == len(events)
    recomputed = recompute_standings(events)
    assert [(r.rank, r.entrant, r.points) for r in served.rows] == [
        (r.rank, r.entrant, r.points) for r in recomputed
    ]
    assert [(r.buchholz, r.sonneborn_berger) for r in served.rows] == [
        (r.buchholz, r.sonneborn_berger) for r in recomputed
    ]

    # The sheet verifies offline: chain, pairings, seed, the sheet itself (TO-11.2) ...
    assert verify(events) == []
    assert is_final(events[-1])
    assert vars(events[-1])["digest"] == sheet.digest
    # ... and its signature is the server's, over the tournament's final digest.
    _, key = await client.server_key()
    assert sheet.public_key == key
    Ed25519PublicKey.from_public_bytes(key).verify(
        sheet.signature, sheet_message(UUID(tid), events[-1])
    )

    # The judge's tool agrees, from the sheet file and the store's matches, with the
    # server's key (`totem-replay tournament verify`).
    sheet_file = tmp_path / "sheet.jsonl"
    sheet_file.write_bytes(sheet.sheet)
    judged = await asyncio.to_thread(
        CliRunner().invoke,
        totem_replay,
        ["--db", str(tmp_path / "client.db"), "tournament", "verify", str(sheet_file),
         "--key", key.hex()],
    )  # fmt: skip
    assert judged.exit_code == 0, judged.output
