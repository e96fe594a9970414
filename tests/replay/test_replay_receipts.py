"""``totem-replay verify MATCH --receipt FILE``: a receipt a player kept (docs/audit.md,
"Receipts") proves that the store, or a bundle, holds at least its version with the
history the server signed. Truncation below it and a rewritten history fail, naming the
receipt's version, even when the chain holds and the match is re-signed; a receipt of
another key, or altered, fails; an intact store passes.

Receipts are made here as the server makes them (:func:`server.receipts.receipt`) and
written as the Python client writes them (:func:`totem_client.receipts.write_receipt`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from replay_support import forge, open_store, relog, truncate, unlog_end
from test_replay_signature import run, signed_match

from domain.jungle_speed import JungleSpeed
from domain.kernel.match import MatchStatus
from domain.kernel.signing import Signer
from server import receipts
from storage.keys import ServerKey, load_or_create
from totem_client.receipts import write_receipt


@dataclass
class Kept:
    db: Path
    key: ServerKey
    match: JungleSpeed
    #: The receipt of the match's last version, and of a version in the middle.
    last: Path
    middle: Path
    middle_version: int


def receipt_file(db: Path, match: JungleSpeed, version: int, signer: Signer, path: Path) -> Path:
    """The server's receipt for ``match`` at ``version``, as a client saves it."""
    arena = open_store(db)
    try:
        at = arena.repository.get(match.id, version=version)
    finally:
        arena.close()
    assert isinstance(at, JungleSpeed) and at.version == version
    return write_receipt(receipts.receipt(at, signer), path)


@pytest.fixture
def kept(tmp_path: Path) -> Kept:
    db = tmp_path / "totem.db"
    key = load_or_create(tmp_path / "server.key")
    arena = open_store(db)
    try:
        match = signed_match(arena, key.signer(), players=2, max_events=100_000)
    finally:
        arena.close()
    assert match.status is MatchStatus.ENDED and match.version > 20
    middle = match.version // 2
    return Kept(
        db,
        key,
        match,
        receipt_file(db, match, match.version, key.signer(), tmp_path / "last.receipt.json"),
        receipt_file(db, match, middle, key.signer(), tmp_path / "middle.receipt.json"),
        middle,
    )


def key_hex(kept: Kept) -> str:
    return kept.key.public_bytes.hex()


def test_an_intact_store_holds_the_receipts_version_and_history(kept: Kept) -> None:
    for path, version in ((kept.last, kept.match.version), (kept.middle, kept.middle_version)):
        result = run(kept.db, "verify", kept.match.id, "--receipt", path, "--key", key_hex(kept))
        assert result.exit_code == 0, result.output
        assert "receipt:" in result.output
        assert f"receipt for version {version}" in result.output
        assert f"events 1 to {version}, of {kept.match.version}" in result.output


def test_a_store_truncated_below_a_kept_receipt_fails_naming_its_version(kept: Kept) -> None:
    """The end of the match removed (its MatchEnded included), the store's summary and
    transparency log rewritten to match: the store agrees with itself and nothing signed
    remains to contradict it; only the receipt catches it."""
    last = kept.match.version
    truncate(kept.db, kept.match.id, last - 3, summary_too=True)
    unlog_end(kept.db, kept.match.id)
    assert run(kept.db, "verify", kept.match.id).exit_code == 0  # the store alone passes

    result = run(kept.db, "verify", kept.match.id, "--receipt", kept.last, "--key", key_hex(kept))
    assert result.exit_code == 1, result.output
    assert f"first bad version {last}" in result.output
    assert f"the server's receipt for version {last}" in result.output
    assert f"the store holds only {last - 3} events of the match" in result.output
    assert "removed" in result.output
    # A receipt of an earlier version still holds: the store has that much.
    earlier = run(kept.db, "verify", kept.match.id, "--receipt", kept.middle)
    assert earlier.exit_code == 0, earlier.output


def test_a_rewritten_history_before_the_receipt_fails_even_re_chained(kept: Kept) -> None:
    """An event before the receipt's version changed and the chain rewritten after it, as
    whoever holds the store and its key could do: the receipt's commitment differs."""
    forge(kept.db, kept.match.id, 3, timestamp=kept.match.created_on)
    relog(kept.db, kept.match.id)  # the store's transparency log rewritten to agree
    result = run(kept.db, "verify", kept.match.id, "--receipt", kept.middle, "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert report["checks"]["chain"]["status"] == "ok"
    receipt = report["checks"]["receipt"]
    assert receipt["status"] == "failed"
    assert receipt["problems"] == [
        {
            "version": kept.middle_version,
            "reason": receipt["problems"][0]["reason"],
        }
    ]
    assert "events 1 to" in receipt["detail"]
    assert "are not the history the server signed" in receipt["detail"]


def test_a_receipt_of_another_key_fails(kept: Kept, tmp_path: Path) -> None:
    other = ServerKey(Ed25519PrivateKey.generate(), None, created=True)
    forged = receipt_file(
        kept.db, kept.match, kept.match.version, other.signer(), tmp_path / "other.json"
    )
    with_key = run(kept.db, "verify", kept.match.id, "--receipt", forged, "--key", key_hex(kept))
    assert with_key.exit_code == 1
    assert "not by the expected key" in with_key.output
    # Without --key, against the key that signed the match's end.
    without = run(kept.db, "verify", kept.match.id, "--receipt", forged)
    assert without.exit_code == 1
    assert "one of them is not the server's" in without.output


def test_an_altered_receipt_fails_its_signature(kept: Kept, tmp_path: Path) -> None:
    data = json.loads(kept.middle.read_text())
    data["version"] += 1  # claims more than the server signed
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(data))
    result = run(kept.db, "verify", kept.match.id, "--receipt", altered, "--key", key_hex(kept))
    assert result.exit_code == 1
    assert "its signature is not valid" in result.output


def test_a_receipt_of_another_match_fails(kept: Kept, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    arena = open_store(other)
    try:
        match = signed_match(arena, kept.key.signer(), players=3, max_events=100_000)
    finally:
        arena.close()
    theirs = receipt_file(other, match, 5, kept.key.signer(), tmp_path / "theirs.json")
    result = run(kept.db, "verify", kept.match.id, "--receipt", theirs)
    assert result.exit_code == 1
    assert f"it is a receipt of match {match.id}" in result.output


def test_a_bundle_is_checked_as_the_store_is(kept: Kept, tmp_path: Path) -> None:
    bundle = tmp_path / "match.jsonl"
    assert run(kept.db, "export", kept.match.id, "-o", bundle).exit_code == 0
    assert run(kept.db, "verify", bundle, "--receipt", kept.last).exit_code == 0
    lines = bundle.read_text().splitlines()
    header = json.loads(lines[0])
    assert "match_id" in header
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:-2]) + "\n")
    result = run(kept.db, "verify", cut, "--receipt", kept.last)
    assert result.exit_code == 1
    assert "the bundle holds only" in result.output


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json", "not a receipt file (JSON expected)"),
        ('{"format": "something else"}', "its format is not"),
        ('{"format": "totem-arena receipt v1"}', "the receipt has no match_id"),
    ],
)
def test_a_file_that_is_no_receipt_is_a_clear_error(
    kept: Kept, tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = run(kept.db, "verify", kept.match.id, "--receipt", path)
    assert result.exit_code == 2
    assert says in result.output


def test_receipt_is_not_taken_with_all(kept: Kept) -> None:
    result = run(kept.db, "verify", "--all", "--receipt", kept.last)
    assert result.exit_code == 2
    assert "not with --all" in result.output
