"""Entrants who have not taken their seats at a round's start deadline (TO-9.3): the
server's own timer, set by the tournament's no-show time, records them absent; a table
left short of the game's players is decided without a match, one with enough is
started with those present (TO-9.4)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from server.serve import RunningServer
from tests.service.tournament_helpers import Stubs
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms

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
    match = await stubs.matches.GetMatch(ms.GetMatchRequest(match_id=table.match_id))
    assert match.summary.status == common_pb2.MATCH_STATUS_WAITING


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
