"""``totem checkpoint`` fetches a signed checkpoint from a running server into a file,
which ``totem-replay verify --all --checkpoint`` then holds the store to; with
``--since`` the server's consistency proof must hold, or nothing is written."""

from __future__ import annotations

import asyncio
from pathlib import Path

from click.testing import CliRunner, Result

from domain.kernel.translog import Checkpoint, checkpoint_message
from entrypoints.totem import main
from entrypoints.totem_replay import main as replay_main
from server.serve import start
from storage.keys import load_or_create
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import connect


def totem(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


async def test_checkpoints_from_a_running_server(tmp_path: Path) -> None:
    key = load_or_create(tmp_path / "server.key")
    db = tmp_path / "t.db"
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(db),
        "TOTEM_ORGANISER_TOKEN": ORGANISER_TOKEN,
    }
    running = await start("127.0.0.1:0", env, key_file=str(key.path))
    address = f"127.0.0.1:{running.port}"
    first, second, forged = tmp_path / "1.json", tmp_path / "2.json", tmp_path / "forged.json"
    # A checkpoint of one leaf over another log, signed with the very key of the server.
    root = bytes(32)
    forged.write_text(
        Checkpoint(
            1, root, 0, key.public_bytes, key.private.sign(checkpoint_message(1, root, 0))
        ).to_json()
    )
    try:
        # The command runs its own event loop: in a thread, beside the server's.
        empty = await asyncio.to_thread(totem, "checkpoint", "--server", address, "-o", first)
        async with connect(address, organiser_token=ORGANISER_TOKEN) as client:
            await client.create_match(max_players=2)
            await client.create_match(max_players=3)
        grown = await asyncio.to_thread(
            totem, "checkpoint", "--server", address, "-o", second, "--since", first
        )
        refused = await asyncio.to_thread(
            totem, "checkpoint", "--server", address, "-o", tmp_path / "no.json", "--since", forged
        )
    finally:
        await running.stop(grace=None)

    assert empty.exit_code == 0, empty.output
    assert Checkpoint.from_json(first.read_text()).tree_size == 0
    assert grown.exit_code == 0, grown.output
    assert "checkpoint: 2 leaves" in grown.output and f"consistent with {first}" in grown.output
    assert Checkpoint.from_json(second.read_text()).public_key == key.public_bytes
    assert refused.exit_code == 1
    assert "INCONSISTENT: its log of 2 leaves does not extend the one of" in refused.output
    assert not (tmp_path / "no.json").exists()

    held = CliRunner().invoke(
        replay_main, ["--db", str(db), "verify", "--all", "--checkpoint", str(second)]
    )
    assert held.exit_code == 0, held.output
    assert "the store reproduces its root, and its 2 matches" in held.output
