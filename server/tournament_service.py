"""The gRPC TournamentService: handlers that translate requests into the tournament use
cases (:class:`server.tournaments.Tournaments`) and results into responses.

What a caller is shown of a tournament comes from the domain's view of its events
(:mod:`domain.tournament.views`) and from values no view hides (names, pairings,
results, rulings, standings): never a token hash, and the seeds only once the result
sheet reveals them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from fractions import Fraction
from typing import Any
from uuid import UUID

import grpc

from domain.kernel.views import Viewer, options_view
from domain.tournament import Format, Penalise, ReplaceWith, ReplayFrom, Stands, TieBreak
from domain.tournament.aggregate import RoundState, RulingRecord, Tournament, standing_fields
from domain.tournament.verdicts import Verdict
from server import auth, codec
from server.errors import ServiceError
from server.service import echo, page_request, parse_id, parse_match_id, refusals, refuse
from server.tournaments import Tournaments
from totem.v1 import tournament_service_pb2 as pb
from totem.v1 import tournament_service_pb2_grpc

FORMATS = {
    pb.TOURNAMENT_FORMAT_ROUND_ROBIN: Format.ROUND_ROBIN,
    pb.TOURNAMENT_FORMAT_SWISS: Format.SWISS,
    pb.TOURNAMENT_FORMAT_SINGLE_ELIMINATION: Format.SINGLE_ELIMINATION,
}
FORMAT_ENUMS = {v: k for k, v in FORMATS.items()}
TIE_BREAKS = {
    pb.TIE_BREAK_BUCHHOLZ: TieBreak.BUCHHOLZ,
    pb.TIE_BREAK_MEDIAN_BUCHHOLZ: TieBreak.MEDIAN_BUCHHOLZ,
    pb.TIE_BREAK_SONNEBORN_BERGER: TieBreak.SONNEBORN_BERGER,
    pb.TIE_BREAK_HEAD_TO_HEAD: TieBreak.HEAD_TO_HEAD,
}
TIE_BREAK_ENUMS = {v: k for k, v in TIE_BREAKS.items()}


def tournament_id_of(text: str) -> UUID:
    return parse_id(text, "tournament_id", "a tournament id")


def bad(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message)


def points_of(text: str) -> Fraction:
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise bad(f"points {echo(text)} is not a number") from None


def standing_message(row: dict[str, Any]) -> pb.Standing:
    """A row of the standings as the result sheet records it (exact fractions in text,
    :func:`domain.tournament.aggregate.standing_fields`)."""
    return pb.Standing(
        rank=row["rank"],
        entrant=row["entrant"],
        seed=row["seed"],
        points=row["points"],
        buchholz=row["buchholz"],
        median_buchholz=row["median_buchholz"],
        sonneborn_berger=row["sonneborn_berger"],
        head_to_head=row["head_to_head"] or "",
        played=row["played"],
        byes=row["byes"],
        withdrawn=row["withdrawn"],
        separated_by=row["separated_by"] or "",
    )


def round_message(state: RoundState) -> pb.TournamentRound:
    return pb.TournamentRound(
        number=state.number,
        tables=[
            pb.TournamentTable(
                number=t.number,
                seats=list(t.seats),
                reason=t.reason,
                match_id=t.match_id,
                places=list(t.result.places) if t.result is not None else [],
                forfeited=[e for e in t.seats if e in t.forfeits],
                digest=t.digest,
                version=t.version,
            )
            for t in state.tables
        ],
        byes=[pb.TournamentBye(entrant=b.entrant, reason=b.reason) for b in state.byes],
        started_ms=state.started_ms,
        no_show_deadline_ms=state.no_show_deadline_ms,
        ended_ms=state.ended_ms or 0,
        dispute_deadline_ms=state.dispute_deadline_ms or 0,
    )


def summary_message(tournament: Tournament) -> pb.TournamentSummary:
    return pb.TournamentSummary(
        tournament_id=str(tournament.id),
        title=tournament.title,
        game=codec.GAME_ENUMS[tournament.game],
        format=FORMAT_ENUMS[tournament.format],
        rounds=tournament.total_rounds(),
        rounds_started=len(tournament.round_states),
        entrants=len(tournament.field()),
        ended=tournament.ended,
        version=tournament.version,
    )


def rows_of(tournament: Tournament, through_round: int | None = None) -> list[pb.Standing]:
    """The final standings once recorded; else as they stand after ``through_round``."""
    if tournament.ended and through_round is None:
        return [standing_message(row) for row in tournament.final_standings]
    return [standing_message(standing_fields(row)) for row in tournament.standings(through_round)]


def tournament_message(tournament: Tournament) -> pb.Tournament:
    """The tournament as anyone may see it."""
    message = pb.Tournament(
        summary=summary_message(tournament),
        table_size=tournament.table_size,
        tie_breaks=[TIE_BREAK_ENUMS[t] for t in tournament.tie_breaks if t in TIE_BREAK_ENUMS],
        dispute_window_ms=tournament.dispute_window_ms,
        no_show_ms=tournament.no_show_ms,
        duplicate=tournament.duplicate,
        entrants=[
            pb.Entrant(
                name=name,
                seed=seed,
                withdrawn_from_round=tournament.withdrawn.get(name, 0),
            )
            for seed, name in enumerate(tournament.registered, start=1)
        ],
        referees=list(tournament.referees),
        rounds=[round_message(s) for s in tournament.round_states],
        rulings=[ruling_message(r) for r in tournament.ruling_records],
        standings=rows_of(tournament),
        open_disputes=len(tournament.open_disputes()),
        seed_commitment=bytes.fromhex(tournament.seed_commitment),
        next_round_due_ms=tournament.next_round_due_ms() or 0,
        auto_rounds=tournament.auto_rounds,
    )
    game_codec = codec.codec_for(tournament.game)
    view = options_view(tournament.options, (), Viewer.spectator())
    getattr(message, game_codec.FIELD).CopyFrom(game_codec.options_message(view))
    return message


def ruling_message(record: RulingRecord) -> pb.Ruling:
    row = record.to_dict()
    shown = {"ruling", "dispute", "judge", "kind", "reason", "round", "table"}
    return pb.Ruling(
        number=record.number,
        dispute=record.dispute,
        judge=record.judge,
        kind=record.kind.value,
        reason=record.reason,
        round=record.round,
        table=record.table,
        details_json=json.dumps({k: v for k, v in row.items() if k not in shown}, sort_keys=True),
    )


def verdict_of(message: pb.Verdict) -> Verdict:
    kind = message.WhichOneof("verdict")
    if kind == "stands":
        return Stands()
    if kind == "replace":
        return ReplaceWith(
            {p.entrant: p.place for p in message.replace.places},
            frozenset(message.replace.forfeited),
        )
    if kind == "replay":
        return ReplayFrom(message.replay.version, "")
    if kind == "penalise":
        return Penalise(message.penalise.entrant, points_of(message.penalise.points))
    raise bad("verdict must be set: stands, replace, replay or penalise")


class TournamentCalls:
    """Each call's work once its caller's token is read: the request translated into its
    use case, the result into the response. Served on gRPC by :class:`TournamentService`
    and on the web port by :class:`server.web_tournaments.WebTournamentService`."""

    def __init__(self, tournaments: Tournaments) -> None:
        self.tournaments = tournaments

    async def create_tournament(
        self, request: pb.CreateTournamentRequest, token: str | None
    ) -> pb.CreateTournamentResponse:
        game = codec.GAME_NAMES.get(request.game)
        if game is None:
            raise bad("game must be set to a known game")
        format = FORMATS.get(request.format)
        if format is None:
            raise bad("format must be set: round robin, Swiss or single elimination")
        if any(t not in TIE_BREAKS for t in request.tie_breaks):
            raise bad("tie_breaks are named from the known ones (not unspecified)")
        game_codec = codec.codec_for(game)
        options = codec.options_with_common(game_codec.options_from_request(request), request)
        created = await self.tournaments.create(
            token,
            game,
            options,
            format,
            request.table_size,
            title=request.title,
            rounds=request.rounds or None,
            tie_breaks=tuple(TIE_BREAKS[t] for t in request.tie_breaks) or None,
            dispute_window_ms=(
                request.dispute_window_ms if request.HasField("dispute_window_ms") else None
            ),
            no_show_ms=request.no_show_ms if request.HasField("no_show_ms") else None,
            duplicate=request.duplicate,
            auto_rounds=request.auto_rounds,
        )
        return pb.CreateTournamentResponse(
            tournament_id=str(created.tournament_id), seed_commitment=created.seed_commitment
        )

    async def add_entrant(
        self, request: pb.AddEntrantRequest, token: str | None
    ) -> pb.AddEntrantResponse:
        entered = await self.tournaments.add_entrant(
            tournament_id_of(request.tournament_id), token, request.name
        )
        return pb.AddEntrantResponse(entrant_token=entered.token, seed=entered.seed)

    async def appoint_referee(
        self, request: pb.AppointRefereeRequest, token: str | None
    ) -> pb.AppointRefereeResponse:
        token = await self.tournaments.appoint_referee(
            tournament_id_of(request.tournament_id), token, request.name
        )
        return pb.AppointRefereeResponse(referee_token=token)

    async def start_round(
        self, request: pb.StartRoundRequest, token: str | None
    ) -> pb.StartRoundResponse:
        tournament = await self.tournaments.start_round(
            tournament_id_of(request.tournament_id), token
        )
        return pb.StartRoundResponse(round=round_message(tournament.round_states[-1]))

    async def take_seat(
        self, request: pb.TakeSeatRequest, token: str | None
    ) -> pb.TakeSeatResponse:
        seated = await self.tournaments.take_seat(tournament_id_of(request.tournament_id), token)
        return pb.TakeSeatResponse(
            match_id=str(seated.match_id),
            seat=seated.seat,
            round=seated.round,
            table=seated.table,
            version=seated.version,
        )

    async def get_tournament(
        self, request: pb.GetTournamentRequest, token: str | None
    ) -> pb.GetTournamentResponse:
        tournament = await self.tournaments.view(tournament_id_of(request.tournament_id))
        return pb.GetTournamentResponse(tournament=tournament_message(tournament))

    async def list_tournaments(
        self, request: pb.ListTournamentsRequest, token: str | None
    ) -> pb.ListTournamentsResponse:
        after, size = page_request(request.page_size, request.page_token)
        page = await self.tournaments.list(after, size + 1)
        more = len(page) > size
        page = page[:size]
        return pb.ListTournamentsResponse(
            tournaments=[summary_message(t) for _, t in page],
            next_page_token=str(page[-1][0]) if more and page else "",
        )

    async def get_standings(
        self, request: pb.GetStandingsRequest, token: str | None
    ) -> pb.GetStandingsResponse:
        tournament = await self.tournaments.view(tournament_id_of(request.tournament_id))
        if request.round > len(tournament.round_states):
            raise ServiceError(
                grpc.StatusCode.OUT_OF_RANGE,
                f"round {request.round} has not started ({len(tournament.round_states)} have)",
            )
        return pb.GetStandingsResponse(
            standings=rows_of(tournament, request.round or None),
            tie_breaks=[TIE_BREAK_ENUMS[t] for t in tournament.tie_breaks if t in TIE_BREAK_ENUMS],
        )

    async def withdraw(self, request: pb.WithdrawRequest, token: str | None) -> pb.WithdrawResponse:
        first = await self.tournaments.withdraw(
            tournament_id_of(request.tournament_id), token, request.entrant
        )
        return pb.WithdrawResponse(first_missed_round=first)

    async def file_dispute(
        self, request: pb.FileDisputeRequest, token: str | None
    ) -> pb.FileDisputeResponse:
        number = await self.tournaments.file_dispute(
            tournament_id_of(request.tournament_id),
            token,
            parse_match_id(request.match_id),
            request.version,
            request.text,
        )
        return pb.FileDisputeResponse(dispute=number)

    async def list_disputes(
        self, request: pb.ListDisputesRequest, token: str | None
    ) -> pb.ListDisputesResponse:
        tournament = await self.tournaments.disputes(tournament_id_of(request.tournament_id), token)
        return pb.ListDisputesResponse(
            disputes=[
                pb.Dispute(
                    number=d.number,
                    entrant=d.entrant,
                    match_id=d.match_id,
                    version=d.version,
                    text=d.text,
                    round=d.round,
                    table=d.table,
                    filed_ms=d.filed_ms,
                )
                for d in tournament.open_disputes()
            ]
        )

    async def rule(self, request: pb.RuleRequest, token: str | None) -> pb.RuleResponse:
        ruled = await self.tournaments.rule(
            tournament_id_of(request.tournament_id),
            token,
            request.dispute,
            verdict_of(request.verdict),
            request.reason,
        )
        return pb.RuleResponse(ruling=ruled.number, replay_match_id=ruled.replay_match_id)

    async def end_tournament(
        self, request: pb.EndTournamentRequest, token: str | None
    ) -> pb.EndTournamentResponse:
        digest = await self.tournaments.end(tournament_id_of(request.tournament_id), token)
        return pb.EndTournamentResponse(digest=digest)

    async def get_result_sheet(
        self, request: pb.GetResultSheetRequest, token: str | None
    ) -> pb.GetResultSheetResponse:
        sheet = await self.tournaments.sheet(tournament_id_of(request.tournament_id))
        return pb.GetResultSheetResponse(
            sheet=sheet.document.encode(),
            digest=sheet.digest,
            signature=bytes.fromhex(sheet.signature),
            public_key=bytes.fromhex(sheet.public_key),
        )

    async def tournament_events(
        self, request: pb.WatchTournamentRequest
    ) -> AsyncIterator[pb.TournamentEvent]:
        tournament_id = tournament_id_of(request.tournament_id)
        # Nobody's stream shows a token hash or, before the end, a seed.
        events = self.tournaments.watch(tournament_id, request.after_version, Viewer.spectator())
        async for seen in events:
            yield pb.TournamentEvent(
                tournament_id=str(tournament_id),
                version=seen.version,
                name=seen.name,
                fields_json=json.dumps(seen.fields, sort_keys=True, default=str),
                digest=seen.digest,
            )


#: A unary call's work: its request and its caller's token to its response.
Call = Callable[[TournamentCalls, Any, str | None], Awaitable[Any]]


def _handler(call: Call) -> Callable[..., Awaitable[Any]]:
    """The gRPC method of ``call``: its caller's token read from the metadata."""

    @refusals
    async def handler(
        self: TournamentCalls, request: Any, context: grpc.aio.ServicerContext
    ) -> Any:
        return await call(self, request, _token(context))

    return handler


class TournamentService(TournamentCalls, tournament_service_pb2_grpc.TournamentServiceServicer):
    """The gRPC TournamentService: each method reads its caller's token and does its
    call's work."""

    CreateTournament = _handler(TournamentCalls.create_tournament)
    AddEntrant = _handler(TournamentCalls.add_entrant)
    AppointReferee = _handler(TournamentCalls.appoint_referee)
    StartRound = _handler(TournamentCalls.start_round)
    TakeSeat = _handler(TournamentCalls.take_seat)
    GetTournament = _handler(TournamentCalls.get_tournament)
    ListTournaments = _handler(TournamentCalls.list_tournaments)
    GetStandings = _handler(TournamentCalls.get_standings)
    Withdraw = _handler(TournamentCalls.withdraw)
    FileDispute = _handler(TournamentCalls.file_dispute)
    ListDisputes = _handler(TournamentCalls.list_disputes)
    Rule = _handler(TournamentCalls.rule)
    EndTournament = _handler(TournamentCalls.end_tournament)
    GetResultSheet = _handler(TournamentCalls.get_result_sheet)

    async def WatchTournament(
        self, request: pb.WatchTournamentRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.TournamentEvent]:
        try:
            async for event in self.tournament_events(request):
                yield event
        except Exception as error:
            await refuse(context, error)


def _token(context: grpc.aio.ServicerContext) -> str | None:
    return auth.bearer_token(context.invocation_metadata())


__all__ = ["TournamentCalls", "TournamentService", "tournament_message"]
