"""A participant's session of one match: its token sent with every call, the versions and
state it has seen, and the commands of each game by name (each game's own, from its
module in :mod:`totem_client.games`).

It is what the client's ``join``, ``spectate``, ``session``, ``referee`` and
``take_seat`` return, and it acts through that client (an Act call each, or a Play
stream); this module names the client for typing only, so that the client can import it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

import grpc

from totem.v1 import common_pb2
from totem_client.errors import TotemError
from totem_client.games import GAMES, GAMES_BY_ENUM, Command, GameCommands, StopMatch
from totem_client.messages import ActResponse, MatchEvent, MatchState, MatchSummary, MatchView
from totem_client.reconnect import pause
from totem_client.streams import EventStream, PlayStream

if TYPE_CHECKING:
    from totem_client.client import Client

#: Times :meth:`Session.open_play` opens a Play stream refused as UNAVAILABLE.
OPEN_ATTEMPTS = 3


class Session(GameCommands):
    """One participant of one match: a player (with a seat), a spectator, or the referee.

    It sends its bearer token with every call and remembers the highest event version it
    has seen (``seen_version``), from joins, views, command answers and watched events;
    commands report it to the server (JS-5.1). ``state`` is the newest state of the match
    it has received (from its watch stream or a command's answer), so that a client can
    play from the stream alone.

    Its commands are Act calls, one each, unless it is asked to play over a Play stream
    (:meth:`playing`, :meth:`open_play`): then they all go over one open stream, which a
    player racing for the totem should prefer (see :class:`PlayStream`). Every game's
    commands by name (``reveal``, ``lift``, ``arrange``...) come from
    :class:`~totem_client.games.GameCommands`, and all go through :meth:`act`.
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
        and the next command opens a new stream. Returns the stream.

        A stream refused as UNAVAILABLE (a connection that broke and is not yet known to
        be broken, a server restarting) is opened again after :func:`pause`, up to
        :data:`OPEN_ATTEMPTS` times: nothing has been sent on it, so nothing can be
        applied twice."""
        failures = 0
        while True:
            stream = self._stream()
            try:
                await stream.open()
                break
            except TotemError as error:
                failures += 1
                if error.code != grpc.StatusCode.UNAVAILABLE or failures == OPEN_ATTEMPTS:
                    raise
                await asyncio.sleep(pause(failures, error))
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
        match's game; by default the one this session has seen, or else asks the server
        (each game has its own start command, and a join does not say the game)."""
        if game is None and self.game is None:
            await self.get()
        name = game or self.game
        if name is None:
            raise ValueError(f"match {self.match_id} is of a game this client does not know")
        return await self.act(GAMES[name].start())

    async def stop(self, statement: str, result: Mapping[int, int] | None = None) -> ActResponse:
        """Referee only, any game: stop the match (JS-8.3), saying why; ``result`` maps
        every seat to its place (None: the standings so far)."""
        placements = [common_pb2.Placement(seat=s, place=p) for s, p in (result or {}).items()]
        return await self.act(StopMatch(statement=statement, result=placements))

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
