"""The game-independent part of ``totem play``: connection, match, stream, commands.

:class:`PlayApp` opens a match (creates one, joins one or spectates one), follows its
Watch stream and hands every event to the game's :class:`GameScreen`, which draws the
table from the state the event carries. The app keeps what every game shares: the status
line (match, seat, version, connection), the notice line where refusals are explained,
the quit key, and commands sent without blocking the screen, so that a grab goes out the
moment its key is pressed. A game screen declares its own keys (``BINDINGS``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

import grpc
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from totem.v1 import common_pb2
from totem_client.client import Client, ClientTls, connect
from totem_client.command_line import failure_line
from totem_client.errors import TotemError
from totem_client.messages import MatchEvent, MatchSummary
from totem_client.play.openings import CannotOpen, Opening, Table
from totem_client.play.player import GameEntry
from totem_client.session import Session

Command = Callable[[Session], Awaitable[object]]


# ---- the shared widgets -------------------------------------------------------------------


def _status_name(status: common_pb2.MatchStatus.ValueType) -> str:
    return common_pb2.MatchStatus.Name(status).removeprefix("MATCH_STATUS_").lower()


class StatusLine(Static):
    """One line on top: the game, the match, who the user is, the version, the connection.

    The match id is shown whole so that it can be copied to spectate or join."""

    DEFAULT_CSS = """
    StatusLine { dock: top; height: auto; background: $primary; color: $text; padding: 0 1; }
    """

    def __init__(self, title: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.match_id = ""
        self.who = ""
        self.summary: MatchSummary | None = None
        self.connection = "starting"
        self.connection_ok = True

    def on_mount(self) -> None:
        self.redraw()

    def set_connection(self, text: str, ok: bool = True) -> None:
        self.connection, self.connection_ok = text, ok
        self.redraw()

    def redraw(self) -> None:
        parts: list[str | tuple[str, str] | Content] = [(self.title, "bold")]
        if self.summary is not None:
            if self.summary.variant:
                parts.append(f" {self.summary.variant}")
            parts.append(f" · {_status_name(self.summary.status)} · v{self.summary.version}")
        style = "bold" if self.connection_ok else "bold reverse"
        parts.extend([" · ", (self.connection, style)])
        if self.who:
            parts.append(f" · {self.who}")
        if self.match_id:
            parts.append(f" · match {self.match_id}")
        self.update(Content.assemble(*parts))


class Notice(Static):
    """The line that says why the server refused the last command, or what went wrong."""

    DEFAULT_CSS = """
    Notice { height: auto; max-height: 4; padding: 0 1; color: $text-warning; }
    Notice.-empty { display: none; }
    """

    def on_mount(self) -> None:
        self.clear()

    def say(self, text: str | Content) -> None:
        self.remove_class("-empty")
        self.update(text if isinstance(text, Content) else Content(text))

    def refused(self, label: str, seen_version: int, error: TotemError) -> None:
        """Show a refusal: the command, the version the user had seen when sending it (the
        notice stays until the next command, so it says how old it is), the status code,
        the rule id and the server's sentence, and when the server said to try again
        (the server is restarting, a quota is spent)."""
        where = f"{error.code.name}, {error.rule}" if error.rule else error.code.name
        retry = "" if error.retry_delay is None else f" (try again in {error.retry_delay:g} s)"
        self.say(
            Content.assemble(
                (f"{label} refused", "bold"),
                f" at v{seen_version} ({where}): ",
                error.message,
                retry,
            )
        )

    def clear(self) -> None:
        self.add_class("-empty")
        self.update("")


# ---- the base of every game's screen -------------------------------------------------------


class GameScreen(Screen[None]):
    """A game's screen: the status line, the game's widgets, the notice line, the keys.

    A subclass implements :meth:`compose_game` and :meth:`show`, declares its keys in
    ``BINDINGS`` and sends commands with :meth:`send`. It draws from what it is shown
    alone, so joining late or resuming after an outage needs nothing special.
    """

    BINDINGS: ClassVar[list[BindingType]] = []
    DEFAULT_CSS = """
    GameScreen #game { height: 1fr; }
    """

    def __init__(self, title: str) -> None:
        super().__init__()
        # Kept here, not queried: the app writes to them from its stream and channel
        # tasks, which may still run for a moment while the screen is taken down.
        self.status_line = StatusLine(title, id="status")
        self.notice = Notice(id="notice")

    def compose(self) -> ComposeResult:
        # The notice is below the game, not docked: docked to the bottom, it would lie
        # under the footer once its sentence wraps.
        yield self.status_line
        with Vertical(id="game"):
            yield from self.compose_game()
        yield self.notice
        yield Footer()

    def compose_game(self) -> ComposeResult:
        """The game's own widgets."""
        raise NotImplementedError

    def seated(self, session: Session) -> None:
        """Called once the match is open, before its first event: who the user is."""
        self.refresh_bindings()

    def show(self, event: MatchEvent) -> None:
        """Draw ``event`` and the state it carries (``event.state``)."""
        raise NotImplementedError

    @property
    def play_app(self) -> PlayApp:
        app = self.app
        assert isinstance(app, PlayApp)
        return app

    @property
    def session(self) -> Session | None:
        return self.play_app.session

    @property
    def is_player(self) -> bool:
        return self.session is not None and self.session.is_player

    def send(self, label: str, command: Command) -> None:
        """Send a command for the user's seat now; a refusal is shown on the notice line."""
        self.play_app.send(label, command)


# ---- the app -------------------------------------------------------------------------------


class PlayApp(App[None]):
    """A full-screen player of one match of one game (see the module's text).

    After it exits, ``match_id`` is the match that was opened (if any) and ``failure``
    says why none could be (the server unreachable, no such match, no free seat).
    """

    TITLE = "Totem Arena"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "quit", priority=True)]

    def __init__(
        self,
        entry: GameEntry,
        opening: Opening,
        address: str,
        *,
        connect_timeout: float = 5.0,
        organiser_token: str | None = None,
        tls: ClientTls | None = None,
        receipts: Path | None = None,
    ) -> None:
        super().__init__()
        self.entry = entry
        self.opening = opening
        self.address = address
        self.connect_timeout = connect_timeout
        self.organiser_token = organiser_token
        self.tls = tls
        #: Where the newest receipt of the match is kept (``--receipts``), if anywhere.
        self.receipts = receipts
        self.session: Session | None = None
        self.match_id: str | None = None
        self.failure: str | None = None
        self.summary: MatchSummary | None = None
        self.game_screen = entry.screen_class()(entry.title)
        self.status_line = self.game_screen.status_line
        self.notice = self.game_screen.notice
        self._watching = False

    def get_default_screen(self) -> GameScreen:
        return self.game_screen

    def on_mount(self) -> None:
        self.run_worker(self._play(), name="play", group="play")

    async def _play(self) -> None:
        self.status_line.set_connection(f"connecting to {self.address}")
        async with connect(
            self.address,
            organiser_token=self.organiser_token,
            tls=self.tls,
            receipts_dir=self.receipts,
        ) as client:
            try:
                await client.wait_ready(self.connect_timeout)
                self.status_line.set_connection(self.opening.description)
                table = await self.opening.open(client, self.entry)
            except (TotemError, CannotOpen) as error:
                why = failure_line(error, self.address) if isinstance(error, TotemError) else error
                self.failure = f"{self.opening.description} at {self.address}: {why}"
                self.exit(return_code=1)
                return
            self._seat(table)
            if table.session.is_player:
                # A player's commands go over one open Play stream: grabs are stamped as
                # soon as the server reads them. If it cannot open, they go as Act calls.
                with contextlib.suppress(TotemError):
                    await table.session.open_play()
            await self._follow(client, table.session)
            # Keep the channel for the keys and the companions until the user quits.
            await asyncio.Event().wait()

    def _seat(self, table: Table) -> None:
        session = table.session
        self.session = session
        self.match_id = session.match_id
        status = self.status_line
        status.match_id = session.match_id
        if session.seat is not None:
            status.who = f"you: {session.name} (seat {session.seat})"
        else:
            status.who = "spectating"
        self.game_screen.seated(session)
        for name, companion in table.companions:
            self.run_worker(
                self._companion(name, companion),
                name=name,
                group="companions",
                exit_on_error=False,
            )

    async def _companion(self, name: str, run: Callable[[], Awaitable[object]]) -> None:
        try:
            await run()
        except TotemError as error:
            self.notice.say(f"{name} stopped: {error}")

    async def _follow(self, client: Client, session: Session) -> None:
        """Show every event of the match; the stream resumes by itself after an outage,
        while :meth:`_watch_channel` says that the connection is down."""
        monitor = asyncio.create_task(self._watch_channel(client.channel))
        self._watching = True
        try:
            async with session.watch(after_version=0, max_failures=None) as stream:
                async for event in stream:
                    self._show(event)
            self.status_line.set_connection("match over")
        except TotemError as error:
            self.status_line.set_connection("not watching", ok=False)
            self.notice.say(f"the match stream stopped: {error}")
        finally:
            self._watching = False
            monitor.cancel()

    def _show(self, event: MatchEvent) -> None:
        if not self.game_screen.is_attached:
            return  # the app is exiting: its widgets are being taken down
        if event.HasField("state"):
            self.summary = event.state.summary
            self.status_line.summary = event.state.summary
        self.status_line.redraw()
        self.game_screen.show(event)

    async def _watch_channel(self, channel: grpc.aio.Channel) -> None:
        """Say "reconnecting" whenever the channel is not ready while the stream runs."""
        state = channel.get_state(try_to_connect=False)
        while self._watching:
            if state == grpc.ChannelConnectivity.READY:
                self.status_line.set_connection("connected")
            else:
                self.status_line.set_connection("reconnecting…", ok=False)
            await channel.wait_for_state_change(state)
            state = channel.get_state(try_to_connect=False)

    def send(self, label: str, command: Command) -> None:
        """Send a command in the background: the screen never waits for the server."""
        session = self.session
        if session is None:
            self.notice.say(f"{label}: not at the table yet")
            return
        if not session.is_player:
            self.notice.say(f"{label}: spectators do not play")
            return
        self.run_worker(self._send(label, session, command), group="commands")

    async def _send(self, label: str, session: Session, command: Command) -> None:
        seen = session.seen_version
        try:
            await command(session)
        except TotemError as error:
            self.notice.refused(label, seen, error)
        else:
            self.notice.clear()
