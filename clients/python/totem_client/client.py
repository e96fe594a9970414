"""An asyncio client for the MatchService (``totem.v1``), over ``grpc.aio``.

The messages it returns are the generated protobuf messages of the contract; this module
adds connection handling, bearer tokens, the ``seen_version`` bookkeeping and errors with
rule ids. The Watch and Play streams it opens are in :mod:`totem_client.streams`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import grpc
from google.protobuf.message import Message

from totem.v1 import (
    common_pb2,
    jungle_speed_pb2,
    match_service_pb2,
    match_service_pb2_grpc,
    tribes_pb2,
    village_pb2,
)
from totem_client.errors import CreationRefused, TotemError
from totem_client.games import (
    BADGES,
    GAMES,
    GAMES_BY_ENUM,
    GRAB_TARGETS,
    SPECIAL_TOTEMS,
    SPELLS,
    VARIANTS,
    Command,
    GrabTargetName,
    JungleSpeedCommand,
    Person,
    StopMatch,
    TribesCommand,
    VillageCommand,
    act_request,
    game_of_message,
    tribes_options,
    village_counts,
    village_options,
    village_persons,
)
from totem_client.messages import ActResponse, MatchEvent, MatchState, MatchSummary, MatchView
from totem_client.receipts import Receipts
from totem_client.reconnect import channel_options
from totem_client.streams import EventStream, PlayStream

DEFAULT_CALL_TIMEOUT = 30.0


@dataclass(frozen=True)
class CreatedMatch:
    """A new match: its id, the referee's bearer token, and the seed commitment."""

    match_id: str
    referee_token: str
    seed_commitment: bytes


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


def bearer_metadata(token: str | None) -> tuple[tuple[str, str], ...] | None:
    """The call metadata that carries ``token`` (docs/api.md, "Tokens"); None without."""
    return (("authorization", f"Bearer {token}"),) if token else None


class Client:
    """Calls of the MatchService on one channel. Every failed call raises :class:`TotemError`."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        address: str = "",
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        organiser_token: str | None = None,
        receipts_dir: str | Path | None = None,
    ) -> None:
        self.channel = channel
        self.address = address
        self.call_timeout = call_timeout
        self.organiser_token = organiser_token
        self.closed = False
        #: The newest signed receipt of each match a command was answered for (Act or
        #: Play), written to ``receipts_dir`` as it comes when given (:mod:`.receipts`).
        self.receipts = Receipts(receipts_dir)
        self._stub = match_service_pb2_grpc.MatchServiceStub(channel)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel; calls still running end with an error."""
        self.closed = True
        await self.channel.close()

    async def wait_ready(self, seconds: float = 5.0) -> None:
        """Wait until the channel is connected; raise ``TotemError(UNAVAILABLE)`` if it is
        not within ``seconds``."""
        try:
            async with asyncio.timeout(seconds):  # not wait_for, which can lose a cancel
                await self.channel.channel_ready()
        except TimeoutError:
            raise TotemError(
                grpc.StatusCode.UNAVAILABLE, f"no connection within {seconds:g} s"
            ) from None

    async def _unary(self, method: Any, request: Any, token: str | None = None) -> Any:
        try:
            return await method(request, metadata=bearer_metadata(token), timeout=self.call_timeout)
        except grpc.aio.AioRpcError as error:
            raise TotemError.from_rpc_error(error) from error

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

    async def create_tribes(self, *, entropy: bytes = b"", **options: Any) -> CreatedMatch:
        """Create a Tribes match; ``options`` are those of :func:`tribes_options`."""
        return await self.create("tribes", tribes_options(**options), entropy=entropy)

    async def create_village(self, *, entropy: bytes = b"", **options: Any) -> CreatedMatch:
        """Create a Village match; ``options`` are those of :func:`village_options`."""
        return await self.create("village", village_options(**options), entropy=entropy)

    async def create_match(
        self,
        *,
        variant: str = "ES",
        max_players: int | None = None,
        turn_timeout_ms: int | None = None,
        min_reveal_interval_ms: int | None = None,
        specials: tuple[int, int, int] | None = None,
        prearranged_deal: Sequence[int] | None = None,
        entropy: bytes = b"",
    ) -> CreatedMatch:
        """Create a Jungle Speed match; options left as None take the server's defaults.
        (:meth:`create` creates a match of any game.)

        ``specials`` is (inward, outward, coloured) arrows (JS-1.3); ``prearranged_deal``
        lists card ids from the top of the deck instead of a shuffle (JS-2.4);
        ``entropy`` (at most 64 bytes) is mixed into the match seed.
        """
        try:
            variant_value = VARIANTS[variant.upper()]
        except KeyError:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}") from None
        options = jungle_speed_pb2.JungleSpeedOptions(variant=variant_value)
        if max_players is not None:
            options.max_players = max_players
        if turn_timeout_ms is not None:
            options.turn_timeout_ms = turn_timeout_ms
        if min_reveal_interval_ms is not None:
            options.min_reveal_interval_ms = min_reveal_interval_ms
        if specials is not None:
            inward, outward, coloured = specials
            options.specials.CopyFrom(
                jungle_speed_pb2.JungleSpeedSpecials(
                    inward_arrows=inward, outward_arrows=outward, coloured_arrows=coloured
                )
            )
        if prearranged_deal is not None:
            options.prearranged_deal.extend(prearranged_deal)
        return await self.create("jungle_speed", options, entropy=entropy)

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
        """Send one command (a ``JungleSpeedCommand`` or a ``TribesCommand``) for the
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


class Session:
    """One participant of one match: a player (with a seat), a spectator, or the referee.

    It sends its bearer token with every call and remembers the highest event version it
    has seen (``seen_version``), from joins, views, command answers and watched events;
    commands report it to the server (JS-5.1). ``state`` is the newest state of the match
    it has received (from its watch stream or a command's answer), so that a client can
    play from the stream alone.

    Its commands are Act calls, one each, unless it is asked to play over a Play stream
    (:meth:`playing`, :meth:`open_play`): then they all go over one open stream, which a
    player racing for the totem should prefer (see :class:`PlayStream`).
    """

    def __init__(
        self,
        client: Client,
        match_id: str,
        *,
        token: str = "",
        name: str = "",
        seat: int | None = None,
        role: common_pb2.ViewerRole.ValueType = common_pb2.VIEWER_ROLE_UNSPECIFIED,
        version: int = 0,
    ) -> None:
        self.client = client
        self.match_id = match_id
        self.token = token
        self.name = name
        self.seat = seat
        self.role = role
        self.seen_version = version
        self.state: MatchState | None = None
        #: The match's game (``jungle_speed``, ``tribes``), once a state or view said it.
        self.game: str | None = None
        self._play: PlayStream | None = None
        self._on_stream = False

    def __repr__(self) -> str:
        return f"Session(match_id={self.match_id!r}, name={self.name!r}, seat={self.seat})"

    @property
    def is_player(self) -> bool:
        return self.seat is not None

    def saw(self, version: int, state: MatchState | None = None) -> None:
        """Note that the events up to ``version`` have been seen, and the state then."""
        if state is not None and state.summary.version >= self.seen_version:
            self.state = state
            self._learn_game(state.summary)
        self.seen_version = max(self.seen_version, version)

    def _learn_game(self, summary: MatchSummary) -> None:
        info = GAMES_BY_ENUM.get(summary.game)
        if info is not None:
            self.game = info.name

    def _saw_event(self, event: MatchEvent) -> None:
        self.saw(event.version, event.state if event.HasField("state") else None)

    async def get(self) -> MatchView:
        """The match as this participant may see it."""
        view = await self.client.get(self.match_id, self.token or None)
        self.saw(view.summary.version)
        self._learn_game(view.summary)
        if view.HasField("seat") and self.seat is None:
            self.seat = view.seat
        if self.role == common_pb2.VIEWER_ROLE_UNSPECIFIED:
            self.role = view.role
        return view

    async def act(self, command: Command, *, seen_version: int | None = None) -> ActResponse:
        """Send a command for this session's seat with ``seen_version`` (default: the
        last version this session saw): an Act call, or a request on this session's Play
        stream once :meth:`open_play` was called. Either way a refusal raises the same
        :class:`TotemError`."""
        seen = self.seen_version if seen_version is None else seen_version
        if self._on_stream:
            response = await self._stream().act(
                self.match_id, command, seen_version=seen, seat=self.seat
            )
        else:
            response = await self.client.act(
                self.match_id, command, token=self.token, seen_version=seen, seat=self.seat
            )
        self.saw(response.version, response.state if response.HasField("state") else None)
        return response

    @property
    def on_stream(self) -> bool:
        """True while this session's commands go over a Play stream (:meth:`open_play`)."""
        return self._on_stream

    async def open_play(self) -> PlayStream:
        """From now on, send this session's commands (``act``, ``reveal``, ``grab``...)
        over one Play stream rather than one Act call each, until :meth:`close_play`.

        Prefer it for grabs and frequent commands: a command on an open stream is
        receive-stamped as soon as the server reads it (JS-5.1). The stream is opened
        now, ahead of any race (:meth:`PlayStream.open`: a refusal of the stream itself
        is raised here, and the session stays on Act calls). If the stream later ends
        with an error (the server restarts), the commands waiting on it raise that error
        and the next command opens a new stream. Returns the stream."""
        stream = self._stream()
        await stream.open()
        self._on_stream = True
        return stream

    async def close_play(self) -> None:
        """Back to one Act call per command; the Play stream ends once the commands
        waiting on it are answered."""
        self._on_stream = False
        stream, self._play = self._play, None
        if stream is not None:
            await stream.close()

    @contextlib.asynccontextmanager
    async def playing(self) -> AsyncIterator[PlayStream]:
        """``async with session.playing(): ...``: this session's commands go over one
        Play stream inside the block (:meth:`open_play`, then :meth:`close_play`)."""
        stream = await self.open_play()
        try:
            yield stream
        finally:
            await self.close_play()

    def _stream(self) -> PlayStream:
        """The session's Play stream; a new one if there is none or it has ended."""
        if self._play is None or self._play.done:
            self._play = self.client.play(token=self.token)
        return self._play

    async def start(self, game: str | None = None) -> ActResponse:
        """Start the match with the seats taken so far (at least two). ``game`` is the
        match's game; by default the one this session has seen, else Jungle Speed."""
        return await self.act(GAMES[game or self.game or "jungle_speed"].start())

    async def reveal(self) -> ActResponse:
        """Reveal the top face-down card; only on one's turn (JS-3.1)."""
        return await self.act(JungleSpeedCommand(reveal=jungle_speed_pb2.JungleSpeedReveal()))

    async def grab(self, target: GrabTargetName = "default") -> ActResponse:
        """Grab the totem (JS-5). ``target`` chooses between an open duel and an
        inward-arrows race (ES only, JS-6.1); "default" lets the server choose."""
        grab = jungle_speed_pb2.JungleSpeedGrab(target=GRAB_TARGETS[target])
        return await self.act(JungleSpeedCommand(grab=grab))

    # ---- Tribes --------------------------------------------------------------------

    async def lift(self, space: int) -> ActResponse:
        """Tribes: lift the top totem of ``space``, the first half of a move from the
        board (TR-2.2a); then :meth:`place` it."""
        return await self.act(TribesCommand(lift=tribes_pb2.TribesLift(space=space)))

    async def place(
        self,
        destination: int,
        *,
        size: int | None = None,
        special: str | None = None,
        badge: str | None = None,
    ) -> ActResponse:
        """Tribes: place the lifted totem (no ``size`` nor ``special``), or the totem of
        ``size`` from one's mat, or a special totem (``"doom"``, ``"mini"``) from beside
        the board, on ``destination``. ``badge`` names the badge a winning move takes
        (TR-3.4)."""
        place = tribes_pb2.TribesPlace(destination=destination)
        if size is not None:
            place.size = size
        if special is not None:
            place.special = SPECIAL_TOTEMS[special]
        if badge is not None:
            place.badge = BADGES[badge]
        return await self.act(TribesCommand(place=place))

    async def place_option(
        self,
        option: tribes_pb2.TribesPlaceOption,
        destination: int,
        *,
        badge: str | None = None,
    ) -> ActResponse:
        """Tribes: place the totem of one of the legal actions' place options."""
        if option.source == tribes_pb2.TRIBES_PLACE_SOURCE_MAT:
            return await self.place(destination, size=option.totem.size, badge=badge)
        if option.source == tribes_pb2.TRIBES_PLACE_SOURCE_BESIDE:
            special = "doom" if option.totem.kind == tribes_pb2.TRIBES_TOTEM_KIND_DOOM else "mini"
            return await self.place(destination, special=special, badge=badge)
        return await self.place(destination, badge=badge)

    async def stop(self, statement: str, result: Mapping[int, int] | None = None) -> ActResponse:
        """Referee only, any game: stop the match (JS-8.3), saying why; ``result`` maps
        every seat to its place (None: the standings so far)."""
        placements = [common_pb2.Placement(seat=s, place=p) for s, p in (result or {}).items()]
        return await self.act(StopMatch(statement=statement, result=placements))

    async def penalise(self, seat: int) -> ActResponse:
        """Tribes, referee only: penalise ``seat`` for coaching (TR-4.1)."""
        return await self.act(TribesCommand(penalise=tribes_pb2.TribesPenalise(seat=seat)))

    # ---- Village (every command names the family deciding, VI-7.1) -------------------

    async def arrange(self, family: int, cottages: Sequence[Mapping[str, int]]) -> ActResponse:
        """Village phase 1 (VI-2.1): the family's members into its three cottages, as
        counts per kind name (``{"young_woman": 2, "elder": 1}``), at most 6 each."""
        arrange = village_pb2.VillageArrange(
            family=family, cottages=[village_counts(c) for c in cottages]
        )
        return await self.act(VillageCommand(arrange=arrange))

    async def choose_spells(
        self, family: int, spells: Sequence[str], birds: int = 0
    ) -> ActResponse:
        """Village phase 2 (VI-2.2): the spells to cast, by name, and the birds to
        sacrifice for those beyond the pole's pieces; secret until revealed."""
        choose = village_pb2.VillageChooseSpells(
            family=family, spells=[SPELLS[s] for s in spells], birds=birds
        )
        return await self.act(VillageCommand(choose_spells=choose))

    async def place_spell(
        self, family: int, spell: str, target_family: int, cottage: int
    ) -> ActResponse:
        """Village phase 2 (VI-2.2): one chosen spell face down on a cottage."""
        place = village_pb2.VillagePlaceSpell(
            family=family, spell=SPELLS[spell], target_family=target_family, cottage=cottage
        )
        return await self.act(VillageCommand(place_spell=place))

    async def pass_spells(self, family: int) -> ActResponse:
        """Village phase 2, spells_a: place no more spells this round."""
        return await self.act(
            VillageCommand(pass_spells=village_pb2.VillagePassSpells(family=family))
        )

    async def submit_placements(
        self, family: int, placements: Sequence[tuple[str, int, int]]
    ) -> ActResponse:
        """Village phase 2, spells_b: every placement at once, ``(spell, target family,
        cottage)`` each."""
        submit = village_pb2.VillageSubmitPlacements(
            family=family,
            placements=[
                village_pb2.VillagePlacement(spell=SPELLS[s], target_family=t, cottage=c)
                for s, t, c in placements
            ],
        )
        return await self.act(VillageCommand(submit_placements=submit))

    async def reveal_spells(self, family: int, positions: Sequence[int] = ()) -> ActResponse:
        """Village, phases 3, 4, 6, 7 (VI-2.3): reveal the family's face-down spells at
        these board positions (none: keep them all secret)."""
        reveal = village_pb2.VillageRevealSpells(family=family, positions=positions)
        return await self.act(VillageCommand(reveal_spells=reveal))

    async def choose_victims(self, family: int, victims: Sequence[Person]) -> ActResponse:
        """Village phase 5 (VI-2.6): victims of the starving family, ``(cottage, kind)``."""
        choose = village_pb2.VillageChooseVictims(family=family, victims=village_persons(victims))
        return await self.act(VillageCommand(choose_victims=choose))

    async def spare_from_age(self, family: int, spared: Sequence[Person]) -> ActResponse:
        """Village phase 7 (VI-2.8): whom each revealed youth spell spares."""
        spare = village_pb2.VillageSpareFromAge(family=family, spared=village_persons(spared))
        return await self.act(VillageCommand(spare_from_age=spare))

    def watch(
        self, after_version: int = 0, *, with_state: bool = True, max_failures: int | None = 10
    ) -> EventStream:
        """Watch the match as this participant (see :meth:`Client.watch`); each event's
        state becomes :attr:`state`."""
        return self.client.watch(
            self.match_id,
            after_version,
            token=self.token or None,
            with_state=with_state,
            max_failures=max_failures,
            on_event=self._saw_event,
        )
