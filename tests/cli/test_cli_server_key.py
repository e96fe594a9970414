"""``totem server-key`` prints the running server's public key; ``totem serve
--key-file`` logs its fingerprint at start and refuses a malformed key file."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization

from entrypoints.totem import main
from server.serve import start
from storage.keys import fingerprint, load_or_create


def totem(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


async def test_server_key_prints_the_key_in_hex_and_pem(tmp_path: Path) -> None:
    key = load_or_create(tmp_path / "server.key")
    env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "t.db")}
    running = await start("127.0.0.1:0", env, key_file=str(key.path))
    address = f"127.0.0.1:{running.port}"
    try:
        # The command runs its own event loop: in a thread, beside the server's.
        as_hex = await asyncio.to_thread(totem, "server-key", "--server", address)
        as_pem = await asyncio.to_thread(totem, "server-key", "--server", address, "--pem")
    finally:
        await running.stop(grace=None)
    assert as_hex.exit_code == 0, as_hex.output
    assert as_hex.stdout == key.public_bytes.hex() + "\n"
    assert as_pem.exit_code == 0, as_pem.output
    public = serialization.load_pem_public_key(as_pem.stdout.encode())
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert raw == key.public_bytes


def test_server_key_without_a_server_is_one_clear_error() -> None:
    result = totem("server-key", "--server", "127.0.0.1:1", "--connect-timeout", "0.2")
    assert result.exit_code == 1
    assert "127.0.0.1:1: " in result.output and "Traceback" not in result.output


def test_serve_refuses_a_malformed_key_file(tmp_path: Path) -> None:
    key_file = tmp_path / "bad.key"
    key_file.write_text("-----BEGIN PRIVATE KEY-----\nnonsense\n-----END PRIVATE KEY-----\n")
    result = totem("serve", "--db", str(tmp_path / "t.db"), "--key-file", str(key_file))
    assert result.exit_code == 1
    assert f"the server key file {key_file} is not an unencrypted PEM private key" in (
        result.output
    )


def test_serve_logs_the_fingerprint_of_the_key_it_created(tmp_path: Path) -> None:
    key_file = tmp_path / "arena.key"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGRES_", "PERSISTENCE"))}
    env["TOTEM_KEY_FILE"] = str(key_file)
    db = str(tmp_path / "t.db")
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--address", "127.0.0.1:0", "--db", db],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    lines = []
    try:
        for line in process.stderr:
            lines.append(line)
            if "serving on" in line:
                break
    finally:
        process.terminate()
        process.wait()
    key = load_or_create(key_file)
    assert not key.created
    assert any(f"server key created: {fingerprint(key.public_bytes)}" in x for x in lines), lines
