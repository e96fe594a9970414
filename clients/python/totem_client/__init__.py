"""Python client of the Totem Arena server: an asyncio library over the gRPC contract.

>>> async with connect("127.0.0.1:50051") as client:      # doctest: +SKIP
...     created = await client.create_match(max_players=2)
...     alice = await client.join(created.match_id, "alice")
...     async for event in alice.watch():
...         ...

Each game's own names (its commands, its options from keywords, its names of badges or
spells) are in its module of :mod:`totem_client.games`. Tournaments have their own
client, :class:`TournamentClient` (:mod:`totem_client.tournament`). See ``docs/client.md``.
"""

from totem_client.client import Client, ClientTls, Page, connect
from totem_client.errors import TotemError
from totem_client.games import GAMES, Command
from totem_client.messages import (
    ActResponse,
    CreatedMatch,
    MatchEvent,
    MatchState,
    MatchSummary,
    MatchView,
)
from totem_client.session import Session
from totem_client.streams import RESUMABLE_CODES, EventStream, PlayStream
from totem_client.tournament import (
    TournamentClient,
    TournamentEvent,
    TournamentEventStream,
    TournamentInfo,
    connect_tournaments,
)

__all__ = [
    "GAMES",
    "RESUMABLE_CODES",
    "ActResponse",
    "Client",
    "ClientTls",
    "Command",
    "CreatedMatch",
    "EventStream",
    "MatchEvent",
    "MatchState",
    "MatchSummary",
    "MatchView",
    "Page",
    "PlayStream",
    "Session",
    "TotemError",
    "TournamentClient",
    "TournamentEvent",
    "TournamentEventStream",
    "TournamentInfo",
    "connect",
    "connect_tournaments",
]
