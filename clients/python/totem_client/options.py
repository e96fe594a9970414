"""Command-line options every ``totem`` command that reaches a server takes, worded once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from totem_client.client import ClientTls
from totem_client.games.base import GameInfo

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_ADDRESS = "127.0.0.1:50051"

#: ``--address``: where the running server listens.
address = click.option(
    "--address",
    envvar="TOTEM_ADDRESS",
    default=DEFAULT_ADDRESS,
    show_default=True,
    help="host:port of the running server (env TOTEM_ADDRESS).",
)

#: ``--server`` (or ``--address``): the running server a one-off command asks.
server = click.option(
    "--server",
    "--address",
    "address",
    envvar="TOTEM_ADDRESS",
    default=DEFAULT_ADDRESS,
    show_default=True,
    help="host:port of the running server (env TOTEM_ADDRESS).",
)

#: ``--connect-timeout``: how long to wait for the server before giving up.
connect_timeout = click.option(
    "--connect-timeout",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="Seconds to wait for the server before giving up.",
)

#: ``--organiser-token``: the credential that lets a client create matches.
organiser_token = click.option(
    "--organiser-token",
    envvar="TOTEM_ORGANISER_TOKEN",
    default=None,
    metavar="TOKEN",
    help="An organiser's token from the server's operator, sent only to create a match "
    "(env TOTEM_ORGANISER_TOKEN). Needed unless the server lets anyone create matches "
    "(totem serve --open-creation).",
)


#: ``--receipts DIR``: where to keep the server's receipts (docs/client.md, "Receipts").
receipts = click.option(
    "--receipts",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="TOTEM_RECEIPTS",
    default=None,
    metavar="DIR",
    help="Keep the newest receipt the server signed for each match in DIR, as "
    "<match id>.receipt.json (env TOTEM_RECEIPTS): `totem-replay verify MATCH --receipt "
    "FILE` checks a store against it.",
)


def _client_tls(
    tls: bool, ca: Path | None, cert: Path | None, key: Path | None
) -> ClientTls | None:
    """The TLS settings the options describe, or None for plaintext."""
    if (cert is None) != (key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    if not (tls or ca or cert):
        return None
    return ClientTls(
        ca=ca.read_bytes() if ca else None,
        cert=cert.read_bytes() if cert else None,
        key=key.read_bytes() if key else None,
    )


def tls(command: F) -> F:
    """``--tls``, ``--tls-ca``, ``--tls-cert``, ``--tls-key``: how to reach a server that
    serves TLS (``totem serve --tls-cert``), handed to the command as one ``tls``
    argument (a :class:`ClientTls`, or None for plaintext)."""

    @functools.wraps(command)
    def with_tls(
        *args: Any,
        tls: bool,
        tls_ca: Path | None,
        tls_cert: Path | None,
        tls_key: Path | None,
        **kwargs: Any,
    ) -> Any:
        return command(*args, tls=_client_tls(tls, tls_ca, tls_cert, tls_key), **kwargs)

    pem = click.Path(exists=True, dir_okay=False, path_type=Path)
    decorators = [
        click.option(
            "--tls",
            is_flag=True,
            envvar="TOTEM_TLS",
            help="Reach the server over TLS, trusting the system's CAs (env TOTEM_TLS).",
        ),
        click.option(
            "--tls-ca",
            type=pem,
            envvar="TOTEM_TLS_CA",
            help="PEM CA certificates that signed the server's certificate: TLS, trusting "
            "these (env TOTEM_TLS_CA).",
        ),
        click.option(
            "--tls-cert",
            type=pem,
            envvar="TOTEM_TLS_CLIENT_CERT",
            help="PEM certificate chain of this client, for a server that asks for one "
            "(mutual TLS; env TOTEM_TLS_CLIENT_CERT).",
        ),
        click.option(
            "--tls-key",
            type=pem,
            envvar="TOTEM_TLS_CLIENT_KEY",
            help="PEM private key of --tls-cert (env TOTEM_TLS_CLIENT_KEY).",
        ),
    ]
    wrapped: Any = with_tls
    for decorator in reversed(decorators):
        wrapped = decorator(wrapped)
    return cast(F, wrapped)


def delays(
    ctx: click.Context, param: click.Parameter, value: tuple[float, float]
) -> tuple[float, float]:
    """The callback of a ``LOW HIGH`` delay option (a bot's reaction or think time): a
    range a delay is drawn from, so ``0 <= LOW <= HIGH``."""
    low, high = value
    if not 0 <= low <= high:
        raise click.BadParameter("give LOW HIGH with 0 <= LOW <= HIGH")
    return low, high


def players(game: GameInfo[Any], help: str) -> click.Option:
    """``--players``: how many seats a new match has, within what the game allows."""
    return click.Option(
        ["--players"],
        type=click.IntRange(game.seats.start, game.seats.stop - 1),
        default=game.default_seats,
        show_default=True,
        help=help,
    )


def delay_range(flag: str, default: tuple[float, float], help: str) -> click.Option:
    """A ``LOW HIGH`` option of milliseconds that a bot's delays are drawn from (its
    reaction, its thinking), checked by :func:`delays`: every game's bots have some,
    each with its own flag and default."""
    return click.Option(
        [flag],
        nargs=2,
        type=float,
        default=default,
        show_default=True,
        callback=delays,
        metavar="LOW HIGH",
        help=help,
    )


#: The parameters of the options that say how to reach the server, not what to play.
CONNECTION_PARAMS = frozenset(
    {"address", "organiser_token", "tls", "tls_ca", "tls_cert", "tls_key", "connect_timeout"}
)


def refuse_new_match_options(ctx: click.Context, kept: Collection[str], beside: str) -> None:
    """Refuse every option given on the command line that describes a new match, when the
    command goes to an existing one instead (``beside``: "--join", "--join or
    --spectate"): it would be ignored. ``kept`` names the command's parameters that still
    apply there, beside those of :data:`CONNECTION_PARAMS`."""
    for param in ctx.command.params:
        name = param.name or ""
        if name in CONNECTION_PARAMS or name in kept:
            continue
        if ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT:
            raise click.UsageError(f"{param.opts[0]} is for a new match; not with {beside}")
