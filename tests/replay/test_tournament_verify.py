"""``totem-replay tournament verify``: an honest sheet verifies, from its file and from the
store; each kind of forgery fails, naming the check and where (TO-9.4, TO-10.4,
TO-11.2, TO-12.1)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from replay_support import Stamps, forge, open_store
from tournament_store import (
    WINDOW_MS,
    Clock,
    Played,
    create_match,
    new_tournament,
    rechained,
    save_new,
    stopped,
    swiss_cup,
    table_options,
    token_hash,
    under_way,
    version_of,
    write,
    wrong_luck,
)

from domain.jungle_speed import JungleSpeed
from domain.tournament import Format
from domain.tournament import sheet as sheets
from domain.tournament.aggregate import standing_fields
from domain.tournament.match_places import seat_entrants, table_places
from entrypoints.totem_replay import main
from replay.sheet_file import read_sheet
from storage.event_lines import METADATA
from storage.keys import ephemeral
from storage.sheets import sheet_document


@dataclass
class World:
    db: Path
    cup: Played
    luck: Played
    open: Played
    #: The cup's sheet, as ``tournament export`` wrote it.
    sheet: Path
    events: list[Any]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """One store holding three tournaments (see tournament_store), built once."""
    folder = tmp_path_factory.mktemp("tournaments")
    db = folder / "totem.db"
    arena = open_store(db)
    try:
        cup, luck, still = swiss_cup(arena), wrong_luck(arena), under_way(arena)
        events = list(arena.events.get(cup.id))
    finally:
        arena.close()
    sheet = folder / "cup.jsonl"
    done = CliRunner().invoke(
        main, ["--db", str(db), "tournament", "export", str(cup.id), "--sheet", str(sheet)]
    )
    assert done.exit_code == 0, done.output
    return World(db, cup, luck, still, sheet, events)


def verify(world: World, source: object, *options: str, db: Path | None = None) -> Result:
    argv = ["--db", str(db or world.db), "tournament", "verify", str(source), *options]
    return CliRunner().invoke(main, argv)


def report(world: World, source: object, *options: str, db: Path | None = None) -> dict[str, Any]:
    result = verify(world, source, "--json", *options, db=db)
    assert result.exit_code in (0, 1), result.output
    found: dict[str, Any] = json.loads(result.stdout)
    assert found["ok"] == (result.exit_code == 0)
    return found


def failed(found: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The problems of each failed check."""
    return {
        name: check["problems"]
        for name, check in found["checks"].items()
        if check["status"] == "failed"
    }


def forged_sheet(world: World, tmp_path: Path, position: int, change: Callable[..., None]) -> Path:
    """The cup's sheet with one event changed and the chain rewritten after it."""
    events = rechained(world.events, position, change)
    return write(tmp_path / "forged.jsonl", sheet_document(world.cup.id, events))


# ---- honest -------------------------------------------------------------------------------


def test_an_honest_sheet_verifies_from_its_file_and_from_the_store_TO_11_2(world: World) -> None:
    from_file, from_store = verify(world, world.sheet), verify(world, world.cup.id)
    assert from_file.exit_code == 0, from_file.output
    assert from_store.exit_code == 0, from_store.output
    assert from_file.stdout.startswith(f"OK tournament {world.cup.id} (from the sheet ")
    found = report(world, world.sheet)
    assert {c["status"] for c in found["checks"].values()} == {"ok"}
    assert found["digest"] == world.cup.tournament.digest and found["ended"] is True
    assert "5 matches checked" in found["checks"]["matches"]["detail"]  # the voided one too


def test_the_key_given_must_be_the_one_that_signed_TO_11_2(world: World, tmp_path: Path) -> None:
    assert world.cup.key is not None
    right = verify(world, world.sheet, "--key", world.cup.key.public_bytes.hex())
    other = report(world, world.sheet, "--key", ephemeral().public_bytes.hex())
    assert right.exit_code == 0, right.output
    # The matches the sheet lists are held to the key too: the server signed them all.
    assert sorted(failed(other)) == ["matches", "signature"]
    assert "not by the expected key" in failed(other)["signature"][0]["reason"]
    assert failed(other)["signature"][0]["version"] == len(world.events)


# ---- the sheet forged -----------------------------------------------------------------------


def test_a_standing_changed_in_the_file_breaks_the_chain_TO_10_4(
    world: World, tmp_path: Path
) -> None:
    lines = world.sheet.read_text().splitlines()
    last = json.loads(lines[-1])
    last["hashed"]["standings"][0]["points"] = "9"
    lines[-1] = json.dumps(last)
    found = report(world, write(tmp_path / "s.jsonl", "\n".join(lines)))
    problems = failed(found)
    assert sorted(problems) == ["chain", "sheet file"]
    assert problems["chain"][0]["version"] == len(world.events)
    assert "does not match its digest" in problems["chain"][0]["reason"]


def test_a_standing_changed_and_the_chain_rewritten_fails_the_sheet_and_the_signature_TO_10_4(
    world: World, tmp_path: Path
) -> None:
    def change(fields: dict[str, Any]) -> None:
        first, second = fields["standings"][0], fields["standings"][1]
        first["entrant"], second["entrant"] = second["entrant"], first["entrant"]

    found = report(world, forged_sheet(world, tmp_path, len(world.events), change))
    problems = failed(found)
    assert sorted(problems) == ["result sheet", "signature"]
    assert "standings" in problems["result sheet"][0]["reason"]
    assert found["first_failure"]["check"] == "result sheet"


def test_a_table_s_match_swapped_for_another_fails_the_matches_TO_9_4(
    world: World, tmp_path: Path
) -> None:
    """Round 1 table 1's match id replaced, everywhere the sheet names it, by the match
    of another tournament; the chain rewritten."""
    real = str(world.cup.matches[(1, 1)].id)
    other = str(world.luck.matches[(1, 1)].id)
    events = world.events
    for name in ("RoundStarted", "ResultRecorded", "DisputeFiled", "TournamentEnded"):
        position = version_of(events, name)
        events = rechained(events, position, lambda f: _replace(f, real, other))
    found = report(world, write(tmp_path / "swap.jsonl", sheet_document(world.cup.id, events)))
    problems = failed(found)
    # The other match ends otherwise, was seated by other entrants' tokens, and plays
    # another tournament's luck; and the sheet is no longer the one signed.
    assert sorted(problems) == ["duplicate luck", "match results", "matches", "signature"]
    swapped = problems["matches"][0]
    assert (swapped["round"], swapped["table"], swapped["match_id"]) == (1, 1, other)
    assert "digest" in swapped["reason"]
    assert "token" in problems["match results"][0]["reason"]


def _replace(fields: dict[str, Any], old: str, new: str) -> None:
    """Every occurrence of ``old`` in the event's fields, at any depth, becomes ``new``."""
    own = {k: v for k, v in fields.items() if k not in METADATA}
    text = json.dumps(own).replace(old, new)
    fields.update(json.loads(text))


def test_a_ruling_removed_from_the_file_breaks_the_chain_TO_10_4(
    world: World, tmp_path: Path
) -> None:
    ruled = version_of(world.events, "Ruled", 1)
    lines = [line for n, line in enumerate(world.sheet.read_text().splitlines()) if n != ruled]
    found = report(world, write(tmp_path / "dropped.jsonl", "\n".join(lines)))
    problems = failed(found)
    assert problems["chain"][0]["version"] == ruled
    assert "removed" in problems["chain"][0]["reason"]
    assert "lines were removed" in problems["sheet file"][0]["reason"]


def test_an_unsigned_sheet_fails_with_a_sentence_TO_11_2(world: World, tmp_path: Path) -> None:
    lines = world.sheet.read_text().splitlines()
    last = json.loads(lines[-1])
    last["unhashed"] = {"signature": "", "public_key": ""}
    last["view"].update(last["unhashed"])
    lines[-1] = json.dumps(last, ensure_ascii=False, separators=(",", ":"))
    found = report(world, write(tmp_path / "unsigned.jsonl", "\n".join(lines)))
    assert list(failed(found)) == ["signature"]
    assert "not signed" in failed(found)["signature"][0]["reason"]


def test_a_line_that_says_more_than_its_event_fails_the_sheet_file(
    world: World, tmp_path: Path
) -> None:
    """A view changed: not covered by the digest, still not what the event says."""
    lines = world.sheet.read_text().splitlines()
    line = json.loads(lines[3])
    line["view"]["entrant"] = "Mallory"
    lines[3] = json.dumps(line)
    found = report(world, write(tmp_path / "view.jsonl", "\n".join(lines)))
    assert list(failed(found)) == ["sheet file"]
    assert "view" in failed(found)["sheet file"][0]["reason"]
    assert failed(found)["sheet file"][0]["version"] == 3


def test_a_line_naming_another_class_is_refused_and_nothing_imported(
    world: World, tmp_path: Path
) -> None:
    lines = world.sheet.read_text().splitlines()
    line = json.loads(lines[2])
    line["topic"] = "antigravity:Fly"
    lines[2] = json.dumps(line)
    sheet = read_sheet(write(tmp_path / "topic.jsonl", "\n".join(lines)))
    assert "antigravity" not in sys.modules
    assert sheet.records[1].event is None and "antigravity" in str(sheet.records[1].error)
    found = report(world, tmp_path / "topic.jsonl")
    assert failed(found)["chain"][0]["version"] == 2


def test_a_match_s_event_is_no_tournament_s(world: World, tmp_path: Path) -> None:
    lines = world.sheet.read_text().splitlines()
    line = json.loads(lines[2])
    line["topic"] = "domain.jungle_speed.match:JungleSpeed.Revealed"
    lines[2] = json.dumps(line)
    sheet = read_sheet(write(tmp_path / "match.jsonl", "\n".join(lines)))
    assert "not an event of a tournament" in str(sheet.records[1].error)


# ---- the store ------------------------------------------------------------------------------


def test_a_match_altered_in_the_store_fails_the_matches_TO_9_4(
    world: World, tmp_path: Path
) -> None:
    db = tmp_path / "altered.db"
    shutil.copy(world.db, db)
    match = world.cup.matches[(2, 1)]
    forge(db, match.id, 3, seat=1 - vars(_event(db, match, 3))["seat"])
    found = report(world, world.sheet, db=db)
    problems = failed(found)
    assert list(problems) == ["matches"], problems
    reasons = [p["reason"] for p in problems["matches"]]
    assert all((p["round"], p["table"]) == (2, 1) for p in problems["matches"])
    assert any("fails verification" in r for r in reasons)
    assert any("digest" in r and match.digest in r for r in reasons)


def _event(db: Path, match: JungleSpeed, version: int) -> Any:
    arena = open_store(db)
    try:
        return next(iter(arena.events.get(match.id, gt=version - 1, lte=version)))
    finally:
        arena.close()


def test_a_match_missing_from_the_store_fails(world: World, tmp_path: Path) -> None:
    empty = tmp_path / "other.db"
    open_store(empty).close()
    found = report(world, world.sheet, db=empty)
    problems = failed(found)
    assert list(problems) == ["matches"]
    assert len(problems["matches"]) == 5
    assert "no such match" in problems["matches"][0]["reason"]


def test_a_table_given_other_luck_than_its_round_s_seed_fails_TO_12_1(world: World) -> None:
    found = report(world, world.luck.id)
    problems = failed(found)
    assert list(problems) == ["duplicate luck"]
    assert problems["duplicate luck"][0]["round"] == 1
    assert problems["duplicate luck"][0]["match_id"] == str(world.luck.matches[(1, 1)].id)


def test_a_tournament_that_has_not_ended_has_no_sheet_TO_11_1(world: World) -> None:
    result = verify(world, world.open.id)
    found = report(world, world.open.id)
    assert result.exit_code == 1
    assert sorted(failed(found)) == ["result sheet", "signature"]
    assert "has not ended" in failed(found)["result sheet"][0]["reason"]
    assert "with no result yet" in found["checks"]["matches"]["detail"]


def test_an_unknown_id_or_file_is_an_error(world: World, tmp_path: Path) -> None:
    missing = verify(world, "6b1c1b0e-4a3f-4d7e-9a55-3f1b0f6a2c11")
    no_file = verify(world, tmp_path / "nothing.jsonl")
    junk = verify(world, write(tmp_path / "junk.jsonl", '{"format": "other"}\n'))
    assert missing.exit_code == 2 and "no tournament" in missing.output
    assert no_file.exit_code == 2 and "no result sheet" in no_file.output
    assert junk.exit_code == 2 and "not a result sheet" in junk.output


def test_verify_all_counts_only_the_matches(world: World) -> None:
    """The tournaments share the store with the matches: `verify --all` checks the seven
    matches and takes no tournament for a match."""
    result = CliRunner().invoke(main, ["--db", str(world.db), "verify", "--all"])
    assert result.exit_code == 0, result.output
    assert "7 matches verified: 7 OK" in result.output


def test_a_result_recorded_otherwise_than_the_match_placed_fails_TO_9_4(
    world: World, tmp_path: Path
) -> None:
    """Round 2 table 1's places swapped in its ResultRecorded, and the final standings
    recomputed to agree, the chain rewritten: only the match itself tells."""
    position = version_of(world.events, "ResultRecorded", 3)
    assert (
        vars(world.events[position - 1])["round"],
        vars(world.events[position - 1])["table"],
    ) == (2, 1)
    events = rechained(world.events, position, lambda f: f.update(places=f["places"][::-1]))
    rows = [standing_fields(r) for r in sheets.replay(events[:-1]).standings()]
    events = rechained(events, len(events), lambda f: f.update(standings=rows))
    found = report(world, write(tmp_path / "places.jsonl", sheet_document(world.cup.id, events)))
    problems = failed(found)
    assert sorted(problems) == ["match results", "signature"], problems
    assert (problems["match results"][0]["round"], problems["match results"][0]["table"]) == (2, 1)
    assert "the tournament recorded" in problems["match results"][0]["reason"]


def test_a_match_seated_out_of_the_pairing_s_order_fails_TO_9_3(tmp_path: Path) -> None:
    """The server seats a table's entrants in the pairing's seat order, so that the
    first seat the rules gave (TO-3.3) is the one played: a match seated the other way
    round fails the results check, even with the places recorded right."""
    db = tmp_path / "swapped.db"
    arena = open_store(db)
    try:
        key = ephemeral()
        tournament = new_tournament(["Ivy", "Jon"], format=Format.ROUND_ROBIN, duplicate=False)
        tournament.signer = key.signer()
        clock = Clock()
        now = clock()
        (table,) = tournament.pairing(now).tables
        match = create_match(arena, table_options(tournament, 1), key)
        stamps = Stamps(now)
        for name in reversed(table.seats):
            match.join(name, b"", token_hash(name), stamps())
        tournament.start_round(now, [match.id])
        stopped(match, first=0)
        arena.save(match)
        at = seat_entrants(table.seats, tournament.token_hashes, match.token_hashes)
        places = table_places((), match.result, at)
        tournament.record_result(match.id, places, match.digest, match.version, clock())
        tournament.end(clock(WINDOW_MS + 1_000))
        save_new(arena, tournament)
        tid = tournament.id
    finally:
        arena.close()
    argv = ["--db", str(db), "tournament", "verify", str(tid), "--json"]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 1, result.output
    problems = failed(json.loads(result.stdout))
    assert list(problems) == ["match results"]
    assert "pairing's seat order" in problems["match results"][0]["reason"]
