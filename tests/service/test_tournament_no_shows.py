"""Entrants who have not taken their seats at a round's start deadline (TO-9.3): the
server's own timer, set by the tournament's no-show time, records them absent; a table
left short of the game's players is decided without a match, one with enough is
started with those present (TO-9.4). An entrant who withdraws mid-round forfeits their
table at once (TO-8.4)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from server.serve import RunningServer
from tests.service.helpers import bearer
from tests.service.tournament_helpers import Stubs
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms
from totem.v1 import tournament_service_pb2 as tp

#: Short enough for a test, long enough for every seat meant to be taken to be taken.
NO_SHOW_MS = 1_500


@pytest.fixture
async def stubs(server: RunningServer) -> AsyncIterator[Stubs]:
    made = Stubs(server.port)
    try:
        yield made
    finally:
        await made.close()


async def test_an_absent_entrant_forfeits_and_a_short_table_is_decided_TO_9_3(
    stubs: Stubs,
) -> None:
    field = await stubs.create(["ann", "bob"], rounds=1, no_show_ms=NO_SHOW_MS)
    table = (await stubs.start_round(field)).tables[0]
    await stubs.seat(field, "ann")
    absent = await stubs.first(field, "NoShow")
    assert json.loads(absent.fields_json)["entrant"] == "bob"
    result = json.loads((await stubs.first(field, "ResultRecorded")).fields_json)
    # Decided without a match: no digest, version 0; the absent entrant placed last.
    assert (result["match_digest"], result["match_version"]) == ("", 0)
    assert result["forfeited"] == ["bob"]
    assert dict(zip(result["seats"], result["places"], strict=True)) == {"ann": 1, "bob": 2}
    await stubs.events(field, "TournamentEnded")
    standings = {r.entrant: r.points for r in (await stubs.get(field)).standings}
    assert standings == {"ann": "1", "bob": "0"}
    # The table's match decides nothing any more: the server stops it.
    match = await _ended(stubs, table.match_id)
    assert match.end_reason == common_pb2.END_REASON_STOPPED


async def test_a_table_with_enough_present_is_started_with_them_TO_9_3(stubs: Stubs) -> None:
    field = await stubs.create(["ann", "bob", "cat"], table_size=3, no_show_ms=NO_SHOW_MS)
    table = (await stubs.start_round(field)).tables[0]
    seats = {e: (await stubs.seat(field, e)).seat for e in ("ann", "cat")}
    await stubs.first(field, "NoShow", entrant="bob")
    # The server starts the table with the two present; it plays as any match.
    async for event in stubs.matches.Watch(ms.WatchRequest(match_id=table.match_id)):
        if event.tribes.WhichOneof("event") == "started":
            assert len(event.state.summary.players) == 2
            break
    await stubs.stop(table.match_id, {seats["cat"]: 1, seats["ann"]: 2})
    result = json.loads((await stubs.first(field, "ResultRecorded")).fields_json)
    assert len(result["match_digest"]) == 64
    assert dict(zip(result["seats"], result["places"], strict=True)) == {
        "ann": 2,
        "bob": 3,
        "cat": 1,
    }


async def test_a_withdrawal_mid_match_forfeits_the_table_at_once_TO_8_4(stubs: Stubs) -> None:
    field = await stubs.create(["ann", "bob", "cat", "dan"], rounds=2)
    table, other = (await stubs.start_round(field)).tables
    await stubs.seat_table(field, table)
    quitter, stayer = table.seats[1], table.seats[0]
    withdrew = await stubs.tournaments.Withdraw(
        tp.WithdrawRequest(tournament_id=field.tournament_id),
        metadata=bearer(field.tokens[quitter]),
    )
    assert withdrew.first_missed_round == 2
    result = json.loads((await stubs.first(field, "ResultRecorded")).fields_json)
    assert result["match_id"] == table.match_id and result["forfeited"] == [quitter]
    assert dict(zip(result["seats"], result["places"], strict=True)) == {stayer: 1, quitter: 2}
    assert (await _ended(stubs, table.match_id)).end_reason == common_pb2.END_REASON_STOPPED
    await stubs.play_table(field, other)
    await stubs.round_ended(field, 1)
    second = await stubs.start_round(field)
    # TO-3.6: never paired again; three left at two seats, so one bye.
    assert quitter not in {e for t in second.tables for e in t.seats}
    assert len(second.byes) == 1


async def _ended(stubs: Stubs, match_id: str) -> ms.MatchSummary:
    """The match's summary once its last event is stored (read from its stream)."""
    async for event in stubs.matches.Watch(ms.WatchRequest(match_id=match_id)):
        if event.WhichOneof("event") == "match_ended":
            break
    return (await stubs.matches.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary
