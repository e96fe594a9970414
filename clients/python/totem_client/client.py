"""An asyncio client for the MatchService (``totem.v1``), over ``grpc.aio``.

The messages it returns are the generated protobuf messages of the contract; this module
adds connection handling, bearer tokens, the ``seen_version`` bookkeeping, errors with
rule ids, and a Watch stream that resumes by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
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
from totem_client.reconnect import channel_options, pause

#: Watch failures after which the stream is opened again from the last version seen.
RESUMABLE_CODES: frozenset[grpc.StatusCode] = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)

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


class _Gap(Exception):
    """The server skipped a version: treated like a broken stream."""


class EventStream:
    """The events of one match in version order, each exactly once.

    When the stream breaks with a transient status (:data:`RESUMABLE_CODES`: the server
    is unavailable or restarting, or the stream fell behind and was closed with
    RESOURCE_EXHAUSTED), it is opened again with ``after_version`` = the last version
    yielded, after a pause (:func:`totem_client.reconnect.pause`: what the server's retry
    hint says, else 50 ms doubling up to 1 s). It ends when the server ends the stream normally
    (the match has ended and every event was sent). After ``max_failures`` failures in a
    row with no event in between (None: no limit) the last failure is raised as a
    :class:`TotemError`, as is any failure that is not transient.

    ``last_version`` is the version of the last event yielded; ``resumes`` counts the
    times the stream was opened again. Use ``async with`` or :meth:`aclose` to stop early.
    """

    def __init__(
        self,
        client: Client,
        match_id: str,
        after_version: int = 0,
        *,
        token: str | None = None,
        with_state: bool = True,
        max_failures: int | None = 10,
        on_event: Callable[[MatchEvent], None] | None = None,
    ) -> None:
        self.client = client
        self.match_id = match_id
        self.last_version = after_version
        self.resumes = 0
        self.token = token
        self.with_state = with_state
        self.max_failures = max_failures
        self.on_event = on_event
        self._events = self._run()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> MatchEvent:
        return await anext(self._events)

    async def aclose(self) -> None:
        """Stop watching: the call is cancelled."""
        await self._events.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[MatchEvent, None]:
        failures = 0
        while True:
            call = self.client._open_watch(
                self.match_id, self.last_version, self.token, self.with_state
            )
            try:
                async for event in call:
                    if event.version <= self.last_version:
                        continue  # already yielded before a resume
                    if event.version != self.last_version + 1:
                        raise _Gap(
                            f"the server sent version {event.version} after {self.last_version}"
                        )
                    self.last_version = event.version
                    failures = 0
                    if self.on_event is not None:
                        self.on_event(event)
                    yield event
                return
            except grpc.aio.AioRpcError as error:
                failure = TotemError.from_rpc_error(error)
                if self.client.closed or error.code() not in RESUMABLE_CODES:
                    raise failure from error
            except _Gap as gap:
                failure = TotemError(grpc.StatusCode.DATA_LOSS, str(gap))
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if self.client.closed and task is not None and not task.cancelling():
                    # grpc.aio cancels the calls of a closed channel.
                    raise TotemError(
                        grpc.StatusCode.CANCELLED, "the client was closed while watching"
                    ) from None
                raise
            finally:
                call.cancel()
            failures += 1
            if self.max_failures is not None and failures > self.max_failures:
                raise failure
            await asyncio.sleep(self._backoff(failures, failure))
            self.resumes += 1

    def _backoff(self, failures: int, failure: TotemError) -> float:
        exhausted = failure.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        if failures == 1 and exhausted and failure.retry_delay is None:
            return 0.0  # it fell behind; the server is fine
        return pause(failures, failure)


#: The initial metadata with which the server says it has accepted a Play stream.
PLAY_ACCEPTED = ("totem-play", "accepted")

#: What the writer of a Play stream takes from its outbox: a request and the future of
#: its answer, or None to half-close the stream.
_Outgoing = tuple[match_service_pb2.PlayRequest, "asyncio.Future[Any]"] | None
#: What a Play stream sends first: no command, answered in its turn (``PlayRequest.ready``).
READY_REQUEST = match_service_pb2.PlayRequest(ready=match_service_pb2.PlayReady())


class PlayStream:
    """Commands for one token over one open Play stream (``MatchService.Play``).

    Why a stream: a command on a stream that is already open is receive-stamped the
    moment the server reads its message, while an Act call is stamped only once gRPC has
    set the call up, one call at a time. Grabs are decided by receive order (JS-5.1), so
    a player who races for the totem, or who sends commands often, gets a tighter and
    fairer receive order here. Everything else is Act's: :meth:`act` returns the
    ``ActResponse`` :meth:`Client.act` would, and raises the same :class:`TotemError`
    (code, rule, message, retry delay) for the same refusal; a refusal does not end the
    stream.

    The server answers the requests in the order they were sent, so answers are matched
    to commands by that order: one task writes every request, and queues the command's
    future just before writing it, so that the queue of waiting futures is in write
    order. Concurrent :meth:`act` calls are fine; each gets its own answer. A command
    whose ``act`` is cancelled before its request is written is never sent.

    When the stream itself ends with an error (UNAVAILABLE: the server shuts down, and
    the commands it had not answered were not applied; RESOURCE_EXHAUSTED: the caller
    has too many streams open; CANCELLED: the client closed), every command still
    waiting raises it, and so does every later one (:attr:`failure`): open another
    stream to go on (a :class:`Session` does so by itself). grpcio's asyncio client
    reports a write that races with the server ending the stream as INTERNAL instead of
    the server's status (grpc/grpc#36066); so a stream without a token, which the server
    ends at once, is never written to: its UNAUTHENTICATED is read instead; and the first
    request waits for the server's initial metadata, which it sends once it has accepted
    the stream (a refusal of the stream itself comes instead). A write that still races
    with the end of the accepted stream (the server went away) raises UNAVAILABLE.

    The first request of every stream is a ready request (``PlayRequest.ready``), no
    command: gRPC hands the server a stream's first message sooner than its later ones,
    so a grab that was its stream's first message would win close races against grabs on
    streams already used (docs/performance.md). :meth:`open` returns once it is
    answered.

    Use it as ``async with client.play(token=...) as stream:``, which opens it
    (:meth:`open`); leaving the block waits for the answers still due and ends the
    stream (:meth:`close`), or ends it at once if the block raised (:meth:`cancel`).
    Opened ahead of a race, the stream costs the race no setting up.
    """

    def __init__(self, client: Client, token: str) -> None:
        self.client = client
        self.token = token
        #: Why the stream ended, once it has ended with an error; None otherwise.
        self.failure: TotemError | None = None
        self._call: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._settling: asyncio.Task[None] | None = None
        self._outbox: asyncio.Queue[_Outgoing] = asyncio.Queue()
        self._waiting: deque[asyncio.Future[Any]] = deque()
        self._ready: asyncio.Future[None] | None = None
        self._closing = False
        self._ended = False
        self._write_failed = False

    def __repr__(self) -> str:
        state = "ended" if self._ended else "closing" if self._closing else "open"
        return f"PlayStream({state}, waiting={len(self._waiting)})"

    @property
    def done(self) -> bool:
        """True once no more commands can go over this stream: closed, or ended."""
        return self._ended or self._closing

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            await self.close()
        else:
            await self.cancel()

    async def open(self) -> None:
        """Open the stream now, rather than with the first command, and wait until the
        server has answered its ready request, or refused the stream: raise that refusal
        (UNAUTHENTICATED without a token, RESOURCE_EXHAUSTED with too many streams open,
        UNAVAILABLE while the server shuts down). A stream opened ahead of a race sends
        its first command at once."""
        if self.done:
            raise self._refusal()
        self._start()
        await self._settled()
        if self._ready is not None and not self._ended:
            assert self._reader is not None
            await asyncio.wait([self._ready, self._reader], return_when=asyncio.FIRST_COMPLETED)
        if self._ended:
            raise self._refusal()

    def _start(self) -> None:
        """Open the call and its reader (and, with a token, its writer), once."""
        if self._call is not None:
            return
        self._call = self.client._open_play(self.token)
        self._reader = asyncio.create_task(self._read(), name="totem play: answers")
        self._settling = asyncio.create_task(self._settle(), name="totem play: opening")
        if self.token:
            self._writer = asyncio.create_task(self._write(), name="totem play: requests")
            self._ready = asyncio.get_running_loop().create_future()
            # Retrieved here: a stream that ends before it is answered says so elsewhere.
            self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
            self._outbox.put_nowait((READY_REQUEST, self._ready))

    async def _settle(self) -> None:
        """Wait until the server has accepted the stream (its initial metadata says so)
        or ended it (then the reader has its status)."""
        with contextlib.suppress(grpc.aio.AioRpcError):  # the reader reports it
            if PLAY_ACCEPTED in tuple(await self._call.initial_metadata()):
                return
        assert self._reader is not None
        await asyncio.wait([self._reader])

    async def _settled(self) -> None:
        """Return once the stream is settled (:meth:`_settle`) or has ended."""
        assert self._reader is not None and self._settling is not None
        await asyncio.wait([self._settling, self._reader], return_when=asyncio.FIRST_COMPLETED)

    def _refusal(self) -> TotemError:
        """Why a command cannot go over this stream (it has ended, or it was closed)."""
        if self.failure is not None:
            return self.failure.copy()
        return TotemError(grpc.StatusCode.CANCELLED, "this Play stream is closed: open another")

    async def act(
        self,
        match_id: str,
        command: Command,
        *,
        seen_version: int = 0,
        seat: int | None = None,
    ) -> ActResponse:
        """Send one command over the stream and wait for its answer; arguments and
        result as :meth:`Client.act` (this stream's token acts). Raises
        :class:`TotemError` for a refused command (the stream stays open) and for the
        end of the stream (see the class)."""
        request = match_service_pb2.PlayRequest(
            act=act_request(match_id, command, seen_version=seen_version, seat=seat)
        )
        if self.done:
            raise self._refusal()
        self._start()
        if self._writer is None:
            # No token: the server ends the stream at once. A write racing with that
            # end would be reported as INTERNAL (grpc/grpc#36066): read the status.
            assert self._reader is not None
            await asyncio.wait([self._reader])
            raise self._refusal()
        answer: asyncio.Future[ActResponse] = asyncio.get_running_loop().create_future()
        # Synchronously after the check above: nothing is queued once the stream has ended.
        self._outbox.put_nowait((request, answer))
        return await answer

    async def close(self) -> None:
        """Send no more commands: the stream is half-closed once every command already
        given is written, and this returns once each has its answer and the server has
        ended the stream. A command given afterwards raises ``TotemError(CANCELLED)``."""
        if self._call is None:
            self._closing = self._ended = True
            return
        if not self._closing:
            self._closing = True
            self._outbox.put_nowait(None)
        assert self._reader is not None
        await asyncio.wait([self._reader])

    async def wait_ended(self) -> TotemError | None:
        """Wait until the stream has ended (the server ended it, or it was closed or
        cancelled) and return why: :attr:`failure`, None after a clean close. A player
        who keeps a stream open between commands learns here that it must open another
        (the server restarted); a stream never opened has nothing to wait for."""
        if self._reader is not None:
            await asyncio.wait([self._reader])
        return self.failure

    async def cancel(self) -> None:
        """End the stream now: commands still waiting raise ``TotemError(CANCELLED)``
        (the server may have applied those it had read already)."""
        self._closing = True
        if self._call is None:
            self._ended = True
            return
        self._call.cancel()
        assert self._reader is not None
        await asyncio.wait([self._reader])

    async def _write(self) -> None:
        """Write the requests in the order they were given, each command's future queued
        as waiting just before its request is written: the answers' order."""
        call = self._call
        await self._settled()
        while (item := await self._outbox.get()) is not None:
            request, answer = item
            if answer.done():
                continue  # its act was cancelled before it was sent: never sent
            self._waiting.append(answer)
            try:
                await call.write(request)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                # The stream has ended: the reader reads its status and hands it to
                # this command and every other still waiting.
                self._write_failed = True
                return
            except Exception as error:  # any other failure ends the stream
                self._end(TotemError(grpc.StatusCode.INTERNAL, f"could not send: {error}"))
                call.cancel()
                return
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await call.done_writing()

    async def _read(self) -> None:
        """Hand each answer to the oldest waiting command, until the stream ends; then
        hand its status to every command still waiting."""
        call = self._call
        try:
            while (response := await call.read()) is not grpc.aio.EOF:
                if not self._waiting:
                    self._end(
                        TotemError(grpc.StatusCode.INTERNAL, "the server answered no request")
                    )
                    call.cancel()
                    return
                self._answer(self._waiting.popleft(), response, self.client)
            self._end(None)
        except grpc.aio.AioRpcError as error:
            self._end(self._stream_error(TotemError.from_rpc_error(error)))
        except asyncio.CancelledError:
            closed = self.client.closed
            self._end(
                TotemError(
                    grpc.StatusCode.CANCELLED,
                    "the client was closed while playing" if closed else "the stream was cancelled",
                )
            )
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise

    @staticmethod
    def _answer(
        answer: asyncio.Future[Any], response: match_service_pb2.PlayResponse, client: Client
    ) -> None:
        outcome = response.WhichOneof("outcome")
        if outcome == "applied":
            client.kept(response.applied)  # applied, even if its act was cancelled since
        if answer.done():
            return  # its act was cancelled after it was sent; the answer was its own
        if outcome == "applied":
            answer.set_result(response.applied)
        elif outcome == "ready":
            answer.set_result(None)
        elif outcome == "refused":
            answer.set_exception(TotemError.from_status(response.refused))
        else:
            answer.set_exception(
                TotemError(grpc.StatusCode.UNKNOWN, "the server's answer had no outcome")
            )

    def _stream_error(self, error: TotemError) -> TotemError:
        """UNAVAILABLE, saying so, when grpc/grpc#36066 hid the server's status behind
        INTERNAL. The first write waits until the server has accepted the stream, so a
        write can only race with the end of an accepted stream: the server going away
        (its shutdown, a crash, a broken connection), which is UNAVAILABLE; as with any
        UNAVAILABLE, a command that was being sent may or may not have been applied, and
        the match's events say which."""
        if self._write_failed and error.code == grpc.StatusCode.INTERNAL:
            return TotemError(
                grpc.StatusCode.UNAVAILABLE,
                f"the stream ended while a command was being sent (grpcio reported "
                f"INTERNAL, {error.message!r}, instead of the server's status: "
                "grpc/grpc#36066)",
                error.rule,
                error.retry_delay,
            )
        return error

    def _end(self, failure: TotemError | None) -> None:
        """The stream is over: every command still waiting, sent or not, raises
        ``failure`` (or, after a clean end, that it was not answered)."""
        if self._ended:
            return
        self._ended = True
        self.failure = failure
        error = failure or TotemError(
            grpc.StatusCode.UNKNOWN, "the Play stream ended before this command was answered"
        )
        pending = list(self._waiting)
        self._waiting.clear()
        while not self._outbox.empty():
            item = self._outbox.get_nowait()
            if item is not None:
                pending.append(item[1])
        for answer in pending:
            if not answer.done():
                answer.set_exception(error.copy())
        for task in (self._writer, self._settling):
            if task is not None and not task.done():
                task.cancel()


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
