"""Matches stored by earlier releases still replay and verify (tests/fixtures/README.md).

A change to the code that alters how a stored match replays (an event renamed, a field
read differently, a rule's code deciding again what its event recorded) fails here, on
real matches of every game, signed by the key that played them.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

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
