"""``totem-replay verify``: the server's signature over an ended match, each check on its
own line (and in ``--json``), ``--key``, and ``--all``.

The stores here are signed the way the server signs (a :class:`Signer` on the match when
it ends); tamperings are done on the SQLite file, as in test_replay_verify.py.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from replay_support import (
    Stamps,
    as_referee,
    change_byte,
    delete_row,
    digit_offset,
    forge,
    open_store,
    play,
    relog,
    stored_state,
    swap_versions,
)
from test_replay_village import ZERO, store_village

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel.match import MatchStatus, event_name
from domain.kernel.signing import Signer, signed_message
from entrypoints.totem_replay import main
from storage.arena import Arena
from storage.keys import ServerKey, load_or_create


@dataclass
class Signed:
    db: Path
    key: ServerKey
    ended: JungleSpeed
    other: JungleSpeed
    playing: JungleSpeed


def signed_match(arena: Arena, signer: Signer, *, players: int, max_events: int) -> JungleSpeed:
    """A Jungle Speed match played through the application by a signing server."""
    stamps = Stamps()
    options = Options(variant="ES", max_players=players)
    created = arena.create_match(lambda seed: JungleSpeed.create(options, seed, b"\x01"))
    assert isinstance(created, JungleSpeed)
    created.signer = signer
    for seat in range(players):
        created.join(f"player{seat}", bytes([seat]), f"token-hash-{seat}", stamps())
    play(created, stamps, random.Random(players), max_events)
    arena.save(created)
    return created


@pytest.fixture
def signed(tmp_path: Path) -> Signed:
    db = tmp_path / "totem.db"
    key = load_or_create(tmp_path / "server.key")
    arena = open_store(db)
    try:
        ended = signed_match(arena, key.signer(), players=3, max_events=100_000)
        other = signed_match(arena, key.signer(), players=2, max_events=100_000)
        playing = signed_match(arena, key.signer(), players=2, max_events=30)
    finally:
        arena.close()
    assert ended.status is MatchStatus.ENDED and other.status is MatchStatus.ENDED
    assert playing.status is MatchStatus.PLAYING
    return Signed(db, key, ended, other, playing)


def run(db: Path, *args: object) -> Result:
    argv: Sequence[str] = ["--db", str(db), *as_referee(args)]
    return CliRunner().invoke(main, argv)


def as_json(db: Path, *args: object) -> tuple[int, dict[str, Any]]:
    result = run(db, "verify", *args, "--json")
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {name: check["status"] for name, check in report["checks"].items()}


def ended_event(db: Path, match_id: UUID) -> Any:
    arena = open_store(db)
    try:
        return arena.events_after(match_id)[-1]
    finally:
        arena.close()


def test_an_ended_match_carries_a_valid_signature_by_the_server_key(signed: Signed) -> None:
    ended = ended_event(signed.db, signed.ended.id)
    assert event_name(ended) == "MatchEnded"
    assert ended.public_key == signed.key.public_bytes.hex()
    message = signed_message(signed.ended.id, ended.originator_version, ended.digest)
    signed.key.private.public_key().verify(bytes.fromhex(ended.signature), message)

    result = run(signed.db, "verify", signed.ended.id, "--key", signed.key.public_bytes.hex())
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"OK match {signed.ended.id}")
    for check in ("chain:", "signature:", "seed commitment:", "random draws:"):
        line = next(x for x in result.stdout.splitlines() if x.strip().startswith(check))
        assert " OK " in line, line
    assert "spell reveals:   not applicable  jungle_speed has no spell" in result.stdout
    assert signed.key.fingerprint in result.stdout


def test_the_key_may_be_given_as_a_pem_file(signed: Signed, tmp_path: Path) -> None:
    public = signed.key.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "server.pub").write_bytes(public)
    result = run(signed.db, "verify", signed.ended.id, "--key", tmp_path / "server.pub")
    assert result.exit_code == 0, result.output


def test_a_match_in_play_is_not_signed_yet(signed: Signed) -> None:
    code, report = as_json(signed.db, signed.playing.id)
    assert code == 0
    assert report["checks"]["signature"] == {
        "status": "not applicable",
        "detail": "not signed: the match has not ended",
        "problems": [],
    }
    assert report["checks"]["seed commitment"]["status"] == "not applicable"


def test_a_changed_byte_of_the_signature_is_a_forged_signature(signed: Signed) -> None:
    ended = ended_event(signed.db, signed.ended.id)
    forged = bytearray(bytes.fromhex(ended.signature))
    forged[10] ^= 0x01
    forge(signed.db, signed.ended.id, ended.originator_version, signature=forged.hex())
    relog(signed.db, signed.ended.id)  # the log agrees: only the signature's check speaks
    result = run(signed.db, "verify", signed.ended.id)
    assert result.exit_code == 1, result.output
    assert "the server signature in MatchEnded is not valid for the match digest" in result.stdout
    code, report = as_json(signed.db, signed.ended.id)
    assert code == 1
    assert statuses(report) == {
        "chain": "ok",  # the signature is outside the digest: only its own check fails
        "signature": "failed",
        "seed commitment": "ok",
        "random draws": "ok",
        "spell reveals": "not applicable",
    }
    assert report["first_bad_version"] == ended.originator_version


def test_a_match_re_signed_with_another_key_fails_only_against_the_server_key(
    signed: Signed,
) -> None:
    """Whoever rewrites the store (its transparency log included) can sign with their
    own key and name it in the event: only the key obtained outside the store (--key)
    shows it."""
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
    relog(signed.db, signed.ended.id)
    assert run(signed.db, "verify", signed.ended.id).exit_code == 0
    result = run(signed.db, "verify", signed.ended.id, "--key", signed.key.public_bytes.hex())
    assert result.exit_code == 1, result.output
    assert "MatchEnded is signed by key" in result.stdout
    assert f"not by the expected key {signed.key.fingerprint}" in result.stdout


def test_the_wrong_key_fails_a_genuine_signature(signed: Signed) -> None:
    wrong = Ed25519PrivateKey.generate().public_key()
    raw = wrong.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    result = run(signed.db, "verify", signed.ended.id, "--key", raw.hex())
    assert result.exit_code == 1, result.output
    assert "not by the expected key" in result.stdout


def test_an_unsigned_ended_match_fails_when_a_key_is_given(signed: Signed) -> None:
    ended = ended_event(signed.db, signed.ended.id)
    forge(signed.db, signed.ended.id, ended.originator_version, signature="", public_key="")
    relog(signed.db, signed.ended.id)
    code, report = as_json(signed.db, signed.ended.id)
    assert code == 0
    assert report["checks"]["signature"]["status"] == "not applicable"
    result = run(signed.db, "verify", signed.ended.id, "--key", signed.key.public_bytes.hex())
    assert result.exit_code == 1
    assert "MatchEnded carries no server signature, but --key asks for one" in result.stdout


def test_a_malformed_key_is_a_usage_error(signed: Signed) -> None:
    result = run(signed.db, "verify", signed.ended.id, "--key", "abcd")
    assert result.exit_code == 2
    assert "not an Ed25519 public key" in result.stderr


def _versions(db: Path, match_id: UUID, name: str) -> list[int]:
    arena = open_store(db)
    try:
        return [e.originator_version for e in arena.events_after(match_id) if event_name(e) == name]
    finally:
        arena.close()


def _change_a_digit(db: Path, match_id: UUID) -> None:
    version = _versions(db, match_id, "Revealed")[3]
    state = stored_state(db, match_id, version)
    at = digit_offset(state, "wall_ns") + 7
    change_byte(db, match_id, version, at, ord(str((int(chr(state[at])) + 1) % 10)))


def _forge_the_deal(db: Path, match_id: UUID) -> None:
    (dealt,) = _versions(db, match_id, "Dealt")
    arena = open_store(db)
    try:
        deck = list(arena.events_after(match_id, dealt - 1)[0].deck)
    finally:
        arena.close()
    deck[-1], deck[-4] = deck[-4], deck[-1]
    forge(db, match_id, dealt, deck=deck)


def _forge_the_piles(db: Path, match_id: UUID) -> None:
    """The deck kept, the piles dealt from it changed (JS-2.1)."""
    (dealt,) = _versions(db, match_id, "Dealt")
    arena = open_store(db)
    try:
        down = [list(pile) for pile in arena.events_after(match_id, dealt - 1)[0].down]
    finally:
        arena.close()
    down[0][-1], down[1][-1] = down[1][-1], down[0][-1]
    forge(db, match_id, dealt, down=down)


DAMAGES = {
    "changed byte": (_change_a_digit, "chain", "does not match its digest"),
    "deleted event": (
        lambda db, m: delete_row(db, m, 20),
        "chain",
        "missing: the store has no event at version 20",
    ),
    "swapped events": (
        lambda db, m: swap_versions(db, m, 20, 21),
        "chain",
        "was recorded as version 21, not 20: events were reordered",
    ),
    "bad seed": (
        lambda db, m: forge(db, m, ended_event(db, m).originator_version, seed="ff" * 32),
        "seed commitment",
        "the revealed seed hashes to",
    ),
    "bad draw": (_forge_the_deal, "random draws", ""),
    "bad piles": (_forge_the_piles, "random draws", "the recorded piles are not the deal"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_each_damage_fails_its_own_check_with_its_own_message(signed: Signed, damage: str) -> None:
    do, check, words = DAMAGES[damage]
    do(signed.db, signed.ended.id)
    code, report = as_json(signed.db, signed.ended.id)
    assert code == 1
    assert report["checks"][check]["status"] == "failed", report["checks"]
    assert words in report["checks"][check]["detail"]
    # The message names the check's own finding, not another check's.
    others = [c["detail"] for n, c in report["checks"].items() if n != check]
    assert all(report["checks"][check]["detail"] != detail for detail in others)


def test_the_damages_give_distinct_messages(tmp_path: Path) -> None:
    """Each kind of damage (and a forged signature, and a bad spell reveal) is told
    apart by its message: a judge knows what was done, not only that something was."""
    messages: dict[str, str] = {}
    for damage in sorted(DAMAGES):
        db = tmp_path / f"{damage.replace(' ', '-')}.db"
        key = load_or_create(tmp_path / "server.key")
        arena = open_store(db)
        try:
            match = signed_match(arena, key.signer(), players=3, max_events=100_000)
        finally:
            arena.close()
        do, check, _ = DAMAGES[damage]
        do(db, match.id)
        _, report = as_json(db, match.id)
        messages[damage] = report["checks"][check]["detail"].split(": ", 1)[1]
    messages["spell reveal"] = _bad_spell_reveal(tmp_path / "village.db")
    assert len(set(messages.values())) == len(messages), messages


def _bad_spell_reveal(db: Path) -> str:
    arena = open_store(db)
    try:
        match = store_village(arena, prearranged_sexes=["girl", "boy", "boy"], **ZERO)
        stored = arena.events_after(match.id)
    finally:
        arena.close()
    revealed = next(e for e in stored if event_name(e) == "SpellsRevealed" and e.reveals)
    reveals = [dict(r, spell="illness") for r in revealed.reveals]
    forge(db, match.id, revealed.originator_version, reveals=reveals)
    relog(db, match.id)
    code, report = as_json(db, match.id)
    assert code == 1
    spells = report["checks"]["spell reveals"]
    assert spells["status"] == "failed", report["checks"]
    assert "the reveal breaks its commitment (VI-2.2)" in spells["detail"]  # VI-2.2
    assert report["checks"]["chain"]["status"] == "ok"
    return str(spells["detail"].split(": ", 1)[1])


def test_verify_all_finds_the_one_bad_match_among_good_ones(signed: Signed) -> None:
    good = run(signed.db, "verify", "--all")
    assert good.exit_code == 0, good.output
    assert "OK 3 matches verified: 3 OK, 0 failed" in good.stdout

    ended = ended_event(signed.db, signed.other.id)
    forged = bytearray(bytes.fromhex(ended.signature))
    forged[0] ^= 0x80
    forge(signed.db, signed.other.id, ended.originator_version, signature=forged.hex())
    relog(signed.db, signed.other.id)
    result = run(signed.db, "verify", "--all")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == "FAILED 3 matches verified: 2 OK, 1 failed"
    assert lines[0].startswith(f"FAILED match {signed.other.id}: signature: version ")
    assert str(signed.ended.id) not in result.stdout


def test_verify_all_json_shape(signed: Signed) -> None:
    delete_row(signed.db, signed.playing.id, 5)
    code, report = as_json(signed.db, "--all")
    assert code == 1
    assert report["ok"] is False
    assert report["summary"] == {"matches": 3, "ok": 2, "failed": 1}
    by_id = {m["match_id"]: m for m in report["matches"]}
    assert set(by_id) == {str(signed.ended.id), str(signed.other.id), str(signed.playing.id)}
    bad = by_id[str(signed.playing.id)]
    assert set(bad) == {
        "match_id",
        "ok",
        "events",
        "digest",
        "first_bad_version",
        "checks",
        "notes",
    }
    assert bad["ok"] is False and bad["first_bad_version"] == 5
    assert list(bad["checks"]) == [
        "chain",
        "signature",
        "seed commitment",
        "random draws",
        "spell reveals",
    ]
    assert bad["checks"]["chain"]["problems"][0]["version"] == 5


def test_verify_needs_a_match_or_all(signed: Signed) -> None:
    assert run(signed.db, "verify").exit_code == 2
    assert run(signed.db, "verify", signed.ended.id, "--all").exit_code == 2
