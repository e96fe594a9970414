"""Python client of the Totem Arena server: an asyncio library over the gRPC contract.

>>> async with connect("127.0.0.1:50051") as client:      # doctest: +SKIP
...     created = await client.create_match(max_players=2)
...     alice = await client.join(created.match_id, "alice")
...     async for event in alice.watch():
...         ...

See ``docs/client.md``.
"""

from totem_client.client import Client, ClientTls, CreatedMatch, Page, connect
from totem_client.errors import TotemError
from totem_client.games import (
    BADGES,
    DIE_FACES,
    GAMES,
    GRAB_TARGETS,
    VARIANTS,
    Command,
    JungleSpeedCommand,
    TribesCommand,
    VillageCommand,
    tribes_options,
    village_options,
)
from totem_client.messages import ActResponse, MatchEvent, MatchState, MatchSummary, MatchView
from totem_client.session import Session
from totem_client.streams import RESUMABLE_CODES, EventStream, PlayStream

__all__ = [
    "BADGES",
    "DIE_FACES",
    "GAMES",
    "GRAB_TARGETS",
    "RESUMABLE_CODES",
    "VARIANTS",
    "ActResponse",
    "Client",
    "ClientTls",
    "Command",
    "CreatedMatch",
    "EventStream",
    "JungleSpeedCommand",
    "MatchEvent",
    "MatchState",
    "MatchSummary",
    "MatchView",
    "Page",
    "PlayStream",
    "Session",
    "TotemError",
    "TribesCommand",
    "VillageCommand",
    "connect",
    "tribes_options",
    "village_options",
]
