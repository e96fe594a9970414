"""Jungle Speed in the client: its row of the game table, its variants and grab targets by
name, its options from keywords, a player's commands (``reveal``, ``grab``) and the
client's ``create_match``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from totem.v1 import common_pb2, jungle_speed_pb2
from totem_client.games.base import Acting, Creating, GameInfo
from totem_client.messages import ActResponse, CreatedMatch

JungleSpeedCommand = jungle_speed_pb2.JungleSpeedCommand

GAME = GameInfo(
    name="jungle_speed",
    title="Jungle Speed",
    enum=common_pb2.GAME_JUNGLE_SPEED,
    field="jungle_speed",
    options=jungle_speed_pb2.JungleSpeedOptions,
    command=JungleSpeedCommand,
    start=lambda: JungleSpeedCommand(start=jungle_speed_pb2.JungleSpeedStart()),
    seats=range(2, 11),
    default_seats=4,
)

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


def jungle_speed_options(
    *,
    variant: str = "ES",
    max_players: int | None = None,
    turn_timeout_ms: int | None = None,
    min_reveal_interval_ms: int | None = None,
    specials: tuple[int, int, int] | None = None,
    prearranged_deal: Sequence[int] | None = None,
) -> jungle_speed_pb2.JungleSpeedOptions:
    """Options of a Jungle Speed match; None leaves the server's defaults (JS-1.3, JS-1.5,
    JS-3.4). ``variant`` is ``ES`` or ``RU``; ``specials`` is (inward, outward, coloured)
    arrows (JS-1.3); ``prearranged_deal`` lists card ids from the top of the deck instead
    of a shuffle (JS-2.4)."""
    try:
        variant_value = VARIANTS[variant.upper()]
    except KeyError:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}") from None
    options = jungle_speed_pb2.JungleSpeedOptions(variant=variant_value)
    if max_players is not None:
        options.max_players = max_players
    if turn_timeout_ms is not None:
        options.turn_timeout_ms = turn_timeout_ms
    if min_reveal_interval_ms is not None:
        options.min_reveal_interval_ms = min_reveal_interval_ms
    if specials is not None:
        inward, outward, coloured = specials
        options.specials.CopyFrom(
            jungle_speed_pb2.JungleSpeedSpecials(
                inward_arrows=inward, outward_arrows=outward, coloured_arrows=coloured
            )
        )
    if prearranged_deal is not None:
        options.prearranged_deal.extend(prearranged_deal)
    return options


class JungleSpeedSession:
    """A player's Jungle Speed commands, which every :class:`~totem_client.session.Session`
    has."""

    async def reveal(self: Acting[JungleSpeedCommand]) -> ActResponse:
        """Reveal the top face-down card; only on one's turn (JS-3.1)."""
        return await self.act(JungleSpeedCommand(reveal=jungle_speed_pb2.JungleSpeedReveal()))

    async def grab(
        self: Acting[JungleSpeedCommand], target: GrabTargetName = "default"
    ) -> ActResponse:
        """Grab the totem (JS-5). ``target`` chooses between an open duel and an
        inward-arrows race (ES only, JS-6.1); "default" lets the server choose."""
        grab = jungle_speed_pb2.JungleSpeedGrab(target=GRAB_TARGETS[target])
        return await self.act(JungleSpeedCommand(grab=grab))


class JungleSpeedClient:
    """The creation of a Jungle Speed match from keywords, which every
    :class:`~totem_client.client.Client` has."""

    async def create_match(
        self: Creating,
        *,
        variant: str = "ES",
        max_players: int | None = None,
        turn_timeout_ms: int | None = None,
        min_reveal_interval_ms: int | None = None,
        specials: tuple[int, int, int] | None = None,
        prearranged_deal: Sequence[int] | None = None,
        entropy: bytes = b"",
    ) -> CreatedMatch:
        """Create a Jungle Speed match; options left as None take the server's defaults
        (see :func:`jungle_speed_options`; :meth:`Client.create` creates a match of any
        game). ``entropy`` (at most 64 bytes) is mixed into the match seed."""
        options = jungle_speed_options(
            variant=variant,
            max_players=max_players,
            turn_timeout_ms=turn_timeout_ms,
            min_reveal_interval_ms=min_reveal_interval_ms,
            specials=specials,
            prearranged_deal=prearranged_deal,
        )
        return await self.create(GAME.name, options, entropy=entropy)
