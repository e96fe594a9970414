"""Audit bundles: ``totem-replay export`` writes one match as JSON Lines, and every command
taking MATCH reads such a file exactly as the store. A bundle changed on its way (a
byte, a line removed, lines swapped) fails ``verify`` as the store damaged the same way
does (the hash chain, docs/audit.md)."""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

import pytest
from replay_support import (
    Run,
    Store,
    change_byte,
    delete_row,
    digit_offset,
    json_lines,
    open_store,
    stored_state,
)

from domain.kernel.chain import stored_event_digest
from replay.bundle import FORMAT, read_bundle
from replay.store import read_records


def export(run: Run, match_id: UUID, path: Path) -> Path:
    result = run("export", match_id, "-o", path)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    return path


@pytest.fixture
def bundle(run: Run, store: Store, tmp_path: Path) -> Path:
    """The ended match of the store, exported."""
    return export(run, store.ended.id, tmp_path / "ended.jsonl")


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_the_header_then_one_line_per_event(run: Run, store: Store, bundle: Path) -> None:
    header, *events = json_lines(bundle.read_text())
    assert header["format"] == FORMAT
    assert header["match_id"] == str(store.ended.id)
    assert header["game"] == "jungle_speed"
    assert header["events"] == store.ended.version == len(events)
    assert "exported_at" in header
    assert [e["version"] for e in events] == list(range(1, store.ended.version + 1))
    assert events[0]["topic"] == "domain.jungle_speed.match:JungleSpeed.Created"
    assert all(e["topic"].split(":")[1].endswith("." + e["name"]) for e in events[1:])


def test_to_standard_output_the_same_lines(run: Run, store: Store, bundle: Path) -> None:
    printed = run("export", str(store.ended.id)[:8])
    assert printed.exit_code == 0, printed.output
    # Only the time of the export differs.
    assert printed.stdout.splitlines()[1:] == bundle.read_text().splitlines()[1:]


def test_each_line_is_the_events_json_export_plus_the_topic_and_the_signature(
    run: Run, store: Store, bundle: Path
) -> None:
    exported = json_lines(run("events", store.ended.id, "--json").stdout)
    bundled = json_lines(bundle.read_text())[1:]
    extra = {"topic", "unhashed"}
    assert [{k: v for k, v in line.items() if k not in extra} for line in bundled] == exported
    ended = bundled[-1]
    assert ended["name"] == "MatchEnded"
    assert set(ended["unhashed"]) == {"signature", "public_key"}


def test_the_same_domain_events_as_the_store(store: Store, bundle: Path) -> None:
    arena = open_store(store.db)
    try:
        stored = read_records(arena, store.ended.id)
    finally:
        arena.close()
    rebuilt = read_bundle(bundle)
    assert [r.version for r in rebuilt] == [r.version for r in stored]
    for mine, theirs in zip(rebuilt, stored, strict=True):
        assert mine.error is None and mine.topic == theirs.topic
        assert type(mine.event) is type(theirs.event)
        assert vars(mine.event) == vars(theirs.event)
        assert stored_event_digest(mine.event) == mine.event.digest


@pytest.mark.parametrize("which", ["ended", "playing", "waiting"])
def test_commands_on_a_bundle_print_what_they_print_on_the_store(
    run: Run, store: Store, tmp_path: Path, which: str
) -> None:
    match = getattr(store, which)
    path = export(run, match.id, tmp_path / f"{which}.jsonl")
    middle = max(1, match.version // 2)
    for args in (
        ["show"],
        ["events"],
        ["events", "--json", "--from", "2", "--to", str(middle)],
        ["at", str(middle)],
        ["at", str(match.version), "--json"],
        ["at", str(match.version), "--seat", "0"],
        ["at", str(middle), "--spectator"],
        ["events", "--seat", "0"],
        ["step", "--to", str(middle)],
        ["step", "--script", "next; back; goto 1; last", "--spectator"],
        ["explain", str(match.version)],
        ["verify"],
    ):
        from_store = run(args[0], match.id, *args[1:])
        from_bundle = run(args[0], path, *args[1:])
        assert from_store.exit_code == 0, from_store.output
        assert (from_bundle.exit_code, from_bundle.output) == (0, from_store.output), args


def test_an_html_export_reads_a_bundle_too(run: Run, bundle: Path, tmp_path: Path) -> None:
    page = run("export", bundle, "--html")
    assert page.exit_code == 0, page.output
    assert page.stdout.startswith("<!DOCTYPE html>")
    assert str(json_lines(bundle.read_text())[0]["match_id"]) in page.stdout


# ---- a bundle changed on its way fails as the store damaged alike -------------------


def _revealed(bundle: Path, nth: int) -> int:
    """The version of the nth Revealed event (JS-3.1) of the bundle."""
    events = json_lines(bundle.read_text())[1:]
    return [e["version"] for e in events if e["name"] == "Revealed"][nth]


def test_a_changed_byte_fails_as_in_the_store(run: Run, store: Store, bundle: Path) -> None:
    match = store.ended
    version = _revealed(bundle, 5)
    lines = lines_of(bundle)
    line = bytearray(lines[version])
    at = line.index(b'"hashed":')
    at += digit_offset(bytes(line[at:]), "wall_ns") + 7
    line[at] = ord(str((int(chr(line[at])) + 1) % 10))
    write_lines(bundle, [*lines[:version], bytes(line), *lines[version + 1 :]])
    from_bundle = run("verify", bundle)
    # The same digit of the same field, changed in the store itself.
    state = stored_state(store.db, match.id, version)
    at = digit_offset(state, "wall_ns") + 7
    change_byte(store.db, match.id, version, at, ord(str((int(chr(state[at])) + 1) % 10)))
    from_store = run("verify", match.id)
    assert from_store.exit_code == 1, from_store.output
    assert (from_bundle.exit_code, from_bundle.output) == (1, from_store.output)
    assert f"first bad version {version}: Revealed does not match its digest" in from_bundle.stdout


def test_a_deleted_line_fails_as_in_the_store(run: Run, store: Store, bundle: Path) -> None:
    version = _revealed(bundle, 2)
    lines = lines_of(bundle)
    write_lines(bundle, [*lines[:version], *lines[version + 1 :]])
    from_bundle = run("verify", bundle)
    delete_row(store.db, store.ended.id, version)
    from_store = run("verify", store.ended.id)
    assert from_store.exit_code == 1, from_store.output
    # The same, and the header's count, which no longer matches the lines.
    counted = (
        f"; missing: the bundle's header counts {store.ended.version} events, but the bundle "
        f"holds {store.ended.version - 1}: lines were removed"
    )
    first = from_store.output.splitlines()[0]
    assert from_bundle.exit_code == 1
    assert from_bundle.output.splitlines()[0] == first + counted
    assert f"first bad version {version}: missing" in from_bundle.stdout
    # Replaying stops at the gap, with a one-line error.
    stepped = run("at", bundle, version + 3)
    assert stepped.exit_code == 2
    assert f"event version {version} is missing" in stepped.output


def test_the_deleted_last_line_is_found_with_the_published_digest(
    run: Run, store: Store, bundle: Path
) -> None:
    lines = lines_of(bundle)
    write_lines(bundle, lines[:-1])
    result = run("verify", bundle, "--digest", store.ended.digest)
    assert result.exit_code == 1, result.output
    assert f"first bad version {store.ended.version - 1}: the match digest differs" in result.stdout


def test_swapped_lines_fail(run: Run, store: Store, bundle: Path) -> None:
    a = _revealed(bundle, 3)
    lines = lines_of(bundle)
    lines[a], lines[a + 1] = lines[a + 1], lines[a]
    write_lines(bundle, lines)
    result = run("verify", bundle)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(f"FAILED match {store.ended.id}: first bad version {a}:")


def test_swapped_contents_fail_at_the_first_of_them(run: Run, store: Store, bundle: Path) -> None:
    """Each line keeps its place and version but carries the other's event."""
    a = _revealed(bundle, 3)
    lines = lines_of(bundle)
    first, second = json.loads(lines[a]), json.loads(lines[a + 1])
    first["version"], second["version"] = second["version"], first["version"]
    lines[a], lines[a + 1] = json.dumps(second).encode(), json.dumps(first).encode()
    write_lines(bundle, lines)
    result = run("verify", bundle)
    assert result.exit_code == 1, result.output
    assert f"first bad version {a}:" in result.stdout
    assert "events were reordered" in result.stdout


def test_a_malformed_line_is_an_error_at_its_version(run: Run, bundle: Path) -> None:
    version = _revealed(bundle, 1)
    lines = lines_of(bundle)
    lines[version] = lines[version][: len(lines[version]) // 2]
    write_lines(bundle, lines)
    records = read_bundle(bundle)
    assert records[version - 1].version == version
    assert records[version - 1].event is None
    assert f"line {version + 1} is not JSON" in str(records[version - 1].error)
    result = run("verify", bundle)
    assert result.exit_code == 1, result.output
    assert f"first bad version {version}: the stored event cannot be decoded" in result.stdout
    shown = run("show", bundle)
    assert shown.exit_code == 2
    assert len(shown.output.strip().splitlines()) == 1
    assert "Traceback" not in shown.output


def test_a_line_with_an_unknown_topic_is_an_error_at_its_version(run: Run, bundle: Path) -> None:
    lines = lines_of(bundle)
    data = json.loads(lines[4])
    data["topic"] = "domain.jungle_speed.match:NoSuchEvent"
    lines[4] = json.dumps(data).encode()
    write_lines(bundle, lines)
    record = read_bundle(bundle)[3]
    assert record.version == 4 and record.event is None
    result = run("verify", bundle)
    assert result.exit_code == 1
    assert "first bad version 4: the stored event cannot be decoded: line 5:" in result.stdout


def test_not_a_bundle(run: Run, tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    result = run("verify", other)
    assert result.exit_code == 2
    assert "is not an audit bundle" in result.output
    missing = run("show", tmp_path / "gone.jsonl")
    assert missing.exit_code == 2
    assert "no audit bundle at" in missing.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert run("events", empty).exit_code == 2


def test_export_to_an_unwritable_place_is_one_line(run: Run, store: Store, tmp_path: Path) -> None:
    result = run("export", store.ended.id, "-o", tmp_path / "no" / "such" / "dir" / "b.jsonl")
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1


def test_a_match_that_cannot_be_replayed_leaves_no_file(
    run: Run, bundle: Path, tmp_path: Path
) -> None:
    lines = lines_of(bundle)
    write_lines(bundle, [*lines[:10], *lines[11:]])
    out = tmp_path / "again.jsonl"
    result = run("export", bundle, "-o", out)
    assert result.exit_code == 2
    assert "event version 10 is missing" in result.output
    assert not out.exists()
    printed = run("export", bundle, "--html")
    assert printed.exit_code == 2 and "<html" not in printed.output
