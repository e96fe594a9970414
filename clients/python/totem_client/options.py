"""Command-line options every ``totem`` command that reaches a server takes, worded once."""

from __future__ import annotations

import click

DEFAULT_ADDRESS = "127.0.0.1:50051"

#: ``--address``: where the running server listens.
address = click.option(
    "--address",
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
