"""A Village bot that takes legal, sensible decisions, and a runner for a table of bots.

The bot plays from its watch stream alone: every event carries the seat's state after
it, with the decisions its families owe (``VillageState.legal.decisions``: the kind,
the deadline, the choices it may make and the default the deadline would apply). It
never re-implements the rules; it chooses among what it is offered:

- arrange (VI-2.1): fertile men, then fertile women, each into the least crowded of as
  many cottages as there are couples (so that every fertile woman lives with a man and
  has children, VI-2.4), then elders and children into the least crowded cottage, so
  that one illness never takes every elder; beyond 18, children are left out first;
- choose (VI-2.2): as many helpful spells as its pole gives free (never sacrificing a
  bird: they feed the family): abundance, twins, big cure;
- place: each on its own family, abundance where the hunters are, twins where the
  fertile women live with a man, a cure where the elders are;
- reveal (VI-2.3): every spell offered (they are all its own helpful ones);
- victims (VI-2.6): children first and never an elder while anyone else may go (the
  offered candidates), of its own family or another's; but of another family one piece
  from a complete pole, its elders first, so that it loses a piece (VI-3.2). Taking
  every rival's elders every round keeps all poles low and a match from ending;
- youth (VI-2.8): spares elders first, then the oldest others.

It answers as soon as it has thought (a short random delay, never more than half the
time left before the deadline). A command the server refuses is not sent again until
the match has changed. The bot stops when the match ends.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import click
import grpc

from totem.v1 import common_pb2
from totem.v1 import village_pb2 as pb
from totem_client import options
from totem_client.bots.base import StreamBot
from totem_client.bots.command import BotTable
from totem_client.bots.table import OnSeated, TableResult, bot_names, run_bots
from totem_client.client import Client
from totem_client.errors import TotemError
from totem_client.games.village import GAME as VILLAGE_GAME
from totem_client.games.village import VILLAGE_VARIATIONS, VillageCommand
from totem_client.messages import MatchEvent, MatchState
from totem_client.session import Session
from totem_client.streams import RESUMABLE_CODES

DEFAULT_THINK_MS = (1.0, 5.0)

KIND_FIELDS = ("girl", "boy", "young_woman", "young_man", "mature_woman", "mature_man", "elder")
#: Arrangement order (see the module's text).
ARRANGE_ORDER = ("young_man", "mature_man", "young_woman", "mature_woman", "elder", "boy", "girl")
#: A pole this high wins (VI-4.1).
POLE_MAX = 6
HELPFUL = (pb.VILLAGE_SPELL_ABUNDANCE, pb.VILLAGE_SPELL_TWINS, pb.VILLAGE_SPELL_BIG_CURE)
K = pb.VillageKind
#: Victims of one's own family: children first, elders never while others may go.
OWN_VICTIMS = (
    K.VILLAGE_KIND_GIRL,
    K.VILLAGE_KIND_BOY,
    K.VILLAGE_KIND_YOUNG_WOMAN,
    K.VILLAGE_KIND_YOUNG_MAN,
    K.VILLAGE_KIND_MATURE_WOMAN,
    K.VILLAGE_KIND_MATURE_MAN,
    K.VILLAGE_KIND_ELDER,
)
#: Victims of another family about to win: its elders first (it then loses a piece, VI-3.2).
OTHER_VICTIMS = (
    K.VILLAGE_KIND_ELDER,
    K.VILLAGE_KIND_MATURE_MAN,
    K.VILLAGE_KIND_MATURE_WOMAN,
    K.VILLAGE_KIND_YOUNG_MAN,
    K.VILLAGE_KIND_YOUNG_WOMAN,
    K.VILLAGE_KIND_BOY,
    K.VILLAGE_KIND_GIRL,
)
#: Whom youth spares: elders first, then the oldest.
SPARE_ORDER = OTHER_VICTIMS


def arrange(owed: pb.VillageOwedDecision) -> pb.VillageArrange:
    choices = owed.arrange
    members = choices.members
    men = members.young_man + members.mature_man
    women = members.young_woman + members.mature_woman
    # Births need a woman and a man under one roof (VI-2.4): the fertile share as many
    # cottages as there are couples, and nobody fertile lives alone with their own sex.
    couples = max(1, min(3, men, women))
    left = choices.house
    cottages = [dict.fromkeys(KIND_FIELDS, 0) for _ in range(3)]

    def size(i: int) -> int:
        return sum(cottages[i].values())

    for kind in ARRANGE_ORDER:
        fertile = kind.startswith(("young", "mature"))
        for _ in range(getattr(members, kind)):
            if left == 0:
                break
            room = [i for i in range(3) if size(i) < choices.capacity]
            shared = [i for i in room if i < couples] if fertile else room
            target = min(shared or room, key=size)
            cottages[target][kind] += 1
            left -= 1
    return pb.VillageArrange(family=owed.family, cottages=[pb.VillageCounts(**c) for c in cottages])


def _cottages(state: pb.VillageState, family: int) -> Sequence[pb.VillageCounts]:
    return state.families[family].cottages


def _best_cottage(state: pb.VillageState, family: int, spell: int) -> int:
    cottages = _cottages(state, family)

    def value(c: pb.VillageCounts) -> int:
        if spell == pb.VILLAGE_SPELL_ABUNDANCE:
            return c.boy + c.young_man + c.mature_man
        if spell == pb.VILLAGE_SPELL_TWINS:
            men = c.young_man + c.mature_man
            return (c.young_woman + c.mature_woman) if men else 0
        return c.elder * 10 + c.young_woman + c.young_man + c.mature_woman + c.mature_man

    return max(range(len(cottages)), key=lambda i: (value(cottages[i]), -i))


def _people(
    candidates: Sequence[pb.VillageCandidate],
    order: Sequence[pb.VillageKind.ValueType],
    count: int,
) -> list[pb.VillagePerson]:
    left: dict[tuple[int, int], int] = {(c.cottage, c.kind): c.count for c in candidates}
    chosen: list[pb.VillagePerson] = []
    for kind in order:
        for cottage in (2, 1, 0):
            while len(chosen) < count and left.get((cottage, kind), 0) > 0:
                left[(cottage, kind)] -= 1
                chosen.append(pb.VillagePerson(cottage=cottage, kind=kind))
    return chosen


def decide(state: pb.VillageState, seat: int, owed: pb.VillageOwedDecision) -> VillageCommand:
    """The bot's answer to one owed decision, from the state and the decision's choices."""
    family = owed.family
    which = owed.kind
    if which == pb.VILLAGE_DECISION_KIND_ARRANGE:
        return VillageCommand(arrange=arrange(owed))
    if which == pb.VILLAGE_DECISION_KIND_CHOOSE:
        spells = [s for s in HELPFUL if s in owed.choose.spells][: owed.choose.pieces]
        return VillageCommand(
            choose_spells=pb.VillageChooseSpells(family=family, spells=spells, birds=0)
        )
    if which == pb.VILLAGE_DECISION_KIND_PLACE:
        spell = owed.place.hand[0]
        return VillageCommand(
            place_spell=pb.VillagePlaceSpell(
                family=family,
                spell=spell,
                target_family=family,
                cottage=_best_cottage(state, family, spell),
            )
        )
    if which == pb.VILLAGE_DECISION_KIND_SUBMIT:
        placements = [
            pb.VillagePlacement(
                spell=s, target_family=family, cottage=_best_cottage(state, family, s)
            )
            for s in owed.place.hand
        ]
        return VillageCommand(
            submit_placements=pb.VillageSubmitPlacements(family=family, placements=placements)
        )
    if which == pb.VILLAGE_DECISION_KIND_REVEAL:
        return VillageCommand(
            reveal_spells=pb.VillageRevealSpells(family=family, positions=owed.reveal.revealable)
        )
    if which in (pb.VILLAGE_DECISION_KIND_VICTIMS, pb.VILLAGE_DECISION_KIND_NAME_VICTIMS):
        choices = owed.victims
        starving = state.families[choices.starving]
        threat = starving.seat != seat and starving.pole >= POLE_MAX - 1
        victims = _people(
            choices.candidates, OTHER_VICTIMS if threat else OWN_VICTIMS, choices.count
        )
        return VillageCommand(
            choose_victims=pb.VillageChooseVictims(family=family, victims=victims)
        )
    if which == pb.VILLAGE_DECISION_KIND_YOUTH:
        spared: list[pb.VillagePerson] = []
        for cottage, need in enumerate(owed.youth.needs):
            here = [c for c in owed.youth.candidates if c.cottage == cottage]
            spared += _people(here, SPARE_ORDER, need)
        return VillageCommand(spare_from_age=pb.VillageSpareFromAge(family=family, spared=spared))
    return owed.default


@dataclass
class VillageBotStats:
    """What one bot did and what happened to it, counted from the match's events."""

    #: Decisions this bot answered itself.
    decisions: int = 0
    #: Decisions a deadline answered for its families.
    by_default: int = 0
    #: Commands the server refused: (the version the bot had seen, decision kind, rule).
    refusals: list[tuple[int, str, str]] = field(default_factory=list)

    def line(self) -> str:
        """What the bot did, in one line of words (``totem bots --stats``)."""
        return (
            f"{self.decisions} decisions, {self.by_default} by a deadline, "
            f"{len(self.refusals)} refused commands"
        )


class VillageBot(StreamBot):
    """Plays one seat (one or two families) of a Village match through a player
    :class:`Session`."""

    def __init__(
        self,
        session: Session,
        *,
        think_ms: tuple[float, float] = DEFAULT_THINK_MS,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(session)
        low, high = think_ms
        if not 0 <= low <= high:
            raise ValueError("delays must satisfy 0 <= low <= high")
        self.think_ms = think_ms
        self.rng = rng or random.Random()
        self.stats = VillageBotStats()
        self._blocked_at: int | None = None

    async def _step(self, state: MatchState) -> None:
        version = state.summary.version
        owed = list(state.village.legal.decisions)
        if (
            state.summary.status != common_pb2.MATCH_STATUS_PLAYING
            or version == self._blocked_at
            or not owed
        ):
            await self._changed.wait()
            return
        decision = owed[0]
        left = decision.deadline_ms / 1000 - time.time()
        delay = min(self.rng.uniform(*self.think_ms) / 1000, max(0.0, left / 2))
        await self._changed_within(delay)
        now = self.session.state
        if now is not None and now.summary.version != version:
            return  # look again: a deadline or another family moved the match on
        await self._decide(version, decision, decide(state.village, self.seat, decision))

    async def _decide(
        self, version: int, owed: pb.VillageOwedDecision, command: VillageCommand
    ) -> None:
        kind = pb.VillageDecisionKind.Name(owed.kind)
        try:
            error = await self._send(kind, version, lambda: self.session.act(command))
        except TotemError as invalid:
            # A decision can change under a command built for it (a deadline passed):
            # the command may then no longer fit. Decide again from the newer state.
            if invalid.code != grpc.StatusCode.INVALID_ARGUMENT:
                raise
            error = invalid
        if error is None:
            self.stats.decisions += 1
        elif error.code not in RESUMABLE_CODES:
            self.stats.refusals.append((version, kind, error.rule))
            self._blocked_at = version

    def _count(self, event: MatchEvent) -> None:
        if not event.HasField("village"):
            return
        body = event.village
        kind = body.WhichOneof("event")
        if kind is None:
            return
        inner = getattr(body, kind)
        if "by_default" in inner.DESCRIPTOR.fields_by_name and inner.by_default:
            mine = [f.family for f in (event.state.village.families or []) if f.seat == self.seat]
            if getattr(inner, "family", None) in mine:
                self.stats.by_default += 1


async def play_table(
    client: Client,
    players: int,
    *,
    variations: Sequence[str] = (),
    deadline_ms: int | None = None,
    entropy: bytes = b"",
    names: Sequence[str] | None = None,
    think_ms: tuple[float, float] = DEFAULT_THINK_MS,
    seed: int | None = None,
    on_seated: OnSeated | None = None,
) -> TableResult[VillageBot]:
    """Create a Village match for ``players`` seats with ``variations``, seat one bot in
    each, play it until a totem pole is complete (VI-4.1)."""
    if not 2 <= players <= 4:
        raise ValueError("Village is for 2 to 4 players")
    names = bot_names(players, names)
    created = await client.create_village(
        max_players=players, variations=variations, deadline_ms=deadline_ms, entropy=entropy
    )
    bots = []
    for i, name in enumerate(names):
        session = await client.join(created.match_id, name, entropy=secrets.token_bytes(16))
        rng = random.Random(seed + i) if seed is not None else None
        bots.append(VillageBot(session, think_ms=think_ms, rng=rng))
    if on_seated is not None:
        on_seated(created.match_id)
    return await run_bots(created.match_id, bots)


#: ``totem bots village``.
TABLE = BotTable(
    help="""Create a Village match, seat a bot in every seat, play it until a totem pole is
    complete; or with --join MATCH --token TOKEN ..., play the seats those tokens hold
    in MATCH.

    Prints the result (placements with names) and the match id, for
    `totem-replay show MATCH`.
    """,
    players=options.players(
        VILLAGE_GAME, "Number of bots (VI-1.1); with two, each plays two families."
    ),
    match_options=[
        click.Option(
            ["--variation", "variations"],
            multiple=True,
            type=click.Choice(list(VILLAGE_VARIATIONS)),
            help="A variation of the rules; repeat to combine them.",
        ),
        click.Option(
            ["--deadline-ms"],
            type=click.IntRange(0, 3_600_000),
            default=None,
            help="Deadline of every kind of decision; the server's defaults if not given.",
        ),
    ],
    bot_options=[
        options.delay_range(
            "--think-ms",
            DEFAULT_THINK_MS,
            "Random delay before each of a bot's decisions (at most half the time left).",
        ),
    ],
    bot=VillageBot,
    play_table=play_table,
)

__all__ = ["TABLE", "VillageBot", "VillageBotStats", "decide", "play_table"]
