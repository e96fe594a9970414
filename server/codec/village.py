"""Village on the wire: options, commands, events and state.

Views arrive redacted from the domain (:mod:`domain.village.views`); this only changes
their shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from domain.kernel.commands import Command, Start
from domain.kernel.errors import InvalidArgument
from domain.kernel.stamps import ReceiveStamp
from domain.village import (
    Arrange,
    ChooseSpells,
    ChooseVictims,
    FamilyCommand,
    Options,
    PassSpells,
    PlaceSpell,
    RevealSpells,
    SpareFromAge,
    SubmitPlacements,
)
from domain.village.model import KINDS, SPELLS, Person, tie
from domain.village.phases import DECISION_RULES
from server.codec.wire import OptionsRequest, stamp_message
from totem.v1 import match_service_pb2
from totem.v1 import village_pb2 as pb

FIELD = "village"

KIND_ENUMS = {k: pb.VillageKind.Value(f"VILLAGE_KIND_{k.upper()}") for k in KINDS}
KIND_NAMES: dict[int, str] = {v: k for k, v in KIND_ENUMS.items()}
SPELL_ENUMS = {s: pb.VillageSpell.Value(f"VILLAGE_SPELL_{s.upper()}") for s in SPELLS}
SPELL_NAMES: dict[int, str] = {v: k for k, v in SPELL_ENUMS.items()}
SEX_ENUMS = {"girl": pb.VILLAGE_SEX_GIRL, "boy": pb.VILLAGE_SEX_BOY}
SEX_NAMES: dict[int, str] = {v: k for k, v in SEX_ENUMS.items()}
DECISION_ENUMS = {
    d: pb.VillageDecisionKind.Value(f"VILLAGE_DECISION_KIND_{d.upper()}") for d in DECISION_RULES
}
TIMEOUTS = ("arrange", "choose", "place", "reveal", "victims", "youth")
VARIATIONS = ("village", "spells_a", "spells_b", "feast_a", "feast_b", "totem_a", "totem_b")


# ---- requests --------------------------------------------------------------------------


def options_from_request(request: OptionsRequest) -> Options:
    if request.WhichOneof("options") not in (None, FIELD):
        raise InvalidArgument("VI-1.1", "the options given are not Village options")
    msg = request.village
    defaults = Options()
    values: dict[str, Any] = {
        "max_players": msg.max_players if msg.HasField("max_players") else defaults.max_players
    }
    for name in VARIATIONS:
        values[name] = getattr(msg, name)
    for kind in TIMEOUTS:
        name = f"{kind}_timeout_ms"
        values[name] = (
            getattr(msg, name) if msg.HasField(name) else getattr(defaults, name)  # type: ignore[arg-type]
        )
    sexes = []
    for value in msg.prearranged_sexes:
        if int(value) not in SEX_NAMES:
            raise InvalidArgument("VI-2.4", f"prearranged_sexes: {value} is not a sex")
        sexes.append(SEX_NAMES[int(value)])
    values["prearranged_sexes"] = sexes or None
    return Options(**values)


def _spell(value: int, rule: str = "VI-2.2") -> str:
    if value not in SPELL_NAMES:
        raise InvalidArgument(rule, f"{value} is not a spell")
    return SPELL_NAMES[value]


def _people(items: Iterable[pb.VillagePerson], rule: str) -> list[Person]:
    people = []
    for p in items:
        if p.kind not in KIND_NAMES:
            raise InvalidArgument(rule, f"{p.kind} is not a kind of villager")
        people.append((p.cottage, KIND_NAMES[p.kind]))
    return people


def _counts_in(c: pb.VillageCounts) -> dict[str, int]:
    return {k: getattr(c, k) for k in KINDS}


def command(request: match_service_pb2.ActRequest) -> Command:
    cmd = request.village
    kind = cmd.WhichOneof("command")
    domain_cmd: FamilyCommand
    if kind == "start":
        return Start()
    if kind == "arrange":
        a = cmd.arrange
        domain_cmd = Arrange(a.family, [_counts_in(c) for c in a.cottages])
    elif kind == "choose_spells":
        c = cmd.choose_spells
        domain_cmd = ChooseSpells(c.family, [_spell(s) for s in c.spells], c.birds)
    elif kind == "place_spell":
        p = cmd.place_spell
        domain_cmd = PlaceSpell(p.family, _spell(p.spell), p.target_family, p.cottage)
    elif kind == "pass_spells":
        domain_cmd = PassSpells(cmd.pass_spells.family)
    elif kind == "submit_placements":
        s = cmd.submit_placements
        domain_cmd = SubmitPlacements(
            s.family, [(_spell(p.spell), p.target_family, p.cottage) for p in s.placements]
        )
    elif kind == "reveal_spells":
        r = cmd.reveal_spells
        domain_cmd = RevealSpells(r.family, list(r.positions))
    elif kind == "choose_victims":
        v = cmd.choose_victims
        domain_cmd = ChooseVictims(v.family, _people(v.victims, "VI-2.6"))
    elif kind == "spare_from_age":
        y = cmd.spare_from_age
        domain_cmd = SpareFromAge(y.family, _people(y.spared, "VI-2.8"))
    else:
        raise InvalidArgument("VI-2", "a Village command must name one decision")
    return domain_cmd


# ---- views -----------------------------------------------------------------------------


def counts(data: Mapping[str, int]) -> pb.VillageCounts:
    return pb.VillageCounts(**{k: data.get(k, 0) for k in KINDS})


def person(data: Mapping[str, Any]) -> pb.VillagePerson:
    return pb.VillagePerson(cottage=data["cottage"], kind=KIND_ENUMS[data["kind"]])


def persons(items: Iterable[Mapping[str, Any]]) -> list[pb.VillagePerson]:
    return [person(p) for p in items]


def _hex(value: str | None) -> bytes:
    return bytes.fromhex(value or "")


def _spells(names: Iterable[str]) -> list[Any]:
    return [SPELL_ENUMS[s] for s in names]


def placement(p: Sequence[Any]) -> pb.VillagePlacement:
    spell, target, cottage = p
    return pb.VillagePlacement(spell=SPELL_ENUMS[spell], target_family=target, cottage=cottage)


def options_message(view: Mapping[str, Any]) -> pb.VillageOptions:
    message = pb.VillageOptions(
        max_players=view["max_players"],
        prearranged=view["prearranged"],
        prearranged_sexes=[SEX_ENUMS[s] for s in view.get("prearranged_sexes") or []],
    )
    for name in VARIATIONS:
        setattr(message, name, view[name])
    for kind in TIMEOUTS:
        setattr(message, f"{kind}_timeout_ms", view[f"{kind}_timeout_ms"])
    return message


def decision_message(d: Mapping[str, Any]) -> pb.VillageDecision:
    detail = d.get("detail", {})
    return pb.VillageDecision(
        kind=DECISION_ENUMS[d["kind"]],
        rule=d["rule"],
        parties=d["parties"],
        opened_ms=d["opened_ms"],
        deadline_ms=d["deadline_ms"],
        phase=detail.get("phase", 0),
        starving=detail.get("starving", 0),
        deaths=detail.get("deaths", 0),
        remaining=detail.get("remaining", 0),
        shares=[pb.VillageShare(family=f, count=n) for f, n in detail.get("shares", [])],
        elders=detail.get("elders", False),
        needs=detail.get("needs", []),
    )


def command_message(data: Mapping[str, Any]) -> pb.VillageCommand:
    """A command given as plain data (a default in the legal actions)."""
    name, family = data["command"], data["family"]
    if name == "Arrange":
        return pb.VillageCommand(
            arrange=pb.VillageArrange(family=family, cottages=[counts(c) for c in data["cottages"]])
        )
    if name == "ChooseSpells":
        return pb.VillageCommand(
            choose_spells=pb.VillageChooseSpells(
                family=family, spells=_spells(data["spells"]), birds=data["birds"]
            )
        )
    if name == "PlaceSpell":
        return pb.VillageCommand(
            place_spell=pb.VillagePlaceSpell(
                family=family,
                spell=SPELL_ENUMS[data["spell"]],
                target_family=data["target_family"],
                cottage=data["cottage"],
            )
        )
    if name == "PassSpells":
        return pb.VillageCommand(pass_spells=pb.VillagePassSpells(family=family))
    if name == "SubmitPlacements":
        return pb.VillageCommand(
            submit_placements=pb.VillageSubmitPlacements(
                family=family, placements=[placement(p) for p in data["placements"]]
            )
        )
    if name == "RevealSpells":
        return pb.VillageCommand(
            reveal_spells=pb.VillageRevealSpells(family=family, positions=data["positions"])
        )
    if name == "ChooseVictims":
        return pb.VillageCommand(
            choose_victims=pb.VillageChooseVictims(family=family, victims=persons(data["victims"]))
        )
    return pb.VillageCommand(
        spare_from_age=pb.VillageSpareFromAge(family=family, spared=persons(data["spared"]))
    )


def event_message(name: str, view: dict[str, Any]) -> Message:
    v = view
    e: dict[str, Message]
    stamp = stamp_message(ReceiveStamp.from_dict(v["stamp"])) if "stamp" in v else None
    if name == "Created":
        e = {
            "created": pb.VillageCreated(
                options=options_message(v["options"]),
                seed_commitment=_hex(v["seed_commitment"]),
                entropy=_hex(v["entropy"]),
                seed=_hex(v.get("seed")),
                secret=_hex(v.get("secret")),
            )
        }
    elif name == "Founded":
        e = {
            "founded": pb.VillageFounded(
                families=v["families"],
                owners=v["owners"],
                members=counts(v["members"]),
                birds=v["birds"],
                stamp=stamp,
            )
        }
    elif name == "RoundBegan":
        e = {
            "round_began": pb.VillageRoundBegan(
                round=v["round"],
                start_family=v["start_family"],
                restarts=v["restarts"],
                members=counts(v["members"]),
                birds=v["birds"],
                stamp=stamp,
            )
        }
    elif name == "PhaseBegan":
        e = {"phase_began": pb.VillagePhaseBegan(round=v["round"], phase=v["phase"])}
    elif name == "DecisionAwaited":
        e = {
            "decision_awaited": pb.VillageDecisionAwaited(decision=decision_message(v["decision"]))
        }
    elif name == "WipedOut":
        e = {
            "wiped_out": pb.VillageWipedOut(
                family=v["family"], phase=v["phase"], lost=counts(v["lost"])
            )
        }
    elif name == "Dismantled":
        e = {
            "dismantled": pb.VillageDismantled(family=v["family"], phase=v["phase"], pole=v["pole"])
        }
    elif name == "Arranged":
        e = {
            "arranged": pb.VillageArranged(
                family=v["family"],
                cottages=[counts(c) for c in v["cottages"]],
                discarded=counts(v["discarded"]),
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "SpellsChosen":
        e = {
            "spells_chosen": pb.VillageSpellsChosen(
                family=v["family"],
                count=v["count"],
                birds=v["birds"],
                commitment=_hex(v["commitment"]),
                spells=_spells(v.get("spells", [])),
                salts=[_hex(s) for s in v.get("salts", [])],
                chits=[_hex(s) for s in v.get("chits", [])],
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "SpellPlaced":
        e = {
            "spell_placed": pb.VillageSpellPlaced(
                family=v["family"],
                position=v["position"],
                target_family=v["target_family"],
                cottage=v["cottage"],
                chit=_hex(v["chit"]),
                spell=SPELL_ENUMS.get(v.get("spell", ""), pb.VILLAGE_SPELL_UNSPECIFIED),
                salt=_hex(v.get("salt")),
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "SpellsPassed":
        e = {
            "spells_passed": pb.VillageSpellsPassed(family=v["family"], lost=v["lost"], stamp=stamp)
        }
    elif name == "PlacementsSubmitted":
        e = {
            "placements_submitted": pb.VillagePlacementsSubmitted(
                family=v["family"],
                count=v["count"],
                placements=[placement(p) for p in v.get("placements", [])],
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "PlacementsRevealed":
        e = {
            "placements_revealed": pb.VillagePlacementsRevealed(
                placements=[
                    pb.VillageBoardPlacement(
                        family=p["family"],
                        position=p["position"],
                        target_family=p["target_family"],
                        cottage=p["cottage"],
                        chit=_hex(p["chit"]),
                        spell=SPELL_ENUMS.get(p.get("spell", ""), pb.VILLAGE_SPELL_UNSPECIFIED),
                        salt=_hex(p.get("salt")),
                    )
                    for p in v["placements"]
                ]
            )
        }
    elif name == "SpellsRevealed":
        e = {
            "spells_revealed": pb.VillageSpellsRevealed(
                family=v["family"],
                phase=v["phase"],
                reveals=[
                    pb.VillageReveal(
                        position=r["position"], spell=SPELL_ENUMS[r["spell"]], salt=_hex(r["salt"])
                    )
                    for r in v["reveals"]
                ],
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "Born":
        e = {
            "born": pb.VillageBorn(
                children=[
                    pb.VillageBirths(
                        family=c["family"],
                        cottage=c["cottage"],
                        girls=c["girls"],
                        boys=c["boys"],
                        forced=SEX_ENUMS.get(c["forced"] or "", pb.VILLAGE_SEX_UNSPECIFIED),
                    )
                    for c in v["children"]
                ],
                draws=[SEX_ENUMS[s] for s in v["draws"]],
                prearranged=v["prearranged"],
            )
        }
    elif name == "CatchShared":
        e = {
            "catch_shared": pb.VillageCatchShared(
                catch=v["catch"], claims=[pb.VillageClaim(**c) for c in v["claims"]]
            )
        }
    elif name == "Feasted":
        e = {"feasted": pb.VillageFeasted(meals=[pb.VillageMeal(**m) for m in v["meals"]])}
    elif name == "VictimsChosen":
        e = {
            "victims_chosen": pb.VillageVictimsChosen(
                starving=v["starving"],
                family=v["family"],
                victims=persons(v["victims"]),
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "VictimsNamed":
        e = {
            "victims_named": pb.VillageVictimsNamed(
                starving=v["starving"],
                family=v["family"],
                count=v["count"],
                victims=persons(v.get("victims", [])),
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "VictimsRevealed":
        e = {
            "victims_revealed": pb.VillageVictimsRevealed(
                starving=v["starving"],
                names=[
                    pb.VillageNames(family=n["family"], victims=persons(n["victims"]))
                    for n in v["names"]
                ],
                deaths=persons(v["deaths"]),
            )
        }
    elif name == "IllnessStruck":
        e = {
            "illness_struck": pb.VillageIllnessStruck(
                deaths=[
                    pb.VillageIllness(
                        family=d["family"], cottage=d["cottage"], killed=counts(d["killed"])
                    )
                    for d in v["deaths"]
                ]
            )
        }
    elif name == "YouthChosen":
        e = {
            "youth_chosen": pb.VillageYouthChosen(
                family=v["family"],
                spared=persons(v["spared"]),
                by_default=v["by_default"],
                stamp=stamp,
            )
        }
    elif name == "Aged":
        e = {
            "aged": pb.VillageAged(
                spared=[
                    pb.VillageFamilyPerson(
                        family=s["family"], cottage=s["cottage"], kind=KIND_ENUMS[s["kind"]]
                    )
                    for s in v["spared"]
                ]
            )
        }
    elif name == "CensusTaken":
        e = {
            "census_taken": pb.VillageCensusTaken(
                sizes=v["sizes"], pieces=v["pieces"], blocked=v["blocked"], birds=v["birds"]
            )
        }
    elif name == "RoundEnded":
        e = {
            "round_ended": pb.VillageRoundEnded(
                round=v["round"],
                chits=[
                    pb.VillageChits(family=c["family"], chits=[_hex(x) for x in c["chits"]])
                    for c in v["chits"]
                ],
                unrevealed=[_secret_spell(u) for u in v["unrevealed"]],
                unplaced=[_secret_spell(u) for u in v["unplaced"]],
            )
        }
    elif name == "TotemCompleted":
        completed = pb.VillageTotemCompleted(
            contenders=v["contenders"],
            sizes=v["sizes"],
            birds=v["birds"],
            tied=tie(v["tied"]),  # a lone winner, as older records hold it, is no tie
            winning_seats=v["winning_seats"],
        )
        if v["winner"] is not None:
            completed.winner = v["winner"]
        e = {"totem_completed": completed}
    else:
        raise ValueError(f"no wire form for Village event {name}")
    event = pb.VillageEvent()
    for field, message in e.items():
        getattr(event, field).CopyFrom(message)
    return event


def _secret_spell(u: Mapping[str, Any]) -> pb.VillageSecretSpell:
    return pb.VillageSecretSpell(
        position=u.get("position", 0),
        family=u["family"],
        spell=SPELL_ENUMS[u["spell"]],
        salt=_hex(u["salt"]),
        chit=_hex(u.get("chit")),
    )


def _candidates(items: Iterable[Mapping[str, Any]]) -> list[pb.VillageCandidate]:
    return [
        pb.VillageCandidate(cottage=c["cottage"], kind=KIND_ENUMS[c["kind"]], count=c["count"])
        for c in items
    ]


def owed_message(d: Mapping[str, Any]) -> pb.VillageOwedDecision:
    message = pb.VillageOwedDecision(
        family=d["family"],
        kind=DECISION_ENUMS[d["kind"]],
        rule=d["rule"],
        deadline_ms=d["deadline_ms"],
    )
    message.default.CopyFrom(command_message(d["default"]))
    c = d["choices"]
    kind = d["kind"]
    if kind == "arrange":
        message.arrange.CopyFrom(
            pb.VillageArrangeChoices(
                members=counts(c["members"]), house=c["house"], capacity=c["capacity"]
            )
        )
    elif kind == "choose":
        message.choose.CopyFrom(
            pb.VillageChooseChoices(
                spells=_spells(c["spells"]),
                pieces=c["pieces"],
                birds=c["birds"],
                max_spells=c["max_spells"],
            )
        )
    elif kind in ("place", "submit"):
        message.place.CopyFrom(
            pb.VillagePlaceChoices(
                hand=_spells(c["hand"]),
                targets=[pb.VillageTarget(family=t, cottage=k) for t, k in c["targets"]],
                can_pass=c.get("can_pass", False),
                all_required=c.get("all_required", False),
            )
        )
    elif kind == "reveal":
        message.reveal.CopyFrom(
            pb.VillageRevealChoices(phase=c["phase"], revealable=c["revealable"])
        )
    elif kind in ("victims", "name_victims"):
        message.victims.CopyFrom(
            pb.VillageVictimChoices(
                starving=c["starving"],
                count=c["count"],
                elders=c["elders"],
                candidates=_candidates(c["candidates"]),
            )
        )
    else:
        message.youth.CopyFrom(
            pb.VillageYouthChoices(
                needs=c["needs"], minimum=c["minimum"], candidates=_candidates(c["candidates"])
            )
        )
    return message


def state_message(view: dict[str, Any]) -> pb.VillageState:
    state = pb.VillageState(
        options=options_message(view["options"]),
        round=view["round"],
        phase=view["phase"],
        phase_name=view["phase_name"],
        start_family=view["start_family"],
        families=[
            pb.VillageFamily(
                family=f["family"],
                seat=f["seat"],
                name=f["name"],
                cottages=[counts(c) for c in f["cottages"]],
                unhoused=counts(f["unhoused"]),
                members=f["members"],
                birds=f["birds"],
                pole=f["pole"],
                wiped_out=f["wiped_out"],
                elderless=f["elderless"],
                chosen=f["chosen"],
                spell_count=f["spell_count"],
                sacrificed=f["sacrificed"],
                commitment=_hex(f["commitment"]),
                unplaced_count=f["unplaced_count"],
                passed=f["passed"],
                submitted=f["submitted"],
                owned="spells" in f,
                spells=_spells(f.get("spells", [])),
                hand=_spells(f.get("hand", [])),
                placements=[placement(p) for p in f.get("placements", [])],
            )
            for f in view["families"]
        ],
        board=[
            pb.VillageSpot(
                position=b["position"],
                owner=b["owner"],
                family=b["family"],
                cottage=b["cottage"],
                chit=_hex(b["chit"]),
                revealed=b["revealed"],
                spell=SPELL_ENUMS.get(b.get("spell", ""), pb.VILLAGE_SPELL_UNSPECIFIED),
                salt=_hex(b.get("salt")),
            )
            for b in view["board"]
        ],
        seed_commitment=_hex(view["seed_commitment"]),
        named=[
            pb.VillageNamed(family=n["family"], victims=persons(n.get("victims", [])))
            for n in view.get("named", [])
        ],
        secret=_hex(view.get("secret")),
        seed=_hex(view.get("seed")),
    )
    if "decision" in view:
        state.decision.CopyFrom(decision_message(view["decision"]))
    if "outcome" in view:
        outcome = view["outcome"]
        state.outcome.CopyFrom(pb.VillageOutcome(tied=outcome["tied"], seats=outcome["seats"]))
        if outcome["winner"] is not None:
            state.outcome.winner = outcome["winner"]
    put_personal(state, view)
    return state


def put_personal(state: pb.VillageState, view: dict[str, Any]) -> None:
    """Write the keys of a ``personal_view`` (a seat's legal actions) into ``state``: a
    whole state, or a copy of the spectators' (server.codec)."""
    if "legal" in view:
        state.legal.CopyFrom(legal_message(view["legal"]))


def legal_message(legal: dict[str, Any]) -> pb.VillageLegalActions:
    return pb.VillageLegalActions(
        start=legal["start"], decisions=[owed_message(d) for d in legal["decisions"]]
    )
