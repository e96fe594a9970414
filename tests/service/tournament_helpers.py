"""Running a tournament over real gRPC with the generated stubs: its tables' matches are
ended by the organiser's stop command (the organisers see every table as its referee),
so a round takes a few calls whatever the game."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import grpc

from tests.service.helpers import ORGANISER_TOKEN, bearer
from totem.v1 import common_pb2, match_service_pb2_grpc, tournament_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms
from totem.v1 import tournament_service_pb2 as tp

#: How long a test waits for the server to record what it observes by itself.
SETTLE_BOUND = 30.0


@dataclass
class Field:
    """A tournament under test: its id and the tokens handed out."""

    tournament_id: str
    tokens: dict[str, str]
    referee_token: str = ""


class Stubs:
    """The two services' stubs, and the organiser whose token runs the tournaments."""

    def __init__(self, port: int, organiser_token: str = ORGANISER_TOKEN) -> None:
        self.organiser = bearer(organiser_token)
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.tournaments = tournament_service_pb2_grpc.TournamentServiceStub(self.channel)
        self.matches = match_service_pb2_grpc.MatchServiceStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def create(
        self,
        entrants: Sequence[str],
        *,
        game: common_pb2.Game.ValueType = common_pb2.GAME_TRIBES,
        format: tp.TournamentFormat.ValueType = tp.TOURNAMENT_FORMAT_SWISS,
        rounds: int = 0,
        table_size: int = 2,
        dispute_window_ms: int = 0,
        no_show_ms: int | None = None,
        duplicate: bool = False,
        referee: bool = True,
    ) -> Field:
        created = await self.tournaments.CreateTournament(
            tp.CreateTournamentRequest(
                game=game,
                format=format,
                rounds=rounds,
                table_size=table_size,
                dispute_window_ms=dispute_window_ms,
                no_show_ms=no_show_ms,
                duplicate=duplicate,
                title="Test open",
            ),
            metadata=self.organiser,
        )
        field = Field(created.tournament_id, {})
        for name in entrants:
            added = await self.tournaments.AddEntrant(
                tp.AddEntrantRequest(tournament_id=field.tournament_id, name=name),
                metadata=self.organiser,
            )
            field.tokens[name] = added.entrant_token
        if referee:
            appointed = await self.tournaments.AppointReferee(
                tp.AppointRefereeRequest(tournament_id=field.tournament_id, name="Ada"),
                metadata=self.organiser,
            )
            field.referee_token = appointed.referee_token
        return field

    async def start_round(self, field: Field) -> tp.TournamentRound:
        started = await self.tournaments.StartRound(
            tp.StartRoundRequest(tournament_id=field.tournament_id), metadata=self.organiser
        )
        return started.round

    async def seat(self, field: Field, entrant: str) -> tp.TakeSeatResponse:
        return await self.tournaments.TakeSeat(
            tp.TakeSeatRequest(tournament_id=field.tournament_id),
            metadata=bearer(field.tokens[entrant]),
        )

    async def seat_table(self, field: Field, table: tp.TournamentTable) -> dict[str, int]:
        """Every entrant of ``table`` takes their seat: their seat by entrant."""
        return {e: (await self.seat(field, e)).seat for e in table.seats}

    async def stop(self, match_id: str, places: Mapping[int, int]) -> None:
        """End a table's match with these places by seat, as its referee (an organiser)."""
        await self.matches.Act(
            ms.ActRequest(
                match_id=match_id,
                stop=ms.StopMatch(
                    statement="ended by the tests",
                    result=[common_pb2.Placement(seat=s, place=p) for s, p in places.items()],
                ),
            ),
            metadata=self.organiser,
        )

    async def play_table(
        self, field: Field, table: tp.TournamentTable, winner: str | None = None
    ) -> None:
        """Seat the table and end its match with ``winner`` (default: its first seat)
        placed first, the others second; return once the tournament recorded it."""
        seats = await self.seat_table(field, table)
        first = winner or table.seats[0]
        await self.stop(table.match_id, {s: 1 if e == first else 2 for e, s in seats.items()})
        await self.recorded(field, table.match_id)

    async def recorded(self, field: Field, match_id: str) -> None:
        """Wait, on the tournament's stream, for the result of ``match_id`` (TO-9.4)."""
        await self._first(
            field,
            lambda e: (
                e.name == "ResultRecorded" and json.loads(e.fields_json)["match_id"] == match_id
            ),
        )

    async def first(self, field: Field, name: str, **fields: object) -> tp.TournamentEvent:
        """The first event named ``name`` whose fields include ``fields``."""
        return await self._first(
            field,
            lambda e: (
                e.name == name
                and all(json.loads(e.fields_json).get(k) == v for k, v in fields.items())
            ),
        )

    async def _first(
        self, field: Field, wanted: Callable[[tp.TournamentEvent], bool]
    ) -> tp.TournamentEvent:
        async def read() -> tp.TournamentEvent:
            call = self.tournaments.WatchTournament(
                tp.WatchTournamentRequest(tournament_id=field.tournament_id)
            )
            async for event in call:
                if wanted(event):
                    call.cancel()
                    return event
            raise AssertionError("the tournament's stream ended first")

        return await asyncio.wait_for(read(), SETTLE_BOUND)

    async def get(self, field: Field) -> tp.Tournament:
        answer = await self.tournaments.GetTournament(
            tp.GetTournamentRequest(tournament_id=field.tournament_id)
        )
        return answer.tournament

    async def events(self, field: Field, until: str, after: int = 0) -> list[tp.TournamentEvent]:
        """The tournament's events from its stream, up to the first named ``until``."""
        seen: list[tp.TournamentEvent] = []

        async def read() -> None:
            call = self.tournaments.WatchTournament(
                tp.WatchTournamentRequest(tournament_id=field.tournament_id, after_version=after)
            )
            async for event in call:
                seen.append(event)
                if event.name == until:
                    call.cancel()
                    return

        await asyncio.wait_for(read(), SETTLE_BOUND)
        return seen

    async def round_ended(self, field: Field, number: int) -> None:
        """Wait, on the tournament's stream, for round ``number`` to end."""
        await self._first(
            field,
            lambda e: e.name == "RoundEnded" and json.loads(e.fields_json)["round"] == number,
        )
