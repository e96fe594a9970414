"""The Python client speaks Village: options, session helpers per decision, and bots that
take legal, sensible decisions from their stream alone, under every variation."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from tests.client.support import BOUND
from totem.v1 import common_pb2
from totem.v1 import village_pb2 as pb
from totem_client import Client, TotemError
from totem_client.bots.village import VillageBot, decide
from totem_client.bots.village import play_table as play_village_table
from totem_client.games.village import village_options

MATCH_BOUND = 300.0
K = pb.VillageKind


def test_village_options_name_variations_and_deadlines() -> None:
    options = village_options(
        max_players=3,
        variations=["feast_a", "totem_b"],
        deadline_ms=500,
        youth_timeout_ms=0,
        prearranged_sexes=["girl", "boy"],
    )
    assert options.max_players == 3 and options.feast_a and options.totem_b
    assert not options.spells_a
    assert options.arrange_timeout_ms == 500 and options.youth_timeout_ms == 0
    assert list(options.prearranged_sexes) == [pb.VILLAGE_SEX_GIRL, pb.VILLAGE_SEX_BOY]
    assert not village_options().HasField("choose_timeout_ms")
    with pytest.raises(ValueError):
        village_options(variations=["nope"])


async def test_a_session_answers_each_decision_it_owes(client: Client) -> None:
    created = await client.create_village(max_players=2, deadline_ms=600_000)
    alice = await client.join(created.match_id, "alice")
    bob = await client.join(created.match_id, "bob")
    view = (await alice.get()).village
    (owed,) = view.legal.decisions
    assert owed.family == 0 and owed.kind == pb.VILLAGE_DECISION_KIND_ARRANGE
    assert owed.arrange.house == 7 and owed.deadline_ms > 0
    with pytest.raises(TotemError) as refused:
        await bob.arrange(0, [{"elder": 1}, {}, {}])  # family 0 is alice's (VI-7.1)
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED  # VI-7.9
    assert refused.value.rule == "VI-2.2"
    answer = await alice.arrange(
        0,
        [
            {"young_woman": 1, "young_man": 1, "elder": 1},
            {"young_woman": 1, "young_man": 1},
            {"mature_woman": 1, "mature_man": 1},
        ],
    )
    assert [c.elder for c in answer.state.village.families[0].cottages] == [1, 0, 0]
    assert alice.state is not None and alice.state.village.families[0].members == 7
    for session, family in ((bob, 1), (alice, 2), (bob, 3)):
        (owed,) = (await session.get()).village.legal.decisions
        assert owed.family == family
        await session.act(owed.default)  # the default the deadline would apply
    choosing = (await alice.get()).village
    assert choosing.decision.kind == pb.VILLAGE_DECISION_KIND_CHOOSE
    await alice.choose_spells(0, ["twins"])
    with pytest.raises(TotemError) as again:
        await alice.choose_spells(0, ["girls"])  # already chosen this round (VI-2.2)
    assert again.value.rule == "VI-2.2"
    mine = (await alice.get()).village.families[0]
    assert mine.owned and list(mine.spells) == [pb.VILLAGE_SPELL_TWINS]
    theirs = (await bob.get()).village.families[0]
    assert not theirs.owned and not theirs.spells and theirs.spell_count == 1


def _owed(kind: int, family: int = 0, **choices: object) -> pb.VillageOwedDecision:
    return pb.VillageOwedDecision(family=family, kind=kind, **choices)  # type: ignore[arg-type]


def _state(families: int = 4) -> pb.VillageState:
    return pb.VillageState(
        families=[pb.VillageFamily(family=f, seat=f % 2) for f in range(families)]
    )


def test_the_bot_spreads_its_men_women_and_elders_over_the_cottages() -> None:
    members = pb.VillageCounts(young_woman=2, young_man=2, mature_woman=1, mature_man=1, elder=3)
    owed = _owed(
        pb.VILLAGE_DECISION_KIND_ARRANGE,
        arrange=pb.VillageArrangeChoices(members=members, house=9, capacity=6),
    )
    cottages = decide(_state(), 0, owed).arrange.cottages
    assert [c.elder for c in cottages] == [1, 1, 1]
    assert all(c.young_man + c.mature_man == 1 for c in cottages)
    assert all(c.young_woman + c.mature_woman == 1 for c in cottages)


def test_the_bot_houses_every_fertile_woman_with_a_man() -> None:
    """VI-2.4: births need a fertile man in the cottage; with two men, the four women
    share their two cottages, and the elder and children fill the third."""
    members = pb.VillageCounts(young_woman=3, mature_woman=1, young_man=1, mature_man=1, elder=1)
    owed = _owed(
        pb.VILLAGE_DECISION_KIND_ARRANGE,
        arrange=pb.VillageArrangeChoices(members=members, house=7, capacity=6),
    )
    cottages = decide(_state(), 0, owed).arrange.cottages
    men = [c.young_man + c.mature_man for c in cottages]
    women = [c.young_woman + c.mature_woman for c in cottages]
    assert men == [1, 1, 0] and women == [2, 2, 0]
    assert [c.elder for c in cottages] == [0, 0, 1]


def test_the_bot_protects_elders_unless_a_rival_is_a_piece_from_winning() -> None:
    """VI-2.6, VI-3.2: children go first, of any family; a rival one piece from a
    complete pole (VI-4.1) loses its elders first."""
    candidates = [
        pb.VillageCandidate(cottage=0, kind=K.VILLAGE_KIND_ELDER, count=1),
        pb.VillageCandidate(cottage=1, kind=K.VILLAGE_KIND_GIRL, count=1),
        pb.VillageCandidate(cottage=2, kind=K.VILLAGE_KIND_YOUNG_MAN, count=2),
    ]
    own = _owed(
        pb.VILLAGE_DECISION_KIND_VICTIMS,
        victims=pb.VillageVictimChoices(starving=0, count=2, elders=True, candidates=candidates),
    )
    victims = decide(_state(), 0, own).choose_victims.victims
    assert [v.kind for v in victims] == [K.VILLAGE_KIND_GIRL, K.VILLAGE_KIND_YOUNG_MAN]
    other = _owed(
        pb.VILLAGE_DECISION_KIND_VICTIMS,
        family=1,
        victims=pb.VillageVictimChoices(starving=0, count=1, elders=True, candidates=candidates),
    )
    (victim,) = decide(_state(), 1, other).choose_victims.victims
    assert victim.kind == K.VILLAGE_KIND_GIRL
    leading = _state()
    leading.families[0].pole = 5
    (victim,) = decide(leading, 1, other).choose_victims.victims
    assert victim.kind == K.VILLAGE_KIND_ELDER
    youth = _owed(
        pb.VILLAGE_DECISION_KIND_YOUTH,
        youth=pb.VillageYouthChoices(needs=[1, 0, 0], minimum=[0, 0, 0], candidates=candidates),
    )
    (spared,) = decide(_state(), 0, youth).spare_from_age.spared
    assert spared.kind == K.VILLAGE_KIND_ELDER and spared.cottage == 0


def test_the_bot_casts_only_free_helpful_spells_on_itself() -> None:
    owed = _owed(
        pb.VILLAGE_DECISION_KIND_CHOOSE,
        choose=pb.VillageChooseChoices(spells=list(range(1, 11)), pieces=2, birds=5, max_spells=7),
    )
    chosen = decide(_state(), 0, owed).choose_spells
    assert list(chosen.spells) == [pb.VILLAGE_SPELL_ABUNDANCE, pb.VILLAGE_SPELL_TWINS]
    assert chosen.birds == 0


@pytest.mark.parametrize(
    ("players", "variations"),
    [
        (2, ()),
        (3, ("spells_a", "feast_a", "totem_b")),
        (4, ("spells_b", "feast_b", "village", "totem_a")),
        (2, ("spells_a", "spells_b", "feast_b")),
    ],
)
async def test_bots_play_from_the_stream_alone_to_a_complete_totem(
    client: Client, players: int, variations: tuple[str, ...]
) -> None:
    seated: list[str] = []
    result = await asyncio.wait_for(
        play_village_table(
            client,
            players,
            variations=variations,
            deadline_ms=600_000,
            think_ms=(0, 1),
            seed=7,
            on_seated=seated.append,
        ),
        MATCH_BOUND,
    )
    assert seated == [result.match_id]
    assert result.end_reason == "completed"
    assert sorted(result.summary.variant.split("+")) == sorted(variations) or not variations
    for bot in result.bots:
        # Every decision answered by the bot itself, before its deadline, and legal.
        assert bot.stats.decisions > 0 and bot.stats.by_default == 0
        assert bot.stats.refusals == []
    referee = await client.get(result.match_id)
    assert referee.village.HasField("outcome")
    assert max(f.pole for f in referee.village.families) == 6
    late = VillageBot(client.session(result.match_id, seat=0))
    summary = await asyncio.wait_for(late.run(), BOUND)
    assert summary.status == common_pb2.MATCH_STATUS_ENDED and late.stats.decisions == 0
