"""An asyncio client for the TournamentService (``totem.v1``), over ``grpc.aio``.

It handles the channel, the bearer tokens and the errors as the match client does
(:mod:`totem_client.client`): every failed call raises
:class:`~totem_client.errors.TotemError` with the gRPC code, the rule id the server cited
(``TO-9.1``) and its sentence. Its calls return the typed values of
:mod:`totem_client.tournament.results`.

Who calls what (docs/tournaments.md): the client's organiser token (``organiser_token``)
is sent with what only an organiser does (create, add entrants, appoint referees, start
rounds, end); an entrant's token, which :meth:`TournamentClient.add_entrant` returns
once, takes the entrant's seat at each round's table, files disputes and withdraws; a
referee's token lists the disputes and rules. The rest is public.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from google.protobuf.message import Message

from totem.v1 import tournament_service_pb2 as pb
from totem.v1 import tournament_service_pb2_grpc
from totem_client.client import Client, ClientTls
from totem_client.errors import TotemError
from totem_client.games import GAMES, game_of_message
from totem_client.reconnect import channel_options
from totem_client.service_client import DEFAULT_CALL_TIMEOUT, ServiceClient, bearer_metadata
from totem_client.streams import ResumableStream
from totem_client.tournament.results import (
    FORMATS,
    TIE_BREAKS,
    CreatedTournament,
    DisputeInfo,
    EntrantTicket,
    RefereeTicket,
    ResultSheet,
    RoundInfo,
    Ruled,
    Seat,
    StandingRow,
    Standings,
    TournamentEvent,
    TournamentInfo,
    TournamentPage,
    TournamentSummary,
    Verdict,
    tie_break_name,
)


class OrganiserRefused(TotemError):
    """A call only an organiser may make, refused with PERMISSION_DENIED: this client had
    no organiser token (``had_token`` False) or one the server does not know. Its own
    type, so that a tool can say which setting gives the token."""

    def __init__(self, error: TotemError, had_token: bool) -> None:
        super().__init__(error.code, error.message, error.rule, error.retry_delay)
        self.had_token = had_token

    def copy(self) -> OrganiserRefused:
        return OrganiserRefused(self, self.had_token)


def connect_tournaments(
    address: str,
    *,
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    options: Sequence[tuple[str, Any]] = (),
    tls: ClientTls | None = None,
    organiser_token: str | None = None,
) -> TournamentClient:
    """A tournament client of the server at ``address`` (``host:port``), on a channel of
    its own, as :func:`totem_client.client.connect` makes one (TLS when ``tls`` is
    given, the reconnection options, ``call_timeout`` on every unary call). Use it as
    ``async with connect_tournaments(address) as tournaments: ...``; or share a match
    client's channel with :meth:`TournamentClient.of`."""
    if tls is None:
        channel = grpc.aio.insecure_channel(address, options=channel_options(options))
    else:
        channel = grpc.aio.secure_channel(
            address, tls.credentials(), options=channel_options(options)
        )
    return TournamentClient(
        channel, address=address, call_timeout=call_timeout, organiser_token=organiser_token
    )


class TournamentClient(ServiceClient):
    """Calls of the TournamentService on one channel; every failed call raises
    :class:`TotemError` (:class:`OrganiserRefused` for an organiser's call refused)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        address: str = "",
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        organiser_token: str | None = None,
        owns_channel: bool = True,
    ) -> None:
        super().__init__(
            channel,
            address=address,
            call_timeout=call_timeout,
            organiser_token=organiser_token,
            owns_channel=owns_channel,
        )
        self._stub = tournament_service_pb2_grpc.TournamentServiceStub(channel)

    @classmethod
    def of(cls, client: Client) -> TournamentClient:
        """A tournament client on ``client``'s channel, with its address, call timeout and
        organiser token; closing it leaves the channel to ``client``."""
        return cls(
            client.channel,
            address=client.address,
            call_timeout=client.call_timeout,
            organiser_token=client.organiser_token,
            owns_channel=False,
        )

    async def _organiser(self, method: Any, request: Any) -> Any:
        """A call only an organiser makes, with the client's organiser token."""
        try:
            return await self._unary(method, request, self.organiser_token)
        except TotemError as error:
            if error.code == grpc.StatusCode.PERMISSION_DENIED:
                raise OrganiserRefused(error, bool(self.organiser_token)) from error
            raise

    # ---- the organiser's calls ---------------------------------------------------------

    async def create(
        self,
        game: str,
        options: Message | None = None,
        *,
        format: str = "swiss",
        table_size: int = 2,
        rounds: int = 0,
        title: str = "",
        tie_breaks: Sequence[str] = (),
        dispute_window_ms: int | None = None,
        no_show_ms: int | None = None,
        duplicate: bool = False,
        abandon_after_ms: int = 0,
        auto_rounds: bool = False,
    ) -> CreatedTournament:
        """Create a tournament of ``game`` (``"jungle_speed"``, ``"tribes"``,
        ``"village"``), every table's match created with ``options`` (the game's options
        message; None: its defaults), in ``format`` (``swiss``, ``round-robin``,
        ``single-elimination``) at tables of ``table_size`` (TO-8.1). ``rounds``: Swiss
        only (0: as many as a bracket). ``tie_breaks`` by name (``buchholz``,
        ``median-buchholz``, ``sonneborn-berger``, ``head-to-head``; empty: the
        server's). ``dispute_window_ms`` and ``no_show_ms`` None: the server's 10 minutes;
        a dispute window of 0 lets the next round start as soon as one ends.
        ``auto_rounds``: the server starts every round after the first by itself (TO-9.1)."""
        try:
            info = GAMES[game]
        except KeyError:
            raise ValueError(f"game must be one of {', '.join(GAMES)}") from None
        try:
            format_value = FORMATS[format]
        except KeyError:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}") from None
        unknown = [t for t in tie_breaks if t not in TIE_BREAKS]
        if unknown:
            raise ValueError(f"unknown tie-break {unknown[0]!r}: one of {', '.join(TIE_BREAKS)}")
        request = pb.CreateTournamentRequest(
            game=info.enum,
            title=title,
            format=format_value,
            table_size=table_size,
            rounds=rounds,
            tie_breaks=[TIE_BREAKS[t] for t in tie_breaks],
            duplicate=duplicate,
            abandon_after_ms=abandon_after_ms,
            auto_rounds=auto_rounds,
        )
        if dispute_window_ms is not None:
            request.dispute_window_ms = dispute_window_ms
        if no_show_ms is not None:
            request.no_show_ms = no_show_ms
        if options is not None:
            if game_of_message(options) is not info:
                raise TypeError(f"{type(options).__name__} are not options of {game}")
            getattr(request, info.field).CopyFrom(options)
        response: pb.CreateTournamentResponse = await self._organiser(
            self._stub.CreateTournament, request
        )
        return CreatedTournament(response.tournament_id, bytes(response.seed_commitment))

    async def add_entrant(self, tournament_id: str, name: str) -> EntrantTicket:
        """Enter ``name`` (TO-8.2); the ticket holds their token, shown this once."""
        response: pb.AddEntrantResponse = await self._organiser(
            self._stub.AddEntrant, pb.AddEntrantRequest(tournament_id=tournament_id, name=name)
        )
        return EntrantTicket(name, response.entrant_token, response.seed)

    async def appoint_referee(self, tournament_id: str, name: str) -> RefereeTicket:
        """Appoint a referee (TO-8.3); the ticket holds their token, shown this once."""
        response: pb.AppointRefereeResponse = await self._organiser(
            self._stub.AppointReferee,
            pb.AppointRefereeRequest(tournament_id=tournament_id, name=name),
        )
        return RefereeTicket(name, response.referee_token)

    async def start_round(self, tournament_id: str) -> RoundInfo:
        """Start the next round (TO-9.1, TO-9.2): its tables with their matches and
        reasons, and its byes. FAILED_PRECONDITION (TO-9.1) while the last round has a
        table without a result, its dispute window is open or a dispute waits."""
        response: pb.StartRoundResponse = await self._organiser(
            self._stub.StartRound, pb.StartRoundRequest(tournament_id=tournament_id)
        )
        return RoundInfo.of(response.round)

    async def end(self, tournament_id: str) -> str:
        """End the tournament with its signed result sheet (TO-11); the final digest."""
        response: pb.EndTournamentResponse = await self._organiser(
            self._stub.EndTournament, pb.EndTournamentRequest(tournament_id=tournament_id)
        )
        return response.digest

    # ---- an entrant's calls ------------------------------------------------------------

    async def take_seat(self, tournament_id: str, *, token: str) -> Seat:
        """Come to the entrant's table (``token``: theirs) of the round under way
        (TO-9.3), and return once its match has seated them: when the table's other
        entrants have come too, or at the round's start deadline (so no call timeout
        applies). The token is the seat's token in that match (TO-9.2). Again: the same
        seat."""
        response: pb.TakeSeatResponse = await self._unary(
            self._stub.TakeSeat, pb.TakeSeatRequest(tournament_id=tournament_id), token, False
        )
        return Seat(
            response.match_id, response.seat, response.round, response.table, response.version
        )

    async def file_dispute(
        self, tournament_id: str, match_id: str, text: str, *, token: str, version: int = 0
    ) -> int:
        """Dispute a match of a table the entrant (``token``) sat at, at ``version`` (0:
        its result as a whole), saying why (TO-10.1). The dispute's number."""
        response: pb.FileDisputeResponse = await self._unary(
            self._stub.FileDispute,
            pb.FileDisputeRequest(
                tournament_id=tournament_id, match_id=match_id, version=version, text=text
            ),
            token,
        )
        return response.dispute

    async def withdraw(
        self, tournament_id: str, entrant: str = "", *, token: str | None = None
    ) -> int:
        """Withdraw an entrant (TO-8.4): with ``token`` an entrant's own (``entrant``
        empty: the token's), else ``entrant`` by the organiser. The first round they do
        not play."""
        request = pb.WithdrawRequest(tournament_id=tournament_id, entrant=entrant)
        response: pb.WithdrawResponse
        if token is None:
            response = await self._organiser(self._stub.Withdraw, request)
        else:
            response = await self._unary(self._stub.Withdraw, request, token)
        return response.first_missed_round

    # ---- a referee's calls -------------------------------------------------------------

    async def list_disputes(
        self, tournament_id: str, *, token: str | None = None
    ) -> list[DisputeInfo]:
        """The disputes not yet ruled on, oldest first (TO-10.2): with a referee's
        ``token``, else the organiser's."""
        request = pb.ListDisputesRequest(tournament_id=tournament_id)
        response: pb.ListDisputesResponse
        if token is None:
            response = await self._organiser(self._stub.ListDisputes, request)
        else:
            response = await self._unary(self._stub.ListDisputes, request, token)
        return [DisputeInfo.of(d) for d in response.disputes]

    async def rule(
        self, tournament_id: str, dispute: int, verdict: Verdict, reason: str, *, token: str
    ) -> Ruled:
        """Rule on ``dispute`` with a referee's ``token`` (TO-10.3): ``Stands()``,
        ``Replace({entrant: place})``, ``Replay(version)`` or ``Penalise(entrant,
        points)``, saying why."""
        response: pb.RuleResponse = await self._unary(
            self._stub.Rule,
            pb.RuleRequest(
                tournament_id=tournament_id,
                dispute=dispute,
                verdict=verdict.to_proto(),
                reason=reason,
            ),
            token,
        )
        return Ruled(response.ruling, response.replay_match_id)

    # ---- public ------------------------------------------------------------------------

    async def get(self, tournament_id: str) -> TournamentInfo:
        """The tournament as it stands."""
        response: pb.GetTournamentResponse = await self._unary(
            self._stub.GetTournament, pb.GetTournamentRequest(tournament_id=tournament_id)
        )
        return TournamentInfo.of(response.tournament)

    async def list(self, *, page_size: int = 0, page_token: str = "") -> TournamentPage:
        """One page of tournaments in creation order (``page_size`` 0: the server's 20)."""
        response: pb.ListTournamentsResponse = await self._unary(
            self._stub.ListTournaments,
            pb.ListTournamentsRequest(page_size=page_size, page_token=page_token),
        )
        return TournamentPage(
            tuple(TournamentSummary.of(t) for t in response.tournaments),
            response.next_page_token,
        )

    async def list_all(self, *, page_size: int = 0) -> AsyncIterator[TournamentSummary]:
        """Every tournament in creation order, page after page."""
        token = ""
        while True:
            page = await self.list(page_size=page_size, page_token=token)
            for summary in page.tournaments:
                yield summary
            if not page.next_page_token:
                return
            token = page.next_page_token

    async def standings(self, tournament_id: str, round: int = 0) -> Standings:
        """The standings after ``round`` (0: everything so far), best first (TO-7)."""
        response: pb.GetStandingsResponse = await self._unary(
            self._stub.GetStandings,
            pb.GetStandingsRequest(tournament_id=tournament_id, round=round),
        )
        return Standings(
            tuple(StandingRow.of(s) for s in response.standings),
            tuple(tie_break_name(t) for t in response.tie_breaks),
        )

    async def result_sheet(self, tournament_id: str) -> ResultSheet:
        """The signed result sheet of an ended tournament (FAILED_PRECONDITION, TO-11.1,
        before the end)."""
        response: pb.GetResultSheetResponse = await self._unary(
            self._stub.GetResultSheet, pb.GetResultSheetRequest(tournament_id=tournament_id)
        )
        return ResultSheet(
            bytes(response.sheet),
            response.digest,
            bytes(response.signature),
            bytes(response.public_key),
        )

    def watch(
        self,
        tournament_id: str,
        after_version: int = 0,
        *,
        token: str | None = None,
        max_failures: int | None = 10,
    ) -> TournamentEventStream:
        """The tournament's events after ``after_version``, then each new one, as an
        async iterator that resumes by itself and ends after the final event (see
        :class:`TournamentEventStream`)."""
        return TournamentEventStream(
            self, tournament_id, after_version, token=token, max_failures=max_failures
        )

    def _open_watch(self, tournament_id: str, after_version: int, token: str | None) -> Any:
        request = pb.WatchTournamentRequest(
            tournament_id=tournament_id, after_version=after_version
        )
        return self._stub.WatchTournament(request, metadata=bearer_metadata(token))


class TournamentEventStream(ResumableStream[pb.TournamentEvent, TournamentEvent]):
    """A tournament's events in version order, each once, as
    :class:`~totem_client.streams.EventStream` gives a match's (see
    :class:`~totem_client.streams.ResumableStream`); it ends when the server ends it,
    after the final event."""

    def __init__(
        self,
        client: TournamentClient,
        tournament_id: str,
        after_version: int = 0,
        *,
        token: str | None = None,
        max_failures: int | None = 10,
    ) -> None:
        super().__init__(client, after_version, max_failures)
        self.tournament_client = client
        self.tournament_id = tournament_id
        self.token = token

    def _open(self) -> Any:
        return self.tournament_client._open_watch(self.tournament_id, self.last_version, self.token)

    def _item(self, message: pb.TournamentEvent) -> TournamentEvent:
        return TournamentEvent.of(message)
