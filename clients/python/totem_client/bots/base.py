"""What every game's bot shares: it plays one seat from its watch stream alone.

Every event on a player's stream carries the seat's state after it, with its legal
actions, so a bot needs no GetMatch and no copy of the rules: it follows the stream,
and after each change decides from the newest state (:meth:`StreamBot._step`). Commands
go through :meth:`StreamBot._send`, which turns a refusal by the rules into a value (the
state moved on: decide again) and rides out the server's absence (a restart): it tries
again after the pause the server asked for, or a second at most, for about two minutes
before it gives up, while the watch stream resumes by itself just as long
(:mod:`totem_client.reconnect`). They go over one Play stream, as a player
who races should send them: a command on an open stream is receive-stamped as soon as
the server reads it, so a bot racing people who play on streams races them on equal
terms (JS-4.2).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import grpc

from totem.v1 import common_pb2
from totem_client.errors import TotemError
from totem_client.messages import ActResponse, MatchEvent, MatchState, MatchSummary
from totem_client.reconnect import PATIENCE, pause
from totem_client.session import Session
from totem_client.streams import RESUMABLE_CODES, EventStream

log = logging.getLogger(__name__)

#: Transient failures in a row (server unavailable) after which a bot gives up: about
#: two minutes of the server's absence (:data:`totem_client.reconnect.PATIENCE`).
MAX_TRANSIENT_FAILURES = PATIENCE


class StreamBot:
    """A bot for one seat: subclasses decide in :meth:`_step` and may count events."""

    def __init__(self, session: Session) -> None:
        if session.seat is None:
            raise ValueError("a bot needs a player session with a seat")
        self.session = session
        self.seat: int = session.seat
        self.summary: MatchSummary | None = None
        self._changed = asyncio.Event()
        self._transient = 0
        self._follower: asyncio.Task[None] | None = None
        #: The bot's watch stream while it plays: its ``resumes`` say how often it was
        #: opened again after the server went away.
        self.stream: EventStream | None = None

    @property
    def name(self) -> str:
        return self.session.name

    async def run(self) -> MatchSummary:
        """Play until the match ends; return its final summary."""
        try:
            return await self._play_to_the_end()
        finally:
            await self.session.close_play()

    async def _open_play(self) -> None:
        """Send the commands over a Play stream from now on; if the server refuses the
        stream (too many streams open from this connection, say), over Act calls."""
        try:
            await self.session.open_play()
        except TotemError as error:
            log.info("bot %s: acting by Act calls, Play refused: %s", self.name, error)

    async def _play_to_the_end(self) -> MatchSummary:
        if self.session.seen_version == 0:
            # A bot that has seen nothing starts from the match as it is now, not from its
            # history: a state from the past is no moment to act on (it could grab in a
            # race decided long ago, or act for a match that has ended).
            await self.session.get()
        # From the last event seen: its state starts the bot off.
        stream = self.session.watch(
            after_version=max(self.session.seen_version - 1, 0), max_failures=PATIENCE
        )
        self.stream = stream
        follower = asyncio.create_task(self._follow(stream), name=f"bot {self.name} watch")
        follower.add_done_callback(lambda _: self._changed.set())
        self._follower = follower
        play_opened = False
        try:
            while True:
                self._changed.clear()
                state = self.session.state
                if state is not None and state.summary.status == common_pb2.MATCH_STATUS_ENDED:
                    # The stream ends by itself after MatchEnded: let it deliver every
                    # event, so that what the bot counts is complete.
                    with contextlib.suppress(TotemError):
                        await follower
                    self.summary = state.summary
                    return state.summary
                if follower.done():
                    follower.result()  # raises what stopped the stream, if anything
                    raise TotemError(
                        grpc.StatusCode.DATA_LOSS, "the stream ended before the match did"
                    )
                if state is None:
                    await self._changed.wait()
                    continue
                if not play_opened:
                    # Once the watch stream has shown a state, so that it has its place
                    # among the connection's streams before the Play stream asks for one.
                    await self._open_play()
                    play_opened = True
                await self._step(state)
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError, TotemError):
                await follower
            await stream.aclose()

    async def _follow(self, stream: EventStream) -> None:
        async for event in stream:
            self._count(event)
            self._changed.set()

    async def _step(self, state: MatchState) -> None:
        """Decide from ``state`` and act, or wait for the next change."""
        raise NotImplementedError

    async def _changed_within(self, seconds: float) -> None:
        """Wait until the match changes or ``seconds`` pass (a bot's thinking time).

        A timeout in this task, not ``asyncio.wait_for``: on Python 3.11 that returns as
        if nothing happened when the task is cancelled just as the change comes
        (gh-86296), and a bot told to stop would play on to the end of its match."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._changed.wait()

    def _count(self, event: MatchEvent) -> None:
        """Note what an event says about this bot (its statistics)."""

    async def _send(
        self, command: str, version: int, send: Callable[[], Awaitable[ActResponse]]
    ) -> TotemError | None:
        """Send a command; return None once it is accepted, or the error: a refusal by
        the rules (FAILED_PRECONDITION: the state moved on) or a transient failure, once
        the pause before trying again is over (the server's retry hint, else up to a
        second), up to :data:`MAX_TRANSIENT_FAILURES` in a row. Any other error is
        raised."""
        try:
            await send()
        except TotemError as error:
            if error.code in RESUMABLE_CODES:
                self._transient += 1
                if self._transient > MAX_TRANSIENT_FAILURES:
                    raise
                log.info("bot %s: %s; trying again", self.name, error)
                await asyncio.sleep(pause(self._transient, error))
                await self._catch_up()
                return error
            if error.code != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            log.debug("bot %s: %s refused at version %d: %s", self.name, command, version, error)
            return error
        self._transient = 0
        return None

    async def _catch_up(self) -> None:
        """After a failure whose outcome is unknown (the server went away: the command may
        have been applied before it did), decide again only from a state that includes
        whatever the server recorded: wait until the stream has brought its version."""
        try:
            version = (await self.session.get()).summary.version
        except TotemError:
            return  # still away: the next failure comes back here
        while True:
            self._changed.clear()  # before looking, so that no change slips between
            state = self.session.state
            if state is not None and state.summary.version >= version:
                return
            if self._follower is None or self._follower.done():
                return  # the run loop raises what stopped the stream
            await self._changed.wait()
