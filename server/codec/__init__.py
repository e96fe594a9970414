"""Translation between the wire contract and the domain, one module per game.

Views arrive already redacted from the domain; a codec only changes their shape.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Protocol

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from domain.games import GAMES, Game
from domain.kernel.commands import Command, Stop
from domain.kernel.match import EndReason, MatchAggregate, MatchStatus
from domain.kernel.views import Viewer, ViewerRole
from server import receipts
from server.application import Page, Viewed
from server.codec import jungle_speed, tribes, village
from server.codec.wire import OptionsRequest, timestamp
from storage.summaries import Summary
from totem.v1 import common_pb2, match_service_pb2

STATUS: dict[MatchStatus, Any] = {
    MatchStatus.WAITING: common_pb2.MATCH_STATUS_WAITING,
    MatchStatus.PLAYING: common_pb2.MATCH_STATUS_PLAYING,
    MatchStatus.ENDED: common_pb2.MATCH_STATUS_ENDED,
}
END_REASONS: dict[EndReason, Any] = {
    EndReason.COMPLETED: common_pb2.END_REASON_COMPLETED,
    EndReason.ABANDONED: common_pb2.END_REASON_ABANDONED,
    EndReason.STOPPED: common_pb2.END_REASON_STOPPED,
}
ROLES = {
    ViewerRole.PLAYER: common_pb2.VIEWER_ROLE_PLAYER,
    ViewerRole.SPECTATOR: common_pb2.VIEWER_ROLE_SPECTATOR,
    ViewerRole.REFEREE: common_pb2.VIEWER_ROLE_REFEREE,
}


class GameCodec(Protocol):
    """What each game's codec module provides."""

    #: Name of the game's field in the ``oneof`` of requests, events and states.
    FIELD: str

    def options_from_request(self, request: OptionsRequest) -> Any: ...

    def options_message(self, view: dict[str, Any]) -> Message: ...

    def command(self, request: match_service_pb2.ActRequest) -> Command: ...

    def event_message(self, name: str, view: dict[str, Any]) -> Message: ...

    def state_message(self, view: dict[str, Any]) -> Message: ...

    def put_personal(self, state: Any, view: dict[str, Any]) -> None: ...


#: Each game's codec module, by the game's name (its field in the requests' oneofs).
CODECS: dict[str, GameCodec] = {codec.FIELD: codec for codec in (jungle_speed, tribes, village)}
#: Each game's value of the contract's ``Game`` enum: ``GAME_`` and its name.
GAME_ENUMS: dict[str, Any] = {
    name: common_pb2.Game.Value(f"GAME_{name.upper()}") for name in CODECS
}
GAME_NAMES: dict[Any, str] = {v: k for k, v in GAME_ENUMS.items()}


#: Commands of every game, members of ``ActRequest.command`` beside the games' own.
COMMON_COMMANDS = frozenset({"stop"})


def common_command(request: match_service_pb2.ActRequest) -> Command:
    """A command every game has: the referee's stop (each game's end rule)."""
    stop = request.stop
    return Stop(stop.statement, [{"seat": p.seat, "place": p.place} for p in stop.result])


def options_with_common(options: Any, request: OptionsRequest) -> Any:
    """A game's options with the options every match has, from the request's own fields."""
    if request.abandon_after_ms:
        options = replace(options, abandon_after_ms=request.abandon_after_ms)
    return options


def codec_for(game: str) -> GameCodec:
    """The codec module of ``game``."""
    return CODECS[game]


def placements(result: list[dict[str, int]]) -> list[common_pb2.Placement]:
    return [common_pb2.Placement(seat=r["seat"], place=r["place"]) for r in result]


def embedded(number: int, payload: bytes) -> bytes:
    """Field ``number`` holding a message's wire bytes, as it stands in its parent's
    bytes: how an answer or a stream event carries a state, and a state its parts,
    without copying a message or encoding it again. Every field is written once, so any
    parser reads the same message (fields may come in any order on the wire; a singular
    message written twice would be merged by some parsers and replaced by others)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(message: Any, name: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[name].number)


#: Where a state stands in the messages that carry one, and its parts in a state.
ACT_STATE = _field(match_service_pb2.ActResponse, "state")
EVENT_STATE = _field(match_service_pb2.MatchEvent, "state")
PLAY_APPLIED = _field(match_service_pb2.PlayResponse, "applied")
STATE_SUMMARY = _field(match_service_pb2.MatchState, "summary")
#: Where each game's state stands in a ``MatchState``, by the codecs' ``FIELD``.
STATE_GAMES = {
    field.name: field.number
    for field in match_service_pb2.MatchState.DESCRIPTOR.oneofs_by_name["game"].fields
}


@dataclass(frozen=True)
class EncodedState:
    """A ``MatchState`` encoded in its two parts: the summary's bytes and the game
    state's (its field ``game_field``), kept apart so that a seat's own part can be
    written inside the game state."""

    summary: bytes
    game: bytes
    game_field: int

    def wire(self, own: bytes = b"") -> bytes:
        """The state's wire bytes, with ``own`` (encoded fields of the game state that
        these bytes lack) inside the game state."""
        return embedded(STATE_SUMMARY, self.summary) + embedded(self.game_field, self.game + own)


def state_bytes(match: MatchAggregate, viewer: Viewer) -> bytes:
    """The wire bytes of the match's ``MatchState`` as ``viewer`` may see it now: the
    spectators' state (built and encoded once a version, :class:`SpectatorStates`) with
    the viewer's own part encoded inside it, where the game's ``personal_view`` allows
    it; else built whole for the viewer."""
    game: Game = GAMES[type(match).GAME]
    personal = game.personal_view(match, viewer)
    if personal is None:
        return _encoded_state(match, viewer).wire()
    shared = SPECTATOR_STATES.get(match)
    if not personal:
        return shared.wire()
    codec = codec_for(game.name)
    own = getattr(match_service_pb2.MatchState(), codec.FIELD)
    codec.put_personal(own, personal)
    return shared.wire(own.SerializeToString())


def match_state(match: MatchAggregate, viewer: Viewer) -> match_service_pb2.MatchState:
    """The match as ``viewer`` may see it now: its summary and the game's state."""
    return match_service_pb2.MatchState.FromString(state_bytes(match, viewer))


def _encoded_state(match: MatchAggregate, viewer: Viewer) -> EncodedState:
    """The state built whole from the game's ``state_view``, encoded."""
    game: Game = GAMES[type(match).GAME]
    codec = codec_for(game.name)
    return EncodedState(
        summary=summary(match).SerializeToString(),
        game=codec.state_message(game.state_view(match, viewer)).SerializeToString(),
        game_field=STATE_GAMES[codec.FIELD],
    )


#: States kept by :data:`SPECTATOR_STATES`: more than the matches whose commands and
#: watchers' events are under way at once.
SPECTATOR_STATES_KEPT = 1024


class SpectatorStates:
    """The spectators' state of each recent version of a match, built and encoded once.

    Every seat sees what a spectator sees plus its own part (its legal actions) in
    Jungle Speed and Tribes, and a command's answer and each watching stream's event
    carry a state: each is these bytes with the seat's part encoded inside the game
    state (:meth:`EncodedState.wire`), instead of a whole state built per seat or
    copied per message. A state is a function of the match's events; the key names the
    match, its version and the digest of its last event, so that two copies of one
    version decided differently (by two server instances, one of which then failed to
    save) are never taken for each other. The event loop and the publisher's worker
    thread share it.
    """

    def __init__(self, kept: int = SPECTATOR_STATES_KEPT) -> None:
        self._kept = kept
        self._states: dict[tuple[Any, int, str], EncodedState] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._states)

    def get(self, match: MatchAggregate) -> EncodedState:
        """The spectators' state of ``match`` as it is now, encoded."""
        key = (match.id, match.version, match.digest)
        with self._lock:
            state = self._states.get(key)
        if state is None:
            state = _encoded_state(match, SPECTATOR)
            with self._lock:
                self._states[key] = state
                if len(self._states) > self._kept:
                    del self._states[next(iter(self._states))]
        return state


SPECTATOR = Viewer.spectator()
SPECTATOR_STATES = SpectatorStates()


def match_event(match: MatchAggregate, evt: Any, viewer: Viewer) -> match_service_pb2.MatchEvent:
    """One stored event as ``viewer`` may see it, without the state after it; ``match``
    is the match just after it."""
    game: Game = GAMES[type(match).GAME]
    name, view = game.event_view(match, evt, viewer)
    message = match_service_pb2.MatchEvent(
        version=evt.originator_version, recorded_at=timestamp(evt.timestamp)
    )
    if name == "TokenReissued":
        message.token_reissued.seat = view["seat"]
    elif name == "PlayerJoined":
        message.player_joined.CopyFrom(
            common_pb2.PlayerJoined(
                seat=view["seat"], name=view["name"], entropy=bytes.fromhex(view["entropy"])
            )
        )
    elif name == "MatchEnded":
        message.match_ended.CopyFrom(
            common_pb2.MatchEnded(
                reason=END_REASONS[EndReason(view["reason"])],
                result=placements(view["result"]),
                seed=bytes.fromhex(view["seed"]),
                signature=bytes.fromhex(view.get("signature", "")),
                public_key=bytes.fromhex(view.get("public_key", "")),
                statement=view.get("statement", ""),
            )
        )
    elif name == "Forked":
        message.match_forked.CopyFrom(forked_message(view))
    else:
        codec = codec_for(game.name)
        getattr(message, codec.FIELD).CopyFrom(codec.event_message(name, view))
    if viewer.sees_everything:
        message.digest = bytes.fromhex(evt.digest)
        message.prev_digest = bytes.fromhex(evt.prev_digest)
    return message


def act_answer(match: MatchAggregate, viewer: Viewer, since: int = 0) -> bytes:
    """The wire bytes of the ``ActResponse`` to ``viewer``'s command that has just
    triggered the match's pending events from ``since`` on (those before are other
    commands' of the same batch: :mod:`domain.kernel.ties`): the version, those events,
    the server's receipt (:mod:`server.receipts`, when the match has a signer) and the
    state."""
    head = match_service_pb2.ActResponse(
        version=match.version,
        events=[match_event(match, e, viewer) for e in match.pending_events[since:]],
    )
    if match.signer is not None:
        head.receipt.CopyFrom(receipts.receipt(match, match.signer))
    return head.SerializeToString() + embedded(ACT_STATE, state_bytes(match, viewer))


def forked_message(view: dict[str, Any]) -> common_pb2.MatchForked:
    """A fork's first event, the same in every game (:mod:`domain.kernel.fork`)."""
    origin = view["origin"]
    return common_pb2.MatchForked(
        origin_match_id=origin["match_id"],
        origin_version=origin["version"],
        origin_digest=bytes.fromhex(origin["digest"]),
        seed_commitment=bytes.fromhex(view["seed_commitment"]),
        seed=bytes.fromhex(view.get("seed", "")),
    )


def encoded_event(match: MatchAggregate, evt: Any, key: tuple[Viewer, bool]) -> bytes:
    """The wire bytes of ``evt`` for a kind of viewer ``(viewer, with_state)``: what
    Watch streams send, encoded once per kind of viewer and shared by their streams."""
    viewer, with_state = key
    data = match_event(match, evt, viewer).SerializeToString()
    if with_state:
        data += embedded(EVENT_STATE, state_bytes(match, viewer))
    return data


def summary(match: MatchAggregate) -> common_pb2.MatchSummary:
    message = common_pb2.MatchSummary(
        match_id=str(match.id),
        game=GAME_ENUMS[type(match).GAME],
        status=STATUS[match.status],
        variant=match.variant,
        max_players=match.max_players,
        version=match.version,
        created_at=timestamp(match.created_on),
        result=placements(match.result),
    )
    add_player = message.players.add
    for seat, name in enumerate(match.players):
        add_player(seat=seat, name=name)
    if match.end_reason is not None:
        message.end_reason = END_REASONS[match.end_reason]
    return message


def listed_summary(summary: Summary) -> common_pb2.MatchSummary:
    """The wire ``MatchSummary`` of a row of the projection: the same as :func:`summary`
    of the match."""
    created = Timestamp()
    created.FromMicroseconds(summary.created_us)
    message = common_pb2.MatchSummary(
        match_id=str(summary.match_id),
        game=GAME_ENUMS[summary.game],
        status=STATUS[MatchStatus(summary.status)],
        variant=summary.variant,
        max_players=summary.max_players,
        players=[common_pb2.Player(seat=s, name=n) for s, n in enumerate(summary.players)],
        version=summary.version,
        created_at=created,
        result=[common_pb2.Placement(seat=s, place=p) for s, p in summary.result],
    )
    if summary.end_reason is not None:
        message.end_reason = END_REASONS[EndReason(summary.end_reason)]
    return message


def status_filter(number: int) -> str | None:
    """A ``MatchStatus`` filter of the wire as the projection stores it (``None``:
    unspecified, every status)."""
    for status, wire in STATUS.items():
        if wire == number:
            return status.value
    return None


def viewed_match(viewed: Viewed) -> match_service_pb2.GetMatchResponse:
    """A GetMatch answer: the summary, the caller's role and seat, the game's state."""
    game_codec = codec_for(viewed.game)
    response = match_service_pb2.GetMatchResponse(
        summary=listed_summary(viewed.summary), role=ROLES[viewed.viewer.role]
    )
    if viewed.viewer.seat is not None:
        response.seat = viewed.viewer.seat
    getattr(response, game_codec.FIELD).CopyFrom(game_codec.state_message(viewed.state))
    return response


def listed_page(page: Page) -> match_service_pb2.ListMatchesResponse:
    """A ListMatches answer; the page token is the next page's log position."""
    response = match_service_pb2.ListMatchesResponse(
        matches=[listed_summary(summary) for summary in page.summaries]
    )
    if page.next_position is not None:
        response.next_page_token = str(page.next_position)
    return response
