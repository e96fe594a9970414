"""Tribes in the client: its row of the game table, its badges, die faces and special
totems by name, its options from keywords, a player's and the referee's commands
(``lift``, ``place``, ``penalise``) and the client's ``create_tribes``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from totem.v1 import common_pb2, tribes_pb2
from totem_client.games.base import Acting, Creating, GameInfo
from totem_client.messages import ActResponse, CreatedMatch

TribesCommand = tribes_pb2.TribesCommand

GAME = GameInfo(
    name="tribes",
    title="Tribes",
    enum=common_pb2.GAME_TRIBES,
    field="tribes",
    options=tribes_pb2.TribesOptions,
    command=TribesCommand,
    start=lambda: TribesCommand(start=tribes_pb2.TribesStart()),
    seats=range(2, 5),
    default_seats=2,
)

#: Tribes badges by name (TR-1.5), for :meth:`TribesSession.place`.
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
#: The special totems by name (TR-5.3), for :meth:`TribesSession.place`.
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


def place_command(
    destination: int,
    *,
    size: int | None = None,
    special: str | None = None,
    badge: str | None = None,
) -> tribes_pb2.TribesCommand:
    """The command that places a totem (see :meth:`TribesSession.place`)."""
    place = tribes_pb2.TribesPlace(destination=destination)
    if size is not None:
        place.size = size
    if special is not None:
        place.special = SPECIAL_TOTEMS[special]
    if badge is not None:
        place.badge = BADGES[badge]
    return TribesCommand(place=place)


class TribesSession:
    """A player's and the referee's Tribes commands, which every
    :class:`~totem_client.session.Session` has."""

    async def lift(self: Acting[TribesCommand], space: int) -> ActResponse:
        """Tribes: lift the top totem of ``space``, the first half of a move from the
        board (TR-2.2a); then :meth:`place` it."""
        return await self.act(TribesCommand(lift=tribes_pb2.TribesLift(space=space)))

    async def place(
        self: Acting[TribesCommand],
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
        command = place_command(destination, size=size, special=special, badge=badge)
        return await self.act(command)

    async def place_option(
        self: Acting[TribesCommand],
        option: tribes_pb2.TribesPlaceOption,
        destination: int,
        *,
        badge: str | None = None,
    ) -> ActResponse:
        """Tribes: place the totem of one of the legal actions' place options."""
        if option.source == tribes_pb2.TRIBES_PLACE_SOURCE_MAT:
            command = place_command(destination, size=option.totem.size, badge=badge)
        elif option.source == tribes_pb2.TRIBES_PLACE_SOURCE_BESIDE:
            special = "doom" if option.totem.kind == tribes_pb2.TRIBES_TOTEM_KIND_DOOM else "mini"
            command = place_command(destination, special=special, badge=badge)
        else:
            command = place_command(destination, badge=badge)
        return await self.act(command)

    async def penalise(self: Acting[TribesCommand], seat: int) -> ActResponse:
        """Tribes, referee only: penalise ``seat`` for coaching (TR-4.1)."""
        return await self.act(TribesCommand(penalise=tribes_pb2.TribesPenalise(seat=seat)))


class TribesClient:
    """The creation of a Tribes match from keywords, which every
    :class:`~totem_client.client.Client` has."""

    async def create_tribes(
        self: Creating, *, entropy: bytes = b"", **options: Any
    ) -> CreatedMatch:
        """Create a Tribes match; ``options`` are those of :func:`tribes_options`."""
        return await self.create(GAME.name, tribes_options(**options), entropy=entropy)
