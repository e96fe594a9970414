"""``totem``: run the server, and play, run bots or fetch evidence against one."""

from __future__ import annotations

# First: the server package makes its gRPC settings before anything loads grpc.
import server  # noqa: F401
from entrypoints.checkpoint import checkpoint
from server.cli import main
from totem_client.cli import bots
from totem_client.play.cli import play
from totem_client.server_key import server_key
from totem_client.tournament.cli import tournament

main.add_command(bots)
main.add_command(server_key)
main.add_command(checkpoint)
main.add_command(play)
main.add_command(tournament)

__all__ = ["main"]
