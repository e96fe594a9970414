"""The Python client keeps the newest signed receipt of each match (docs/client.md,
"Receipts"), from Act and Play answers, and writes it where asked; `totem bots
--receipts DIR` leaves a file that `totem-replay verify --receipt` accepts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from test_client_cli import RUN_BOUND, served, totem_command

from server.serve import RunningServer
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import connect
from totem_client.receipts import FILE_FORMAT, Receipt, Receipts

__all__ = ["served"]  # the fixture, used by name


def test_only_a_newer_receipt_replaces_the_kept_one(tmp_path: Path) -> None:
    kept = Receipts(tmp_path / "receipts")
    first = Receipt(match_id="m", version=5, issued_at_ms=10, head_commitment=b"\x01" * 32)
    assert kept.keep(first)
    assert not kept.keep(Receipt(match_id="m", version=4, issued_at_ms=99))
    assert not kept.keep(Receipt(match_id="m", version=5, issued_at_ms=9))
    later = Receipt(match_id="m", version=5, issued_at_ms=11)
    assert kept.keep(later)
    assert kept.newest("m") == later
    saved = json.loads(kept.path("m").read_text())
    assert saved["format"] == FILE_FORMAT
    assert (saved["version"], saved["issued_at_ms"]) == (5, 11)
    assert not kept.keep(Receipt())  # no match: nothing to keep


async def test_a_client_keeps_the_newest_receipt_of_each_match(
    arena: RunningServer, tmp_path: Path
) -> None:
    where = tmp_path / "receipts"
    address = f"127.0.0.1:{arena.port}"
    async with connect(address, organiser_token=ORGANISER_TOKEN, receipts_dir=where) as client:
        one = await client.create_match(max_players=2, specials=(0, 0, 0))
        two = await client.create_match(max_players=2, specials=(0, 0, 0))
        for created in (one, two):
            await client.join(created.match_id, "ana")
            await client.join(created.match_id, "bo")
        first = await client.referee(one).stop("over")
        assert client.receipts.newest(one.match_id) == first.receipt
        assert client.receipts.newest(two.match_id) is None
        on_stream = client.referee(two)
        async with on_stream.playing():
            second = await on_stream.stop("over too")
        assert client.receipts.newest(two.match_id) == second.receipt
    files = sorted(path.name for path in where.iterdir())
    assert files == sorted(f"{m.match_id}.receipt.json" for m in (one, two))


def test_bots_keep_their_receipts_for_the_judge(served: str, tmp_path: Path) -> None:
    where = tmp_path / "kept"
    run = subprocess.run(
        [
            totem_command(),
            "bots",
            "jungle-speed",
            "--players",
            "2",
            "--address",
            served,
            "--turn-timeout-ms",
            "200",
            "--receipts",
            str(where),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert run.returncode == 0, run.stderr
    found = re.search(r"^match id: ([0-9a-f-]{36})$", run.stdout, re.MULTILINE)
    assert found is not None
    receipt = where / f"{found.group(1)}.receipt.json"
    assert json.loads(receipt.read_text())["format"] == FILE_FORMAT
    verify = subprocess.run(
        [
            str(Path(sys.executable).with_name("totem-replay")),
            "--db",
            str(tmp_path / "served.db"),
            "verify",
            found.group(1),
            "--receipt",
            str(receipt),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert re.search(r"receipt:\s+OK", verify.stdout)


def test_a_receipt_that_cannot_be_written_is_still_kept(tmp_path: Path) -> None:
    """A command applied is answered even when its receipt's file cannot be written."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    kept = Receipts(blocked)
    receipt = Receipt(match_id="m", version=3, issued_at_ms=1)
    assert kept.keep(receipt)
    assert kept.newest("m") == receipt
    assert isinstance(kept.write_error, OSError)
