"""Matches stored by earlier releases still replay and verify (tests/fixtures/README.md).

A change to the code that alters how a stored match replays (an event renamed, a field
read differently, a rule's code deciding again what its event recorded) fails here, on
real matches of every game, signed by the key that played them.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path
from uuid import UUID

import pytest
from click.testing import CliRunner

from domain.kernel.chain import event_digest
from entrypoints.totem_replay import main as replay

FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: Each store, with the public key of the server that wrote it and what it holds.
RELEASES = {
    "release-2026-12-05.db.gz": {
        "key": "cdd900f1e4e7633c9518c23d217803cd66d4762075bc165032f832ea84a13327",
        "matches": {
            "1cdee5d8-4912-4768-a58f-29ef6b69767b": ("jungle_speed", 296),
            "86a377ac-a694-4a8b-b53f-11dfb686e5b9": ("tribes", 147),
            "4b79e72b-b2aa-43fb-8d4f-843feb68dfce": ("village", 399),
            "65116fcc-e3e1-4692-97e1-108c73e20634": ("tribes", 151),
        },
    },
    "release-2.db.gz": {
        "key": "3cc5cad41a5ebc022337277573c6b77759312ae22296659439025673cebe1f1e",
        "matches": {
            "0719acf9-f93a-419e-a524-d48e0f4b2496": ("jungle_speed", 236),
            "c8e7de6e-407d-48dc-a1e5-f3de5baabe2b": ("jungle_speed", 228),
            "b28421cf-fad1-4fcf-936b-73f712b97611": ("tribes", 110),
            "bb5296e4-7f1e-484c-a5a4-2076a7ee6fa5": ("village", 273),
        },
    },
}


@pytest.fixture(params=sorted(RELEASES))
def release(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, dict]:  # type: ignore[type-arg]
    store = tmp_path / "store.db"
    store.write_bytes(gzip.decompress((FIXTURES / request.param).read_bytes()))
    return store, RELEASES[request.param]


def _run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(replay, list(args))
    return done.exit_code, done.output


def test_every_stored_match_verifies_against_the_key_that_signed_it(
    release: tuple[Path, dict],  # type: ignore[type-arg]
) -> None:
    store, expected = release
    code, output = _run("--db", str(store), "verify", "--all", "--key", expected["key"])
    assert code == 0, output
    assert f"{len(expected['matches'])} matches verified: {len(expected['matches'])} OK" in output


def test_every_stored_match_replays_to_its_recorded_end(
    release: tuple[Path, dict],  # type: ignore[type-arg]
) -> None:
    store, expected = release
    for match_id, (game, events) in expected["matches"].items():
        code, output = _run("--db", str(store), "events", match_id, "--json")
        assert code == 0, output
        lines = [json.loads(line) for line in output.splitlines() if line.strip()]
        assert len(lines) == events, match_id
        assert [line["version"] for line in lines] == list(range(1, events + 1))
        assert lines[-1]["name"] == "MatchEnded", lines[-1]
        code, output = _run("--db", str(store), "show", match_id)
        assert code == 0, output
        assert game in output and "ended" in output


def test_the_export_of_an_upcast_event_holds_its_fields_as_hashed(
    release: tuple[Path, dict],  # type: ignore[type-arg]
) -> None:
    """``events --json``: ``hashed`` is what the digest covers, so the digest recomputes
    from it and the metadata; what an upcaster filled in is named apart (``upcast``)."""
    store, expected = release
    upcast = 0
    for match_id in expected["matches"]:
        code, output = _run("--db", str(store), "events", match_id, "--json")
        assert code == 0, output
        for line in map(json.loads, output.splitlines()):
            fields = dict(line["hashed"])
            assert "upcast" not in fields
            assert not set(line.get("upcast", ())) & set(fields)
            upcast += bool(line.get("upcast"))
            fields.update(
                originator_id=UUID(line["match_id"]),
                originator_version=line["version"],
                timestamp=datetime.fromisoformat(line["timestamp"]),
                prev_digest=line["prev_digest"],
            )
            assert event_digest(line["name"], fields) == line["digest"], line["name"]
    assert upcast


def test_every_stored_match_exported_as_a_bundle_verifies_without_the_store(
    release: tuple[Path, dict],  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    """A bundle carries an upcast event's fields as recorded and the names of those it
    was recorded without: rebuilt from the bundle alone, each match replays and verifies."""
    store, expected = release
    for match_id in expected["matches"]:
        bundle = tmp_path / f"{match_id}.jsonl"
        code, output = _run("--db", str(store), "export", match_id, "-o", str(bundle))
        assert code == 0, output
        code, output = _run("verify", str(bundle), "--key", expected["key"])
        assert code == 0, output
