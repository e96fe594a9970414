"""The tamper matrix: every change to a signed store or to a bundle, one row each, with
what catches it and the message a judge reads (docs/audit.md, "The tamper matrix").

Each row tampers with a store of three signed matches (two ended, one in play) after the
judge kept, outside it, what an honest server gave out: a checkpoint of its transparency
log, a player's receipt of the ended match's last version, and the inclusion proofs of
that match in the checkpoint. What catches it is one of ``CATCHERS``: ``verify --key``
alone (the store or bundle shows it), or an anchor (``--receipt``, ``--checkpoint``,
``checkpoint included``). A row caught only by an anchor is one where the tamperer also
rewrote every record the store keeps beside the events; the test then shows that the
same command without the anchor passes, so the anchor is what catches it.

The damages of one event (a flipped byte, a deleted or a swapped event, a forged seed or
deal) are test_replay_signature.py's ``DAMAGES``, run here beside the others.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import pytest
from click.testing import Result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from replay_support import (
    delete_logged,
    delete_match,
    forge_stamp,
    re_sign,
    relog,
    replace_match,
    truncate,
    unlog_end,
)
from test_replay_checkpoint import sign_checkpoint
from test_replay_receipts import receipt_file
from test_replay_signature import DAMAGES, Signed, as_json, run
from test_replay_signature import signed as signed

from replay.receipts import read_receipt
from storage.keys import ServerKey


@dataclass
class Case:
    """The signed store, and what the judge kept outside it before it was tampered with."""

    signed: Signed
    tmp: Path
    checkpoint: Path
    receipt: Path
    proofs: Path
    #: The bundle a bundle row writes (and the judge is given).
    bundle: Path
    #: A module on the path that leaves ``marker`` behind if it is ever imported.
    hostile: str
    marker: Path

    @property
    def match(self) -> UUID:
        return self.signed.ended.id

    @property
    def key(self) -> str:
        return self.signed.key.public_bytes.hex()

    def words(self) -> dict[str, object]:
        end = self.signed.ended.version
        return {
            "match": self.match,
            "other": self.signed.other.id,
            "end": end,
            "cut": end - 3,
            "after": end - 2,
            "fingerprint": self.signed.key.fingerprint,
            "bundle": self.bundle,
            "hostile": self.hostile,
            "issued": read_receipt(self.receipt).issued_at,
        }


@pytest.fixture
def case(signed: Signed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Case:
    checkpoint = tmp_path / "kept.checkpoint"
    assert sign_checkpoint(signed, checkpoint).tree_size == 5
    proofs = tmp_path / "ended.proof"
    made = run(
        signed.db, "checkpoint", "prove", signed.ended.id, "--checkpoint", checkpoint, "-o", proofs
    )
    assert made.exit_code == 0, made.output
    receipt = receipt_file(
        signed.db, signed.ended, signed.ended.version, signed.key.signer(), tmp_path / "r.json"
    )
    hostile = f"hostile_{signed.ended.id.hex[:8]}"
    marker = tmp_path / "imported"
    (tmp_path / f"{hostile}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "class Thing:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return Case(
        signed, tmp_path, checkpoint, receipt, proofs, tmp_path / "m.jsonl", hostile, marker
    )


# ---- the tamperings ----------------------------------------------------------------


def _damage(name: str) -> Callable[[Case], None]:
    do = DAMAGES[name][0]
    return lambda case: do(case.signed.db, case.match)


def cut_end(case: Case) -> None:
    """The last three events removed, MatchEnded included."""
    truncate(case.signed.db, case.match, case.signed.ended.version - 3)


def cut_end_and_summary(case: Case) -> None:
    truncate(case.signed.db, case.match, case.signed.ended.version - 3, summary_too=True)


def cut_end_summary_and_log(case: Case) -> None:
    cut_end_and_summary(case)
    unlog_end(case.signed.db, case.match)


def forged_stamp(case: Case) -> None:
    forge_stamp(case.signed.db, case.match)


def re_signed_by(key: Callable[[Case], ServerKey]) -> Callable[[Case], None]:
    """A forged stamp, the chain rewritten, and the end signed again by ``key``."""

    def tamper(case: Case) -> None:
        forge_stamp(case.signed.db, case.match)
        re_sign(case.signed.db, case.match, key(case))

    return tamper


another_key = re_signed_by(lambda case: ServerKey(Ed25519PrivateKey.generate(), None, True))
own_key = re_signed_by(lambda case: case.signed.key)


def own_key_and_log(case: Case) -> None:
    own_key(case)
    relog(case.signed.db, case.match)


def replaced(case: Case) -> None:
    """The ended match's events replaced by the other match's, re-signed by the store's
    own key, its summary row rewritten."""
    replace_match(case.signed.db, case.signed.key, case.match, case.signed.other.id)


def replaced_and_log(case: Case) -> None:
    replaced(case)
    relog(case.signed.db, case.match)


def deleted_match(case: Case) -> None:
    delete_match(case.signed.db, case.match)


def deleted_logged(case: Case) -> None:
    delete_logged(case.signed.db, case.match)


# Bundles: exported from the store, then edited as a file.


def export(case: Case) -> list[dict[str, object]]:
    result = run(case.signed.db, "export", case.match, "-o", case.bundle)
    assert case.bundle.is_file(), result.output
    return [json.loads(line) for line in case.bundle.read_text().splitlines()]


def write(case: Case, lines: list[dict[str, object]]) -> None:
    case.bundle.write_text("".join(json.dumps(line) + "\n" for line in lines))


def bundle(edit: Callable[[Case, list[dict[str, object]]], None]) -> Callable[[Case], None]:
    def tamper(case: Case) -> None:
        lines = export(case)
        edit(case, lines)
        write(case, lines)

    return tamper


def exported(store_tamper: Callable[[Case], None]) -> Callable[[Case], None]:
    """The bundle of a store tampered with (and agreeing with itself)."""

    def tamper(case: Case) -> None:
        store_tamper(case)
        export(case)

    return tamper


def relabel(case: Case, lines: list[dict[str, object]]) -> None:
    lines[0]["match_id"] = str(case.signed.other.id)


def count(change: int) -> Callable[[Case, list[dict[str, object]]], None]:
    def edit(case: Case, lines: list[dict[str, object]]) -> None:
        lines[0]["events"] = case.signed.ended.version + change

    return edit


def cut_lines(case: Case, lines: list[dict[str, object]]) -> None:
    del lines[-3:]


def cut_lines_and_count(case: Case, lines: list[dict[str, object]]) -> None:
    cut_lines(case, lines)
    lines[0]["events"] = len(lines) - 1


def hostile_topic(case: Case, lines: list[dict[str, object]]) -> None:
    lines[4]["topic"] = f"{case.hostile}:Thing"


def hostile_match_class(case: Case, lines: list[dict[str, object]]) -> None:
    hashed = lines[1]["hashed"]
    assert isinstance(hashed, dict)
    hashed["originator_topic"] = f"{case.hostile}:Thing"


# ---- what catches them -------------------------------------------------------------

KEY = "verify --key"
RECEIPT = "verify --receipt"
CHECKPOINT = "verify --all --checkpoint"
INCLUDED = "checkpoint included"


def catch(case: Case, catcher: str, target: str, anchored: bool = True) -> Result:
    """Run ``catcher`` on the store's ended match or on the bundle (``target``); with
    ``anchored`` False, the same command without its anchor."""
    subject: object = case.bundle if target == "bundle" else case.match
    if catcher == CHECKPOINT:
        anchor: list[object] = ["--checkpoint", case.checkpoint] if anchored else []
        return run(case.signed.db, "verify", "--all", "--key", case.key, *anchor)
    if catcher == INCLUDED and anchored:
        anchor = ["--checkpoint", case.checkpoint, "--proof", case.proofs]
        return run(case.signed.db, "checkpoint", "included", subject, *anchor, "--key", case.key)
    anchor = ["--receipt", case.receipt] if catcher == RECEIPT and anchored else []
    return run(case.signed.db, "verify", subject, "--key", case.key, *anchor)


@dataclass(frozen=True)
class Row:
    tamper: Callable[[Case], None]
    target: str  # "store" or "bundle"
    catcher: str
    #: What the judge reads (formatted with :meth:`Case.words`).
    says: str
    #: Only the anchor catches it: without it, the same command passes.
    anchor_only: bool = False


FIRST = "FAILED match {match}: first bad version"
TRUNCATED_LEAF = (
    "leaf 1 of the store's transparency log, the end of match {match} at version {end}: the "
    "store holds only {cut} events, the log says it ended at version {end} (the match was "
    "truncated)"
)
#: The receipt's finding: the events after its version were removed, or those before
#: it are not the history the server signed (``{where}``: "store" or "bundle").
RECEIPT_CUT = (
    f"{FIRST} {{end}}: the server's receipt for version {{end}} (signed {{issued}}): the "
    "{where} holds only {cut} events of the match: events after version {cut} were removed"
)
RECEIPT_CHANGED = (
    f"{FIRST} {{end}}: the server's receipt for version {{end}} (signed {{issued}}): the "
    "{where}'s events 1 to {end} are not the history the server signed: they were changed, "
    "or the match was replaced"
)

MATRIX: dict[str, Row] = {
    # ---- the store -----------------------------------------------------------------
    "flipped byte": Row(_damage("changed byte"), "store", KEY, "does not match its digest"),
    "deleted event": Row(
        _damage("deleted event"),
        "store",
        KEY,
        f"{FIRST} 20: missing: the store has no event at version 20",
    ),
    "swapped events": Row(
        _damage("swapped events"),
        "store",
        KEY,
        "was recorded as version 21, not 20: events were reordered",
    ),
    "truncated end": Row(
        cut_end,
        "store",
        KEY,
        f"{FIRST} {{after}}: missing: the store's summary of this match records {{end}} "
        "events, status ended (completed), but the store holds events up to version {cut} "
        "only: the last events were removed",
    ),
    "truncated end, summary rewritten": Row(
        cut_end_and_summary, "store", KEY, f"{FIRST} {{after}}: missing: {TRUNCATED_LEAF}"
    ),
    "truncated end, summary rewritten (checkpoint)": Row(
        cut_end_and_summary,
        "store",
        CHECKPOINT,
        "FAILED checkpoint: leaf 1, the end of match {match} at version {end}: the store "
        "holds only {cut} events, the log says it ended at version {end} (the match was "
        "truncated)",
    ),
    "truncated end, summary and log rewritten": Row(
        cut_end_summary_and_log,
        "store",
        RECEIPT,
        RECEIPT_CUT,
        anchor_only=True,
    ),
    "truncated end, summary and log rewritten (checkpoint)": Row(
        cut_end_summary_and_log,
        "store",
        CHECKPOINT,
        "FAILED checkpoint: the store's transparency log holds 4 leaves, the checkpoint 5: "
        "leaves were deleted from the log",
        anchor_only=True,
    ),
    "forged seed": Row(_damage("bad seed"), "store", KEY, "the revealed seed hashes to"),
    "forged deal": Row(
        _damage("bad draw"),
        "store",
        KEY,
        "the recorded deck is not the shuffle re-derived from the revealed seed and the entropies",
    ),
    "forged stamp re-chained": Row(
        forged_stamp,
        "store",
        KEY,
        f"{FIRST} {{end}}: the server signature in MatchEnded is not valid for the match digest",
    ),
    "re-signed with another key": Row(
        another_key, "store", KEY, f"{FIRST} {{end}}: MatchEnded is signed by key"
    ),
    "re-signed with the store's own key": Row(
        own_key,
        "store",
        KEY,
        f"{FIRST} {{end}}: leaf 1 of the store's transparency log, the end of match {{match}} "
        "at version {end}: its MatchEnded is not the one logged",
    ),
    "re-signed with the store's own key, log rewritten": Row(
        own_key_and_log, "store", RECEIPT, RECEIPT_CHANGED, anchor_only=True
    ),
    "re-signed with the store's own key, log rewritten (checkpoint)": Row(
        own_key_and_log,
        "store",
        CHECKPOINT,
        "FAILED checkpoint: the store's transparency log no longer gives the checkpoint's "
        "root at size 5",
        anchor_only=True,
    ),
    "whole match replaced": Row(
        replaced,
        "store",
        KEY,
        f"{FIRST} 1: leaf 0 of the store's transparency log, the creation of match "
        "{match} (jungle_speed): the stored first event is not the one logged",
    ),
    "whole match replaced, log rewritten": Row(
        replaced_and_log, "store", RECEIPT, RECEIPT_CHANGED, anchor_only=True
    ),
    "whole match replaced, log rewritten (checkpoint)": Row(
        replaced_and_log,
        "store",
        CHECKPOINT,
        "FAILED checkpoint: the store's transparency log no longer gives the checkpoint's "
        "root at size 5",
        anchor_only=True,
    ),
    "whole match deleted": Row(
        deleted_match,
        "store",
        CHECKPOINT,
        "FAILED checkpoint: leaf 0, the creation of match {match} (jungle_speed): the match "
        "is no longer in the store (deleted)",
        anchor_only=True,
    ),
    "MatchLogged deleted": Row(
        deleted_logged,
        "store",
        KEY,
        f"{FIRST} 1: the store's log of matches has no entry for this match (its "
        "MatchLogged record was deleted)",
    ),
    # ---- a bundle ------------------------------------------------------------------
    "bundle header relabelled": Row(
        bundle(relabel),
        "bundle",
        KEY,
        "FAILED match {other}: first bad version 1: the bundle's header names match "
        "{other}, but the event at version 1 is of match {match}: the header and the events "
        "disagree",
    ),
    "bundle count lowered": Row(
        bundle(count(-1)),
        "bundle",
        KEY,
        "first bad version {end}: the bundle's header counts {end_minus_one} events, but the "
        "bundle holds {end}: lines were added, or the count was changed",
    ),
    "bundle count raised": Row(
        bundle(count(+1)),
        "bundle",
        KEY,
        "first bad version {end_plus_one}: missing: the bundle's header counts "
        "{end_plus_one} events, but the bundle holds {end}: lines were removed",
    ),
    "bundle lines cut off": Row(
        bundle(cut_lines),
        "bundle",
        KEY,
        "first bad version {after}: missing: the bundle's header counts {end} events, but "
        "the bundle holds {cut}: lines were removed",
    ),
    "bundle lines cut off, count rewritten": Row(
        bundle(cut_lines_and_count),
        "bundle",
        RECEIPT,
        RECEIPT_CUT,
        anchor_only=True,
    ),
    "bundle lines cut off, count rewritten (checkpoint)": Row(
        bundle(cut_lines_and_count),
        "bundle",
        INCLUDED,
        "FAILED leaf 1: the log recorded the end of this match, but its events stop at "
        "version {cut} without MatchEnded (the match was truncated)",
        anchor_only=True,
    ),
    "bundle re-signed with the store's own key": Row(
        exported(own_key_and_log), "bundle", RECEIPT, RECEIPT_CHANGED, anchor_only=True
    ),
    "bundle re-signed with the store's own key (checkpoint)": Row(
        exported(own_key_and_log),
        "bundle",
        INCLUDED,
        "FAILED leaf 1: the end of match {match} at version {end}, as these events give it, "
        "is not the leaf the checkpoint's tree holds there: the match is not the one logged",
        anchor_only=True,
    ),
    "bundle of a whole match replaced": Row(
        exported(replaced_and_log), "bundle", RECEIPT, RECEIPT_CHANGED, anchor_only=True
    ),
    "bundle of a whole match replaced (checkpoint)": Row(
        exported(replaced_and_log),
        "bundle",
        INCLUDED,
        "FAILED leaf 0: the creation of match {match} (jungle_speed), as these events give "
        "it, is not the leaf the checkpoint's tree holds there: the match is not the one "
        "logged",
        anchor_only=True,
    ),
    "hostile topic": Row(
        bundle(hostile_topic),
        "bundle",
        KEY,
        "first bad version 4: the stored event cannot be decoded: line 5: the topic "
        "'{hostile}:Thing' is not an event of any game: refused, nothing was imported",
    ),
    "hostile match class": Row(
        bundle(hostile_match_class),
        "bundle",
        KEY,
        "first bad version 1: the stored event cannot be decoded: line 2: the match class "
        "'{hostile}:Thing' is not a game's: refused, nothing was imported",
    ),
}


@pytest.mark.parametrize("name", list(MATRIX))
def test_each_tampering_is_caught_with_the_message_a_judge_reads(case: Case, name: str) -> None:
    row = MATRIX[name]
    row.tamper(case)
    if row.anchor_only:
        alone = catch(case, row.catcher, row.target, anchored=False)
        assert alone.exit_code == 0, alone.output
    result = catch(case, row.catcher, row.target)
    assert result.exit_code == 1, result.output
    end = case.signed.ended.version
    where = row.target
    says = row.says.format(**case.words(), where=where, end_minus_one=end - 1, end_plus_one=end + 1)
    assert says in result.stdout, result.stdout
    assert not case.marker.exists() and case.hostile not in sys.modules


def test_a_hostile_bundle_cannot_be_shown_either(case: Case) -> None:
    bundle(hostile_topic)(case)
    shown = run(case.signed.db, "show", case.bundle)
    assert shown.exit_code == 2 and "line 5: the topic" in shown.output
    assert not case.marker.exists() and case.hostile not in sys.modules


# ---- around the matrix: what list, show and verify --all say -------------------------


def test_a_cut_off_end_fails_verify_without_a_key_and_show_warns(signed: Signed) -> None:
    """The issue's case: dropping the last events (MatchEnded included) made the match
    look "playing"; the store's summary says it ended, so verify and show say otherwise."""
    truncate(signed.db, signed.ended.id, signed.ended.version - 3)
    code, report = as_json(signed.db, signed.ended.id)
    assert code == 1 and report["first_bad_version"] == signed.ended.version - 2
    assert report["checks"]["chain"]["status"] == "failed"
    shown = run(signed.db, "show", signed.ended.id)
    assert shown.exit_code == 1
    assert "Status:" in shown.stdout
    assert (
        f"warning: match {signed.ended.id} fails verification at version "
        f"{signed.ended.version - 2}: missing: the store's summary of this match records"
    ) in shown.stderr
    listed = run(signed.db, "list")
    assert listed.exit_code == 0
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith(str(signed.ended.id))]
    cut = signed.ended.version - 3
    assert f"  playing  3/3 players: player0, player1, player2  {cut} events" in line
    assert line.endswith(
        f"FAILS VERIFICATION at version {signed.ended.version - 2}: missing: the store's "
        f"summary of this match records {signed.ended.version} events, status ended "
        f"(completed), but the store holds events up to version {signed.ended.version - 3} "
        "only: the last events were removed"
    )
    intact = [x for x in listed.stdout.splitlines() if x.startswith(str(signed.other.id))]
    assert "FAILS" not in intact[0]


def test_a_cut_off_end_whose_summary_row_was_rewritten_is_still_marked_by_list(
    signed: Signed,
) -> None:
    """The summary row now says "playing", as the events do; the transparency log's end
    leaf of the match still says it ended."""
    cut = signed.ended.version - 3
    truncate(signed.db, signed.ended.id, cut, summary_too=True)
    listed = run(signed.db, "list")
    assert listed.exit_code == 0
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith(str(signed.ended.id))]
    assert "  playing  " in line
    assert line.endswith(
        f"FAILS VERIFICATION at version {cut + 1}: missing: leaf 1 of the store's transparency "
        f"log, the end of match {signed.ended.id} at version {signed.ended.version}: the store "
        f"holds only {cut} events, the log says it ended at version {signed.ended.version} "
        "(the match was truncated)"
    )
    assert listed.stdout.count("FAILS VERIFICATION") == 1  # the other matches hold


def test_verify_all_reports_a_match_whose_log_entry_was_deleted(signed: Signed) -> None:
    delete_logged(signed.db, signed.ended.id)
    result = run(signed.db, "verify", "--all")
    assert result.exit_code == 1, result.output
    assert (
        f"FAILED match {signed.ended.id}: chain: version 1: the store's log of matches has "
        "no entry for this match (its MatchLogged record was deleted)"
    ) in result.stdout
    assert "FAILED 3 matches verified: 2 OK, 1 failed" in result.stdout


def test_verify_all_reports_a_logged_match_whose_events_are_gone(signed: Signed) -> None:
    truncate(signed.db, signed.other.id, 0)
    result = run(signed.db, "verify", "--all")
    assert result.exit_code == 1, result.output
    assert (
        f"FAILED match {signed.other.id}: unreadable: the store's log of matches lists this "
        "match at position 2, but the store holds no event of it: its events were deleted"
    ) in result.stdout


def test_verify_all_reports_a_summary_left_of_a_deleted_match(signed: Signed) -> None:
    delete_logged(signed.db, signed.other.id)
    truncate(signed.db, signed.other.id, 0)
    result = run(signed.db, "verify", "--all")
    assert result.exit_code == 1, result.output
    assert (
        f"FAILED match {signed.other.id}: unreadable: the store's summary of matches lists "
        f"this match (jungle_speed, {signed.other.version} events, status ended), but the "
        "store holds no event of it and its log has no entry for it: the match was deleted"
    ) in result.stdout
    assert "FAILED 3 matches verified: 2 OK, 1 failed" in result.stdout


def test_a_hostile_topic_in_a_forks_history_is_refused(case: Case) -> None:
    """A Forked event rebuilds its origin's state from the history it carries: the
    topics there are looked up among the games' classes too."""
    from domain.kernel.fork import Forked
    from domain.kernel.topics import UnknownTopic

    name, marker = case.hostile, case.marker
    forked = object.__new__(Forked)
    history = [{"topic": f"{name}:Thing", "fields": {}}]
    object.__setattr__(forked, "__dict__", {"history": history, "originator_id": UUID(int=1)})
    with pytest.raises(UnknownTopic, match="is not an event of any game"):
        forked.mutate(None)
    created = {"topic": "domain.kernel.fork:Forked", "fields": {"originator_topic": name}}
    object.__setattr__(forked, "__dict__", {"history": [created], "originator_id": UUID(int=1)})
    with pytest.raises(UnknownTopic, match="is not a game's"):
        forked.mutate(None)
    assert not marker.exists() and name not in sys.modules


# ---- the commands that show evidence warn ---------------------------------------------


SHOWING = {
    "show": [],
    "events": [],
    "at": ["30"],
    "step": ["--to", "30"],
    "explain": ["30"],
    "export": [],
}


@pytest.mark.parametrize("command", sorted(SHOWING))
def test_a_command_showing_a_forged_match_warns_and_exits_1(signed: Signed, command: str) -> None:
    forge_stamp(signed.db, signed.ended.id)
    relog(signed.db, signed.ended.id)  # the log agrees: the signature alone fails
    result = run(signed.db, command, signed.ended.id, *SHOWING[command])
    assert result.exit_code == 1, result.output
    assert result.stdout.strip(), "the evidence is still printed"
    assert result.stderr.strip().splitlines()[-1] == (
        f"warning: match {signed.ended.id} fails verification at version "
        f"{signed.ended.version}: the server signature in MatchEnded is not valid for the "
        "match digest by key "
        f"{signed.key.fingerprint}: the signature or the match was forged. What is shown above "
        "may be forged: `totem-replay verify` says more."
    )


@pytest.mark.parametrize("command", sorted(SHOWING))
def test_a_command_showing_an_intact_match_does_not_warn(signed: Signed, command: str) -> None:
    result = run(signed.db, command, signed.ended.id, *SHOWING[command])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr


def test_a_cut_off_end_whose_summary_row_was_deleted_fails_too(signed: Signed) -> None:
    """Deleting the summary row instead of rewriting it leaves the store disagreeing
    with itself: the log lists the match, the summary does not."""
    truncate(signed.db, signed.ended.id, signed.ended.version - 3)
    with sqlite3.connect(signed.db) as conn:
        conn.execute("DELETE FROM match_summaries WHERE match_id = ?", (signed.ended.id.hex,))
    result = run(signed.db, "verify", signed.ended.id)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(
        f"FAILED match {signed.ended.id}: first bad version 1: the store's summary of "
        "matches has no row for this match"
    )
