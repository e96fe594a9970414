"""The tamper matrix: every change to a signed store or to a bundle that the store and the
bundle alone can show, each caught by ``verify --key`` with the message a judge reads.

The changes of one event (a flipped byte, a deleted or a swapped event, a forged seed or
deal) are test_replay_signature.py's ``DAMAGES``; here they are run again beside the
others, and the rest are added: the end of a match cut off, a stamp forged and the chain
rewritten, the match re-signed with another key, its log entry deleted, a bundle's
header relabelled or its count changed, and a bundle naming code to import. What only an
anchor outside the store can show (a store rewritten whole and re-signed with the
server's own key) is said in docs/audit.md, not tested here.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from uuid import UUID, uuid4

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from replay_support import delete_logged, forge, open_store, relog, truncate
from test_replay_signature import DAMAGES, Signed, as_json, ended_event, run
from test_replay_signature import signed as signed

from domain.kernel.match import event_name
from domain.kernel.signing import signed_message

Damage = Callable[[Signed], None]


def _stamped(signed: Signed, nth: int = 5) -> int:
    arena = open_store(signed.db)
    try:
        events = arena.events_after(signed.ended.id)
    finally:
        arena.close()
    return [e.originator_version for e in events if event_name(e) == "Revealed"][nth]


def forge_stamp(signed: Signed) -> None:
    """A reveal's receive stamp one millisecond later, and the chain rewritten after it."""
    version = _stamped(signed)
    arena = open_store(signed.db)
    try:
        event = arena.events_after(signed.ended.id, version - 1)[0]
    finally:
        arena.close()
    stamp = dict(event.stamp, wall_ns=event.stamp["wall_ns"] + 1_000_000)
    forge(signed.db, signed.ended.id, version, stamp=stamp)


def re_sign(signed: Signed) -> None:
    """A forged stamp, the chain rewritten, and the end signed again by another key."""
    forge_stamp(signed)
    ended = ended_event(signed.db, signed.ended.id)
    other = Ed25519PrivateKey.generate()
    message = signed_message(signed.ended.id, ended.originator_version, ended.digest)
    raw = other.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    forge(
        signed.db,
        signed.ended.id,
        ended.originator_version,
        signature=other.sign(message).hex(),
        public_key=raw.hex(),
    )


def _store_damage(name: str) -> Damage:
    do = DAMAGES[name][0]
    return lambda signed: do(signed.db, signed.ended.id)


#: name -> (damage, first bad version (None: any), words of the report).
STORE: dict[str, tuple[Damage, Callable[[Signed], int] | None, str]] = {
    "flipped field": (_store_damage("changed byte"), None, "does not match its digest"),
    "deleted event": (
        _store_damage("deleted event"),
        lambda s: 20,
        "missing: the store has no event at version 20",
    ),
    "swapped events": (
        _store_damage("swapped events"),
        lambda s: 20,
        "was recorded as version 21, not 20: events were reordered",
    ),
    "truncated end": (
        lambda s: truncate(s.db, s.ended.id, s.ended.version - 3),
        lambda s: s.ended.version - 2,
        "the store's summary of this match records {events} events, status ended "
        "(completed), but the store holds events up to version {cut} only: the last events "
        "were removed",
    ),
    "forged seed": (_store_damage("bad seed"), None, "the revealed seed hashes to"),
    "forged deal": (
        _store_damage("bad draw"),
        None,
        "the recorded deck is not the shuffle re-derived from the revealed seed and the entropies",
    ),
    "forged stamp re-chained": (
        forge_stamp,
        lambda s: s.ended.version,
        "the server signature in MatchEnded is not valid for the match digest",
    ),
    "re-signed with another key": (
        re_sign,
        lambda s: s.ended.version,
        "MatchEnded is signed by key",
    ),
    "MatchLogged deleted": (
        lambda s: delete_logged(s.db, s.ended.id),
        lambda s: 1,
        "the store's log of matches has no entry for this match (its MatchLogged record "
        "was deleted)",
    ),
}


@pytest.mark.parametrize("name", sorted(STORE))
def test_each_tampering_of_the_store_fails_verify_key_with_its_message(
    signed: Signed, name: str
) -> None:
    damage, first, words = STORE[name]
    damage(signed)
    result = run(signed.db, "verify", signed.ended.id, "--key", signed.key.public_bytes.hex())
    assert result.exit_code == 1, result.output
    head = result.stdout.splitlines()[0]
    prefix = f"FAILED match {signed.ended.id}: first bad version "
    assert head.startswith(prefix), head
    if first is not None:
        assert head.startswith(f"{prefix}{first(signed)}:"), head
    expected = words.format(events=signed.ended.version, cut=signed.ended.version - 3)
    assert expected in result.stdout, result.stdout


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


# ---- bundles ---------------------------------------------------------------------


def export(signed: Signed, path: Path) -> list[dict[str, object]]:
    result = run(signed.db, "export", signed.ended.id, "-o", path)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(path: Path, lines: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_relabelled_header_fails_naming_both_matches(signed: Signed, tmp_path: Path) -> None:
    bundle = tmp_path / "m.jsonl"
    lines = export(signed, bundle)
    other = uuid4()
    lines[0]["match_id"] = str(other)
    write(bundle, lines)
    result = run(signed.db, "verify", bundle, "--key", signed.key.public_bytes.hex())
    assert result.exit_code == 1, result.output
    assert f"OK match {other}" not in result.stdout
    assert result.stdout.startswith(
        f"FAILED match {other}: first bad version 1: the bundle's header names match "
        f"{other}, but the event at version 1 is of match {signed.ended.id}: the header and "
        "the events disagree"
    )


@pytest.mark.parametrize("change", [-1, +1])
def test_a_changed_count_fails(signed: Signed, tmp_path: Path, change: int) -> None:
    bundle = tmp_path / "m.jsonl"
    lines = export(signed, bundle)
    events = signed.ended.version
    lines[0]["events"] = events + change
    write(bundle, lines)
    result = run(signed.db, "verify", bundle)
    assert result.exit_code == 1, result.output
    said = events + change
    if change < 0:
        words = f"version {said + 1}: the bundle's header counts {said} events, but the bundle holds {events}: lines were added, or the count was changed"  # noqa: E501
    else:
        words = f"version {events + 1}: missing: the bundle's header counts {said} events, but the bundle holds {events}: lines were removed"  # noqa: E501
    assert f"first bad {words}" in result.stdout


def test_a_cut_off_bundle_with_its_count_fails(signed: Signed, tmp_path: Path) -> None:
    bundle = tmp_path / "m.jsonl"
    lines = export(signed, bundle)
    write(bundle, lines[:-3])
    result = run(signed.db, "verify", bundle)
    assert result.exit_code == 1, result.output
    assert (
        f"first bad version {signed.ended.version - 2}: missing: the bundle's header counts "
        f"{signed.ended.version} events, but the bundle holds {signed.ended.version - 3}"
    ) in result.stdout


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """A module on the path that leaves a file behind if it is ever imported."""
    name = f"hostile_{uuid4().hex[:8]}"
    marker = tmp_path / "imported"
    (tmp_path / f"{name}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "class Thing:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return name, marker


def test_a_hostile_topic_is_refused_and_nothing_is_imported(
    signed: Signed, tmp_path: Path, hostile: tuple[str, Path]
) -> None:
    name, marker = hostile
    bundle = tmp_path / "m.jsonl"
    lines = export(signed, bundle)
    lines[4]["topic"] = f"{name}:Thing"
    write(bundle, lines)
    result = run(signed.db, "verify", bundle)
    assert result.exit_code == 1, result.output
    assert (
        f"first bad version 4: the stored event cannot be decoded: line 5: the topic "
        f"'{name}:Thing' is not an event of any game: refused, nothing was imported"
    ) in result.stdout
    shown = run(signed.db, "show", bundle)
    assert shown.exit_code == 2 and "line 5: the topic" in shown.output
    assert not marker.exists() and name not in sys.modules


def test_a_hostile_match_class_in_the_creation_is_refused(
    signed: Signed, tmp_path: Path, hostile: tuple[str, Path]
) -> None:
    name, marker = hostile
    bundle = tmp_path / "m.jsonl"
    lines = export(signed, bundle)
    hashed = lines[1]["hashed"]
    assert isinstance(hashed, dict)
    hashed["originator_topic"] = f"{name}:Thing"
    write(bundle, lines)
    result = run(signed.db, "verify", bundle)
    assert result.exit_code == 1, result.output
    assert (
        f"first bad version 1: the stored event cannot be decoded: line 2: the match class "
        f"'{name}:Thing' is not a game's: refused, nothing was imported"
    ) in result.stdout
    assert not marker.exists() and name not in sys.modules


def test_a_hostile_topic_in_a_forks_history_is_refused(
    signed: Signed, tmp_path: Path, hostile: tuple[str, Path]
) -> None:
    """A Forked event rebuilds its origin's state from the history it carries: the
    topics there are looked up among the games' classes too."""
    from domain.kernel.fork import Forked
    from domain.kernel.topics import UnknownTopic

    name, marker = hostile
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
    forge_stamp(signed)
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
