"""VI-7.12: a judge checks Village's commitments from a spectator's stream alone.

The verifier below is written from the description in docs/rules/village.md
("Commitments") and nothing else: it imports no code of the server's, and builds what is
hashed from the documented words (snake_case names, hexadecimal text, the JSON texts, the
order of a round's chits). If the server hashed anything another way, or published the
chits in another order, the checks fail.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from server.serve import RunningServer
from tests.service.helpers import stub, watch_until
from tests.service.village_helpers import create_village, drive, long_deadlines, state
from totem.v1 import match_service_pb2 as ms
from totem.v1 import village_pb2 as vi

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules" / "village.md"

# ---- the verifier, from the documentation's words -------------------------------------


def spell_name(value: int) -> str:
    """ "the name of its VillageSpell value without the VILLAGE_SPELL_ prefix, in lower
    case"."""
    return vi.VillageSpell.Name(value).removeprefix("VILLAGE_SPELL_").lower()  # type: ignore[arg-type]


def hex_text(raw: bytes) -> str:
    """ "its hexadecimal text: 64 characters 0-9a-f, lower case"."""
    assert len(raw) == 32
    return raw.hex()


def chit_input(family: int, round_number: int, salt: str, spell: str) -> str:
    """'{"family":F,"round":R,"salt":"S","spell":"N"}', no whitespace."""
    return f'{{"family":{family},"round":{round_number},"salt":"{salt}","spell":"{spell}"}}'


def chit(family: int, round_number: int, salt: str, spell: str) -> str:
    return hashlib.sha256(chit_input(family, round_number, salt, spell).encode()).hexdigest()


def commitment_input(chits: list[str]) -> str:
    """The JSON array of the chits' hexadecimal texts, sorted as text, no whitespace."""
    return "[" + ",".join(f'"{c}"' for c in sorted(chits)) + "]"


def commitment(chits: list[str]) -> str:
    return hashlib.sha256(commitment_input(chits).encode()).hexdigest()


@dataclass
class Judge:
    """Reads a spectator's stream in order and checks the four steps of the docs."""

    round: int = 0
    committed: dict[int, tuple[int, str]] = field(default_factory=dict)  # family: count, hex
    placed: dict[int, tuple[int, str]] = field(default_factory=dict)  # position: family, chit
    revealed_in_round: bool = False
    reveals_checked: int = 0
    rounds_checked: int = 0
    problems: list[str] = field(default_factory=list)

    def read(self, event: ms.MatchEvent) -> None:
        if event.WhichOneof("event") != "village":
            return
        body = event.village
        kind = body.WhichOneof("event")
        if kind == "round_began":
            self.round = body.round_began.round
            self.committed, self.placed, self.revealed_in_round = {}, {}, False
        elif kind == "spells_chosen":
            chosen = body.spells_chosen
            if self.revealed_in_round:
                self.problems.append(f"family {chosen.family} committed after a reveal")
            self.committed[chosen.family] = (chosen.count, hex_text(chosen.commitment))
        elif kind == "spell_placed":
            placed = body.spell_placed
            self.placed[placed.position] = (placed.family, hex_text(placed.chit))
        elif kind == "placements_revealed":
            for p in body.placements_revealed.placements:
                self.placed[p.position] = (p.family, hex_text(p.chit))
        elif kind == "spells_revealed":
            revealed = body.spells_revealed
            for r in revealed.reveals:
                self.revealed_in_round = True
                again = chit(revealed.family, self.round, hex_text(r.salt), spell_name(r.spell))
                if self.placed.get(r.position) != (revealed.family, again):
                    self.problems.append(f"reveal at {r.position} in round {self.round}")
                self.reveals_checked += 1
        elif kind == "round_ended":
            self._round_ended(body.round_ended)

    def _round_ended(self, ended: vi.VillageRoundEnded) -> None:
        assert ended.round == self.round
        assert not ended.unrevealed and not ended.unplaced  # a spectator sees no secret
        for entry in ended.chits:
            chits = [hex_text(c) for c in entry.chits]
            count, committed = self.committed[entry.family]
            placed = [c for _, (f, c) in sorted(self.placed.items()) if f == entry.family]
            rest = chits[len(placed) :]
            if len(chits) != count or commitment(chits) != committed:
                self.problems.append(f"family {entry.family}'s chits in round {self.round}")
            if chits[: len(placed)] != placed or rest != sorted(rest):
                self.problems.append(f"family {entry.family}'s chits out of order")
        self.rounds_checked += 1


# ---- the documentation's worked example -------------------------------------------------


def test_vi_7_12_the_verifier_reproduces_the_documented_example() -> None:
    """The worked example of the docs, read from the page: the verifier, written from
    the words, gives the very bytes and hashes the page shows."""
    text = DOC.read_text(encoding="utf-8")
    example = re.findall(r"^(chit input|chit|commitment input|commitment):\s+(\S+)$", text, re.M)
    assert [k for k, _ in example] == [
        "chit input",
        "chit",
        "chit input",
        "chit",
        "commitment input",
        "commitment",
    ]
    salts = [bytes(range(32)).hex(), bytes(range(32, 64)).hex()]
    spells = ["big_cure", "girls"]
    made = [chit(2, 3, salt, spell) for salt, spell in zip(salts, spells, strict=True)]
    assert example[0][1] == chit_input(2, 3, salts[0], spells[0])
    assert example[1][1] == made[0]
    assert example[2][1] == chit_input(2, 3, salts[1], spells[1])
    assert example[3][1] == made[1]
    assert example[4][1] == commitment_input(made)
    assert example[5][1] == commitment(made)
    assert commitment([]) == "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
    assert spell_name(vi.VILLAGE_SPELL_BIG_CURE) == "big_cure"


# ---- a real server ----------------------------------------------------------------------

#: What each family casts every round, as far as its pieces and one bird allow: family 1
#: never reveals, family 3 casts nothing.
CASTS = {
    0: [vi.VILLAGE_SPELL_GIRLS, vi.VILLAGE_SPELL_YOUTH],
    1: [vi.VILLAGE_SPELL_TWINS, vi.VILLAGE_SPELL_LACK],
    2: [vi.VILLAGE_SPELL_ABUNDANCE, vi.VILLAGE_SPELL_BIG_CURE],
    3: [],
}


def casting(view: vi.VillageState, owed: vi.VillageOwedDecision) -> vi.VillageCommand | None:
    if owed.kind == vi.VILLAGE_DECISION_KIND_CHOOSE:
        spells = CASTS[owed.family][: owed.choose.pieces + min(1, owed.choose.birds)]
        birds = max(0, len(spells) - owed.choose.pieces)
        choice = vi.VillageChooseSpells(family=owed.family, spells=spells, birds=birds)
        return vi.VillageCommand(choose_spells=choice)
    if owed.kind == vi.VILLAGE_DECISION_KIND_REVEAL and owed.family == 1:
        return vi.VillageCommand(reveal_spells=vi.VillageRevealSpells(family=1))
    return None  # the default: place on its own cottage 0, reveal everything


def _third_round(view: vi.VillageState) -> bool:
    return view.round == 3


@pytest.mark.parametrize("variations", [{}, {"spells_b": True}], ids=["base", "spells_b"])
async def test_vi_7_12_a_spectator_checks_every_commitment_from_the_docs_alone(
    server: RunningServer, variations: dict[str, bool]
) -> None:
    """Two whole rounds of four families, some spells revealed, some kept hidden, one
    family casting nothing: every reveal matches its placed chit and every round's chits
    hash to the commitment made before the first reveal."""
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_village(client, 4, **variations, **long_deadlines())
        await drive(client, match_id, tokens, casting, until=_third_round)
        last = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        events = await watch_until(client, match_id, last)  # a spectator: no token
        assert (await state(client, match_id)).round == 3
    judge = Judge()
    for event in events:
        judge.read(event)
    assert judge.problems == []
    assert judge.rounds_checked == 2
    assert judge.reveals_checked >= 4  # families 0 and 2 reveal theirs, both rounds
    # Family 1 never reveals: a spectator has its chits, never its spells or salts.
    placed = [
        p
        for e in events
        for p in (
            [e.village.spell_placed]
            if e.village.WhichOneof("event") == "spell_placed"
            else e.village.placements_revealed.placements
        )
        if p.family == 1
    ]
    assert len(placed) == 4  # two spells a round, two rounds
    assert all(p.spell == vi.VILLAGE_SPELL_UNSPECIFIED and not p.salt for p in placed)


def test_vi_7_12_the_judge_catches_a_chit_that_does_not_match() -> None:
    """The verifier can fail: a reveal whose salt is not the one committed to."""
    judge = Judge(round=1)
    salt = bytes(range(32))
    judge.placed[0] = (0, chit(0, 1, salt.hex(), "girls"))
    reveal = vi.VillageReveal(position=0, spell=vi.VILLAGE_SPELL_GIRLS, salt=bytes(32))
    event = ms.MatchEvent(
        village=vi.VillageEvent(
            spells_revealed=vi.VillageSpellsRevealed(family=0, phase=3, reveals=[reveal])
        )
    )
    judge.read(event)
    assert judge.problems == ["reveal at 0 in round 1"]
    good = vi.VillageReveal(position=0, spell=vi.VILLAGE_SPELL_GIRLS, salt=salt)
    judge.problems.clear()
    judge.read(
        ms.MatchEvent(
            village=vi.VillageEvent(
                spells_revealed=vi.VillageSpellsRevealed(family=0, phase=3, reveals=[good])
            )
        )
    )
    assert judge.problems == []
