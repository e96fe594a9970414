"""``totem checkpoint``: fetch a signed checkpoint of a running server's transparency
log and keep it in a file, outside the server's store.

A checkpoint is worth only what is kept away from whoever holds the store: publish it
(docs/operations.md). ``--since`` checks, with the proof the server gives, that the log
only grew since an older checkpoint: a server that rewrote its log cannot give one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from domain.kernel import merkle
from domain.kernel.translog import Checkpoint
from replay.checkpoints import read_checkpoint
from replay.store import ReplayError
from storage import keys
from totem.v1 import match_service_pb2
from totem_client import options
from totem_client.client import ClientTls, connect
from totem_client.errors import TotemError


async def _fetch(
    address: str, wait_s: float, tls: ClientTls | None, consistent_with: int
) -> match_service_pb2.GetCheckpointResponse:
    async with connect(address, tls=tls) as client:
        await client.wait_ready(wait_s)
        return await client.checkpoint(consistent_with)


@click.command("checkpoint")
@options.server
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the checkpoint (JSON) to this file.",
)
@click.option(
    "--since",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="An older checkpoint of this server: the new one must extend it (the server's "
    "consistency proof is checked), or nothing is written.",
)
@options.connect_timeout
@options.tls
def checkpoint(
    address: str,
    output: Path,
    since: Path | None,
    connect_timeout: float,
    tls: ClientTls | None,
) -> None:
    """Fetch a signed checkpoint of the server's transparency log of matches.

    Its signature is checked before it is written. Keep it away from the server's store
    and give it later to `totem-replay verify --all --checkpoint FILE`.
    """
    try:
        old = read_checkpoint(since) if since is not None else None
    except ReplayError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        answer = asyncio.run(
            _fetch(address, connect_timeout, tls, old.tree_size if old is not None else 0)
        )
    except TotemError as exc:
        raise click.ClickException(f"{address}: {exc}") from exc
    new = Checkpoint(
        tree_size=answer.tree_size,
        root_hash=bytes(answer.root_hash),
        timestamp_ms=answer.timestamp_ms,
        public_key=bytes(answer.public_key),
        signature=bytes(answer.signature),
    )
    if not keys.verify(new.public_key, new.signature, new.message()):
        raise click.ClickException(f"{address}: the checkpoint's signature does not verify")
    if old is not None:
        if old.public_key != new.public_key:
            raise click.ClickException(
                f"{address} signs with key {keys.fingerprint(new.public_key)}, "
                f"{since} with {keys.fingerprint(old.public_key)}: not the same log"
            )
        proof = [bytes(p) for p in answer.consistency_proof]
        if not merkle.verify_consistency(
            old.tree_size, new.tree_size, old.root_hash, new.root_hash, proof
        ):
            raise click.ClickException(
                f"{address}: INCONSISTENT: its log of {new.tree_size} leaves does not extend "
                f"the one of {since} ({old.tree_size} leaves): the log was rewritten"
            )
    output.write_text(new.to_json() + "\n")
    click.echo(
        f"checkpoint: {new.tree_size} leaves, root {new.root_hash.hex()}, signed by "
        f"{keys.fingerprint(new.public_key)}"
        + (f", consistent with {since}" if since is not None else ""),
        err=True,
    )
