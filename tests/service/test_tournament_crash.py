"""A server killed with SIGKILL in the middle of a tournament's round (TO-9): every
tournament event it acknowledged is in the store, and once it is started again the
round resumes — the result of a table whose match ended just before the kill is
recorded by the restarted server — and the tournament plays on to its end. On SQLite
and on PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench import harness
from tests.service.tournament_helpers import Stubs

ENTRANTS = ["ann", "bob", "cat", "dan"]


async def test_a_sigkill_mid_round_loses_nothing_and_the_round_resumes(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    server = harness.Server(store_env, tmp_path)
    await asyncio.to_thread(server.start)
    try:
        stubs = Stubs(server.port, harness.ORGANISER_TOKEN)
        field = await stubs.create(ENTRANTS, rounds=2)
        first, second = (await stubs.start_round(field)).tables
        seats = await stubs.seat_table(field, first)
        await stubs.seat_table(field, second)
        acknowledged = await stubs.get(field)
        # The first table's match ends (acknowledged); the server is killed at once,
        # whether or not it has recorded the table's result yet.
        await stubs.stop(first.match_id, {seats[first.seats[0]]: 1, seats[first.seats[1]]: 2})
        server.kill()
        await stubs.close()

        await asyncio.to_thread(server.start)
        stubs = Stubs(server.port, harness.ORGANISER_TOKEN)
        after = await stubs.get(field)
        assert after.summary.version >= acknowledged.summary.version
        assert [e.name for e in after.entrants] == ENTRANTS
        assert after.referees == ["Ada"]
        assert [list(t.seats) for t in after.rounds[0].tables] == [
            list(first.seats),
            list(second.seats),
        ]
        # The round resumes: the result of the table that ended before the kill...
        await stubs.recorded(field, first.match_id)
        # ...and the other table's entrants still hold their seats with their tokens.
        await stubs.play_table(field, second)
        await stubs.round_ended(field, 1)
        for table in (await stubs.start_round(field)).tables:
            await stubs.play_table(field, table)
        events = await stubs.events(field, "TournamentEnded")
        assert [e.version for e in events] == list(range(1, len(events) + 1))
        final = await stubs.get(field)
        assert final.summary.ended
        assert [t.places[0] for t in final.rounds[0].tables] == [1, 1]
        await stubs.close()
    finally:
        await asyncio.to_thread(server.stop)
