"""``events`` shows the commands the server refused, kept beside the match in its refusal
log (docs/replay.md, "Refused commands"): each after the event it followed, in receive
order, marked REFUSED, as the viewer may see it; the log's chain is checked."""

from __future__ import annotations

import json

from replay_support import Run, Store, open_store, stored_state, write_state

from domain.kernel.refusals import Refusal, RefusalLog, refusal_log_id

#: Refused at version 5 of the ended match, in this receive order.
AT = 5


def _refusal(receive: int, seat: int, code: str, rule: str, message: str) -> Refusal:
    stamp = {
        "sequence": 900 + receive,
        "monotonic_ns": 1,
        "wall_ns": 1_700_000_000_000_000_000,
        "seen_version": AT,
        "seen_sent_monotonic_ns": 0,
        "receive": receive,
    }
    command = "jungle_speed {grab {target: GRAB_TARGET_ARROWS}}"
    return Refusal(receive, AT, seat, "jungle_speed.grab", command, code, rule, message, stamp)


def _keep_refusals(store: Store) -> None:
    """A refusal log for the ended match: seat 1 refused twice (the second only counted,
    beyond its quota of one), seat 2 once. The match's events carry no receive numbers
    (stored as before the numbers existed), so the refusals hold numbers 1 and 2."""
    log = RefusalLog.open(store.ended.id, quota=1)
    log.keep(_refusal(1, 1, "FAILED_PRECONDITION", "JS-8.1", "seat 1 has finished"))
    log.keep(_refusal(2, 2, "RESOURCE_EXHAUSTED", "", "seat 2 sent more than 20 commands"))
    log.count_not_kept(1, 1)
    arena = open_store(store.db)
    try:
        arena.save(*log.collect_events())
    finally:
        arena.close()


def _lines_after_event(output: str, version: int) -> list[str]:
    lines = output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{version:>5}  "))
    return lines[at + 1 : at + 3]


def test_events_shows_refused_commands_after_the_event_they_followed(
    store: Store, run: Run
) -> None:
    _keep_refusals(store)
    result = run("events", store.ended.id)
    assert result.exit_code == 0, result.output
    first, second = _lines_after_event(result.output, AT)
    assert (
        "REFUSED" in first and "seat 1" in first and "in match #1]" in first and "JS-8.1" in first
    )
    assert "GRAB_TARGET_ARROWS" in first and "seat 1 has finished" in first
    assert (
        "REFUSED" in second
        and "seat 2:" in second
        and "in match #2]" in second
        and "RESOURCE_EXHAUSTED" in second
    )
    assert "seat 1: 1" in result.output.splitlines()[-1]  # counted beyond the quota
    assert result.output.count("REFUSED") == 2


def test_another_seat_sees_that_a_command_was_refused_not_what_it_said(
    store: Store, run: Run
) -> None:
    _keep_refusals(store)
    own = run("events", store.ended.id, "--seat", "1")
    other = run("events", store.ended.id, "--seat", "2")
    assert own.exit_code == 0 and other.exit_code == 0, own.output + other.output
    assert "seat 1 has finished" in _lines_after_event(own.output, AT)[0]
    theirs = _lines_after_event(other.output, AT)[0]
    assert (
        "seat 1: jungle_speed.grab: FAILED_PRECONDITION JS-8.1 [recv #901, in match #1]" in theirs
    )
    assert "finished" not in theirs and "GRAB_TARGET_ARROWS" not in theirs


def test_json_lines_hold_refusals_only_when_asked(store: Store, run: Run) -> None:
    _keep_refusals(store)
    plain = run("events", store.ended.id, "--json")
    asked = run("events", store.ended.id, "--json", "--refused")
    assert plain.exit_code == 0 and asked.exit_code == 0, plain.output + asked.output
    assert all("refused" not in json.loads(line) for line in plain.output.splitlines())
    lines = [json.loads(line) for line in asked.output.splitlines()]
    refused = [line["refused"] for line in lines if "refused" in line]
    assert [r["receive"] for r in refused] == [1, 2]
    at = next(i for i, line in enumerate(lines) if line.get("version") == AT)
    assert lines[at + 1]["refused"]["receive"] == 1
    assert lines[-1] == {"not_kept": {"1": 1}, "quota": 1}


def test_a_damaged_refusal_log_is_named(store: Store, run: Run) -> None:
    _keep_refusals(store)
    log_id = refusal_log_id(store.ended.id)
    state = stored_state(store.db, log_id, 2)
    write_state(store.db, log_id, 2, state.replace(b"seat 1 has finished", b"seat 1 was on time!"))
    result = run("events", store.ended.id)
    assert "refusal log event 2 does not match its digest" in result.output
    assert "REFUSED" not in result.output  # nothing after the first problem is shown
    # The match fails verification as `verify` says (its `refusals` check): warned, 1.
    assert result.exit_code == 1
    assert "receive number 1 on: the log of refused commands fails" in result.output
