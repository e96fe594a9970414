"""Several server instances on one PostgreSQL database.

Every instance saves through the same store, so the store is where they meet:

- **Writes.** Each save notifies, in its own transaction, ``instance match version`` on
  the store's channel (:func:`channel`; see the PostgreSQL recorder in
  :mod:`storage.summaries_postgres`): a notification is delivered only if the save
  committed, and in commit order. Each process holds one listening connection (never
  one per stream, and no polling) and hands the other instances' writes to its actors,
  which read the new events, publish them to this process's streams and set their
  timers again (:meth:`server.actors.Actors.foreign_write`).
- **Presence.** Streams opened and closed, and commands, are announced on a second
  channel, with a heartbeat, so that every instance sees who is at each table
  (:class:`server.presence.Presence` keeps the other instances' share; JS-8.3).

Commands for one match sent through two instances are serialised by the store: each
instance decides on its copy of the match and saves the next version; the second save
of a version fails, and that instance reloads and decides again (optimistic
concurrency). So a timer that fires on two instances records one event, and a grab race
split over two instances is decided by commit order (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from server.presence import HEARTBEAT_MS, Presence
from storage.summaries_postgres import parse_event

if TYPE_CHECKING:
    from server.actors import Actors
    from storage.arena import Arena

log = logging.getLogger(__name__)

#: Longest NOTIFY channel name PostgreSQL keeps (an identifier).
MAX_CHANNEL = 63
#: Longest instance name: it goes in every notification and every receive stamp.
MAX_INSTANCE = 100
#: How long the listening thread waits before it connects again after a failure.
RECONNECT_SECONDS = 1.0
#: How often the listening thread looks up from waiting, to notice it should stop.
POLL_SECONDS = 0.5


class InstanceNameError(ValueError):
    """An instance name that cannot go in notifications and stamps."""


def default_instance() -> str:
    """A name for this process among the instances: its host and process id."""
    return f"{socket.gethostname()}/{os.getpid()}"


def channel(schema: str, kind: str = "events") -> str:
    """The notification channel of one store (a schema of the database): instances on
    different schemas of one database never hear each other."""
    return f"totem_{kind}_{schema}"[:MAX_CHANNEL]


class Listener:
    """One connection of this process that listens to the store's channels, in a thread
    of its own, and hands each notification of another instance to the event loop."""

    def __init__(
        self,
        conninfo: str,
        connect_kwargs: dict[str, Any],
        instance: str,
        handlers: dict[str, Callable[[str, str], None]],
        on_reconnect: Callable[[], None] = lambda: None,
    ) -> None:
        self.instance = instance
        self._on_reconnect = on_reconnect
        self._conninfo = conninfo
        self._kwargs = {k: v for k, v in connect_kwargs.items() if k != "row_factory"}
        self._kwargs["application_name"] = f"totem listener {instance}"[:63]
        self._handlers = handlers
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._sender: psycopg.Connection[Any] | None = None
        self._send_lock = threading.Lock()

    async def start(self) -> None:
        """Listen from now on: once this returns, every later commit is heard."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._listen, name="listener", daemon=True)
        self._thread.start()
        await asyncio.to_thread(self._ready.wait)
        if self._error is not None:
            raise self._error

    def _listen(self) -> None:
        """Listen until stopped. A connection that breaks (the database restarted, a
        network cut) is opened again; what was saved meanwhile was not heard, so the
        loop is then told to look at the store (``on_reconnect``)."""
        first = True
        while not self._stop.is_set():
            try:
                conn = psycopg.connect(self._conninfo, autocommit=True, **self._kwargs)
            except psycopg.OperationalError as error:
                if first:
                    self._error = error
                    self._ready.set()
                    return
                log.warning("cannot listen to the store (%s): trying again", error)
                self._stop.wait(RECONNECT_SECONDS)
                continue
            with conn:
                for name in self._handlers:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(name)))
                if first:
                    first = False
                    self._ready.set()
                elif self._loop is not None:
                    log.warning("listening to the store again: catching up with it")
                    self._loop.call_soon_threadsafe(self._on_reconnect)
                try:
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=POLL_SECONDS):
                            self._hand(note.channel, note.payload)
                except psycopg.OperationalError as error:
                    if not self._stop.is_set():
                        log.warning("the store's notifications broke off (%s)", error)

    def _hand(self, name: str, payload: str) -> None:
        sender, _, rest = payload.partition(" ")
        if sender == self.instance or self._loop is None:
            return  # our own: the actors that saved have published already
        handler = self._handlers.get(name)
        if handler is not None:
            self._loop.call_soon_threadsafe(handler, sender, rest)

    def send(self, name: str, payload: str) -> None:
        """Notify the other instances (blocking: call it from a thread)."""
        message = f"{self.instance} {payload}"
        with self._send_lock:
            for attempt in range(2):  # a connection the database dropped is made again
                if self._sender is None or self._sender.closed:
                    kwargs = {**self._kwargs, "application_name": f"totem sender {self.instance}"}
                    self._sender = psycopg.connect(self._conninfo, autocommit=True, **kwargs)
                try:
                    self._sender.execute("SELECT pg_notify(%s, %s)", (name, message))
                    return
                except psycopg.OperationalError:
                    self._sender.close()
                    if attempt:
                        raise

    async def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)
        with self._send_lock:
            if self._sender is not None:
                self._sender.close()


class Cluster:
    """This instance among the others on one store: it hears their writes and their
    players' presence, and tells them its own (writes are told by the saves
    themselves)."""

    def __init__(self, app: Arena, instance: str) -> None:
        from storage.summaries_postgres import PostgresSummaryRecorder

        recorder = app.recorder
        if not isinstance(recorder, PostgresSummaryRecorder):
            raise ValueError("several server instances need a PostgreSQL store")
        if not instance or any(c.isspace() for c in instance) or len(instance) > MAX_INSTANCE:
            raise InstanceNameError(
                f"an instance name is 1 to {MAX_INSTANCE} characters without spaces: {instance!r}"
            )
        self.instance = instance
        schema = recorder.datastore.schema
        self.events_channel = channel(schema, "events")
        self.presence_channel = channel(schema, "presence")
        recorder.notify = (self.events_channel, instance)
        pool = recorder.datastore.pool
        conninfo, kwargs = pool.conninfo, pool.kwargs
        self._conninfo = conninfo() if callable(conninfo) else conninfo
        self._kwargs = dict((kwargs() if callable(kwargs) else kwargs) or {})
        self._listener: Listener | None = None
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="announce")
        self._beating: asyncio.Task[None] | None = None

    @staticmethod
    def possible(app: Arena) -> bool:
        """Whether other instances can share this store (PostgreSQL)."""
        from storage.summaries_postgres import PostgresSummaryRecorder

        return isinstance(app.recorder, PostgresSummaryRecorder)

    async def start(self, actors: Actors) -> None:
        """Hear the others from now on, and say hello."""
        presence = actors.presence

        def on_event(_sender: str, rest: str) -> None:
            actors.foreign_write(*parse_event(rest))

        def reconnected() -> None:
            # What was said while the connection was down is lost: read the store, and
            # ask the others again for their streams.
            actors.look_again()
            presence.hello()

        self._listener = Listener(
            self._conninfo,
            self._kwargs,
            self.instance,
            {self.events_channel: on_event, self.presence_channel: presence.heard},
            on_reconnect=reconnected,
        )
        await self._listener.start()
        actors.shared = True
        loop = asyncio.get_running_loop()
        listener = self._listener

        def announce(message: str) -> None:
            # One thread, in order: the loop never waits for the store.
            future = loop.run_in_executor(
                self._sender, listener.send, self.presence_channel, message
            )
            future.add_done_callback(_log_send_failure)

        presence.announce = announce
        presence.hello()
        self._beating = loop.create_task(self._beat(presence), name="heartbeat")

    async def _beat(self, presence: Presence) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_MS / 1000)
            presence.beat()

    async def close(self, presence: Presence) -> None:
        """Say goodbye and stop listening."""
        if self._beating is not None:
            self._beating.cancel()
        if self._listener is not None:
            presence.bye()
            presence.announce = None
            await asyncio.get_running_loop().run_in_executor(self._sender, lambda: None)
            await self._listener.close()
        self._sender.shutdown(wait=True)


def _log_send_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("could not tell the other instances: %s", future.exception())
