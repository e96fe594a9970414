"""``totem``: run the server, and run bots against one."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from pathlib import Path

import click

from server import keys
from server.application import DEFAULT_DB, store_env
from totem_client.cli import bots
from totem_client.play.cli import play
from totem_client.server_key import server_key


@click.group()
@click.version_option(package_name="totem-arena")
def main() -> None:
    """Totem Arena: an event-sourced game server for Jungle Speed, Tribes and Village."""


@main.command()
@click.option(
    "--address",
    envvar="TOTEM_ADDRESS",
    default="127.0.0.1:50051",
    show_default=True,
    help="host:port to listen on (env TOTEM_ADDRESS). Port 0 picks a free port.",
)
@click.option(
    "--db",
    envvar="TOTEM_DB",
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite file of the event store (env TOTEM_DB). Ignored when PostgreSQL is "
    "selected with PERSISTENCE_MODULE=eventsourcing.postgres or POSTGRES_DBNAME.",
)
@click.option(
    "--key-file",
    metavar="PATH",
    envvar="TOTEM_KEY_FILE",
    help="PEM file (PKCS8) of the server's Ed25519 key, which signs every match that "
    "ends (env TOTEM_KEY_FILE). Created with mode 0600 if missing; an existing file is "
    "used as it is. Default: DB.key beside the SQLite file; with PostgreSQL, "
    f"{keys.POSTGRES_KEY_FILE} in the working directory.",
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="TOTEM_TLS_CERT",
    help="PEM certificate chain of the server: serve TLS only (env TOTEM_TLS_CERT).",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="TOTEM_TLS_KEY",
    help="PEM private key of --tls-cert (env TOTEM_TLS_KEY).",
)
@click.option(
    "--tls-client-ca",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="TOTEM_TLS_CLIENT_CA",
    help="PEM CA certificates: every client must present a certificate they signed "
    "(mutual TLS; env TOTEM_TLS_CLIENT_CA).",
)
@click.option(
    "--insecure",
    is_flag=True,
    help="Serve plaintext on an address other than loopback: tokens then cross the "
    "network in clear. Without TLS, only loopback addresses are served otherwise.",
)
@click.option("--log-level", default="INFO", show_default=True, help="Python logging level.")
def serve(
    address: str,
    db: str,
    tls_cert: Path | None,
    tls_key: Path | None,
    tls_client_ca: Path | None,
    insecure: bool,
    key_file: str | None,
    log_level: str,
) -> None:
    """Run the gRPC server until SIGINT or SIGTERM.

    Matches, their timers and their streams carry on after a restart on the same store.
    With --tls-cert and --tls-key it serves TLS only; plaintext is served on loopback
    addresses, or elsewhere with --insecure.
    """
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")
    env = store_env(db)
    key_file = key_file or keys.default_key_file(env)
    from server.serve import ServerTls, serve_forever

    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    if tls_client_ca is not None and tls_cert is None:
        raise click.UsageError("--tls-client-ca needs --tls-cert and --tls-key")
    tls = None
    if tls_cert is not None and tls_key is not None:
        ca = tls_client_ca.read_bytes() if tls_client_ca is not None else None
        tls = ServerTls(tls_cert.read_bytes(), tls_key.read_bytes(), ca)
    elif not _loopback(address):
        if not insecure:
            raise click.UsageError(
                f"{address} is not a loopback address: serve it with --tls-cert and "
                "--tls-key, or pass --insecure to send bearer tokens over it in clear"
            )
        click.echo(
            f"warning: serving plaintext on {address}: bearer tokens cross the network in clear",
            err=True,
        )

    def ready(port: int) -> None:
        store = env.get("SQLITE_DBNAME") or "PostgreSQL"
        host = address.rsplit(":", 1)[0]
        over = "TLS" if tls is not None else "plaintext"
        click.echo(f"totem serving on {host}:{port} over {over} (store: {store})", err=True)

    try:
        asyncio.run(serve_forever(address, env, ready, tls, key_file=key_file))
    except keys.KeyFileError as exc:  # the server does not start: one line, no traceback
        raise click.ClickException(str(exc)) from exc


@main.command("rebuild-summaries")
@click.option(
    "--db",
    envvar="TOTEM_DB",
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite file of the event store (env TOTEM_DB). Ignored when PostgreSQL is "
    "selected with PERSISTENCE_MODULE=eventsourcing.postgres or POSTGRES_DBNAME.",
)
def rebuild_summaries(db: str) -> None:
    """Rewrite the summary of every match from its events.

    ListMatches and start-up read a table of match summaries kept in the store beside
    the events, written with them. A server catches the table up at start-up when
    matches are missing at its end (a store from before the table existed, or the table
    dropped); this command rewrites every row, for rows lost or damaged anywhere. It
    reads every match ever played: it takes as long as a replay of the whole store. Safe
    while servers run: no row is ever moved back to an older version.
    """
    from server.application import Arena

    env = store_env(db)
    if (
        env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite"
        and not Path(env["SQLITE_DBNAME"]).exists()
    ):
        raise click.ClickException(f"no store at {env['SQLITE_DBNAME']}")
    arena = Arena(env)
    try:
        written = arena.rebuild_summaries()
    finally:
        arena.close()
    click.echo(f"{written} match summaries written", err=True)


def _loopback(address: str) -> bool:
    """Whether ``host:port`` listens on this machine only."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


main.add_command(bots)
main.add_command(server_key)
main.add_command(play)
