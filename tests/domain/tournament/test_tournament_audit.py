"""A tournament's audit: its hash chain, the signed result sheet, the duplicate seeds,
what each viewer sees, and the store (TO-11.2, TO-12.1, domain.kernel.chained)."""

from __future__ import annotations

import copy
import hashlib
import itertools
import re
from pathlib import Path
from typing import Any

from eventsourcing.application import Application
from eventsourcing.utils import get_topic
from tournament_support import (
    REFEREE,
    SEED,
    WINDOW_MS,
    events_named,
    finish,
    new_tournament,
    replayed,
    start,
)

from domain.kernel.chain import GENESIS_DIGEST, event_digest, first_broken_link
from domain.kernel.signing import PREFIX, TOURNAMENT_PREFIX, Signer
from domain.kernel.topics import (
    UnknownTopic,
    aggregate_class,
    chained_aggregate_class,
    chained_event_class,
)
from domain.kernel.views import Viewer
from domain.tournament import Format, ReplaceWith, Tournament, duplicate_seed, sheet
from domain.tournament.sheet import CHAIN, DUPLICATES, PAIRINGS, SHEET, sheet_message, verify
from domain.tournament.views import event_view

KEY = b"p" * 32


def sign(message: bytes) -> bytes:
    """A stand-in for the server's Ed25519 key: the domain only chooses what is signed."""
    return hashlib.sha256(b"private" + message).digest()


def ended(duplicate: bool = False, signed: bool = True) -> Tournament:
    """A Swiss tournament of six over two rounds, with a ruling, ended."""
    t = new_tournament(Format.SWISS, list("ABCDEF"), rounds=2, duplicate=duplicate)
    if signed:
        t.signer = Signer(KEY, sign)
    _, ids = start(t, 0)
    finish(t, 100)
    d = t.file_dispute("B", ids[1], 4, "a dispute", 200)
    t.rule(REFEREE, d, ReplaceWith({"B": 1, "E": 2}), "B was right", 300)
    start(t, 100 + WINDOW_MS)
    finish(t, 200 + WINDOW_MS)
    t.end(200 + 2 * WINDOW_MS)
    return t


# ---- the chain ---------------------------------------------------------------------------


def test_every_event_is_chained_from_genesis_and_the_chain_verifies() -> None:
    t = ended()
    events = t.pending_events
    assert events[0].prev_digest == GENESIS_DIGEST
    assert all(b.prev_digest == a.digest for a, b in itertools.pairwise(events))
    assert first_broken_link(events) is None
    assert verify(events) == []
    assert t.digest == events[-1].digest


def changed(events: list[Any], position: int, **fields: Any) -> list[Any]:
    """``events`` with the event at ``position`` (from 1) given other field values."""
    out = [copy.copy(e) for e in events]
    for key, value in fields.items():
        object.__setattr__(out[position - 1], key, value)
    return out


def rechained(events: list[Any]) -> list[Any]:
    """``events`` with every digest computed again over what they now say: a consistent
    rewrite, as whoever holds the store (and not the key) could make."""
    out = [copy.copy(e) for e in events]
    previous = GENESIS_DIGEST
    for evt in out:
        object.__setattr__(evt, "prev_digest", previous)
        previous = event_digest(type(evt).__name__, vars(evt))
        object.__setattr__(evt, "digest", previous)
    return out


def test_a_tampered_event_breaks_the_chain_where_it_is() -> None:
    events = ended().pending_events
    position = next(i for i, e in enumerate(events, 1) if type(e).__name__ == "ResultRecorded")
    bad = changed(events, position, places=[2, 1])
    assert first_broken_link(bad) == position
    (finding,) = verify(bad)
    assert (finding.version, finding.check) == (position, CHAIN)
    assert first_broken_link(events[: position - 1] + events[position:]) == position


def test_a_consistent_rewrite_is_caught_by_the_sheet_and_the_signature() -> None:
    t = ended()
    events = t.pending_events
    position = next(i for i, e in enumerate(events, 1) if type(e).__name__ == "ResultRecorded")
    rewritten = rechained(changed(events, position, places=[2, 1]))
    assert first_broken_link(rewritten) is None
    checks = {f.check for f in verify(rewritten)}
    assert SHEET in checks or PAIRINGS in checks
    # The server signed the original digest: the rewritten sheet's message differs.
    assert sheet_message(t.id, rewritten[-1]) != sheet_message(t.id, events[-1])


def test_a_rewritten_pairing_is_caught() -> None:
    events = ended().pending_events
    position = next(i for i, e in enumerate(events, 1) if type(e).__name__ == "RoundStarted")
    tables = copy.deepcopy(events[position - 1].tables)
    tables[0]["seats"].reverse()
    rewritten = rechained(changed(events, position, tables=tables))
    assert [(f.version, f.check) for f in verify(rewritten) if f.check == PAIRINGS] == [
        (position, PAIRINGS)
    ]


# ---- the signed result sheet (TO-11.2) ---------------------------------------------------


def test_to_11_2_the_final_event_is_signed_under_the_tournament_prefix() -> None:
    t = ended()
    final = t.pending_events[-1]
    message = sheet_message(t.id, final)
    assert message.startswith(TOURNAMENT_PREFIX) and not message.startswith(PREFIX)
    assert message.endswith(f"\n{final.originator_version}\n{final.digest}".encode())
    assert final.signature == sign(message).hex()
    assert final.public_key == KEY.hex()
    # Only the final event is signed, and the signature is outside the digest.
    assert all(not getattr(e, "signature", "") for e in t.pending_events[:-1])
    assert first_broken_link(t.pending_events) is None


def test_to_11_2_unsigned_without_a_signer() -> None:
    final = ended(signed=False).pending_events[-1]
    assert (final.signature, final.public_key) == ("", "")


def test_to_11_2_the_revealed_seed_must_be_the_committed_one() -> None:
    events = ended().pending_events
    rewritten = rechained(changed(events, len(events), seed="00" * 32))
    assert [f.check for f in verify(rewritten)] == [sheet.SEED]


# ---- duplicate tables (TO-12.1) ----------------------------------------------------------


def test_to_12_1_every_table_of_a_round_shares_the_recorded_round_seed() -> None:
    t = ended(duplicate=True)
    started = events_named(t, "RoundStarted")
    assert [e.duplicate_seed for e in started] == [
        duplicate_seed(SEED, 1).hex(),
        duplicate_seed(SEED, 2).hex(),
    ]
    assert t.duplicate_seed_of(2) == duplicate_seed(SEED, 2)
    assert new_tournament(Format.SWISS, list("AB")).duplicate_seed_of(1) is None
    assert verify(t.pending_events) == []
    # A recorded round seed the tournament's seed does not give is caught.
    position = t.pending_events.index(started[1]) + 1
    rewritten = rechained(changed(t.pending_events, position, duplicate_seed="11" * 32))
    assert [f.check for f in verify(rewritten)] == [DUPLICATES]


def test_to_1_3_no_draw_decides_a_pairing() -> None:
    """The tournament's seed (and so the duplicate seeds) never changes who meets whom."""
    one = new_tournament(Format.SWISS, list("ABCDEF"), rounds=2, duplicate=True)
    other = Tournament.create(
        organiser_token_hash=one.organiser_token_hash,
        game="tribes",
        options={},
        format=Format.SWISS,
        table_size=2,
        rounds=2,
        seed=bytes(reversed(SEED)),
        duplicate=True,
    )
    for name in "ABCDEF":
        other.add_entrant(name, hashlib.sha256(name.encode()).hexdigest())
    assert one.pairing(0) == other.pairing(0)


# ---- views -------------------------------------------------------------------------------


def test_no_view_shows_a_token_hash_and_only_the_operators_referee_sees_the_seeds() -> None:
    t = ended(duplicate=True)
    player, referee = Viewer.spectator(), Viewer.referee()
    for evt in t.pending_events:
        for viewer in (player, referee):
            name, shown = event_view(evt, viewer)
            assert not {"token_hash", "organiser_token_hash"} & shown.keys()
        if type(evt).__name__ in ("Created", "RoundStarted"):
            assert not {"seed", "duplicate_seed"} & event_view(evt, player)[1].keys()
            assert {"seed", "duplicate_seed"} & event_view(evt, referee)[1].keys()
    name, shown = event_view(t.pending_events[-1], player)
    assert (name, shown["seed"]) == ("TournamentEnded", SEED.hex())


# ---- the store ---------------------------------------------------------------------------


def test_a_tournament_is_saved_and_loaded_like_a_match() -> None:
    t = ended()
    fresh = replayed(t)
    app: Application = Application(env={"IS_SNAPSHOTTING_ENABLED": "y"})
    app.save(t)
    loaded = app.repository.get(t.id)
    assert isinstance(loaded, Tournament)
    assert loaded.standings() == t.standings()
    assert loaded.digest == t.digest
    stored = list(app.recorder.select_events(t.id))
    decoded = [app.mapper.to_domain_event(s) for s in stored]
    assert first_broken_link(decoded) is None
    assert verify(decoded) == []
    assert {s.topic for s in stored} >= {"domain.tournament.aggregate:Tournament.Created"}
    # A snapshot rebuilds the same state, without the signer.
    app.take_snapshot(t.id)
    assert app.snapshots is not None
    (snapshot,) = app.snapshots.get(t.id)
    assert get_topic(type(snapshot)) == "domain.tournament.aggregate:Tournament.Snapshot"
    again = app.repository.get(t.id)
    assert again.standings() == t.standings()
    assert "signer" not in vars(again)
    assert vars(again) == vars(fresh)


def test_the_tournament_and_its_events_are_registered_apart_from_the_games() -> None:
    t = ended()
    assert chained_aggregate_class(get_topic(Tournament)) is Tournament
    for evt in t.pending_events:
        assert chained_event_class(get_topic(type(evt))) is type(evt)
    try:
        aggregate_class(get_topic(Tournament))
    except UnknownTopic:
        pass
    else:  # pragma: no cover
        raise AssertionError("a tournament is not a game")


# ---- the rule ids ------------------------------------------------------------------------


def test_every_rule_of_the_tournament_page_is_cited_by_a_test() -> None:
    root = Path(__file__).resolve().parents[3]
    page = (root / "docs" / "tournaments.md").read_text(encoding="utf-8")
    rules = set(re.findall(r"\*\*(TO-\d+\.\d+)\*\*", page))
    assert {"TO-1.1", "TO-8.1", "TO-12.1"} <= rules
    cited: set[str] = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        cited |= set(re.findall(r"TO-\d+\.\d+", text))
        cited |= {f"TO-{a}.{b}" for a, b in re.findall(r"_to_(\d+)_(\d+)", text)}
    assert sorted(rules - cited) == []
