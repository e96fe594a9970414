"""Village in the client: its row of the game table, its variations, kinds of villager,
spells and sexes by name, its options from keywords, a player's decisions (``arrange``,
``choose_spells``, ...) and the client's ``create_village``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from totem.v1 import common_pb2, village_pb2
from totem_client.games.base import Acting, Creating, GameInfo
from totem_client.messages import ActResponse, CreatedMatch

VillageCommand = village_pb2.VillageCommand

GAME = GameInfo(
    name="village",
    title="Village",
    enum=common_pb2.GAME_VILLAGE,
    field="village",
    options=village_pb2.VillageOptions,
    command=VillageCommand,
    start=lambda: VillageCommand(start=village_pb2.VillageStart()),
    seats=range(2, 5),
    default_seats=2,
)

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


class VillageSession:
    """A player's Village decisions, which every :class:`~totem_client.session.Session`
    has; every one names the family deciding (with two players a seat plays two, VI-7.1).
    """

    async def arrange(
        self: Acting[VillageCommand], family: int, cottages: Sequence[Mapping[str, int]]
    ) -> ActResponse:
        """Village phase 1 (VI-2.1): the family's members into its three cottages, as
        counts per kind name (``{"young_woman": 2, "elder": 1}``), at most 6 each."""
        arrange = village_pb2.VillageArrange(
            family=family, cottages=[village_counts(c) for c in cottages]
        )
        return await self.act(VillageCommand(arrange=arrange))

    async def choose_spells(
        self: Acting[VillageCommand], family: int, spells: Sequence[str], birds: int = 0
    ) -> ActResponse:
        """Village phase 2 (VI-2.2): the spells to cast, by name, and the birds to
        sacrifice for those beyond the pole's pieces; secret until revealed."""
        choose = village_pb2.VillageChooseSpells(
            family=family, spells=[SPELLS[s] for s in spells], birds=birds
        )
        return await self.act(VillageCommand(choose_spells=choose))

    async def place_spell(
        self: Acting[VillageCommand], family: int, spell: str, target_family: int, cottage: int
    ) -> ActResponse:
        """Village phase 2 (VI-2.2): one chosen spell face down on a cottage."""
        place = village_pb2.VillagePlaceSpell(
            family=family, spell=SPELLS[spell], target_family=target_family, cottage=cottage
        )
        return await self.act(VillageCommand(place_spell=place))

    async def pass_spells(self: Acting[VillageCommand], family: int) -> ActResponse:
        """Village phase 2, spells_a: place no more spells this round."""
        return await self.act(
            VillageCommand(pass_spells=village_pb2.VillagePassSpells(family=family))
        )

    async def submit_placements(
        self: Acting[VillageCommand], family: int, placements: Sequence[tuple[str, int, int]]
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

    async def reveal_spells(
        self: Acting[VillageCommand], family: int, positions: Sequence[int] = ()
    ) -> ActResponse:
        """Village, phases 3, 4, 6, 7 (VI-2.3): reveal the family's face-down spells at
        these board positions (none: keep them all secret)."""
        reveal = village_pb2.VillageRevealSpells(family=family, positions=positions)
        return await self.act(VillageCommand(reveal_spells=reveal))

    async def choose_victims(
        self: Acting[VillageCommand], family: int, victims: Sequence[Person]
    ) -> ActResponse:
        """Village phase 5 (VI-2.6): victims of the starving family, ``(cottage, kind)``."""
        choose = village_pb2.VillageChooseVictims(family=family, victims=village_persons(victims))
        return await self.act(VillageCommand(choose_victims=choose))

    async def spare_from_age(
        self: Acting[VillageCommand], family: int, spared: Sequence[Person]
    ) -> ActResponse:
        """Village phase 7 (VI-2.8): whom each revealed youth spell spares."""
        spare = village_pb2.VillageSpareFromAge(family=family, spared=village_persons(spared))
        return await self.act(VillageCommand(spare_from_age=spare))


class VillageClient:
    """The creation of a Village match from keywords, which every
    :class:`~totem_client.client.Client` has."""

    async def create_village(
        self: Creating, *, entropy: bytes = b"", **options: Any
    ) -> CreatedMatch:
        """Create a Village match; ``options`` are those of :func:`village_options`."""
        return await self.create(GAME.name, village_options(**options), entropy=entropy)
