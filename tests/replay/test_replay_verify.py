"""``totem-replay verify``: passes on real matches, and names the first bad version after
the stored SQLite file is damaged the ways a tamperer or a fault could damage it."""

from __future__ import annotations

import random
from uuid import UUID

from replay_support import (
    Run,
    Store,
    change_byte,
    delete_row,
    digit_offset,
    forge,
    open_store,
    store_match,
    stored_state,
    swap_versions,
    truncate,
    unlog_end,
)

from domain.kernel.match import event_name


def versions_named(store: Store, match_id: UUID, name: str) -> list[int]:
    arena = open_store(store.db)
    try:
        return [e.originator_version for e in arena.events_after(match_id) if event_name(e) == name]
    finally:
        arena.close()


def first_bad(result_output: str) -> int:
    head = result_output.splitlines()[0]
    assert head.startswith("FAILED"), head
    return int(head.split("first bad version ")[1].split(":")[0])


def other_digit(byte: int) -> int:
    return ord(str((int(chr(byte)) + 1) % 10))


def test_verify_passes_on_an_ended_match(run: Run, store: Store) -> None:
    match = store.ended
    result = run("verify", str(match.id)[:8])
    assert result.exit_code == 0, result.output
    head = result.stdout.splitlines()[0]
    assert head.startswith("OK ")
    assert f"{match.version} events" in head
    assert f"match digest {match.digest}" in head
    assert "revealed seed matches the commitment" in result.stdout
    assert "deal re-derived from the revealed seed and 4 entropies" in result.stdout


def test_verify_passes_on_a_match_in_play_and_a_waiting_one(run: Run, store: Store) -> None:
    playing = run("verify", store.playing.id)
    assert playing.exit_code == 0, playing.output
    assert f"{store.playing.version} events" in playing.stdout
    assert "the seed is not revealed yet" in playing.stdout
    waiting = run("verify", store.waiting.id)
    assert waiting.exit_code == 0, waiting.output
    assert "no deal yet" in waiting.stdout


def test_one_changed_digit_is_found_at_its_version(run: Run, store: Store) -> None:
    match = store.ended
    version = versions_named(store, match.id, "Revealed")[5]
    state = stored_state(store.db, match.id, version)
    at = digit_offset(state, "wall_ns") + 7
    change_byte(store.db, match.id, version, at, other_digit(state[at]))
    result = run("verify", match.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == version
    assert "Revealed does not match its digest" in result.stdout
    # Only that event is bad: the next one still links to the digest it recorded.
    assert "then version" not in result.stdout


def test_a_changed_card_of_the_deal_is_found(run: Run, store: Store) -> None:
    match = store.ended
    (dealt,) = versions_named(store, match.id, "Dealt")
    state = stored_state(store.db, match.id, dealt)
    at = digit_offset(state, "deck")
    change_byte(store.db, match.id, dealt, at, other_digit(state[at]))
    result = run("verify", match.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == dealt
    assert "Dealt does not match its digest" in result.stdout


def test_a_changed_digest_is_found(run: Run, store: Store) -> None:
    match = store.ended
    state = stored_state(store.db, match.id, 12)
    at = state.index(b'"digest":"') + len(b'"digest":"') + 3
    change_byte(store.db, match.id, 12, at, ord("a") if state[at] != ord("a") else ord("b"))
    result = run("verify", match.id)
    assert result.exit_code == 1
    assert first_bad(result.stdout) == 12
    # The next event no longer links to it either.
    assert "then version 13:" in result.stdout and "prev_digest" in result.stdout


def test_an_event_that_no_longer_decodes_is_named(run: Run, store: Store) -> None:
    match = store.ended
    state = stored_state(store.db, match.id, 9)
    at = state.index(b'"prev_digest"') - 1  # the comma before it: now invalid JSON
    assert state[at] == ord(",")
    change_byte(store.db, match.id, 9, at, ord(";"))
    result = run("verify", match.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == 9
    assert "cannot be decoded" in result.stdout
    assert "Traceback" not in result.output


def test_a_deleted_event_is_named(run: Run, store: Store) -> None:
    match = store.ended
    delete_row(store.db, match.id, 30)
    result = run("verify", match.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == 30
    assert "missing: the store has no event at version 30" in result.stdout
    assert "then version 31:" in result.stdout


def test_the_deleted_first_event_is_named(run: Run, store: Store) -> None:
    delete_row(store.db, store.playing.id, 1)
    result = run("verify", store.playing.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == 1


def test_two_swapped_events_are_found(run: Run, store: Store) -> None:
    match = store.ended
    swap_versions(store.db, match.id, 40, 41)
    result = run("verify", match.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == 40


def test_a_forged_seed_with_a_rewritten_chain_is_found(run: Run, store: Store) -> None:
    """Someone who rewrites the digests too cannot fake the seed: the commitment holds."""
    match = store.ended
    forge(store.db, match.id, match.version, seed="ff" * 32)
    result = run("verify", match.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == match.version
    assert "the revealed seed hashes to" in result.stdout
    assert "random draws not re-derived" in result.stdout
    assert "does not match its digest" not in result.stdout


def test_a_forged_deal_with_a_rewritten_chain_is_found(run: Run, store: Store) -> None:
    """Nor the deal: it must be the shuffle the revealed seed and entropies give."""
    match = store.ended
    (dealt,) = versions_named(store, match.id, "Dealt")
    arena = open_store(store.db)
    try:
        deck = list(arena.events_after(match.id, dealt - 1)[0].deck)
    finally:
        arena.close()
    deck[-1], deck[-4] = deck[-4], deck[-1]
    forge(store.db, match.id, dealt, deck=deck)
    result = run("verify", match.id)
    assert result.exit_code == 1, result.output
    assert first_bad(result.stdout) == dealt
    assert "not the shuffle re-derived from the revealed seed" in result.stdout


def test_a_prearranged_deal_is_checked_against_the_options(run: Run, store: Store) -> None:
    arena = open_store(store.db)
    try:
        deal = list(range(80))
        random.Random(5).shuffle(deal)
        match = store_match(arena, players=2, prearranged=deal)
    finally:
        arena.close()
    ok = run("verify", match.id)
    assert ok.exit_code == 0, ok.output
    assert "deal prearranged in the options" in ok.stdout
    (dealt,) = versions_named(store, match.id, "Dealt")
    forge(store.db, match.id, dealt, deck=deal[1:] + deal[:1])
    bad = run("verify", match.id)
    assert bad.exit_code == 1
    assert first_bad(bad.stdout) == dealt
    assert "not the prearranged deal" in bad.stdout


def test_published_digest_and_commitment(run: Run, store: Store) -> None:
    match = store.ended
    commitment = match.seed_commitment
    ok = run("verify", match.id, "--digest", match.digest, "--commitment", commitment.upper())
    assert ok.exit_code == 0, ok.output
    assert "match digest equals the expected one" in ok.stdout
    assert "seed commitment equals the expected one" in ok.stdout

    wrong = run("verify", match.id, "--commitment", "ab" * 32)
    assert wrong.exit_code == 1 and first_bad(wrong.stdout) == 1

    # Removing the last events, and rewriting the store's summary and transparency log
    # to match, keeps the store consistent: only the published digest shows it.
    truncate(store.db, match.id, match.version - 1, summary_too=True)
    unlog_end(store.db, match.id)
    assert run("verify", match.id).exit_code == 0
    cut = run("verify", match.id, "--digest", match.digest)
    assert cut.exit_code == 1
    assert first_bad(cut.stdout) == match.version - 1
    assert "removed from the end" in cut.stdout


def test_a_published_digest_of_an_earlier_event(run: Run, store: Store) -> None:
    match = store.playing
    arena = open_store(store.db)
    try:
        digest = arena.load_at(match.id, 30).digest
    finally:
        arena.close()
    result = run("verify", match.id, "--digest", digest)
    assert result.exit_code == 1
    assert first_bad(result.stdout) == 31
    assert "that of version 30" in result.stdout


def test_verify_all_verifies_matches_only(run: Run, store: Store) -> None:
    """The store's other streams (the list of matches, the transparency log, a match's
    log of refused commands) are not matches, and are not reported as broken ones."""
    from test_replay_refusals import _keep_refusals

    _keep_refusals(store)
    result = run("verify", "--all")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "OK 3 matches verified: 3 OK, 0 failed"
