"""`totem play … --join MATCH --token TOKEN`: a fork's seat, taken with the token that
`totem-replay fork` printed for it, played from the terminal."""

from __future__ import annotations

from server.serve import RunningServer
from tests.play.support import SIZE, player, text_of, until, until_shown
from tests.service.helpers import stub
from tests.service.test_fork import duel_match, fork
from totem.v1 import match_service_pb2 as ms
from totem_client.play.openings import TakeSeat


async def duel_fork(server: RunningServer) -> tuple[str, list[str], ms.ForkMatchResponse]:
    """A Jungle Speed match of two forked at its open duel (version 6, JS-4.1), no turn
    timer: the origin's id and seat tokens, and the fork's answer."""
    channel, client = stub(server.port)
    async with channel:
        origin, referee, tokens = await duel_match(client, turn_timeout_ms=0)
        forked = await fork(client, origin, 6, referee)
    return origin, tokens, forked


async def test_a_forks_seat_is_taken_with_its_token_and_wins_the_duel(
    server: RunningServer,
) -> None:
    origin, _, forked = await duel_fork(server)
    app = player(server, TakeSeat(forked.match_id, forked.player_tokens[1]))
    async with app.run_test(size=SIZE) as pilot:
        # The token's seat, in the name it has in the fork (the origin's player's).
        status = await until_shown(pilot, app, "#status", "you: player 1 (seat 1)")
        assert f"match {forked.match_id}" in status
        await until_shown(pilot, app, "#table", "open duels: player 0 ⚔ player 1")
        assert "g grab: wins the duel against player 0" in text_of(app, "#moves")
        assert f"v1 this match is a fork of match {origin} at its version 6" in text_of(app, "#log")
        # JS-4.2: the first grab of the open duel wins it, in the fork as anywhere.
        await pilot.press("g")
        await until_shown(pilot, app, "#race", "duel won by player 1 (seat 1) against player 0")
        await until_shown(pilot, app, "#status", "v2")
    assert app.match_id == forked.match_id


async def test_a_token_of_no_seat_there_opens_nothing(server: RunningServer) -> None:
    _, origin_tokens, forked = await duel_fork(server)
    app = player(server, TakeSeat(forked.match_id, origin_tokens[0]))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.failure is not None, "a failure")
    assert app.return_code == 1 and app.match_id is None
    assert app.failure is not None
    assert f"taking your seat in match {forked.match_id}" in app.failure
    assert f"UNAUTHENTICATED: this token holds no seat in match {forked.match_id}" in app.failure
