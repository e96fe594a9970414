"""Jungle Speed on the wire: options, commands, events and state."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from domain.jungle_speed import Options
from domain.jungle_speed.commands import (
    TARGET_ARROWS,
    TARGET_DEFAULT,
    TARGET_DUEL,
    Grab,
    Reveal,
)
from domain.jungle_speed.match import GRAB_ARROWS, GRAB_DUEL
from domain.kernel.commands import Command, Start
from domain.kernel.errors import InvalidArgument
from domain.kernel.stamps import ReceiveStamp
from server.codec.wire import OptionsRequest, stamp_message
from totem.v1 import jungle_speed_pb2 as pb
from totem.v1 import match_service_pb2

FIELD = "jungle_speed"

VARIANTS = {
    pb.JUNGLE_SPEED_VARIANT_UNSPECIFIED: "ES",
    pb.JUNGLE_SPEED_VARIANT_ES: "ES",
    pb.JUNGLE_SPEED_VARIANT_RU: "RU",
}
VARIANT_ENUMS = {"ES": pb.JUNGLE_SPEED_VARIANT_ES, "RU": pb.JUNGLE_SPEED_VARIANT_RU}
TARGETS = {
    pb.GRAB_TARGET_UNSPECIFIED: TARGET_DEFAULT,
    pb.GRAB_TARGET_DUEL: TARGET_DUEL,
    pb.GRAB_TARGET_ARROWS: TARGET_ARROWS,
}
TARGET_ENUMS = {name: value for value, name in TARGETS.items()}
RESOLUTIONS = {GRAB_DUEL: pb.GRAB_RESOLUTION_DUEL, GRAB_ARROWS: pb.GRAB_RESOLUTION_ARROWS}
CAUSES = {"turn": pb.REVEAL_CAUSE_TURN, "timeout": pb.REVEAL_CAUSE_TIMEOUT}


def options_from_request(request: OptionsRequest) -> Options:
    if request.WhichOneof("options") not in (None, FIELD):
        raise InvalidArgument("JS-2.1", "the options given are not Jungle Speed options")
    msg = request.jungle_speed
    if msg.variant not in VARIANTS:
        raise InvalidArgument("JS-2.1", f"unknown variant {msg.variant}")
    defaults = Options()
    specials = msg.specials if msg.HasField("specials") else None
    return Options(
        variant=VARIANTS[msg.variant],
        max_players=msg.max_players if msg.HasField("max_players") else defaults.max_players,
        turn_timeout_ms=(
            msg.turn_timeout_ms if msg.HasField("turn_timeout_ms") else defaults.turn_timeout_ms
        ),
        min_reveal_interval_ms=(
            msg.min_reveal_interval_ms
            if msg.HasField("min_reveal_interval_ms")
            else defaults.min_reveal_interval_ms
        ),
        inward_arrows=specials.inward_arrows if specials else defaults.inward_arrows,
        outward_arrows=specials.outward_arrows if specials else defaults.outward_arrows,
        coloured_arrows=specials.coloured_arrows if specials else defaults.coloured_arrows,
        prearranged_deal=list(msg.prearranged_deal) or None,
    )


def command(request: match_service_pb2.ActRequest) -> Command:
    cmd = request.jungle_speed
    kind = cmd.WhichOneof("command")
    if kind == "start":
        return Start()
    if kind == "reveal":
        return Reveal()
    if kind == "grab":
        if cmd.grab.target not in TARGETS:
            raise InvalidArgument("JS-6.1", f"unknown grab target {cmd.grab.target}")
        return Grab(TARGETS[cmd.grab.target])
    raise InvalidArgument("", "a Jungle Speed command must be start, reveal or grab")


#: Each card's wire form, by id and kind: a symbol card's id fixes its shape and colour
#: in every deck (JS-1.3), and a special card has neither.
_CARDS: dict[tuple[int, str], pb.Card] = {}


def card(data: dict[str, Any]) -> pb.Card:
    """The wire form of a card's view. Messages are made once per card and copied into
    the messages that hold them (a state carries dozens): never change the one returned."""
    key = (data["id"], data["kind"])
    message = _CARDS.get(key)
    if message is None:
        message = _CARDS[key] = pb.Card(id=key[0], kind=pb.CardKind.Value(f"CARD_KIND_{key[1]}"))
        if "shape" in data:
            message.shape = pb.Shape.Value(f"SHAPE_{data['shape']}")
            message.colour = pb.Colour.Value(f"COLOUR_{data['colour']}")
    return message


def options_message(view: dict[str, Any]) -> pb.JungleSpeedOptions:
    return pb.JungleSpeedOptions(
        variant=VARIANT_ENUMS[view["variant"]],
        max_players=view["max_players"],
        turn_timeout_ms=view["turn_timeout_ms"],
        min_reveal_interval_ms=view["min_reveal_interval_ms"],
        specials=pb.JungleSpeedSpecials(
            inward_arrows=view["inward_arrows"],
            outward_arrows=view["outward_arrows"],
            coloured_arrows=view["coloured_arrows"],
        ),
        prearranged_deal=view.get("prearranged_deal") or [],
        prearranged=view["prearranged"],
        tie_window_us=view.get("tie_window_us", 0),
        call_tie_window_us=view.get("call_tie_window_us", 0),
    )


def tie_message(tie: dict[str, Any] | None) -> pb.JungleSpeedTie | None:
    """The simultaneous grabs a race's winner was drawn from (JS-4.2a), if it was."""
    if not tie:
        return None
    return pb.JungleSpeedTie(
        window_us=tie["window_us"],
        contenders=[
            pb.JungleSpeedContender(
                seat=c["seat"],
                target=TARGET_ENUMS[c["target"]],
                stamp=stamp_message(ReceiveStamp.from_dict(c["stamp"])),
            )
            for c in tie["contenders"]
        ],
        drawn=tie["drawn"],
    )


def event_message(name: str, view: dict[str, Any]) -> Message:
    if name == "Created":
        body = pb.MatchCreatedJungleSpeed(
            options=options_message(view["options"]),
            seed_commitment=bytes.fromhex(view["seed_commitment"]),
            entropy=bytes.fromhex(view["entropy"]),
            seed=bytes.fromhex(view.get("seed", "")),
        )
        return pb.JungleSpeedEvent(created=body)
    if name == "Dealt":
        return pb.JungleSpeedEvent(
            dealt=pb.Dealt(
                face_down_counts=view["face_down_counts"],
                pot=[card(c) for c in view["pot"]],
                deck=[card(c) for c in view.get("deck", [])],
                first_turn=view["first_turn"],
            )
        )
    if name == "Revealed":
        return pb.JungleSpeedEvent(
            revealed=pb.Revealed(
                seat=view["seat"],
                card=card(view["card"]),
                cause=CAUSES[view["cause"]],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
            )
        )
    if name == "OutwardReveal":
        return pb.JungleSpeedEvent(
            outward_reveal=pb.OutwardReveal(
                triggered_by=view["triggered_by"],
                reveals=[
                    pb.SeatCard(seat=r["seat"], card=card(r["card"])) for r in view["reveals"]
                ],
            )
        )
    if name == "DuelWon":
        return pb.JungleSpeedEvent(
            duel_won=pb.DuelWon(
                winner=view["winner"],
                losers=view["losers"],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
                annulled=view["annulled"],
                arrows_annulled=view["arrows_annulled"],
                tie=tie_message(view.get("tie")),
            )
        )
    if name == "ArrowsWon":
        return pb.JungleSpeedEvent(
            arrows_won=pb.ArrowsWon(
                winner=view["winner"],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
                annulled=view["annulled"],
                tie=tie_message(view.get("tie")),
            )
        )
    if name == "WrongGrab":
        return pb.JungleSpeedEvent(
            wrong_grab=pb.WrongGrab(
                seat=view["seat"], stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"]))
            )
        )
    if name == "LateGrab":
        return pb.JungleSpeedEvent(
            late_grab=pb.LateGrab(
                seat=view["seat"],
                stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
                decided_at_version=view["decided_at_version"],
            )
        )
    if name == "PilesRecycled":
        recycled = pb.PilesRecycled(
            stamp=stamp_message(ReceiveStamp.from_dict(view["stamp"])),
            face_down_counts=view["face_down_counts"],
            orders=[pb.Shuffle(positions=o["positions"]) for o in view.get("orders", [])],
        )
        return pb.JungleSpeedEvent(piles_recycled=recycled)
    if name == "PlayerFinished":
        return pb.JungleSpeedEvent(
            player_finished=pb.PlayerFinished(seat=view["seat"], place=view["place"])
        )
    raise ValueError(f"no wire form for Jungle Speed event {name}")


def state_message(view: dict[str, Any]) -> pb.JungleSpeedState:
    # Built in place (``add``): every answer and every stream event carries a state, and
    # a seat made apart and then copied into the state costs half as much again.
    state = pb.JungleSpeedState(
        options=options_message(view["options"]),
        pot=[card(c) for c in view["pot"]],
        open_duels=[pb.OpenDuel(seats=d["seats"]) for d in view["open_duels"]],
        arrows_race_open=view["arrows_race_open"],
        coloured_mode=view["coloured_mode"],
        seed=bytes.fromhex(view.get("seed", "")),
        seed_commitment=bytes.fromhex(view["seed_commitment"]),
        turn_deadline_ms=view["turn_deadline_ms"],
    )
    add_seat = state.seats.add
    for s in view["seats"]:
        seat = add_seat(
            seat=s["seat"],
            name=s["name"],
            face_down_count=s["face_down_count"],
            face_up_count=s["face_up_count"],
            finished=s["finished"],
        )
        if "face_down" in s:
            seat.face_down.extend([card(c) for c in s["face_down"]])
        if s["face_up"]:
            seat.face_up.extend([card(c) for c in s["face_up"]])
        if "top" in s:
            seat.top.CopyFrom(card(s["top"]))
    if "turn" in view:
        state.turn = view["turn"]
    if "outward_waiting" in view:
        state.outward_waiting = view["outward_waiting"]
    put_personal(state, view)
    return state


def put_personal(state: pb.JungleSpeedState, view: dict[str, Any]) -> None:
    """Write the keys of a ``personal_view`` (a seat's legal actions) into ``state``: a
    whole state, or a copy of the spectators' (server.codec)."""
    if "legal" in view:
        state.legal.CopyFrom(legal_message(view["legal"]))


def legal_message(legal: dict[str, Any]) -> pb.JungleSpeedLegalActions:
    return pb.JungleSpeedLegalActions(
        start=legal["start"],
        reveal=legal["reveal"],
        reveal_not_before_ms=legal["reveal_not_before_ms"],
        grabs=[
            pb.JungleSpeedGrabOption(
                target=TARGET_ENUMS[g["target"]],
                resolves=RESOLUTIONS[g["resolves"]],
                opponents=g["opponents"],
            )
            for g in legal["grabs"]
        ],
    )
