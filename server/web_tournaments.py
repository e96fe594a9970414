"""The TournamentService for browsers, on the web port beside the MatchService
(:mod:`server.web`): each method reads its caller's token from the request's headers and
does the same call's work as the gRPC method (:class:`server.tournament_service.TournamentCalls`),
its refusals answered as Connect errors (:func:`server.web_calls.refusals`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from server.tournament_service import Call, TournamentCalls
from server.web_calls import Context, caller_token, refusals
from totem.v1 import tournament_service_connect
from totem.v1 import tournament_service_pb2 as pb


def _method(call: Call) -> Any:  # typed by the generated protocol it fills in
    """The Connect method of ``call``: its caller's token read from the headers."""

    async def method(self: WebTournamentService, request: Any, ctx: Context) -> Any:
        with refusals():
            return await call(self.calls, request, caller_token(ctx))

    return method


class WebTournamentService(tournament_service_connect.TournamentService):
    """Every TournamentService method over Connect, gRPC-Web and JSON."""

    def __init__(self, calls: TournamentCalls) -> None:
        self.calls = calls

    create_tournament = _method(TournamentCalls.create_tournament)
    add_entrant = _method(TournamentCalls.add_entrant)
    appoint_referee = _method(TournamentCalls.appoint_referee)
    start_round = _method(TournamentCalls.start_round)
    take_seat = _method(TournamentCalls.take_seat)
    get_tournament = _method(TournamentCalls.get_tournament)
    list_tournaments = _method(TournamentCalls.list_tournaments)
    get_standings = _method(TournamentCalls.get_standings)
    withdraw = _method(TournamentCalls.withdraw)
    file_dispute = _method(TournamentCalls.file_dispute)
    list_disputes = _method(TournamentCalls.list_disputes)
    rule = _method(TournamentCalls.rule)
    end_tournament = _method(TournamentCalls.end_tournament)
    get_result_sheet = _method(TournamentCalls.get_result_sheet)

    async def watch_tournament(
        self, request: pb.WatchTournamentRequest, ctx: Context
    ) -> AsyncGenerator[pb.TournamentEvent]:
        """The tournament's events after ``after_version``, then the live ones, as a
        spectator sees them; it ends when the tournament's stream does (its end, or the
        server stopping)."""
        with refusals():
            async for event in self.calls.tournament_events(request):
                yield event
