"""``totem``: run the server, and run bots against one."""

from __future__ import annotations

import asyncio
import logging

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
@click.option("--log-level", default="INFO", show_default=True, help="Python logging level.")
def serve(address: str, db: str, key_file: str | None, log_level: str) -> None:
    """Run the gRPC server until SIGINT or SIGTERM.

    Matches, their timers and their streams carry on after a restart on the same store.
    """
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")
    env = store_env(db)
    key_file = key_file or keys.default_key_file(env)
    from server.serve import serve_forever

    def ready(port: int) -> None:
        store = env.get("SQLITE_DBNAME") or "PostgreSQL"
        host = address.rsplit(":", 1)[0]
        click.echo(f"totem serving on {host}:{port} (store: {store})", err=True)

    try:
        asyncio.run(serve_forever(address, env, ready, key_file=key_file))
    except keys.KeyFileError as exc:  # the server does not start: one line, no traceback
        raise click.ClickException(str(exc)) from exc


main.add_command(bots)
main.add_command(server_key)
main.add_command(play)
