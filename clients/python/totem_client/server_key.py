"""``totem server-key``: the public key a running server signs ended matches with.

Judges keep it (or get it from the operator) and check matches against it with
``totem-replay verify --key``: a key read from the store alone proves nothing, since
whoever rewrites the store can also re-sign with a key of their own.
"""

from __future__ import annotations

import asyncio

import click
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from totem_client import options
from totem_client.client import ClientTls, connect
from totem_client.errors import TotemError


def pem(raw_public_key: bytes) -> str:
    """The key as a PEM SubjectPublicKeyInfo block, as OpenSSL tools read it."""
    key = Ed25519PublicKey.from_public_bytes(raw_public_key)
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


async def _fetch(address: str, wait_s: float, tls: ClientTls | None) -> tuple[str, bytes]:
    async with connect(address, tls=tls) as client:
        await client.wait_ready(wait_s)
        return await client.server_key()


@click.command("server-key")
@options.server
@click.option("--pem", "as_pem", is_flag=True, help="Print the key as PEM instead of hex.")
@options.connect_timeout
@options.tls
def server_key(address: str, as_pem: bool, connect_timeout: float, tls: ClientTls | None) -> None:
    """Print the server's public key (Ed25519, 64 hex digits; PEM with --pem).

    Give it to `totem-replay verify --key` to check a match's signature against it.
    """
    try:
        algorithm, key = asyncio.run(_fetch(address, connect_timeout, tls))
    except TotemError as exc:
        raise click.ClickException(f"{address}: {exc}") from exc
    if algorithm != "Ed25519" or len(key) != 32:
        raise click.ClickException(f"{address}: unexpected key: {algorithm}, {len(key)} bytes")
    click.echo(pem(key).rstrip("\n") if as_pem else key.hex())
