"""The games the client speaks: how the contract names each one (its enum, and its field
in the requests', events' and states' oneofs), its commands, and builders of its options
and commands from plain names.

One table, so that the client, its Play streams and its sessions find a game's field in
the same place rather than each knowing it; ``tests/contract`` holds it to the
contract's list of games.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from google.protobuf.message import Message

from totem.v1 import common_pb2, jungle_speed_pb2, match_service_pb2, tribes_pb2, village_pb2

JungleSpeedCommand = jungle_speed_pb2.JungleSpeedCommand
TribesCommand = tribes_pb2.TribesCommand
VillageCommand = village_pb2.VillageCommand
#: The referee's stop of a match of any game (JS-8.3).
StopMatch = match_service_pb2.StopMatch
#: What :meth:`Client.act` sends: a game's command, or the referee's stop of any game.
Command = JungleSpeedCommand | TribesCommand | VillageCommand | StopMatch


@dataclass(frozen=True)
class GameInfo:
    """How the contract names one game: its enum, and its field in the requests',
    events' and states' oneofs, with the message types of its options and commands."""

    name: str
    enum: common_pb2.Game.ValueType
    field: str
    options: type[Message]
    command: type[Message]
    #: The game's command that starts a match early.
    start: Callable[[], Command]


#: The games the client speaks, by name (``jungle_speed``, ``tribes``, ``village``).
GAMES: dict[str, GameInfo] = {
    info.name: info
    for info in (
        GameInfo(
            "jungle_speed",
            common_pb2.GAME_JUNGLE_SPEED,
            "jungle_speed",
            jungle_speed_pb2.JungleSpeedOptions,
            jungle_speed_pb2.JungleSpeedCommand,
            lambda: JungleSpeedCommand(start=jungle_speed_pb2.JungleSpeedStart()),
        ),
        GameInfo(
            "tribes",
            common_pb2.GAME_TRIBES,
            "tribes",
            tribes_pb2.TribesOptions,
            tribes_pb2.TribesCommand,
            lambda: TribesCommand(start=tribes_pb2.TribesStart()),
        ),
        GameInfo(
            "village",
            common_pb2.GAME_VILLAGE,
            "village",
            village_pb2.VillageOptions,
            village_pb2.VillageCommand,
            lambda: VillageCommand(start=village_pb2.VillageStart()),
        ),
    )
}
GAMES_BY_ENUM: dict[int, GameInfo] = {info.enum: info for info in GAMES.values()}


def game_of_message(message: Message) -> GameInfo:
    """The game whose options or command ``message`` is."""
    for info in GAMES.values():
        if isinstance(message, (info.options, info.command)):
            return info
    raise TypeError(f"{type(message).__name__} is not a game's options or command")


#: Tribes badges by name (TR-1.5), for :meth:`Session.place`.
BADGES: dict[str, tribes_pb2.TribesBadge.ValueType] = {
    "wisdom": tribes_pb2.TRIBES_BADGE_WISDOM,
    "loyalty": tribes_pb2.TRIBES_BADGE_LOYALTY,
    "boldness": tribes_pb2.TRIBES_BADGE_BOLDNESS,
    "tenacity": tribes_pb2.TRIBES_BADGE_TENACITY,
}
#: Faces of the Dice of Fate by name (TR-5.1), for :func:`tribes_options`.
DIE_FACES: dict[str, tribes_pb2.TribesDieFace.ValueType] = {
    "blank": tribes_pb2.TRIBES_DIE_FACE_BLANK,
    "large": tribes_pb2.TRIBES_DIE_FACE_LARGE,
    "small": tribes_pb2.TRIBES_DIE_FACE_SMALL,
}
#: The special totems by name (TR-5.3), for :meth:`Session.place`.
SPECIAL_TOTEMS: dict[str, tribes_pb2.TribesTotemKind.ValueType] = {
    "doom": tribes_pb2.TRIBES_TOTEM_KIND_DOOM,
    "mini": tribes_pb2.TRIBES_TOTEM_KIND_MINI,
}


def tribes_options(
    *,
    max_players: int | None = None,
    board_size: int | None = None,
    extended: bool = False,
    turn_timeout_ms: int | None = None,
    round_move_limit: int | None = None,
    dice_faces: Sequence[str] = (),
    salvation_spaces: Sequence[int] | None = None,
    prearranged_cards: Sequence[Sequence[int]] = (),
    prearranged_dice: Sequence[str] = (),
) -> tribes_pb2.TribesOptions:
    """Options of a Tribes match; None and empty leave the server's defaults (the rules'
    decisions, docs/rules/tribes.md). ``dice_faces`` and ``prearranged_dice`` are face
    names (``blank``, ``large``, ``small``); ``prearranged_cards`` one list of cards per
    round, indexed by seat."""
    options = tribes_pb2.TribesOptions(
        extended=extended,
        dice_faces=[DIE_FACES[f] for f in dice_faces],
        prearranged_cards=[tribes_pb2.TribesCards(cards=c) for c in prearranged_cards],
        prearranged_dice=[DIE_FACES[f] for f in prearranged_dice],
    )
    if max_players is not None:
        options.max_players = max_players
    if board_size is not None:
        options.board_size = board_size
    if turn_timeout_ms is not None:
        options.turn_timeout_ms = turn_timeout_ms
    if round_move_limit is not None:
        options.round_move_limit = round_move_limit
    if salvation_spaces is not None:
        options.salvation_spaces.CopyFrom(tribes_pb2.TribesSpaces(spaces=salvation_spaces))
    return options


#: Village: the variations (VI-2.1 … VI-3.2), the kinds of villager (VI-1.2), the spells
#: (VI-2.2) and the kinds of decision, by name.
VILLAGE_VARIATIONS = ("village", "spells_a", "spells_b", "feast_a", "feast_b", "totem_a", "totem_b")
VILLAGE_DEADLINES = ("arrange", "choose", "place", "reveal", "victims", "youth")
KINDS: dict[str, village_pb2.VillageKind.ValueType] = {
    name: village_pb2.VillageKind.Value(f"VILLAGE_KIND_{name.upper()}")
    for name in (
        "girl",
        "boy",
        "young_woman",
        "young_man",
        "mature_woman",
        "mature_man",
        "elder",
    )
}
SPELLS: dict[str, village_pb2.VillageSpell.ValueType] = {
    name: village_pb2.VillageSpell.Value(f"VILLAGE_SPELL_{name.upper()}")
    for name in (
        "girls",
        "boys",
        "twins",
        "infertility",
        "abundance",
        "lack",
        "illness",
        "big_cure",
        "little_cure",
        "youth",
    )
}
SEXES: dict[str, village_pb2.VillageSex.ValueType] = {
    "girl": village_pb2.VILLAGE_SEX_GIRL,
    "boy": village_pb2.VILLAGE_SEX_BOY,
}
#: A person in a Village command: ``(cottage, kind name)``.
Person = tuple[int, str]


def village_options(
    *,
    max_players: int | None = None,
    variations: Sequence[str] = (),
    deadline_ms: int | None = None,
    prearranged_sexes: Sequence[str] = (),
    **timeouts: int,
) -> village_pb2.VillageOptions:
    """Options of a Village match; None and empty leave the server's defaults
    (docs/rules/village.md). ``variations`` names them (``village``, ``spells_a``,
    ``spells_b``, ``feast_a``, ``feast_b``, ``totem_a``, ``totem_b``); ``deadline_ms``
    sets every kind of decision's deadline, and ``arrange_timeout_ms`` …
    ``youth_timeout_ms`` each one; ``prearranged_sexes`` are ``"girl"``/``"boy"``."""
    options = village_pb2.VillageOptions(prearranged_sexes=[SEXES[s] for s in prearranged_sexes])
    for name in variations:
        if name not in VILLAGE_VARIATIONS:
            raise ValueError(f"{name!r} is not a Village variation")
        setattr(options, name, True)
    if max_players is not None:
        options.max_players = max_players
    for kind in VILLAGE_DEADLINES:
        field = f"{kind}_timeout_ms"
        value = timeouts.pop(field, deadline_ms)
        if value is not None:
            setattr(options, field, value)
    if timeouts:
        raise TypeError(f"unknown Village options: {sorted(timeouts)}")
    return options


def village_counts(counts: Mapping[str, int]) -> village_pb2.VillageCounts:
    """Members per kind, from kind names."""
    for kind in counts:
        if kind not in KINDS:
            raise ValueError(f"{kind!r} is not a kind of villager")
    return village_pb2.VillageCounts(**counts)


def village_persons(people: Sequence[Person]) -> list[village_pb2.VillagePerson]:
    """The persons of a Village command, from ``(cottage, kind name)`` pairs."""
    return [village_pb2.VillagePerson(cottage=c, kind=KINDS[k]) for c, k in people]


#: Jungle Speed variants by their short names (JS-2.1).
VARIANTS: dict[str, jungle_speed_pb2.JungleSpeedVariant.ValueType] = {
    "ES": jungle_speed_pb2.JUNGLE_SPEED_VARIANT_ES,
    "RU": jungle_speed_pb2.JUNGLE_SPEED_VARIANT_RU,
}

GrabTargetName = Literal["default", "duel", "arrows"]
#: What an ES grab resolves when a duel and an inward-arrows race are open (JS-6.1).
GRAB_TARGETS: dict[str, jungle_speed_pb2.GrabTarget.ValueType] = {
    "default": jungle_speed_pb2.GRAB_TARGET_UNSPECIFIED,
    "duel": jungle_speed_pb2.GRAB_TARGET_DUEL,
    "arrows": jungle_speed_pb2.GRAB_TARGET_ARROWS,
}


def act_request(
    match_id: str, command: Command, *, seen_version: int = 0, seat: int | None = None
) -> match_service_pb2.ActRequest:
    """The ActRequest of one command: what an Act call sends, and what a Play stream's
    request carries (so it is built here, beside the table that names the command's
    field, for both)."""
    request = match_service_pb2.ActRequest(match_id=match_id, seen_version=seen_version)
    if isinstance(command, StopMatch):
        request.stop.CopyFrom(command)
    else:
        getattr(request, game_of_message(command).field).CopyFrom(command)
    if seat is not None:
        request.seat = seat
    return request
