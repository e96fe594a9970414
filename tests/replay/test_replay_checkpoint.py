"""Checkpoints of the transparency log, from the judge's side: a store rewritten by
whoever holds it and its key (a match deleted, truncated, or replaced by another signed
with the store's own key, the store's log rewritten to agree) still passes
``verify --all --key``, and fails ``verify --all --checkpoint`` with a checkpoint kept
from before; two checkpoints of one
log prove consistent, and a log rewritten between them does not.

Tamperings are done on the SQLite file, as in test_replay_verify.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from replay_support import (
    as_referee,
    delete_match,
    execute,
    open_store,
    relog,
    replace_match,
)
from test_replay_signature import Signed, signed_match

from domain.kernel.match import MatchStatus
from domain.kernel.translog import Checkpoint
from entrypoints.totem_replay import main
from storage.arena import MATCH_LOG_ID, TRANSPARENCY_LOG_ID
from storage.keys import load_or_create


def run(db: Path, *args: object) -> Result:
    argv: Sequence[str] = ["--db", str(db), *as_referee(args)]
    return CliRunner().invoke(main, argv)


def sign_checkpoint(signed: Signed, out: Path) -> Checkpoint:
    assert signed.key.path is not None
    result = run(signed.db, "checkpoint", "sign", "--key-file", signed.key.path, "-o", out)
    assert result.exit_code == 0, result.output
    return Checkpoint.from_json(out.read_text())


def verify_all(signed: Signed, checkpoint: Path | None = None) -> Result:
    args: list[object] = ["verify", "--all", "--key", signed.key.public_bytes.hex()]
    if checkpoint is not None:
        args += ["--checkpoint", checkpoint]
    return run(signed.db, *args)


def failures(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("FAILED checkpoint: ")]


@pytest.fixture
def signed(tmp_path: Path) -> Signed:
    """Two ended matches and one in play, signed by the key in ``server.key``."""
    key = load_or_create(tmp_path / "server.key")
    arena = open_store(tmp_path / "totem.db")
    try:
        ended = signed_match(arena, key.signer(), players=3, max_events=100_000)
        other = signed_match(arena, key.signer(), players=2, max_events=100_000)
        playing = signed_match(arena, key.signer(), players=2, max_events=30)
    finally:
        arena.close()
    assert ended.status is MatchStatus.ENDED and other.status is MatchStatus.ENDED
    return Signed(tmp_path / "totem.db", key, ended, other, playing)


@pytest.fixture
def kept(signed: Signed, tmp_path: Path) -> Path:
    """A checkpoint of the signed store, kept outside it."""
    path = tmp_path / "kept.checkpoint"
    made = sign_checkpoint(signed, path)
    assert made.tree_size == 3 + 2  # three creations, two ends
    return path


def test_an_untouched_store_reproduces_its_checkpoint(signed: Signed, kept: Path) -> None:
    result = verify_all(signed, kept)
    assert result.exit_code == 0, result.output
    assert f"OK checkpoint {kept} (5 leaves" in result.stdout
    assert "the store reproduces its root, and its 3 matches still give" in result.stdout

    shown = json.loads(run(signed.db, "verify", "--all", "--checkpoint", kept, "--json").stdout)
    assert shown["ok"] is True
    assert shown["checkpoint"]["root_reproduced"] is True
    assert shown["checkpoint"]["tree_size"] == 5


def test_a_deleted_match_fails_the_checkpoint(signed: Signed, kept: Path) -> None:
    delete_match(signed.db, signed.other.id)
    # The rest of the store is whole: without an anchor, nothing shows.
    assert verify_all(signed).exit_code == 0
    result = verify_all(signed, kept)
    assert result.exit_code == 1, result.output
    assert failures(result) == [
        f"FAILED checkpoint: leaf 2, the creation of match {signed.other.id} (jungle_speed): "
        "the match is no longer in the store (deleted)",
        f"FAILED checkpoint: leaf 3, the end of match {signed.other.id} at version "
        f"{signed.other.version}: the match is no longer in the store (deleted)",
    ]
    assert "the store is not the one it signed" in result.stdout


def test_a_match_dropped_from_the_list_fails_the_checkpoint(signed: Signed, kept: Path) -> None:
    """Its MatchLogged entry deleted, a match vanishes from `list`; `verify --all` finds
    its events all the same, and the transparency log still names it."""
    assert (
        execute(
            signed.db,
            "DELETE FROM stored_events WHERE originator_id = ? AND instr(state, ?) > 0",
            MATCH_LOG_ID.hex,
            signed.other.id.hex.encode(),
        )
        == 1
    )
    assert "FAILED 3 matches verified: 2 OK, 1 failed" in verify_all(signed).stdout
    result = verify_all(signed, kept)
    assert result.exit_code == 1, result.output
    assert failures(result) == [
        f"FAILED checkpoint: leaf 2: match {signed.other.id} is logged but missing from the "
        "list of matches (its MatchLogged entry was deleted)"
    ]


def test_deleting_the_match_and_its_leaves_changes_the_root(signed: Signed, kept: Path) -> None:
    delete_match(signed.db, signed.playing.id)
    # The live match's creation is the last leaf: cut it, as a tamperer would.
    execute(
        signed.db,
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 5",
        TRANSPARENCY_LOG_ID.hex,
    )
    assert verify_all(signed).exit_code == 0
    result = verify_all(signed, kept)
    assert result.exit_code == 1, result.output
    assert failures(result)[0] == (
        "FAILED checkpoint: the store's transparency log holds 4 leaves, the checkpoint 5: "
        "leaves were deleted from the log"
    )


def test_a_leaf_deleted_from_the_middle_of_the_log_fails_the_checkpoint(
    signed: Signed, kept: Path
) -> None:
    execute(
        signed.db,
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 2",
        TRANSPARENCY_LOG_ID.hex,
    )
    result = verify_all(signed, kept)
    assert result.exit_code == 1, result.output
    assert failures(result)[0] == (
        "FAILED checkpoint: the store's transparency log has no leaf 1: leaves were deleted "
        "from the log"
    )
    signer = ("checkpoint", "sign", "--key-file", signed.key.path, "-o", kept.with_suffix(".x"))
    refused = run(signed.db, *signer)
    assert refused.exit_code == 2
    assert "the store's transparency log has no leaf 1" in refused.output


def test_a_truncated_ended_match_fails_the_checkpoint(signed: Signed, kept: Path) -> None:
    end = signed.ended.version
    for version in (end, end - 1, end - 2):
        execute(
            signed.db,
            "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            signed.ended.id.hex,
            version,
        )
    result = verify_all(signed, kept)
    assert result.exit_code == 1, result.output
    assert (
        f"FAILED checkpoint: leaf 1, the end of match {signed.ended.id} at version {end}: "
        f"the store holds only {end - 3} events, the log says it ended at version {end} "
        "(the match was truncated)"
    ) in failures(result)


def test_a_whole_match_replaced_and_re_signed_with_the_store_key_fails_the_checkpoint(
    signed: Signed, kept: Path
) -> None:
    replace_match(signed.db, signed.key, signed.ended.id, signed.other.id)
    # Chain, signature (by the very key given), seed and draws all hold, and so does the
    # summary: only the log's leaves of the match, still in the store, show it.
    result = verify_all(signed)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(
        f"FAILED match {signed.ended.id}: chain: version 1: leaf 0 of the store's "
        f"transparency log, the creation of match {signed.ended.id} (jungle_speed): the "
        "stored first event is not the one logged"
    )
    result = verify_all(signed, kept)
    assert result.exit_code == 1, result.output
    found = failures(result)
    assert len(found) == 2, found
    assert found[0].startswith(
        f"FAILED checkpoint: leaf 0, the creation of match {signed.ended.id} (jungle_speed): "
        "the stored first event is not the one logged"
    )
    assert found[0].endswith("the match was replaced")
    assert "the match was" in found[1] and f"the end of match {signed.ended.id}" in found[1]


def test_a_replaced_match_with_its_leaves_rewritten_changes_the_root(
    signed: Signed, kept: Path
) -> None:
    replace_match(signed.db, signed.key, signed.ended.id, signed.other.id)
    relog(signed.db, signed.ended.id)
    assert verify_all(signed).exit_code == 0  # the store agrees with itself
    result = verify_all(signed, kept)
    assert result.exit_code == 1, result.output
    assert failures(result)[0].startswith(
        "FAILED checkpoint: the store's transparency log no longer gives the checkpoint's "
        "root at size 5"
    )


def test_a_checkpoint_altered_or_signed_by_another_key_is_refused(
    signed: Signed, kept: Path, tmp_path: Path
) -> None:
    data: dict[str, Any] = json.loads(kept.read_text())
    data["tree_size"] = 4
    altered = tmp_path / "altered.checkpoint"
    altered.write_text(json.dumps(data))
    result = verify_all(signed, altered)
    assert result.exit_code == 2
    assert "is not signed by the key it names" in result.output

    other = load_or_create(tmp_path / "other.key")
    key = other.public_bytes.hex()
    result = run(signed.db, "verify", "--all", "--checkpoint", kept, "--key", key)
    assert result.exit_code == 2
    assert f"not by the --key given ({other.fingerprint})" in result.output

    result = run(signed.db, "verify", signed.ended.id, "--checkpoint", kept)
    assert result.exit_code == 2
    assert "--checkpoint holds the whole store to a checkpoint: use --all" in result.output


def test_two_checkpoints_of_a_growing_log_are_consistent(
    signed: Signed, kept: Path, tmp_path: Path
) -> None:
    arena = open_store(signed.db)
    try:
        signed_match(arena, signed.key.signer(), players=2, max_events=100_000)
    finally:
        arena.close()
    later = tmp_path / "later.checkpoint"
    assert sign_checkpoint(signed, later).tree_size == 7
    result = run(signed.db, "checkpoint", "consistency", kept, later)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"OK {later} (7 leaves) extends {kept} (5 leaves)")
    # The later checkpoint alone holds the store as well.
    assert verify_all(signed, later).exit_code == 0


def test_a_log_rewritten_between_two_checkpoints_is_inconsistent(
    signed: Signed, kept: Path, tmp_path: Path
) -> None:
    replace_match(signed.db, signed.key, signed.ended.id, signed.other.id)
    relog(signed.db, signed.ended.id)
    rewritten = tmp_path / "rewritten.checkpoint"
    sign_checkpoint(signed, rewritten)  # signed over the rewritten log, by the same key
    assert verify_all(signed, rewritten).exit_code == 0  # consistent with itself
    result = run(signed.db, "checkpoint", "consistency", kept, rewritten)
    assert result.exit_code == 1, result.output
    assert result.stdout == (
        f"INCONSISTENT {kept} and {rewritten}: the log of 5 leaves signed in {rewritten} "
        f"does not begin with the log of 5 leaves signed in {kept}: the log was rewritten "
        "between them\n"
    )


def test_a_store_from_before_the_log_is_covered_once_its_matches_are_logged(
    signed: Signed, tmp_path: Path
) -> None:
    """A store written by a server without the log: its log is empty, so a checkpoint
    covers none of its matches, until `totem log-matches` appends their leaves."""
    from entrypoints.totem import main as totem

    execute(signed.db, "DELETE FROM stored_events WHERE originator_id = ?", TRANSPARENCY_LOG_ID.hex)
    empty = tmp_path / "empty.checkpoint"
    assert sign_checkpoint(signed, empty).tree_size == 0
    result = verify_all(signed, empty)
    assert result.exit_code == 0, result.output
    assert "its 0 matches still give" in result.stdout

    logged = CliRunner().invoke(totem, ["log-matches", "--db", str(signed.db)])
    assert logged.exit_code == 0, logged.output
    assert "5 leaves appended to the transparency log" in logged.output
    again = CliRunner().invoke(totem, ["log-matches", "--db", str(signed.db)])
    assert "0 leaves appended" in again.output

    later = tmp_path / "later.checkpoint"
    assert sign_checkpoint(signed, later).tree_size == 5
    assert run(signed.db, "checkpoint", "consistency", empty, later).exit_code == 0
    assert verify_all(signed, later).exit_code == 0
    execute(
        signed.db,
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version > 3",
        signed.ended.id.hex,
    )
    result = verify_all(signed, later)
    assert result.exit_code == 1
    assert "(the match was truncated)" in result.stdout


def test_bad_keys_and_foreign_checkpoints_are_clear_errors(
    signed: Signed, kept: Path, tmp_path: Path
) -> None:
    not_a_key = tmp_path / "not.key"
    not_a_key.write_text("hello")
    result = run(signed.db, "checkpoint", "sign", "--key-file", not_a_key, "-o", tmp_path / "x")
    assert result.exit_code == 2
    assert f"--key-file {not_a_key}: not an unencrypted PEM private key" in result.output
    assert not (tmp_path / "x").exists()

    other = load_or_create(tmp_path / "other.key")
    foreign = tmp_path / "foreign.checkpoint"
    made = run(signed.db, "checkpoint", "sign", "--key-file", other.path, "-o", foreign)
    assert made.exit_code == 0, made.output
    result = run(signed.db, "checkpoint", "consistency", kept, foreign)
    assert result.exit_code == 2
    assert "are signed by different keys" in result.output
    assert "not checkpoints of one log" in result.output


def test_a_bundle_is_proven_against_a_checkpoint_without_the_store(
    signed: Signed, kept: Path, tmp_path: Path
) -> None:
    proofs, bundle = tmp_path / "ended.proof", tmp_path / "ended.jsonl"
    made = run(
        signed.db, "checkpoint", "prove", signed.ended.id, "--checkpoint", kept, "-o", proofs
    )
    assert made.exit_code == 0, made.output
    assert "2 inclusion proof(s)" in made.output
    assert run(signed.db, "export", signed.ended.id, "-o", bundle).exit_code == 0

    elsewhere = tmp_path / "no-store.db"  # the judge has no store
    key = signed.key.public_bytes.hex()
    checked = ("checkpoint", "included", bundle, "--checkpoint", kept, "--proof", proofs)
    result = run(elsewhere, *checked, "--key", key)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"OK leaf 0: the creation of match {signed.ended.id} (jungle_speed) is in the "
        "checkpoint's tree",
        f"OK leaf 1: the end of match {signed.ended.id} at version {signed.ended.version} is "
        "in the checkpoint's tree",
        f"OK match {signed.ended.id} (bundle {bundle}) against {kept} (5 leaves, signed by "
        f"{signed.key.fingerprint}): the match logged",
    ]

    # The proofs of one match do not pass for another's bundle.
    other = tmp_path / "other.jsonl"
    assert run(signed.db, "export", signed.other.id, "-o", other).exit_code == 0
    result = run(
        elsewhere, "checkpoint", "included", other, "--checkpoint", kept, "--proof", proofs
    )
    assert result.exit_code == 2
    assert f"the proof file is of match {signed.ended.id}, not {signed.other.id}" in result.output


def test_a_replaced_or_truncated_match_is_not_the_one_its_proofs_name(
    signed: Signed, kept: Path, tmp_path: Path
) -> None:
    proofs = tmp_path / "ended.proof"
    made = run(
        signed.db, "checkpoint", "prove", signed.ended.id, "--checkpoint", kept, "-o", proofs
    )
    assert made.exit_code == 0, made.output
    included = ("checkpoint", "included", signed.ended.id, "--checkpoint", kept, "--proof", proofs)

    execute(
        signed.db,
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version > 50",
        signed.ended.id.hex,
    )
    result = run(signed.db, *included)
    assert result.exit_code == 1, result.output
    assert (
        "FAILED leaf 1: the log recorded the end of this match, but its events stop at version "
        "50 without MatchEnded (the match was truncated)"
    ) in result.stdout

    replace_match(signed.db, signed.key, signed.ended.id, signed.other.id)
    result = run(signed.db, *included)
    assert result.exit_code == 1, result.output
    assert (
        f"FAILED leaf 0: the creation of match {signed.ended.id} (jungle_speed), as these "
        "events give it, is not the leaf the checkpoint's tree holds there: the match is not "
        "the one logged"
    ) in result.stdout
    assert result.stdout.splitlines()[-1].endswith("not the match logged")
