"""The server's key: created 0600 on first start and reused after, or given by the
operator; published by GetServerKey; its signature is in every MatchEnded a server
stores and streams (verified here with the key from GetServerKey)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from domain.kernel.signing import signed_message
from server.serve import start
from storage.keys import KeyFileError, load_or_create, user_key_file
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import MatchEvent, connect


def scripted_deck() -> list[int]:
    """72 symbol cards dealt to two seats so that nothing matches until both last cards
    share a shape: 36 reveals each, then one duel ends the match (JS-8.1)."""
    last_of_0, last_of_1, swapped = 4 * 8 + 0, 4 * 8 + 3, 4 * 17 + 3
    zero = [swapped] + [c for c in range(36) if c not in (last_of_0, last_of_1)] + [last_of_0]
    one = [c for c in range(36, 72) if c != swapped] + [last_of_1]
    return [card for pair in zip(zero, one, strict=True) for card in pair]


async def play_to_the_end(port: int) -> tuple[str, bytes, list[MatchEvent]]:
    """End a match over gRPC; return its id, the server's key and the referee's stream."""
    async with connect(f"127.0.0.1:{port}", organiser_token=ORGANISER_TOKEN) as client:
        algorithm, public_key = await client.server_key()
        assert algorithm == "Ed25519"
        created = await client.create_match(
            max_players=2, turn_timeout_ms=0, specials=(0, 0, 0), prearranged_deal=scripted_deck()
        )
        ana = await client.join(created.match_id, "ana")
        bo = await client.join(created.match_id, "bo")
        for _ in range(36):
            await ana.reveal()
            await bo.reveal()
        await ana.grab()
        stream = client.referee(created).watch()
        events = await asyncio.wait_for(_collect(stream), 60)
    return created.match_id, public_key, events


async def _collect(stream: object) -> list[MatchEvent]:
    return [event async for event in stream]  # type: ignore[attr-defined]


async def test_an_ended_match_is_signed_by_the_published_key(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    key_file = tmp_path / "server.key"
    running = await start("127.0.0.1:0", store_env, key_file=str(key_file))
    try:
        match_id, public_key, events = await play_to_the_end(running.port)
    finally:
        await running.stop(grace=None)

    last = events[-1]
    assert last.WhichOneof("event") == "match_ended"
    assert last.match_ended.public_key == public_key
    message = signed_message(match_id, last.version, last.digest.hex())
    Ed25519PublicKey.from_public_bytes(public_key).verify(last.match_ended.signature, message)
    # The key is the file's, created on first start and readable by the owner only.
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    assert isinstance(private, Ed25519PrivateKey)
    assert (
        private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        == public_key
    )


async def test_the_key_file_is_reused_on_restart(tmp_path: Path, private_config_home: Path) -> None:
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    keys_seen = []
    for _ in range(2):
        running = await start("127.0.0.1:0", env)  # the default: the user's config folder
        try:
            async with connect(
                f"127.0.0.1:{running.port}", organiser_token=ORGANISER_TOKEN
            ) as client:
                keys_seen.append((await client.server_key())[1])
        finally:
            await running.stop(grace=None)
    key_file = private_config_home / "totem-arena" / "server.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert not (tmp_path / "t.db.key").exists(), "no key beside the store"
    public = load_or_create(key_file).public_bytes
    assert keys_seen[0] == keys_seen[1] == public


async def test_a_key_left_beside_the_store_is_used_with_a_warning(
    tmp_path: Path, private_config_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store whose key an older server kept beside it (DB.key) keeps its key, so that
    its matches still verify against it; the operator is told to move it."""
    beside = load_or_create(tmp_path / "t.db.key")
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    running = await start("127.0.0.1:0", env)
    try:
        async with connect(f"127.0.0.1:{running.port}", organiser_token=ORGANISER_TOKEN) as client:
            _, public_key = await client.server_key()
    finally:
        await running.stop(grace=None)
    assert public_key == beside.public_bytes
    assert not (private_config_home / "totem-arena").exists()
    assert (
        f"the server key {tmp_path / 't.db.key'} sits beside the store: a copy of the store "
        "that carries it can forge matches that pass `totem-replay verify --key`. Move it"
    ) in caplog.text


def test_the_default_key_file_follows_the_xdg_rule() -> None:
    assert user_key_file({"XDG_CONFIG_HOME": "/etc/x", "HOME": "/home/a"}) == Path(
        "/etc/x/totem-arena/server.key"
    )
    for config in ("", "relative/dir"):
        assert user_key_file({"XDG_CONFIG_HOME": config, "HOME": "/home/a"}) == Path(
            "/home/a/.config/totem-arena/server.key"
        )


async def test_an_operator_given_key_is_used_as_it_is(tmp_path: Path) -> None:
    operator = Ed25519PrivateKey.generate()
    pem = operator.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    key_file = tmp_path / "operator.pem"
    key_file.write_bytes(pem)
    key_file.chmod(0o640)
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    running = await start("127.0.0.1:0", env, key_file=str(key_file))
    try:
        async with connect(f"127.0.0.1:{running.port}", organiser_token=ORGANISER_TOKEN) as client:
            _, public_key = await client.server_key()
    finally:
        await running.stop(grace=None)
    expected = operator.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert public_key == expected
    assert key_file.read_bytes() == pem and stat.S_IMODE(key_file.stat().st_mode) == 0o640
    assert not (tmp_path / "t.db.key").exists()


async def test_a_malformed_key_file_stops_the_start(tmp_path: Path) -> None:
    key_file = tmp_path / "broken.key"
    key_file.write_text("not a key\n")
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    with pytest.raises(KeyFileError, match="is not an unencrypted PEM private key"):
        await start("127.0.0.1:0", env, key_file=str(key_file))
