"""``totem-replay``: the judge's tool, and the one command of it that asks a running
server for something (a fork of a match)."""

from __future__ import annotations

from entrypoints.fork import fork
from replay.cli import main

main.add_command(fork)

__all__ = ["main"]
