"""The use cases of matches: create, join, reissue a token, fork, list, look at, watch, act.

Each use case takes plain values (the caller's token, names, numbers, a game's options
already decoded) and returns a small typed result; it authorises the caller, runs the
domain's command in the match's actor (:mod:`server.actors`), which saves what it caused
before anything is answered, and says nothing of protobuf or gRPC (its refusals are
:mod:`server.failures`, which the adapter maps to statuses): the gRPC handlers
(:mod:`server.service`) only translate requests into these calls and results into
responses. The store is :class:`storage.arena.Arena`; the rules are the domain's.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

from domain.games import GAMES
from domain.kernel import ties
from domain.kernel.commands import Command
from domain.kernel.errors import InvalidArgument
from domain.kernel.match import MatchAggregate, MatchStatus
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.views import Viewer
from server import auth
from server.access import Access
from server.actors import Actors, Deferred, Outcome
from server.failures import BadRequest, Exhausted, OutOfRange, PermissionDenied, Unauthenticated
from server.fork import fork_match
from server.hub import EventHub, Subscription
from server.limits import CommandRates, Limits
from server.refusals import Intake
from server.stamps import Stamper
from storage.arena import Arena
from storage.summaries import Summary, summary_of

T = TypeVar("T")
#: How a command's caller is answered: ``(match, viewer, since) -> answer``, made in the
#: match's actor while the match is at the command's version, ``since`` the index of the
#: command's first event among the match's pending events.
Answer = Callable[[MatchAggregate, Viewer, int], T]


def viewer_of(match: MatchAggregate, token: str | None, access: Access) -> Viewer:
    """Who holds ``token`` in this match: no token is a spectator; an organiser sees as
    the referee does."""
    if token is None:
        return Viewer.spectator()
    digest = auth.token_hash(token)
    if token and (digest == match.referee_token_hash or access.is_organiser_hash(digest)):
        return Viewer.referee()
    seat = match.seat_of(digest) if token else None
    if seat is None:
        raise Unauthenticated("the token is not valid for this match")
    return Viewer.player(seat)


@dataclass(frozen=True)
class Created:
    match_id: UUID
    #: The referee's token, shown once ("" for a match without a referee).
    referee_token: str
    seed_commitment: bytes


@dataclass(frozen=True)
class Joined:
    seat: int
    #: The seat's token, shown once.
    token: str
    version: int


@dataclass(frozen=True)
class Reissued:
    token: str
    version: int


@dataclass(frozen=True)
class Forked:
    match_id: UUID
    referee_token: str
    player_tokens: list[str]
    seed_commitment: bytes
    version: int


@dataclass(frozen=True)
class Viewed:
    """A match as one viewer may see it, at one version."""

    summary: Summary
    viewer: Viewer
    game: str
    #: The game's state view for ``viewer`` (redacted by the domain).
    state: dict[str, Any]


@dataclass(frozen=True)
class Page:
    """One page of match summaries, in creation order."""

    summaries: list[Summary]
    #: The log position to list after for the next page; None on the last page.
    next_position: int | None


@dataclass(frozen=True)
class Watching:
    """A subscription to a match's events for one viewer, from ``version`` on."""

    viewer: Viewer
    subscription: Subscription
    #: Every event up to this version is stored; every later one reaches the subscription.
    version: int
    ended: bool


class Matches:
    """The use cases, over the store, the match actors and the server's access policy."""

    def __init__(
        self,
        store: Arena,
        actors: Actors,
        hub: EventHub,
        access: Access,
        limits: Limits,
        stamper: Stamper,
    ) -> None:
        self.store = store
        self.hub = hub
        self.actors = actors
        self.access = access
        self.limits = limits
        self.stamper = stamper
        self.rates = CommandRates(limits.commands_per_second, limits.command_burst)
        actors.when_retired(self.rates.forget)

    async def create(
        self, caller: str | None, address: str, game: str, options: Any, entropy: bytes
    ) -> Created:
        """A new match of ``game`` with ``options`` (the game's, decoded and checked by
        the domain when the match is made), created by ``caller`` from ``address``; the
        server's tie windows are recorded in it (JS-4.2a)."""
        creation = self.access.creation(caller, address)
        if not creation.allowed:
            raise PermissionDenied(
                "creating a match needs an organiser's token as 'authorization: Bearer "
                "<token>': this server does not let anyone else create matches",
            )
        if creation.retry_after_ms is not None:
            raise Exhausted(
                f"too many matches created: try again in {creation.retry_after_ms} ms",
                retry_after_ms=creation.retry_after_ms,
            )
        # Only an organiser's match has a referee: its creator may hand the token on.
        token, token_hash = auth.new_token() if creation.with_referee else ("", "")
        match = await self._create(game, options, entropy, token_hash)
        return Created(match.id, token, bytes.fromhex(match.seed_commitment))

    async def _create(
        self, game: str, options: Any, entropy: bytes, referee_token_hash: str
    ) -> MatchAggregate:
        """Make, save and start the timers of a new match, the server's tie windows
        recorded in it (JS-4.2a)."""
        self.actors.check_open()
        options = ties.with_windows(options, *self.limits.tie_windows_us())
        kind = GAMES[game]
        # A game that keeps a secret of the server's gets one drawn here.
        extra = {"secret": secrets.token_bytes(kind.secret_bytes)} if kind.secret_bytes else {}
        match = await self.actors.threads.call(
            self.store.create_match,
            lambda seed: kind.create(options, seed, entropy, referee_token_hash, **extra),
        )
        # Its timers run from its creation: a waiting match nobody joins expires.
        self.actors.actor(match.id).resume(match)
        return match

    async def join(
        self,
        match_id: UUID,
        caller: str | None,
        name: str,
        entropy: bytes,
        seat: int | None,
        stamp: ReceiveStamp,
    ) -> Joined:
        """Take ``seat`` (None: the next free one) in ``name``; the referee and the
        organisers, who see every hidden fact, may not. (A tournament table's seats are
        kept for its entrants, whom :meth:`seat_table` seats.)"""
        token, token_hash = auth.new_token()

        def join(match: MatchAggregate) -> tuple[int, int]:
            if caller and (
                auth.token_hash(caller) == match.referee_token_hash
                or self.access.is_organiser(caller)
            ):
                raise PermissionDenied(
                    "the referee and the organisers see every hidden fact: they cannot take a seat",
                )
            taken = match.join(name, entropy, token_hash, stamp, seat)
            self.actors.presence.acted(match_id, taken)
            return taken, match.version

        taken, version = (await self.actors.run(match_id, join)).value
        return Joined(taken, token, version)

    async def create_table(self, game: str, options: Any) -> UUID:
        """A new match of ``game`` for a tournament's table (:mod:`server.tournaments`):
        its seats kept for the table's entrants (``options.reserved_for``), no referee of
        its own (the organisers see it as one), the server's tie windows recorded."""
        return (await self._create(game, options, b"", "")).id

    async def seat_table(
        self,
        match_id: UUID,
        entrants: list[tuple[str, str]],
        stamp: ReceiveStamp,
        start: bool = False,
    ) -> int:
        """Seat a tournament table's entrants (``(name, token hash)`` each, in the
        pairing's seat order) in its match, each with their own entrant token (TO-9.2),
        those seated already left as they are; ``start``: begin with them though the
        match has more seats (the others forfeited, TO-9.3). Returns the match's version."""

        def seat(match: MatchAggregate) -> int:
            for name, token_hash in entrants:
                if match.status is MatchStatus.WAITING and match.seat_of(token_hash) is None:
                    self.actors.presence.acted(match_id, match.join(name, b"", token_hash, stamp))
            if start and match.status is MatchStatus.WAITING and match.start_refusal(0) is None:
                match.start(0, stamp)
            return match.version

        return (await self.actors.run(match_id, seat)).value

    async def reissue(self, match_id: UUID, caller: str | None, seat: int) -> Reissued:
        """A new token for ``seat``, the old one no longer valid: the referee's to do."""
        new_token, new_hash = auth.new_token()

        def reissue(match: MatchAggregate) -> int:
            if not viewer_of(match, caller, self.access).sees_everything:
                raise PermissionDenied("only the referee can reissue a token")
            match.reissue_token(seat, new_hash)
            return match.version

        version = (await self.actors.run(match_id, reissue)).value
        return Reissued(new_token, version)

    async def fork(
        self, origin_id: UUID, version: int, caller: str | None, stamp: ReceiveStamp
    ) -> Forked:
        """A new live match from the state of ``origin_id`` right after ``version``
        (:mod:`server.fork`)."""
        self.actors.check_open()
        organiser = self.access.is_organiser(caller)
        new = await self.actors.threads.call(
            fork_match, self.store, origin_id, version, caller, stamp, organiser
        )
        # In play from its first event: its timer runs as a recovered match's does.
        self.actors.actor(new.match.id).resume(new.match)
        return Forked(
            new.match.id,
            new.referee_token,
            new.player_tokens,
            bytes.fromhex(new.match.seed_commitment),
            new.match.version,
        )

    async def list(self, after: int, size: int, game: str | None, status: str | None) -> Page:
        """Up to ``size`` summaries after log position ``after``, read from the projection
        of match summaries (:mod:`storage.summaries`) in the query threads: no match is
        loaded, and no save waits behind it. One more row is read to know whether
        another page follows."""

        def read() -> Page:
            rows = self.store.list_summaries(after, size + 1, game, status)
            following = rows[size - 1].position if len(rows) > size else None
            return Page(rows[:size], following)

        return await self.store.queries.call(read)

    async def view(self, match_id: UUID, caller: str | None) -> Viewed:
        """The match as ``caller`` may see it now, whatever instance saved it last."""

        def look(match: MatchAggregate) -> Viewed:
            viewer = viewer_of(match, caller, self.access)
            game = GAMES[type(match).GAME]
            return Viewed(summary_of(match), viewer, game.name, game.state_view(match, viewer))

        return (await self.actors.run(match_id, look, writes=False, current=True)).value

    async def watch(
        self, match_id: UUID, caller: str | None, after_version: int, with_state: bool
    ) -> Watching:
        """Subscribe ``caller`` to the match's events, encoded for its view (with the
        state after each event, ``with_state``); the events after ``after_version`` up to
        :attr:`Watching.version` are the store's to read."""

        def subscribe(match: MatchAggregate) -> Watching:
            # In the actor: every saved event up to ``match.version`` is published, and
            # every later one will reach this subscription.
            viewer = viewer_of(match, caller, self.access)
            if after_version > match.version:
                raise OutOfRange(
                    f"after_version {after_version} is beyond the match's version {match.version}",
                )
            subscription = self.hub.subscribe(match_id, (viewer, with_state))
            return Watching(viewer, subscription, match.version, match.status is MatchStatus.ENDED)

        return (await self.actors.run(match_id, subscribe, writes=False)).value

    def act(
        self,
        match_id: UUID,
        caller: str,
        game: str | None,
        command: Command,
        claimed: int | None,
        intake: Intake,
        answer: Answer[T],
    ) -> asyncio.Future[Outcome[T]]:
        """Hand ``command`` to the match's actor and return what it will come to:
        ``answer(match, viewer, since)``, made in the actor right after the command (or
        once the race it joined is settled, JS-4.2a), ``since`` the first of its events.

        Synchronous, so that commands reach the actor in the order they were received.
        In the actor, in this order: the command is for this match's game (``game``;
        None for a command every game has), the caller holds the match's referee token
        for a referee command or a seat's (``claimed``, if given, that seat) for any
        other, the seat is within its rate, and ``seen_version`` is a version of the
        match; then the rules decide. A refusal from the token check on is kept as
        evidence (:mod:`server.refusals`)."""

        def act(match: MatchAggregate) -> T | Deferred[T]:
            stamp = intake.stamp  # numbered by the match's actor
            if game is not None and game != type(match).GAME:
                raise InvalidArgument(
                    match.PLAYERS_RULE, f"this match is {type(match).GAME}, not {game}"
                )
            viewer = viewer_of(match, caller, self.access)
            intake.seat, intake.kept = viewer.seat, True  # a refusal from here is kept
            if command.REFEREE:
                if not viewer.sees_everything:
                    raise PermissionDenied(
                        "only the referee (the token from CreateMatch) or an organiser can "
                        "send this command",
                    )
                if claimed is not None:
                    raise BadRequest(
                        "a referee command acts for no seat: leave seat unset",
                    )
            elif viewer.seat is None:
                raise PermissionDenied("only a seated player can act for a seat")
            elif claimed is not None and claimed != viewer.seat:
                raise PermissionDenied(
                    f"this token is for seat {viewer.seat}, not seat {claimed}",
                )
            # Counted at the receive stamp, before the rules look: nothing is written.
            self.rates.take(match_id, viewer.seat, stamp.monotonic_ns)
            if stamp.seen_version > match.version:
                raise BadRequest(
                    f"seen_version {stamp.seen_version} is beyond the match's version "
                    f"{match.version}: it must be a version the client has seen",
                )
            reacted = self.stamper.with_sent_time(stamp, match_id, viewer.seat)
            since = len(match.pending_events)
            match.execute(command, viewer.seat, reacted)
            if viewer.seat is not None:
                self.actors.presence.acted(match_id, viewer.seat)
            # The version and state are this command's own, or, for a command whose race
            # is held open, the race's once it is settled.
            if match.held_until_ns() is not None:
                return Deferred(lambda: answer(match, viewer, since))
            return answer(match, viewer, since)

        return self.actors.submit(match_id, act, intake=intake)
