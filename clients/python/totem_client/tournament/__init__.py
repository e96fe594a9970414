"""Tournaments through the client: :class:`TournamentClient` over the TournamentService,
the typed values its calls return, and the verdicts a referee gives
(docs/tournaments.md, TO-x.y).

>>> async with connect("127.0.0.1:50051", organiser_token=TOKEN) as client:  # doctest: +SKIP
...     tournaments = TournamentClient.of(client)
...     created = await tournaments.create("tribes", rounds=3)
...     alice = await tournaments.add_entrant(created.tournament_id, "alice")
...     round_1 = await tournaments.start_round(created.tournament_id)

An entrant's bot (:func:`totem_client.tournament.entrant.play_entrant`) and the
``totem tournament`` commands (:mod:`totem_client.tournament.cli`) are in modules of
their own, which this package does not import: they need the bots.
"""

from totem_client.tournament.client import (
    OrganiserRefused,
    TournamentClient,
    TournamentEventStream,
    connect_tournaments,
)
from totem_client.tournament.results import (
    FORMATS,
    TIE_BREAKS,
    ByeInfo,
    CreatedTournament,
    DisputeInfo,
    EntrantInfo,
    EntrantTicket,
    Penalise,
    RefereeTicket,
    Replace,
    Replay,
    ResultSheet,
    RoundInfo,
    Ruled,
    RulingInfo,
    Seat,
    StandingRow,
    Standings,
    Stands,
    TableInfo,
    TournamentEvent,
    TournamentInfo,
    TournamentPage,
    TournamentSummary,
    Verdict,
)

__all__ = [
    "FORMATS",
    "TIE_BREAKS",
    "ByeInfo",
    "CreatedTournament",
    "DisputeInfo",
    "EntrantInfo",
    "EntrantTicket",
    "OrganiserRefused",
    "Penalise",
    "RefereeTicket",
    "Replace",
    "Replay",
    "ResultSheet",
    "RoundInfo",
    "Ruled",
    "RulingInfo",
    "Seat",
    "StandingRow",
    "Standings",
    "Stands",
    "TableInfo",
    "TournamentClient",
    "TournamentEvent",
    "TournamentEventStream",
    "TournamentInfo",
    "TournamentPage",
    "TournamentSummary",
    "Verdict",
    "connect_tournaments",
]
