"""What a command-line tool tells its user when a call fails: one line that names the
setting to change, where the server's own sentence speaks to API clients (the gRPC
metadata a token travels in, which a person at a terminal never sets)."""

from __future__ import annotations

import grpc

from totem_client.errors import CreationRefused, TotemError

#: Where the command-line tools take an organiser's token from.
ORGANISER_TOKEN_SETTING = "TOTEM_ORGANISER_TOKEN (or --organiser-token)"


def failure_line(error: TotemError, address: str) -> str:
    """The line to print for ``error``, from a call to the server at ``address``."""
    if isinstance(error, CreationRefused):
        if error.had_token:
            return (
                f"the server at {address} does not know the organiser token in "
                f"{ORGANISER_TOKEN_SETTING}: set it to a token of that server's organiser "
                "file (`totem organiser-token` on the server's machine issues a new one)"
            )
        return (
            f"the server at {address} lets only organisers create matches: set "
            f"{ORGANISER_TOKEN_SETTING} to the organiser token `totem serve` printed on "
            "its first start (lost: `totem organiser-token` issues a new one), or start "
            "the server with --open-creation"
        )
    if error.code == grpc.StatusCode.UNAVAILABLE:
        return (
            f"cannot reach the Totem server at {address}: {error.message}; "
            "is `totem serve` running there?"
        )
    return str(error)
