"""The gRPC MatchService: create, join, look at, act in and watch matches.

Handlers only translate: they decode a request, call its use case
(:class:`server.application.Matches`) and encode the result; the streams' own work
(writing, deadlines, Play's reading and answering) stays here.
Calls that decide races (JoinMatch, Act) are stamped when they arrive, before their
message is read (:class:`server.stamps.ArrivalStamps`); their handlers pick the stamp
up on their first line and submit their work before awaiting anything. A command on a
Play stream is stamped as its message is read, and submitted before the next is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, NoReturn, TypeVar
from uuid import UUID

import grpc
from google.protobuf.message import DecodeError

from domain.kernel.stamps import ReceiveStamp
from server import auth, codec
from server.access import Access
from server.actors import Actors, Outcome
from server.application import Joined, Matches
from server.checkpoints import signed_checkpoint
from server.errors import (
    ServiceError,
    rich_status,
    shutting_down,
    status_text,
    to_service_error,
    trailing_metadata,
)
from server.hub import EventHub
from server.limits import Limits, StreamSlots, WriteDeadlines
from server.refusals import intake_of
from server.stamps import Stamper
from server.watch_feed import WatchFeed, fell_behind
from storage import keys
from storage.arena import Arena
from totem.v1 import common_pb2, match_service_pb2, match_service_pb2_grpc

log = logging.getLogger(__name__)

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20
#: Page tokens are log positions this server wrote: at most 18 ASCII digits.
MAX_PAGE_TOKEN_LENGTH = 18
#: The initial metadata of a Play stream the server has accepted; a refused stream ends
#: without it.
PLAY_ACCEPTED = ("totem-play", "accepted")
#: The answer to a ready request (``PlayRequest.ready``); never changed.
PLAY_READY = match_service_pb2.PlayResponse(ready=match_service_pb2.PlayReady())
#: Requests of one Play stream read and not yet answered: beyond, the stream is not read
#: until an answer is written (gRPC's flow control then holds the client back).
MAX_UNANSWERED = 64
#: How much of a client's own value an error message repeats.
ECHO_LIMIT = 40

R = TypeVar("R")
Handler = Callable[..., Awaitable[R]]


@dataclass(frozen=True)
class Undecodable:
    """What a handler receives for request bytes that are not its message: gRPC would
    otherwise answer UNKNOWN with the decoder's own words, before any handler runs."""

    method: str

    def refusal(self) -> ServiceError:
        return ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"the request is not a valid {self.method} request message",
        )


def tolerant(decode: Callable[[bytes], Any], method: str) -> Callable[[bytes], Any]:
    """``decode``, answering :class:`Undecodable` instead of raising."""

    def decoding(data: bytes) -> Any:
        try:
            return decode(data)
        except DecodeError:
            return Undecodable(method)

    return decoding


def echo(value: str) -> str:
    """A client's value as an error message may repeat it: quoted, and cut short."""
    if len(value) <= ECHO_LIMIT:
        return repr(value)
    return repr(value[:ECHO_LIMIT]) + f"... ({len(value)} characters)"


def incident(error: Exception) -> ServiceError:
    """An error nobody foresaw: INTERNAL with an id that finds it in the server's log,
    never the exception's own text (it may hold anything, stored data included)."""
    number = uuid.uuid4().hex[:12]
    log.error("incident %s: %s", number, type(error).__name__, exc_info=error)
    return ServiceError(
        grpc.StatusCode.INTERNAL,
        f"internal error, incident {number}: the server's log has the details",
    )


async def refuse(context: grpc.aio.ServicerContext, error: Exception) -> NoReturn:
    """End the call with the status, rule id and sentence of a known refusal, or as an
    incident (:func:`incident`) for anything else."""
    refusal = to_service_error(error) or incident(error)
    await context.abort(refusal.code, status_text(refusal), trailing_metadata(refusal))
    raise AssertionError("ServicerContext.abort always raises")


def refusals(handler: Handler[R]) -> Handler[R]:
    """Answer known refusals of a unary handler with :func:`refuse`."""

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> R:
        try:
            if isinstance(request, Undecodable):
                raise request.refusal()
            return await handler(self, request, context)
        except Exception as error:
            await refuse(context, error)

    return wrapper


def parse_id(text: str, field: str = "match_id", what: str = "a match id") -> UUID:
    """The id a request's ``field`` names; INVALID_ARGUMENT, in words, if it names none."""
    try:
        return UUID(text)
    except ValueError:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT, f"{field} {echo(text)} is not {what}"
        ) from None


def parse_match_id(text: str) -> UUID:
    return parse_id(text)


def page_position(token: str) -> int:
    """The log position a page token stands for; only tokens this server gives pass."""
    if not token:
        return 0
    if len(token) > MAX_PAGE_TOKEN_LENGTH or not (token.isascii() and token.isdigit()):
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT, "page_token is not one this server gave"
        )
    return int(token)


def page_request(page_size: int, page_token: str) -> tuple[int, int]:
    """A listing's log position to list after and its page size, from a request's
    ``page_size`` (0: the default; at most :data:`MAX_PAGE_SIZE`) and ``page_token``."""
    if page_size > MAX_PAGE_SIZE:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT, f"page_size is at most {MAX_PAGE_SIZE}"
        )
    return page_position(page_token), page_size or DEFAULT_PAGE_SIZE


def list_query(
    request: match_service_pb2.ListMatchesRequest,
) -> tuple[int, int, str | None, str | None]:
    """What a ListMatches request asks for: the log position to list after, the page
    size, and the game and status filters (:meth:`server.application.Matches.list`)."""
    after, size = page_request(request.page_size, request.page_token)
    game = codec.GAME_NAMES.get(request.game) if request.game else None
    if request.game and game is None:
        raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, "unknown game filter")
    if request.status not in common_pb2.MatchStatus.values():
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT, f"unknown status filter {request.status}"
        )
    return after, size, game, codec.status_filter(request.status)


def client_address(peer: str) -> str:
    """The host part of a gRPC peer (``ipv4:10.0.0.7:53312``): whose quota a call spends."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rsplit(":", 1)[0]
    return peer


def join_place(request: match_service_pb2.JoinMatchRequest) -> tuple[UUID, int | None]:
    """The match a JoinMatch request names and the seat it asks for (None: any seat)."""
    match_id = parse_match_id(request.match_id)
    place = request.WhichOneof("place")
    if place is None:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "set any_seat or seat to take a seat; spectators call GetMatch and Watch "
            "without joining",
        )
    return match_id, request.seat if place == "seat" else None


def joined_response(joined: Joined) -> match_service_pb2.JoinMatchResponse:
    return match_service_pb2.JoinMatchResponse(
        role=common_pb2.VIEWER_ROLE_PLAYER,
        seat=joined.seat,
        player_token=joined.token,
        version=joined.version,
    )


def no_token() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.UNAUTHENTICATED,
        "acting needs a player token from JoinMatch (a referee command, the referee "
        "token) as 'authorization: Bearer <token>'",
    )


#: What a Play stream will answer a request with: the command submitted to its match's
#: actor (the match and the outcome to wait for), or its refusal, known at once.
Answer = tuple[UUID, "asyncio.Future[Outcome[bytes]]"] | match_service_pb2.PlayResponse


#: A Play stream's answers in the order of its requests; None once the client has sent
#: its last, a refusal to end the stream with.
Answers = asyncio.Queue[Answer | ServiceError | None]


#: The longest reaction a client may report (ms): an hour, past any turn a player waits.
MAX_REACTION_MS = 3_600_000


def with_client_reaction(
    stamp: ReceiveStamp, request: match_service_pb2.ActRequest
) -> ReceiveStamp:
    """``stamp`` with the reaction the client measured itself (``reaction_ms``), its own
    evidence for a judge (JS-5.1). It needs the version it was measured from, and at
    most an hour; a stamp without one is returned as it is."""
    if not request.HasField("reaction_ms"):
        return stamp
    if request.seen_version == 0:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "reaction_ms is measured from the event at seen_version: set seen_version too",
            rule="JS-5.1",
        )
    if request.reaction_ms > MAX_REACTION_MS:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"reaction_ms {request.reaction_ms} is more than {MAX_REACTION_MS} (an hour)",
            rule="JS-5.1",
        )
    return replace(stamp, client_reaction_ms=request.reaction_ms)


def refused(error: Exception) -> match_service_pb2.PlayResponse:
    """A Play stream's answer to a refused command: the status Act would end with."""
    refusal = to_service_error(error) or incident(error)
    return match_service_pb2.PlayResponse(refused=rich_status(refusal))


class MatchService(match_service_pb2_grpc.MatchServiceServicer):
    #: Handlers whose calls are stamped on arrival (:class:`server.stamps.ArrivalStamps`):
    #: their receive order decides races and seat order.
    RACED = ("Act", "JoinMatch")

    def __init__(
        self,
        app: Arena,
        actors: Actors,
        hub: EventHub,
        stamper: Stamper,
        access: Access | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.app = app
        self.actors = actors
        self.hub = hub
        self.stamper = stamper
        self.access = access or Access()
        self.limits = limits or Limits()
        self.matches = Matches(app, actors, hub, self.access, self.limits, stamper)
        self.feed = WatchFeed(app, actors, self.matches, stamper)
        self.streams = StreamSlots(
            self.limits.streams_per_connection, self.limits.streams_per_address
        )
        #: The answers of every open Play stream, to end them when the server stops.
        self._plays: set[Answers] = set()
        #: One timer for the deadline of every stream write.
        self.deadlines = WriteDeadlines(self.limits.stream_write_timeout_s)

    @refusals
    async def GetServerKey(
        self, request: match_service_pb2.GetServerKeyRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.GetServerKeyResponse:
        return self.server_key()

    @refusals
    async def GetCheckpoint(
        self, request: match_service_pb2.GetCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.GetCheckpointResponse:
        return await self.checkpoint(request)

    @refusals
    async def CreateMatch(
        self, request: match_service_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.CreateMatchResponse:
        return await self.create_match(
            request,
            auth.bearer_token(context.invocation_metadata()),
            client_address(context.peer()),
        )

    @refusals
    async def JoinMatch(
        self, request: match_service_pb2.JoinMatchRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.JoinMatchResponse:
        stamp = self.stamper.on_arrival(0)
        match_id, seat = join_place(request)
        joined = await self.matches.join(
            match_id,
            auth.bearer_token(context.invocation_metadata()),
            request.name,
            request.entropy,
            seat,
            stamp,
        )
        return joined_response(joined)

    @refusals
    async def ReissueToken(
        self, request: match_service_pb2.ReissueTokenRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.ReissueTokenResponse:
        return await self.reissue_token(request, auth.bearer_token(context.invocation_metadata()))

    @refusals
    async def ForkMatch(
        self, request: match_service_pb2.ForkMatchRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.ForkMatchResponse:
        return await self.fork_match(request, auth.bearer_token(context.invocation_metadata()))

    @refusals
    async def GetMatch(
        self, request: match_service_pb2.GetMatchRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.GetMatchResponse:
        viewed = await self.matches.view(
            parse_match_id(request.match_id), auth.bearer_token(context.invocation_metadata())
        )
        return codec.viewed_match(viewed)

    @refusals
    async def ListMatches(
        self, request: match_service_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext
    ) -> match_service_pb2.ListMatchesResponse:
        page = await self.matches.list(*list_query(request))
        return codec.listed_page(page)

    @refusals
    async def Act(  # type: ignore[override]  # it answers wire bytes
        self, request: match_service_pb2.ActRequest, context: grpc.aio.ServicerContext
    ) -> bytes:
        stamp = self.stamper.on_arrival(request.seen_version)
        match_id, answer = self._submit_act(
            request, auth.bearer_token(context.invocation_metadata()), stamp
        )
        return (await self.actors.settled(match_id, answer)).value

    async def Play(  # type: ignore[override]  # it writes its answers
        self,
        requests: AsyncIterator[match_service_pb2.PlayRequest | Undecodable],
        context: grpc.aio.ServicerContext,
    ) -> None:
        """Acts on one stream. A task of the stream (:meth:`_read_plays`) only reads: it
        stamps each message as soon as it is read and submits its work before reading
        the next, so the actors' queues hold the commands in receive order; this
        coroutine waits for each outcome in turn and writes it (:meth:`_answer`)."""
        try:
            token = auth.bearer_token(context.invocation_metadata())
            if not token:
                raise no_token()
            if self.actors.draining:
                raise shutting_down("open a Play stream again, on another server or later")
            peer = context.peer()
            with self.streams.held(peer, client_address(peer)):
                # Accepted: said at once, so that a client may write knowing the stream
                # was not refused (grpcio's asyncio client reports a write that races
                # with a refusal as INTERNAL, grpc/grpc#36066).
                await context.send_initial_metadata((PLAY_ACCEPTED,))
                answers: Answers = asyncio.Queue()
                room = asyncio.Semaphore(MAX_UNANSWERED)
                reader = asyncio.create_task(self._read_plays(requests, token, answers, room))
                self._plays.add(answers)
                try:
                    await self._answer(answers, room, context)
                    await reader  # a read that failed ends the stream with its error
                finally:
                    self._plays.discard(answers)
                    reader.cancel()
        except Exception as error:
            await self._end_stream(context, error)

    async def _read_plays(
        self,
        requests: AsyncIterator[match_service_pb2.PlayRequest | Undecodable],
        token: str,
        answers: Answers,
        room: asyncio.Semaphore,
    ) -> None:
        try:
            await room.acquire()
            async for request in requests:
                answers.put_nowait(self._play_one(request, token))
                await room.acquire()
        finally:
            answers.put_nowait(None)

    def _play_one(self, request: match_service_pb2.PlayRequest | Undecodable, token: str) -> Answer:
        """One message of a Play stream, stamped and submitted at once; a refusal known
        before the match's actor looks is the answer itself. A ready request is answered
        in its turn, with no stamp: it is no command."""
        if isinstance(request, match_service_pb2.PlayRequest) and request.HasField("ready"):
            return PLAY_READY
        seen = request.act.seen_version if isinstance(request, match_service_pb2.PlayRequest) else 0
        stamp = self.stamper.stamp(seen, on_stream=True)
        try:
            if isinstance(request, Undecodable):
                raise request.refusal()
            if not request.HasField("act"):
                raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, "act or ready must be set")
            return self._submit_act(request.act, token, stamp)
        except Exception as error:
            return refused(error)

    async def _answer(
        self,
        answers: Answers,
        room: asyncio.Semaphore,
        context: grpc.aio.ServicerContext,
    ) -> None:
        """Write each request's answer, in the order the requests were read, until the
        client has sent its last, or until the stream is ended (:meth:`end_plays`).
        Answers are written as wire bytes (see :func:`server.serve.add_match_service`): an
        applied command's are its ``ActResponse``'s, as the actor made them."""
        while (answer := await answers.get()) is not None:
            if isinstance(answer, ServiceError):
                raise answer
            if isinstance(answer, match_service_pb2.PlayResponse):
                response = answer.SerializeToString()
            else:
                match_id, outcome = answer
                try:
                    applied = (await self.actors.settled(match_id, outcome)).value
                    response = codec.embedded(codec.PLAY_APPLIED, applied)
                except Exception as error:
                    response = refused(error).SerializeToString()
            if not await self.deadlines.write(context, response):
                raise ServiceError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "this stream's answers were not read in time; play again on a new stream",
                )
            room.release()

    def end_plays(self) -> None:
        """End every Play stream with UNAVAILABLE once the requests already read are
        answered: the server is shutting down, and commands are refused by now, so a
        request read later was not applied."""
        for answers in self._plays:
            answers.put_nowait(shutting_down("play again; requests not answered were not applied"))

    def _submit_act(
        self, request: match_service_pb2.ActRequest, token: str | None, stamp: ReceiveStamp
    ) -> tuple[UUID, asyncio.Future[Outcome[bytes]]]:
        """Check what can be checked without the match and hand the command to the
        match's actor; synchronous, so commands reach the actor in receive order. Its
        outcome is the ``ActResponse``'s wire bytes (:func:`server.codec.act_answer`)."""
        match_id = parse_match_id(request.match_id)
        if not token:
            raise no_token()
        kind = request.WhichOneof("command")
        if kind is None:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, "command must be set")
        common = kind in codec.COMMON_COMMANDS
        command = (
            codec.common_command(request) if common else codec.codec_for(kind).command(request)
        )
        claimed = request.seat if request.HasField("seat") else None
        intake = intake_of(request, kind, with_client_reaction(stamp, request))

        game = None if common else kind
        return match_id, self.matches.act(
            match_id, token, game, command, claimed, intake, codec.act_answer
        )

    async def Watch(  # type: ignore[override]  # it writes encoded MatchEvents
        self, request: match_service_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> None:
        """Stored events after ``after_version``, then live ones, each encoded once per
        kind of viewer (see :mod:`server.hub`); writes wire bytes (see
        :func:`server.serve.add_match_service`), each write within the stream write
        deadline (:class:`server.limits.Limits`)."""
        try:
            if isinstance(request, Undecodable):
                raise request.refusal()
            peer = context.peer()
            with self.streams.held(peer, client_address(peer)):
                await self._watch(request, context)
        except Exception as error:
            await self._end_stream(context, error)

    async def _watch(
        self, request: match_service_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> None:
        match_id = parse_match_id(request.match_id)
        token = auth.bearer_token(context.invocation_metadata())
        feed = self.feed.events(match_id, token, request.after_version, not request.omit_state)
        async with contextlib.aclosing(feed) as events:
            async for data, last in events:
                await self._write(context, data, last)

    async def _write(self, context: grpc.aio.ServicerContext, data: bytes, last: int) -> None:
        """Write one event, or end the stream if the client does not take it in time:
        ``last`` is the version of the last event it surely took."""
        # In this task (no task per write): the write is cancelled at the deadline.
        if not await self.deadlines.write(context, data):
            raise fell_behind(last)

    async def _end_stream(self, context: grpc.aio.ServicerContext, error: Exception) -> None:
        """End a stream with the status ``error`` calls for. A client that reads nothing
        gets it only once it reads what is in flight; the handler does not wait that
        long: the status stays queued in the transport, and the stream's share of the
        server (its subscription, its slot) is already given back."""
        try:
            async with asyncio.timeout(self.limits.stream_write_timeout_s):
                await refuse(context, error)
        except TimeoutError:
            log.info("stream ended without its client reading the status: %s", error)
            raise asyncio.CancelledError() from None

    # What the calls above do once their caller's token and address are read: shared
    # with the web handlers (:mod:`server.web`), so each is translated in one place.

    def server_key(self) -> match_service_pb2.GetServerKeyResponse:
        signer = self.actors.signer
        if signer is None:
            raise ServiceError(grpc.StatusCode.UNAVAILABLE, "this server signs no matches")
        return match_service_pb2.GetServerKeyResponse(
            algorithm=keys.ALGORITHM, public_key=signer.public_key
        )

    async def checkpoint(
        self, request: match_service_pb2.GetCheckpointRequest
    ) -> match_service_pb2.GetCheckpointResponse:
        signer = self.actors.signer
        if signer is None:
            raise ServiceError(grpc.StatusCode.UNAVAILABLE, "this server signs no checkpoints")
        return await self.app.queries.call(
            signed_checkpoint, self.app, signer, request.consistent_with
        )

    async def create_match(
        self, request: match_service_pb2.CreateMatchRequest, token: str | None, address: str
    ) -> match_service_pb2.CreateMatchResponse:
        """A new match for the holder of ``token``, calling from ``address`` (its host)."""
        game = codec.GAME_NAMES.get(request.game)
        if game is None:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, "game must be set to a known game")
        game_codec = codec.codec_for(game)
        options = codec.options_with_common(game_codec.options_from_request(request), request)
        created = await self.matches.create(token, address, game, options, request.entropy)
        return match_service_pb2.CreateMatchResponse(
            match_id=str(created.match_id),
            referee_token=created.referee_token,
            seed_commitment=created.seed_commitment,
        )

    async def reissue_token(
        self, request: match_service_pb2.ReissueTokenRequest, token: str | None
    ) -> match_service_pb2.ReissueTokenResponse:
        reissued = await self.matches.reissue(parse_match_id(request.match_id), token, request.seat)
        return match_service_pb2.ReissueTokenResponse(
            player_token=reissued.token, version=reissued.version
        )

    async def fork_match(
        self, request: match_service_pb2.ForkMatchRequest, token: str | None
    ) -> match_service_pb2.ForkMatchResponse:
        stamp = self.stamper.stamp()
        forked = await self.matches.fork(
            parse_match_id(request.match_id), request.version, token, stamp
        )
        return match_service_pb2.ForkMatchResponse(
            match_id=str(forked.match_id),
            referee_token=forked.referee_token,
            player_tokens=forked.player_tokens,
            seed_commitment=forked.seed_commitment,
            version=forked.version,
        )
