"""Tribes on the wire: options, commands, events and state.

Views arrive redacted from the domain (:mod:`domain.tribes.views`); this only changes
their shape.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from domain.kernel.commands import Command, Start
from domain.kernel.errors import InvalidArgument
from domain.kernel.stamps import ReceiveStamp
from domain.tribes import Options
from domain.tribes.commands import LiftTotem, Penalise, PlaceTotem
from domain.tribes.match import (
    BY_LINE,
    BY_REVEALED,
    CAUSE_PLAYER,
    CAUSE_TIMEOUT,
    DRAWN_MOVE_LIMIT,
    DRAWN_PASSES,
    FROM_BESIDE,
    FROM_LIFTED,
    FROM_MAT,
)
from domain.tribes.pieces import BADGES, DOOM, FACES, MINI, SIZES
from server.codec.wire import OptionsRequest, stamp_message
from totem.v1 import match_service_pb2
from totem.v1 import tribes_pb2 as pb

FIELD = "tribes"

BADGE_ENUMS = {name: pb.TribesBadge.Value(f"TRIBES_BADGE_{name.upper()}") for name in BADGES}
BADGE_NAMES = {value: name for name, value in BADGE_ENUMS.items()}
FACE_ENUMS = {name: pb.TribesDieFace.Value(f"TRIBES_DIE_FACE_{name.upper()}") for name in FACES}
FACE_NAMES = {value: name for name, value in FACE_ENUMS.items()}
KIND_ENUMS = {
    "TRIBE": pb.TRIBES_TOTEM_KIND_TRIBE,
    "DOOM": pb.TRIBES_TOTEM_KIND_DOOM,
    "MINI": pb.TRIBES_TOTEM_KIND_MINI,
}
SPECIALS = {pb.TRIBES_TOTEM_KIND_DOOM: DOOM, pb.TRIBES_TOTEM_KIND_MINI: MINI}
CAUSES = {CAUSE_PLAYER: pb.TRIBES_MOVE_CAUSE_PLAYER, CAUSE_TIMEOUT: pb.TRIBES_MOVE_CAUSE_TIMEOUT}
WINS = {BY_LINE: pb.TRIBES_WIN_KIND_LINE, BY_REVEALED: pb.TRIBES_WIN_KIND_REVEALED_LINE}
DRAWS = {DRAWN_PASSES: pb.TRIBES_DRAW_KIND_PASSES, DRAWN_MOVE_LIMIT: pb.TRIBES_DRAW_KIND_MOVE_LIMIT}
SOURCES = {
    FROM_MAT: pb.TRIBES_PLACE_SOURCE_MAT,
    FROM_BESIDE: pb.TRIBES_PLACE_SOURCE_BESIDE,
    FROM_LIFTED: pb.TRIBES_PLACE_SOURCE_LIFTED,
}


# ---- requests --------------------------------------------------------------------------


def _faces(values: Any, what: str) -> list[str]:
    faces = []
    for value in values:
        if value not in FACE_NAMES:
            raise InvalidArgument("TR-5.1", f"{what}: {value} is not a face of the die")
        faces.append(FACE_NAMES[value])
    return faces


def options_from_request(request: OptionsRequest) -> Options:
    if request.WhichOneof("options") not in (None, FIELD):
        raise InvalidArgument("TR-1.1", "the options given are not Tribes options")
    msg = request.tribes
    defaults = Options()
    dice_faces = _faces(msg.dice_faces, "dice_faces") or list(defaults.dice_faces)
    return Options(
        max_players=msg.max_players if msg.HasField("max_players") else defaults.max_players,
        board_size=msg.board_size if msg.HasField("board_size") else None,
        turn_timeout_ms=(
            msg.turn_timeout_ms if msg.HasField("turn_timeout_ms") else defaults.turn_timeout_ms
        ),
        round_move_limit=(
            msg.round_move_limit if msg.HasField("round_move_limit") else defaults.round_move_limit
        ),
        extended=msg.extended,
        dice_faces=dice_faces,
        salvation_spaces=(
            list(msg.salvation_spaces.spaces) if msg.HasField("salvation_spaces") else None
        ),
        prearranged_cards=[list(r.cards) for r in msg.prearranged_cards] or None,
        prearranged_dice=_faces(msg.prearranged_dice, "prearranged_dice") or None,
    )


def command(request: match_service_pb2.ActRequest) -> Command:
    cmd = request.tribes
    kind = cmd.WhichOneof("command")
    if kind == "start":
        return Start()
    if kind == "lift":
        return LiftTotem(cmd.lift.space)
    if kind == "place":
        return _place(cmd.place)
    if kind == "penalise":
        return Penalise(cmd.penalise.seat)
    raise InvalidArgument("TR-2.2", "a Tribes command must be start, lift, place or penalise")


def _place(place: pb.TribesPlace) -> PlaceTotem:
    if place.badge != pb.TRIBES_BADGE_UNSPECIFIED and place.badge not in BADGE_NAMES:
        raise InvalidArgument("TR-3.4", f"unknown badge {place.badge}")
    badge = BADGE_NAMES.get(place.badge)
    which = place.WhichOneof("totem")
    if which == "size":
        size = place.size
        if size not in SIZES:
            raise InvalidArgument("TR-1.1", f"a totem's size is 1 to 5, not {size}")
        return PlaceTotem(place.destination, size=size, badge=badge)
    special: int | None = None
    if which == "special":
        if place.special not in SPECIALS:
            raise InvalidArgument("TR-5.1", "special must be TRIBES_TOTEM_KIND_DOOM or _MINI")
        special = SPECIALS[place.special]
    return PlaceTotem(place.destination, special=special, badge=badge)


# ---- views -----------------------------------------------------------------------------


def totem(data: dict[str, Any]) -> pb.TribesTotem:
    return pb.TribesTotem(
        kind=KIND_ENUMS[data["kind"]], seat=data.get("seat", 0), size=data.get("size", 0)
    )


def maybe_totem(data: dict[str, Any] | None) -> pb.TribesTotem | None:
    """A totem, or None for an unset field (an empty space)."""
    return None if data is None else totem(data)


def lines(items: list[list[int]]) -> list[pb.TribesLine]:
    return [pb.TribesLine(spaces=line) for line in items]


def options_message(view: dict[str, Any]) -> pb.TribesOptions:
    message = pb.TribesOptions(
        max_players=view["max_players"],
        turn_timeout_ms=view["turn_timeout_ms"],
        round_move_limit=view["round_move_limit"],
        extended=view["extended"],
        dice_faces=[FACE_ENUMS[f] for f in view["dice_faces"]],
        prearranged_cards=[pb.TribesCards(cards=c) for c in view.get("prearranged_cards") or []],
        prearranged_dice=[FACE_ENUMS[f] for f in view.get("prearranged_dice") or []],
        prearranged=view["prearranged"],
    )
    if view["board_size"] is not None:
        message.board_size = view["board_size"]
    if view["salvation_spaces"] is not None:
        message.salvation_spaces.CopyFrom(pb.TribesSpaces(spaces=view["salvation_spaces"]))
    return message


def event_message(name: str, view: dict[str, Any]) -> Message:
    if name == "Created":
        return pb.TribesEvent(
            created=pb.MatchCreatedTribes(
                options=options_message(view["options"]),
                seed_commitment=bytes.fromhex(view["seed_commitment"]),
                entropy=bytes.fromhex(view["entropy"]),
                seed=bytes.fromhex(view.get("seed", "")),
            )
        )
    if name == "Started":
        return pb.TribesEvent(
            started=pb.TribesStarted(
                board_size=view["board_size"],
                salvation_spaces=view["salvation_spaces"],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
            )
        )
    if name == "RoundStarted":
        return pb.TribesEvent(
            round_started=pb.TribesRoundStarted(
                round=view["round"],
                cards=view["cards"],
                order=view["order"],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
            )
        )
    if name == "DieRolled":
        return pb.TribesEvent(
            die_rolled=pb.TribesDieRolled(seat=view["seat"], face=FACE_ENUMS[view["face"]])
        )
    if name == "Lifted":
        return pb.TribesEvent(
            lifted=pb.TribesLifted(
                seat=view["seat"],
                space=view["space"],
                totem=totem(view["totem"]),
                uncovered=maybe_totem(view["uncovered"]),
                revealed_lines=lines(view["revealed_lines"]),
                cause=CAUSES[view["cause"]],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
            )
        )
    if name == "Placed":
        placed = pb.TribesPlaced(
            seat=view["seat"],
            totem=totem(view["totem"]),
            destination=view["destination"],
            covered=maybe_totem(view["covered"]),
            badge=BADGE_ENUMS.get(view["badge"] or "", pb.TRIBES_BADGE_UNSPECIFIED),
            cause=CAUSES[view["cause"]],
            stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
            ends_round=view["ends_round"],
        )
        if view["origin"] is not None:
            placed.origin = view["origin"]
        return pb.TribesEvent(placed=placed)
    if name == "Passed":
        return pb.TribesEvent(passed=pb.TribesPassed(seat=view["seat"]))
    if name == "RoundWon":
        return pb.TribesEvent(
            round_won=pb.TribesRoundWon(
                round=view["round"],
                winner=view["winner"],
                kind=WINS[view["by"]],
                lines=lines(view["lines"]),
                badge=BADGE_ENUMS.get(view["badge"] or "", pb.TRIBES_BADGE_UNSPECIFIED),
                feathers=view["feathers"],
            )
        )
    if name == "RoundDrawn":
        return pb.TribesEvent(
            round_drawn=pb.TribesRoundDrawn(round=view["round"], kind=DRAWS[view["reason"]])
        )
    if name == "Penalised":
        return pb.TribesEvent(
            penalised=pb.TribesPenalised(
                seat=view["seat"],
                from_round=view["from_round"],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
            )
        )
    raise ValueError(f"no wire form for Tribes event {name}")


def state_message(view: dict[str, Any]) -> pb.TribesState:
    state = pb.TribesState(
        options=options_message(view["options"]),
        board_size=view["board_size"],
        spaces=[
            pb.TribesSpace(
                space=s["space"],
                row=s["row"],
                column=s["column"],
                top=maybe_totem(s.get("top")),
                stack=[totem(t) for t in s.get("stack", [])],
                salvation=s["salvation"],
            )
            for s in view["spaces"]
        ],
        seats=[
            pb.TribesSeat(
                seat=s["seat"],
                name=s["name"],
                mat=s["mat"],
                badges=[BADGE_ENUMS[b] for b in s["badges"]],
                card=s["card"],
                penalised=s["penalised"],
                chief_removed=s["chief_removed"],
            )
            for s in view["seats"]
        ],
        beside=[totem(t) for t in view["beside"]],
        round=view["round"],
        order=view["order"],
        die=FACE_ENUMS.get(view["die"], pb.TRIBES_DIE_FACE_UNSPECIFIED),
        moves=view["moves"],
        passes=view["passes"],
        seed=bytes.fromhex(view.get("seed", "")),
        seed_commitment=bytes.fromhex(view["seed_commitment"]),
        turn_deadline_ms=view["turn_deadline_ms"],
    )
    if "turn" in view:
        state.turn = view["turn"]
    if "lifted" in view:
        lifted = view["lifted"]
        state.lifted.CopyFrom(
            pb.TribesLiftedTotem(
                totem=totem(lifted["totem"]),
                origin=lifted["origin"],
                revealed_lines=lines(lifted["revealed_lines"]),
            )
        )
    put_personal(state, view)
    return state


def put_personal(state: pb.TribesState, view: dict[str, Any]) -> None:
    """Write the keys of a ``personal_view`` (a seat's legal actions) into ``state``: a
    whole state, or a copy of the spectators' (server.codec)."""
    if "legal" in view:
        state.legal.CopyFrom(legal_message(view["legal"]))


def legal_message(legal: dict[str, Any]) -> pb.TribesLegalActions:
    must_move = legal["must_move"]
    return pb.TribesLegalActions(
        start=legal["start"],
        lifts=legal["lifts"],
        places=[
            pb.TribesPlaceOption(
                totem=totem(p["totem"]), source=SOURCES[p["from"]], destinations=p["destinations"]
            )
            for p in legal["places"]
        ],
        forced_cover=legal["forced_cover"],
        die=FACE_ENUMS.get(legal["die"], pb.TRIBES_DIE_FACE_UNSPECIFIED),
        must_move=KIND_ENUMS[must_move["kind"]] if must_move else pb.TRIBES_TOTEM_KIND_UNSPECIFIED,
        badges=[BADGE_ENUMS[b] for b in legal["badges"]],
    )
