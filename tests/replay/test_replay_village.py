"""``totem-replay`` on Village matches: show, events, at (the village drawn, per viewer)
and verify (births re-derived from the revealed seed or the prearranged sexes, VI-2.4;
every spell reveal checked against its commitment, VI-2.2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from replay_support import Stamps, as_referee, forge, json_lines, open_store

from domain.kernel import MatchStatus
from domain.kernel.match import METADATA_FIELDS, event_name
from domain.village import ChooseSpells, Options, Village
from entrypoints.totem_replay import main
from replay.village import check_draws
from storage.arena import Arena

SECRET = bytes(range(100, 132))
#: Every decision due at once: the default applies when nobody answers.
ZERO = {f"{k}_timeout_ms": 0 for k in ("arrange", "choose", "place", "reveal", "victims", "youth")}


def play(match: Village, stamps: Stamps, max_events: int) -> None:
    """Every family casts twins on itself each round (the default places it on its own
    cottage 0 and reveals it); every other decision takes its default."""
    while match.status is MatchStatus.PLAYING and match.version < max_events:
        decision = match.decision
        assert decision is not None
        family = decision.parties[0]
        command: Any = match.default_command(family)
        if decision.kind == "choose" and match.poles[family] >= 1:
            command = ChooseSpells(family, ["twins"])
        match.act(match.party_owner(family), command, stamps())


def store_village(
    arena: Arena, *, players: int = 3, max_events: int = 100_000, **options: Any
) -> Village:
    stamps = Stamps()
    opts = Options(max_players=players, **options)
    created = arena.create_match(lambda seed: Village.create(opts, seed, b"\x05", secret=SECRET))
    assert isinstance(created, Village)
    for seat in range(players):
        created.join(f"chief{seat}", bytes([seat, 7]), f"token-hash-{seat}", stamps())
    play(created, stamps, max_events)
    arena.save(created)
    return created


@dataclass
class VillageStore:
    db: Path
    ended: Village
    playing: Village


@pytest.fixture
def store(tmp_path: Path) -> VillageStore:
    db = tmp_path / "totem.db"
    arena = open_store(db)
    try:
        ended = store_village(arena, prearranged_sexes=["girl", "boy", "boy"], **ZERO)
        playing = store_village(arena, players=2, max_events=60, feast_b=True, **ZERO)
    finally:
        arena.close()
    assert ended.status is MatchStatus.ENDED and playing.status is MatchStatus.PLAYING
    return VillageStore(db, ended, playing)


def run(store: VillageStore, *args: object) -> Result:
    argv: Sequence[str] = ["--db", str(store.db), *as_referee(args)]
    return CliRunner().invoke(main, argv)


def test_show_and_events_say_what_happened(store: VillageStore) -> None:
    shown = run(store, "show", store.ended.id)
    assert shown.exit_code == 0, shown.output
    assert "village" in shown.stdout
    result = run(store, "events", store.ended.id)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "3 families founded" in out and "round 1 begins, start family 0" in out
    assert "chooses 1 spells (twins)" in out  # the referee's view
    assert "reveals twins at 0" in out and "births: " in out and "the catch of 10 birds" in out
    assert "totems complete" in out
    as_json = json_lines(run(store, "events", store.ended.id, "--json").stdout)
    assert len(as_json) == store.ended.version


def _placed_version(store: VillageStore) -> int:
    """The first decision awaited after a spell was placed, in the unfinished match."""
    arena = open_store(store.db)
    try:
        stored = arena.events_after(store.playing.id)
    finally:
        arena.close()
    placed = next(e.originator_version for e in stored if event_name(e) == "SpellPlaced")
    return next(
        e.originator_version
        for e in stored
        if e.originator_version > placed and event_name(e) == "DecisionAwaited"
    )


def test_at_draws_the_village_for_each_viewer(store: VillageStore) -> None:
    match = store.playing
    version = _placed_version(store)
    referee = run(store, "at", match.id, version)
    owner = run(store, "at", match.id, version, "--seat", 0)
    other = run(store, "at", match.id, version, "--seat", 1)
    spectator = run(store, "at", match.id, version, "--spectator")
    for result in (referee, owner, other, spectator):
        assert result.exit_code == 0, result.output
        assert "Family 0 (chief0, seat 0)" in result.stdout
        assert "cottage 0: " in result.stdout and "pole #....." in result.stdout
        assert "Pending: " in result.stdout
    # Family 0's face-down twins: its owner and the referee see it, nobody else.
    assert "twins?@0 by 0" in referee.stdout and "twins?@0 by 0" in owner.stdout
    for result in (other, spectator):
        assert "?@0 by 0" in result.stdout and "twins?@0 by 0" not in result.stdout
        family_0 = next(line for line in result.stdout.splitlines() if "Family 0" in line)
        assert "chose 1 spells" in family_0 and "twins" not in family_0
    assert "You owe: " in owner.stdout or "You owe: " in other.stdout


def test_verify_re_derives_births_and_checks_every_reveal(store: VillageStore) -> None:
    result = run(store, "verify", store.ended.id)
    assert result.exit_code == 0, result.output
    assert "spell reveals and" in result.stdout
    assert "3 prearranged sexes" in result.stdout
    assert "re-derived from the revealed seed" in result.stdout
    unfinished = run(store, "verify", store.playing.id)
    assert unfinished.exit_code == 0, unfinished.output
    assert "seed not revealed yet" in unfinished.stdout


def test_verify_reports_a_tampered_reveal(store: VillageStore) -> None:
    match = store.ended
    arena = open_store(store.db)
    try:
        stored = arena.events_after(match.id)
    finally:
        arena.close()
    revealed = next(e for e in stored if event_name(e) == "SpellsRevealed" and e.reveals)
    reveals = [dict(r, spell="illness") for r in revealed.reveals]
    forge(store.db, match.id, revealed.originator_version, reveals=reveals)
    result = run(store, "verify", match.id)
    assert result.exit_code == 1
    assert f"first bad version {revealed.originator_version}" in result.stdout
    assert "the illness revealed at position 0" in result.stdout
    assert "the reveal breaks its commitment (VI-2.2)" in result.stdout


# ---- check_draws on recorded fields --------------------------------------------------


def _fields(match: Village) -> list[tuple[int, str, dict[str, Any]]]:
    return [
        (
            e.originator_version,
            event_name(e),
            {k: v for k, v in vars(e).items() if k not in METADATA_FIELDS},
        )
        for e in match.pending_events
    ]


def _match(**options: Any) -> Village:
    stamps = Stamps()
    match = Village.create(
        Options(max_players=2, **ZERO, **options), bytes(32), b"c", secret=SECRET
    )
    for seat in range(2):
        match.join(f"p{seat}", bytes([seat]), f"h{seat}", stamps())
    play(match, stamps, 100_000)
    return match


def test_births_are_re_derived_and_a_forged_birth_is_found() -> None:
    recorded = _fields(_match())
    problems, notes = check_draws(recorded)
    assert problems == [], problems
    assert any("re-derived from the revealed seed" in n for n in notes)
    born = next(i for i, (_, n, d) in enumerate(recorded) if n == "Born" and len(d["draws"]) > 0)
    version, name, data = recorded[born]
    flipped = ["boy" if s == "girl" else "girl" for s in data["draws"]]
    children = []
    for c in data["children"]:
        if c["forced"] is None:
            c = dict(c, girls=c["boys"], boys=c["girls"])
        children.append(c)
    recorded[born] = (version, name, dict(data, draws=flipped, children=children))
    problems, _ = check_draws(recorded)
    assert [v for v, _ in problems] == [version]
    assert "re-derived from the seed (VI-2.4)" in problems[0][1]


def test_chits_that_do_not_hash_to_the_commitment_are_found() -> None:
    recorded = _fields(_match())
    ended = next(i for i, (_, n, _) in enumerate(recorded) if n == "RoundEnded")
    version, name, data = recorded[ended]
    chits = [dict(c, chits=["00" * 32]) for c in data["chits"]]
    recorded[ended] = (version, name, dict(data, chits=chits))
    problems, _ = check_draws(recorded)
    assert problems and all(v == version for v, _ in problems)
    assert any("do not hash to its commitment (VI-2.2)" in p for _, p in problems)
