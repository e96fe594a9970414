"""An asyncio client for the MatchService (``totem.v1``), over ``grpc.aio``.

The messages it returns are the generated protobuf messages of the contract; this module
adds connection handling, bearer tokens and errors with rule ids. What its calls hand
back lives beside it: the Watch and Play streams in :mod:`totem_client.streams`, a
participant's :class:`~totem_client.session.Session` (which keeps the ``seen_version``
bookkeeping) in :mod:`totem_client.session`, the games' table in :mod:`totem_client.games`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import Message

from totem.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc
from totem_client.errors import CreationRefused, TotemError
from totem_client.games import GAMES, Command, GameCreation, act_request, game_of_message
from totem_client.messages import ActResponse, CreatedMatch, MatchEvent, MatchSummary, MatchView
from totem_client.receipts import Receipts
from totem_client.reconnect import channel_options
from totem_client.service_client import DEFAULT_CALL_TIMEOUT, ServiceClient, bearer_metadata
from totem_client.session import Session
from totem_client.streams import EventStream, PlayStream


@dataclass(frozen=True)
class Page:
    """One page of ListMatches. ``next_page_token`` is empty on the last page."""

    matches: list[MatchSummary]
    next_page_token: str


@dataclass(frozen=True)
class ClientTls:
    """TLS to the server: the CA certificates that signed its certificate (PEM; None: the
    system's), and for mutual TLS this client's own certificate chain and key."""

    ca: bytes | None = None
    cert: bytes | None = None
    key: bytes | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.ca, private_key=self.key, certificate_chain=self.cert
        )


def connect(
    address: str,
    *,
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    options: Sequence[tuple[str, Any]] = (),
    tls: ClientTls | None = None,
    organiser_token: str | None = None,
    receipts_dir: str | Path | None = None,
) -> Client:
    """A client of the server at ``address`` (``host:port``), over TLS when ``tls`` is
    given, else over a plaintext channel. ``organiser_token``, an organiser's credential
    from the server's operator, is sent when creating a match (only organisers may,
    unless the server opens creation to anyone) and nowhere else.

    Use it as ``async with connect(address) as client: ...`` from inside a running event
    loop; leaving the block closes the channel. Connecting is lazy: the first call (or
    :meth:`Client.wait_ready`) finds out whether the server is there. ``options`` are
    gRPC channel arguments; the reconnection ones of :mod:`totem_client.reconnect` are
    added unless given (after an outage, the channel tries again at least every second).
    ``call_timeout`` bounds every unary call, in seconds (None: no bound); it does not
    apply to Watch streams. ``receipts_dir``: where the newest receipt of each match
    is written as it comes (:attr:`Client.receipts`; kept in memory without it).
    """
    if tls is None:
        channel = grpc.aio.insecure_channel(address, options=channel_options(options))
    else:
        channel = grpc.aio.secure_channel(
            address, tls.credentials(), options=channel_options(options)
        )
    return Client(
        channel,
        address=address,
        call_timeout=call_timeout,
        organiser_token=organiser_token,
        receipts_dir=receipts_dir,
    )


class Client(ServiceClient, GameCreation):
    """Calls of the MatchService on one channel. Every failed call raises :class:`TotemError`.

    Besides :meth:`create`, which creates a match of any game from its options message,
    each game's creation from keywords (``create_match``, ``create_tribes``...) comes from
    :class:`~totem_client.games.GameCreation`.
    """

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        address: str = "",
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        organiser_token: str | None = None,
        receipts_dir: str | Path | None = None,
    ) -> None:
        super().__init__(
            channel, address=address, call_timeout=call_timeout, organiser_token=organiser_token
        )
        #: The newest signed receipt of each match a command was answered for (Act or
        #: Play), written to ``receipts_dir`` as it comes when given (:mod:`.receipts`).
        self.receipts = Receipts(receipts_dir)
        self._stub = match_service_pb2_grpc.MatchServiceStub(channel)

    async def server_key(self) -> tuple[str, bytes]:
        """The algorithm and raw public key with which the server signs ended matches."""
        response = await self._unary(
            self._stub.GetServerKey, match_service_pb2.GetServerKeyRequest()
        )
        return str(response.algorithm), bytes(response.public_key)

    async def checkpoint(self, consistent_with: int = 0) -> match_service_pb2.GetCheckpointResponse:
        """A signed checkpoint of the server's transparency log of matches; with
        ``consistent_with``, also the consistency proof from a log of that size."""
        response: match_service_pb2.GetCheckpointResponse = await self._unary(
            self._stub.GetCheckpoint,
            match_service_pb2.GetCheckpointRequest(consistent_with=consistent_with),
        )
        return response

    # ---- matches ---------------------------------------------------------------------

    async def create(
        self, game: str, options: Message | None = None, *, entropy: bytes = b""
    ) -> CreatedMatch:
        """Create a match of ``game`` (``"jungle_speed"``, ``"tribes"``) with its options
        message (``JungleSpeedOptions``, ``TribesOptions``; None: every default).

        ``entropy`` (at most 64 bytes) is mixed into the match seed. Created with the
        client's organiser token, the match comes with its referee's token; created
        without one (where the server lets anyone create), it has no referee.
        """
        try:
            info = GAMES[game]
        except KeyError:
            raise ValueError(f"game must be one of {', '.join(GAMES)}") from None
        request = match_service_pb2.CreateMatchRequest(game=info.enum, entropy=entropy)
        if options is not None:
            if game_of_message(options) is not info:
                raise TypeError(f"{type(options).__name__} are not options of {game}")
            getattr(request, info.field).CopyFrom(options)
        try:
            response: match_service_pb2.CreateMatchResponse = await self._unary(
                self._stub.CreateMatch, request, self.organiser_token
            )
        except TotemError as error:
            if error.code == grpc.StatusCode.PERMISSION_DENIED:
                raise CreationRefused(error, bool(self.organiser_token)) from error
            raise
        return CreatedMatch(response.match_id, response.referee_token, response.seed_commitment)

    async def join(
        self,
        match_id: str,
        name: str,
        *,
        entropy: bytes | None = None,
        seat: int | None = None,
    ) -> Session:
        """Take a seat: the next free one, or ``seat``.

        The returned :class:`Session` holds the player token and sends it with each call.
        Spectators do not join: see :meth:`spectate`.
        """
        request = match_service_pb2.JoinMatchRequest(
            match_id=match_id, name=name, entropy=entropy or b""
        )
        if seat is not None:
            request.seat = seat
        else:
            request.any_seat = True
        response: match_service_pb2.JoinMatchResponse = await self._unary(
            self._stub.JoinMatch, request
        )
        return Session(
            self,
            match_id,
            token=response.player_token,
            name=name,
            seat=response.seat if response.HasField("seat") else None,
            role=response.role,
            version=response.version,
        )

    def spectate(self, match_id: str) -> Session:
        """A spectator's session: no token, no seat; it sees what every spectator sees."""
        return Session(self, match_id, name="spectator", role=common_pb2.VIEWER_ROLE_SPECTATOR)

    async def reissue_token(self, match_id: str, seat: int, *, referee_token: str) -> str:
        """A fresh token for ``seat`` (referee only); the seat's old token stops working."""
        request = match_service_pb2.ReissueTokenRequest(match_id=match_id, seat=seat)
        response: match_service_pb2.ReissueTokenResponse = await self._unary(
            self._stub.ReissueToken, request, referee_token
        )
        return response.player_token

    def session(
        self, match_id: str, token: str = "", *, name: str = "", seat: int | None = None
    ) -> Session:
        """A session for a token obtained earlier (a player's, or the referee's)."""
        return Session(self, match_id, token=token, name=name, seat=seat)

    async def take_seat(self, match_id: str, token: str) -> Session:
        """Take the seat that ``token`` holds in ``match_id``: the same :class:`Session`
        a join gives, for a seat that is already taken in its player's name, such as a
        fork's (``totem-replay fork`` prints one token per seat) or one whose token the
        referee reissued.

        Only the token is needed: the server says whose it is (GetMatch with the token
        answers with the holder's role and seat), and the seat's name is the match's.
        A token not valid in that match raises :class:`TotemError` UNAUTHENTICATED; the
        referee's or an organiser's token, which holds no seat, PERMISSION_DENIED.
        """
        session = self.session(match_id, token)
        try:
            view = await session.get()
        except TotemError as error:
            if error.code != grpc.StatusCode.UNAUTHENTICATED:
                raise
            raise TotemError(
                error.code,
                f"this token holds no seat in match {match_id} ({error.message}): give "
                "the token printed for your seat, of this very match",
                error.rule,
            ) from error
        if session.seat is None:
            role = common_pb2.ViewerRole.Name(view.role).removeprefix("VIEWER_ROLE_").lower()
            raise TotemError(
                grpc.StatusCode.PERMISSION_DENIED,
                f"this token is the {role}'s of match {match_id}, which holds no seat: "
                "give a seat's token",
            )
        names = {player.seat: player.name for player in view.summary.players}
        session.name = names.get(session.seat, "")
        return session

    def referee(self, created: CreatedMatch) -> Session:
        """The referee's session of a match this client created: it sees everything."""
        return Session(
            self,
            created.match_id,
            token=created.referee_token,
            name="referee",
            role=common_pb2.VIEWER_ROLE_REFEREE,
        )

    async def get(self, match_id: str, token: str | None = None) -> MatchView:
        """The match as the holder of ``token`` may see it (no token: a spectator)."""
        request = match_service_pb2.GetMatchRequest(match_id=match_id)
        view: MatchView = await self._unary(self._stub.GetMatch, request, token)
        return view

    async def list_matches(
        self,
        *,
        page_size: int = 0,
        game: common_pb2.Game.ValueType = common_pb2.GAME_UNSPECIFIED,
        status: common_pb2.MatchStatus.ValueType = common_pb2.MATCH_STATUS_UNSPECIFIED,
        page_token: str = "",
    ) -> AsyncIterator[Page]:
        """Yield the pages of ListMatches, from ``page_token`` (empty: the first) to the last.

        ``page_size`` 0 lets the server choose (20); ``game`` and ``status`` filter when set.
        An empty page is yielded only when there is nothing at all to list (the server
        ends a listing that fills its last page exactly with one more, empty page).
        """
        first = True
        while True:
            request = match_service_pb2.ListMatchesRequest(
                page_size=page_size, page_token=page_token, game=game, status=status
            )
            response: match_service_pb2.ListMatchesResponse = await self._unary(
                self._stub.ListMatches, request
            )
            if response.matches or first:
                yield Page(list(response.matches), response.next_page_token)
            if not response.next_page_token:
                return
            first = False
            page_token = response.next_page_token

    async def act(
        self,
        match_id: str,
        command: Command,
        *,
        token: str,
        seen_version: int = 0,
        seat: int | None = None,
    ) -> ActResponse:
        """Send one command (a game's, such as a ``JungleSpeedCommand``) for the
        token's seat, or a referee command with the referee's token; answered once its
        events are stored.

        ``seen_version`` is the last event version the caller had seen when it decided
        (JS-5.1); ``seat``, if given, must be the token's own seat.
        """
        request = act_request(match_id, command, seen_version=seen_version, seat=seat)
        response: ActResponse = await self._unary(self._stub.Act, request, token)
        self.kept(response)
        return response

    def kept(self, response: ActResponse) -> ActResponse:
        """``response``, its receipt kept if it is its match's newest."""
        if response.HasField("receipt"):
            self.receipts.keep(response.receipt)
        return response

    def play(self, *, token: str) -> PlayStream:
        """Commands for the holder of ``token`` over one open Play stream, rather than
        one Act call each: see :class:`PlayStream`. Use it as ``async with
        client.play(token=...) as stream: await stream.act(...)``; the stream opens with
        the first command (or on entering the block)."""
        return PlayStream(self, token)

    def _open_play(self, token: str) -> Any:
        # No timeout: the stream lives as long as its player plays.
        return self._stub.Play(metadata=bearer_metadata(token))

    def watch(
        self,
        match_id: str,
        after_version: int = 0,
        *,
        token: str | None = None,
        with_state: bool = True,
        max_failures: int | None = 10,
        on_event: Callable[[MatchEvent], None] | None = None,
    ) -> EventStream:
        """The events of a match after ``after_version``, then live ones, as an async
        iterator that resumes by itself (see :class:`EventStream`). Each event carries
        the viewer's state after it (``event.state``) unless ``with_state`` is False."""
        return EventStream(
            self,
            match_id,
            after_version,
            token=token,
            with_state=with_state,
            max_failures=max_failures,
            on_event=on_event,
        )

    def _open_watch(
        self, match_id: str, after_version: int, token: str | None, with_state: bool
    ) -> Any:
        request = match_service_pb2.WatchRequest(
            match_id=match_id, after_version=after_version, omit_state=not with_state
        )
        return self._stub.Watch(request, metadata=bearer_metadata(token))
