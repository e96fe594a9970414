"""``totem organiser-token``: a new organiser token, for one that was lost or a new
organiser.

The server keeps only the hashes of organiser tokens, so a lost token cannot be shown
again; the operator, who holds the organiser file, issues a new one instead. The token
is printed once on standard output (for a script or a secret store), never kept in clear.
"""

from __future__ import annotations

import click

from server import access
from storage.arena import DEFAULT_DB, store_env


@click.command("organiser-token")
@click.option(
    "--db",
    envvar="TOTEM_DB",
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite file of the event store, beside which the organiser file lies (env "
    "TOTEM_DB); as `totem serve` takes it.",
)
@click.option(
    "--organisers",
    "organisers_file",
    metavar="PATH",
    envvar="TOTEM_ORGANISERS",
    help="The server's organiser file (env TOTEM_ORGANISERS), as `totem serve` takes it. "
    "Default: DB.organisers beside the SQLite file; with PostgreSQL, totem-organisers in "
    "the working directory.",
)
@click.option(
    "--name",
    default="organiser",
    show_default=True,
    help="The organiser whose token is issued: the one the server's first start made is "
    "'organiser'. A name not in the file adds an organiser.",
)
def organiser_token(db: str, organisers_file: str | None, name: str) -> None:
    """Issue a new organiser token and print it once.

    The token's hash replaces NAME's line in the organiser file, so a lost token stops
    working; a NAME not yet in the file adds an organiser. Restart the server (every
    instance reading the file) for the change to take effect. The server also takes one
    organiser's token from TOTEM_ORGANISER_TOKEN in its environment; the client commands
    (totem bots, totem play) read the same variable to create matches.
    """
    path = organisers_file or access.default_file(store_env(db))
    try:
        token = access.issue_token(path, name)
    except access.OrganisersFileError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"new token of organiser {name!r} in {path} (shown once; restart the server to use it):",
        err=True,
    )
    click.echo(token)
