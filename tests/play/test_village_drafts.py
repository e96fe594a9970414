"""Village drafts without a screen: a fresh draft sends the decision's default, and its
cells change the command they make (the choices are the server's, VI-2.1 … VI-2.8)."""

from __future__ import annotations

from totem.v1 import village_pb2 as pb
from totem_client.games.village import VillageCommand
from totem_client.play.village_drafts import draft_for
from totem_client.play.village_text import Families, command_words

K = pb
TARGETS = [pb.VillageTarget(family=f, cottage=c) for f in range(2) for c in range(3)]


def owed(**fields: object) -> pb.VillageOwedDecision:
    return pb.VillageOwedDecision(family=0, rule="VI-2.x", deadline_ms=1, **fields)  # type: ignore[arg-type]


def test_an_arrangement_starts_at_the_default_and_moves_one_person() -> None:
    members = pb.VillageCounts(young_woman=2, young_man=2, elder=1)
    default = VillageCommand(
        arrange=pb.VillageArrange(
            family=0,
            cottages=[members, pb.VillageCounts(), pb.VillageCounts()],
        )
    )
    decision = owed(
        kind=K.VILLAGE_DECISION_KIND_ARRANGE,
        arrange=pb.VillageArrangeChoices(members=members, house=5, capacity=6),
        default=default,
    )
    draft = draft_for(decision, Families(), [])
    assert draft.command() == default
    # The elder's row (the third), from cottage 0 to cottage 2 (VI-2.1).
    draft.move(2, 0)
    draft.change(-1)
    draft.move(0, 2)
    draft.change(1)
    assert command_words(draft.command()) == "arrange 2yw 2ym | empty | 1E"


def test_a_choice_of_spells_and_birds() -> None:
    decision = owed(
        kind=K.VILLAGE_DECISION_KIND_CHOOSE,
        choose=pb.VillageChooseChoices(
            spells=[K.VILLAGE_SPELL_GIRLS, K.VILLAGE_SPELL_LACK], pieces=1, birds=3, max_spells=4
        ),
        default=VillageCommand(choose_spells=pb.VillageChooseSpells(family=0)),
    )
    draft = draft_for(decision, Families(), [])
    assert draft.command() == decision.default
    draft.change(1)  # girls: yes
    draft.move(1, 0)
    draft.change(1)  # lack: yes
    draft.move(1, 0)
    draft.change(1)  # one bird
    assert command_words(draft.command()) == "choose girls, lack, sacrificing 1 birds"


def test_a_placement_among_the_targets_and_a_reveal_toggled() -> None:
    place = owed(
        kind=K.VILLAGE_DECISION_KIND_PLACE,
        place=pb.VillagePlaceChoices(hand=[K.VILLAGE_SPELL_LACK], targets=TARGETS),
        default=VillageCommand(
            place_spell=pb.VillagePlaceSpell(family=0, spell=K.VILLAGE_SPELL_LACK)
        ),
    )
    draft = draft_for(place, Families(), [])
    assert draft.command() == place.default
    draft.move(1, 0)
    draft.change(-1)  # wraps to the last target
    assert command_words(draft.command()) == "place lack on family 1 cottage 2"

    reveal = owed(
        kind=K.VILLAGE_DECISION_KIND_REVEAL,
        reveal=pb.VillageRevealChoices(phase=4, revealable=[3, 5]),
        default=VillageCommand(reveal_spells=pb.VillageRevealSpells(family=0, positions=[3, 5])),
    )
    draft = draft_for(reveal, Families(), [])
    assert draft.command() == reveal.default
    draft.change(1)
    assert command_words(draft.command()) == "reveal #5"


def test_victims_and_the_spared_are_bounded_by_the_decision() -> None:
    candidates = [
        pb.VillageCandidate(cottage=0, kind=K.VILLAGE_KIND_GIRL, count=3),
        pb.VillageCandidate(cottage=1, kind=K.VILLAGE_KIND_MATURE_MAN, count=1),
    ]
    victims = owed(
        kind=K.VILLAGE_DECISION_KIND_VICTIMS,
        victims=pb.VillageVictimChoices(starving=0, count=2, candidates=candidates),
        default=VillageCommand(choose_victims=pb.VillageChooseVictims(family=0)),
    )
    draft = draft_for(victims, Families(), [])
    assert draft.rows[0].cells[0].options == ["0", "1", "2"]  # never more than the count
    draft.change(1)
    draft.move(1, 0)
    draft.change(1)
    assert command_words(draft.command()) == (
        "victims: a girl of cottage 0, a mature man of cottage 1"
    )
    youth = owed(
        kind=K.VILLAGE_DECISION_KIND_YOUTH,
        youth=pb.VillageYouthChoices(needs=[0, 1, 0], minimum=[0, 1, 0], candidates=candidates),
        default=VillageCommand(spare_from_age=pb.VillageSpareFromAge(family=0)),
    )
    draft = draft_for(youth, Families(), [])
    assert [row.label for row in draft.rows] == ["cottage 1: mature man (1 there)"]
    draft.change(1)
    assert command_words(draft.command()) == "spare a mature man of cottage 1"
