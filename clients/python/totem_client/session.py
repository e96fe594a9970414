"""A participant's session of one match: its token sent with every call, the versions and
state it has seen, and the commands of each game by name.

It is what the client's ``join``, ``spectate``, ``session``, ``referee`` and
``take_seat`` return, and it acts through that client (an Act call each, or a Play
stream); this module names the client for typing only, so that the client can import it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING

from totem.v1 import common_pb2, jungle_speed_pb2, tribes_pb2, village_pb2
from totem_client.games import (
    BADGES,
    GAMES,
    GAMES_BY_ENUM,
    GRAB_TARGETS,
    SPECIAL_TOTEMS,
    SPELLS,
    Command,
    GrabTargetName,
    JungleSpeedCommand,
    Person,
    StopMatch,
    TribesCommand,
    VillageCommand,
    village_counts,
    village_persons,
)
from totem_client.messages import ActResponse, MatchEvent, MatchState, MatchSummary, MatchView
from totem_client.streams import EventStream, PlayStream

if TYPE_CHECKING:
    from totem_client.client import Client


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
