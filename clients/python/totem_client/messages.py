"""The contract's messages that the client hands out, under the names its callers use.

Aliases, not wrappers: what a call returns is the generated message itself. They are
named here, apart from the client, so that the streams and sessions that yield and keep
them can name them too without importing the client, which imports those.
"""

from __future__ import annotations

from dataclasses import dataclass

from totem.v1 import common_pb2, match_service_pb2

#: One event of a match; a Watch stream's events carry the viewer's state after each.
MatchEvent = match_service_pb2.MatchEvent
#: The match as one viewer may see it at one version: what a client renders.
MatchState = match_service_pb2.MatchState
#: What GetMatch answers: the public facts, the caller's role and seat, its view.
MatchView = match_service_pb2.GetMatchResponse
#: Public facts about a match, the same for every viewer, as ListMatches lists them.
MatchSummary = common_pb2.MatchSummary
#: A command's answer: the version after it, its events, the caller's state, a receipt.
ActResponse = match_service_pb2.ActResponse


@dataclass(frozen=True)
class CreatedMatch:
    """A new match: its id, the referee's bearer token, and the seed commitment."""

    match_id: str
    referee_token: str
    seed_commitment: bytes
