"""The server's commands: run it, keep its projection and log, hand out organiser tokens.

They are the ``totem`` command's (composed with the client's in
:mod:`entrypoints.totem`), and ``python -m server`` runs them alone.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from server import access
from server.cluster import InstanceNameError
from server.limits import CALL_PRECISION_MS, ENV_NAMES, STREAM_PRECISION_MS, Limits
from server.organiser_command import organiser_token
from storage import keys
from storage.arena import DEFAULT_DB, store_env

#: The flag of each field of :class:`Limits`, its type and what it means; its
#: environment variable is :data:`ENV_NAMES`'s, its default the field's.
LIMIT_FLAGS: dict[str, tuple[str, click.ParamType[Any], str]] = {
    "stream_write_timeout_s": (
        "--stream-write-timeout",
        click.FloatRange(min=0, min_open=True),
        "Seconds one write of a Watch or Play stream may wait for its client to take it; a "
        "stream that falls behind or stops reading is then ended with RESOURCE_EXHAUSTED (a "
        "Watch stream with the version to resume after).",
    ),
    "streams_per_connection": (
        "--streams-per-connection",
        click.IntRange(min=1),
        "Open Watch and Play streams one connection may hold; beyond, RESOURCE_EXHAUSTED "
        "with a retry hint.",
    ),
    "streams_per_address": (
        "--streams-per-address",
        click.IntRange(min=1),
        "Open Watch and Play streams one client address may hold over all its connections; "
        "beyond, RESOURCE_EXHAUSTED with a retry hint.",
    ),
    "commands_per_second": (
        "--commands-per-second",
        click.FloatRange(min=0, min_open=True),
        "Commands (Act or Play) one seat of one match may send per second on average; "
        "beyond, RESOURCE_EXHAUSTED with a retry hint, not applied.",
    ),
    "command_burst": (
        "--command-burst",
        click.IntRange(min=1),
        "Commands one seat may send at once after a quiet moment.",
    ),
    "max_concurrent_calls": (
        "--max-concurrent-calls",
        click.IntRange(min=1),
        "Calls in flight in the process, open Watch streams included; beyond, refused at "
        "once with RESOURCE_EXHAUSTED and a retry hint.",
    ),
    "max_message_bytes": (
        "--max-message-bytes",
        click.IntRange(min=1),
        "The largest request message read, in bytes, on the gRPC port and the web port; a "
        "larger one is refused with RESOURCE_EXHAUSTED.",
    ),
    "pending_calls": (
        "--pending-calls",
        click.IntRange(min=1),
        "Calls gRPC may hold arrived but not yet taken by the server; beyond, gRPC cancels "
        "them itself. Keep it well above --max-concurrent-calls.",
    ),
    "idle_actor_s": (
        "--idle-actor-seconds",
        click.FloatRange(min=0, min_open=True),
        "A match with no command waiting or running and no timer set is let go from memory "
        "after this many idle seconds; the next call loads it again from the store.",
    ),
    "refusals_kept_per_seat": (
        "--refusals-kept-per-seat",
        click.IntRange(min=0),
        "Refused commands kept as evidence per seat of a match (and for its referee); "
        "beyond, they are only counted.",
    ),
    "tie_window_ms": (
        "--tie-window-ms",
        click.FloatRange(min=STREAM_PRECISION_MS, max=1000),
        "Jungle Speed grabs received on open Play streams within this many milliseconds "
        "after a race's first grab are simultaneous with it: the winner is drawn from the "
        "match's committed randomness (JS-4.2a). Recorded in each match when it is created; "
        "never below the stamp precision.",
    ),
    "call_tie_window_ms": (
        "--call-tie-window-ms",
        click.FloatRange(min=CALL_PRECISION_MS, max=1000),
        "The same window for a race whose first grab came as an Act call, whose stamp is "
        "coarser (JS-4.2a); the race's answers wait for it.",
    ),
}

F = TypeVar("F", bound=Callable[..., Any])


def limit_options(command: F) -> F:
    """An option for every field of :class:`Limits`, in the table's order, each handing
    the command a keyword named as the field."""
    for name, (flag, kind, text) in reversed(LIMIT_FLAGS.items()):
        command = click.option(
            flag,
            name,
            type=kind,
            envvar=ENV_NAMES[name],
            default=getattr(Limits, name),
            show_default=True,
            help=f"{text.removesuffix('.')} (env {ENV_NAMES[name]}).",
        )(command)
    return command


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
    "used as it is. Default: $XDG_CONFIG_HOME/totem-arena/server.key (else "
    "~/.config/totem-arena/server.key), away from the store, whose backups must not carry "
    "it; a key an older server left beside the store (DB.key) is still used, with a "
    "warning to move it.",
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
@click.option(
    "--organisers",
    "organisers_file",
    metavar="PATH",
    envvar="TOTEM_ORGANISERS",
    help="File of the organisers' credentials, one 'NAME SHA256-OF-TOKEN' per line "
    "(env TOTEM_ORGANISERS). Organisers create matches, get their referee tokens and see "
    "every match as its referee. Created with mode 0600 and one organiser if missing; "
    "that organiser's token is printed once (lost: `totem organiser-token` issues a new "
    "one). Default: DB.organisers beside the SQLite "
    "file; with PostgreSQL, totem-organisers in the working directory. "
    "TOTEM_ORGANISER_TOKEN adds one organiser by its token.",
)
@click.option(
    "--open-creation",
    is_flag=True,
    envvar="TOTEM_OPEN_CREATION",
    help="Let anyone create matches, within --creations-per-minute per client address; "
    "such a match has no referee (env TOTEM_OPEN_CREATION).",
)
@click.option(
    "--creations-per-minute",
    type=click.IntRange(min=1),
    default=access.OPEN_CREATIONS_PER_MINUTE,
    show_default=True,
    envvar="TOTEM_CREATIONS_PER_MINUTE",
    help="With --open-creation: matches one client address may create per minute "
    "(RESOURCE_EXHAUSTED with a retry hint beyond; env TOTEM_CREATIONS_PER_MINUTE).",
)
@click.option(
    "--organiser-creations-per-minute",
    type=click.IntRange(min=1),
    default=access.ORGANISER_CREATIONS_PER_MINUTE,
    show_default=True,
    envvar="TOTEM_ORGANISER_CREATIONS_PER_MINUTE",
    help="Matches one organiser may create per minute (env TOTEM_ORGANISER_CREATIONS_PER_MINUTE).",
)
@click.option(
    "--waiting-expiry-seconds",
    type=click.IntRange(min=1),
    default=3600,
    show_default=True,
    envvar="TOTEM_WAITING_EXPIRY_SECONDS",
    help="A match waiting for players that nobody joins for this long ends as abandoned "
    "(env TOTEM_WAITING_EXPIRY_SECONDS). A match in play ends so when its remaining "
    "players have all been away for its own abandon_after_ms (JS-8.3).",
)
@click.option(
    "--drain-seconds",
    type=click.FloatRange(min=0),
    envvar="TOTEM_DRAIN_SECONDS",
    default=1.0,
    show_default=True,
    help="On SIGTERM or SIGINT, how long the server stays up, reporting NOT_SERVING to "
    "health checks, before it closes its port: Watch streams end at once with the version "
    "to resume after, new commands get UNAVAILABLE with a retry hint, commands already "
    "waiting run; those still waiting at the end are refused, never applied, and Play "
    "streams end. A second "
    "signal ends the window at once (env TOTEM_DRAIN_SECONDS).",
)
@limit_options
@click.option(
    "--instance",
    envvar="TOTEM_INSTANCE",
    default=None,
    help="This server's name among several instances on one PostgreSQL store, recorded in "
    "every receive stamp it takes (env TOTEM_INSTANCE) [default: host/process id on "
    "PostgreSQL; none on SQLite, which serves one instance].",
)
@click.option(
    "--web",
    envvar="TOTEM_WEB",
    default=None,
    help="host:port to serve browsers on as well (env TOTEM_WEB; docs/web.md): the "
    "MatchService and TournamentService over the Connect protocol and gRPC-Web, within the "
    "same limits as the gRPC port, and the built web client at /. Over TLS with --tls-cert "
    "and --tls-key (and --tls-client-ca), on any address; without them, plaintext on "
    "loopback addresses only.",
)
@click.option(
    "--web-cors-origin",
    "web_cors_origins",
    multiple=True,
    metavar="ORIGIN",
    help="With --web: a browser origin (scheme://host[:port]) whose pages may call the API "
    "from another site; repeat for more (env TOTEM_WEB_CORS_ORIGINS, comma-separated). "
    "Default: none, same-origin calls only, which is all the web client served at / needs.",
)
@click.option(
    "--web-root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    envvar="TOTEM_WEB_ROOT",
    default=None,
    help="With --web: the built web client to serve at / (a directory holding index.html "
    "and assets/; env TOTEM_WEB_ROOT). Paths that name no file get index.html. Default: "
    "clients/web/dist of the source tree if built; otherwise / answers a page saying how "
    "to build it.",
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
    organisers_file: str | None,
    open_creation: bool,
    creations_per_minute: int,
    organiser_creations_per_minute: int,
    waiting_expiry_seconds: int,
    drain_seconds: float,
    instance: str | None,
    web: str | None,
    web_cors_origins: tuple[str, ...],
    web_root: Path | None,
    log_level: str,
    **limit_values: Any,
) -> None:
    """Run the gRPC server until SIGINT or SIGTERM.

    Matches, their timers and their streams carry on after a restart on the same store.
    Several instances may serve one PostgreSQL store at once (docs/operations.md).
    With --tls-cert and --tls-key it serves TLS only; plaintext is served on loopback
    addresses, or elsewhere with --insecure.
    """
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")
    env = store_env(db)
    try:
        organisers = access.load_or_create(organisers_file or access.default_file(env))
    except access.OrganisersFileError as exc:
        raise click.ClickException(str(exc)) from exc
    if organisers.new_token is not None:
        click.echo(
            f"organiser token (shown once; {organisers.path} keeps only its hash): "
            f"{organisers.new_token}",
            err=True,
        )
    policy = access.Access(
        access.from_env(organisers, os.environ),
        open_creation=open_creation,
        organiser_per_minute=organiser_creations_per_minute,
        open_per_minute=creations_per_minute,
    )
    limits = Limits(**limit_values)
    from server.serve import serve_forever
    from server.tls_files import TlsFileError, server_tls

    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    if tls_client_ca is not None and tls_cert is None:
        raise click.UsageError("--tls-client-ca needs --tls-cert and --tls-key")
    tls = None
    if tls_cert is not None and tls_key is not None:
        try:
            tls = server_tls(tls_cert, tls_key, tls_client_ca)
        except TlsFileError as exc:  # one line, before a bind error can hide it
            raise click.ClickException(str(exc)) from exc
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

    if web is not None and tls is None and not _loopback(web):
        raise click.UsageError(
            f"--web {web} is not a loopback address: serve it with --tls-cert and --tls-key "
            "(plaintext is served on loopback addresses only)"
        )
    origins = web_cors_origins or tuple(
        origin.strip()
        for origin in os.environ.get("TOTEM_WEB_CORS_ORIGINS", "").split(",")
        if origin.strip()
    )
    for origin in origins:
        if not _origin(origin):
            raise click.UsageError(
                f"--web-cors-origin {origin!r} is not an origin: scheme://host[:port], "
                "without a path (for example https://arena.example)"
            )
    from server.web import WebSettings

    web_settings = None if web is None else WebSettings(web, origins, web_root)

    def web_ready(port: int) -> None:
        host = (web or "").rsplit(":", 1)[0]
        over = "TLS" if tls is not None else "plaintext"
        click.echo(f"totem serving Connect for browsers on {host}:{port} over {over}", err=True)

    def ready(port: int) -> None:
        store = env.get("SQLITE_DBNAME") or "PostgreSQL"
        host = address.rsplit(":", 1)[0]
        over = "TLS" if tls is not None else "plaintext"
        named = f", instance {instance}" if instance else ""
        click.echo(f"totem serving on {host}:{port} over {over} (store: {store}{named})", err=True)

    try:
        asyncio.run(
            serve_forever(
                address,
                env,
                ready,
                tls,
                key_file=key_file,
                drain=drain_seconds,
                access=policy,
                waiting_expiry_ms=waiting_expiry_seconds * 1000,
                limits=limits,
                instance=instance,
                web=web_settings,
                web_ready=web_ready,
            )
        )
    except (keys.KeyFileError, InstanceNameError) as exc:  # one line, no traceback
        raise click.ClickException(str(exc)) from exc


#: The store a maintenance command works on, as `totem serve --db` names it.
store_db_option = click.option(
    "--db",
    envvar="TOTEM_DB",
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite file of the event store (env TOTEM_DB). Ignored when PostgreSQL is "
    "selected with PERSISTENCE_MODULE=eventsourcing.postgres or POSTGRES_DBNAME.",
)


@main.command("rebuild-summaries")
@store_db_option
def rebuild_summaries(db: str) -> None:
    """Rewrite the summary of every match from its events.

    ListMatches and start-up read a table of match summaries kept in the store beside
    the events, written with them. A server catches the table up at start-up when
    matches are missing at its end (a store from before the table existed, or the table
    dropped); this command rewrites every row, for rows lost or damaged anywhere. It
    reads every match ever played: it takes as long as a replay of the whole store. Safe
    while servers run: no row is ever moved back to an older version.
    """
    from storage.arena import Arena

    arena = Arena(_existing_store(db))
    try:
        written = arena.rebuild_summaries()
    finally:
        arena.close()
    click.echo(f"{written} match summaries written", err=True)


@main.command("log-matches")
@store_db_option
def log_matches(db: str) -> None:
    """Add to the transparency log the matches it lacks: those of a store written before
    the log existed.

    A server logs each match's creation and end as it saves them (docs/audit.md); a
    store from an older server has matches the log never saw, which no checkpoint
    covers. This appends their leaves (creation, and end if ended) in creation order, as
    the matches stand now: checkpoints taken afterwards vouch for them from then on.
    Run it with every server of the store stopped; running it again appends nothing.
    """
    from storage.arena import Arena

    arena = Arena(_existing_store(db))
    try:
        appended = arena.log_unlogged_matches()
    finally:
        arena.close()
    click.echo(f"{appended} leaves appended to the transparency log", err=True)


def _existing_store(db: str) -> dict[str, str]:
    """The settings of the store of ``--db``, which must exist: a command that repairs a
    store never creates an empty one."""
    env = store_env(db)
    if (
        env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite"
        and not Path(env["SQLITE_DBNAME"]).exists()
    ):
        raise click.ClickException(f"no store at {env['SQLITE_DBNAME']}")
    return env


def _origin(text: str) -> bool:
    """Whether ``text`` is a browser origin: ``http(s)://host[:port]``, nothing more."""
    scheme, sep, rest = text.partition("://")
    return (
        scheme in ("http", "https")
        and bool(sep)
        and bool(rest)
        and not any(c in rest for c in "/?#@ ")
    )


def _loopback(address: str) -> bool:
    """Whether ``host:port`` listens on this machine only."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


main.add_command(organiser_token)
