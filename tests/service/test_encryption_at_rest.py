"""Encryption at rest with the library's own cipher (``CIPHER_TOPIC``, ``CIPHER_KEY``).

A live match's seed and deck are in the store; with the cipher set, the SQLite file
holds them encrypted, and the server and the replay tool read them back with the key.
"""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

from click.testing import CliRunner
from eventsourcing.cryptography import AESCipher

from entrypoints.totem_replay import main as replay_main
from server.access import ORGANISER_TOKEN_ENV
from server.serve import start
from tests.service.helpers import ORGANISER_TOKEN, create_and_join, stub

CIPHER_TOPIC = "eventsourcing.cryptography:AESCipher"


def store_bytes(db: Path) -> bytes:
    """The SQLite file and its WAL, as they lie on disk."""
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(f"{db.name}*")))


async def test_a_store_with_a_cipher_holds_no_secret_in_clear(tmp_path: Path) -> None:
    db = tmp_path / "secret.db"
    cipher = {"CIPHER_TOPIC": CIPHER_TOPIC, "CIPHER_KEY": AESCipher.create_key(32)}
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(db),
        ORGANISER_TOKEN_ENV: ORGANISER_TOKEN,
        **cipher,
    }
    running = await start("127.0.0.1:0", env)
    try:
        channel, client = stub(running.port)
        async with channel:
            match_id, _, _ = await create_and_join(client, 2, turn_timeout_ms=0)
        match = running.app.load(UUID(match_id))  # the server reads it back
        seed = match.seed
    finally:
        await running.stop(grace=None)

    stored = store_bytes(db)
    assert seed.encode() not in stored
    assert b'"entropy"' not in stored  # no event's fields: every event is encrypted

    runner = CliRunner()
    shown = runner.invoke(
        replay_main, ["--db", str(db), "at", match_id, "3", "--referee", "--json"], env=cipher
    )
    assert shown.exit_code == 0, shown.output
    assert seed in shown.stdout
    without_key = runner.invoke(replay_main, ["--db", str(db), "at", match_id, "3", "--json"])
    assert without_key.exit_code != 0
    assert seed not in without_key.output
