"""The player rides out a server restart: it says so, then carries on where it was."""

from __future__ import annotations

from server.serve import RunningServer, start
from tests.play.support import SIZE, player_at, text_of, until_shown
from tests.service.helpers import ORGANISER_TOKEN, deal_for, symbol
from totem_client import connect
from totem_client.play.openings import SpectateMatch


async def test_the_screen_says_reconnecting_and_resumes_after_a_restart(
    store_env: dict[str, str],
) -> None:
    # No turn timer: the test makes every event itself, so that nothing is being written
    # when a server stops.
    first: RunningServer | None = await start("127.0.0.1:0", store_env)
    assert first is not None
    address = f"127.0.0.1:{first.port}"
    second: RunningServer | None = None
    try:
        async with connect(address, organiser_token=ORGANISER_TOKEN) as client:
            # Two cards of different shapes, no special card: two plain reveals.
            deal = deal_for(2, {0: [symbol(0, 0)], 1: [symbol(1, 0)]})
            created = await client.create_match(
                max_players=2, turn_timeout_ms=0, prearranged_deal=deal
            )
            bob = await client.join(created.match_id, "bob")
            dora = await client.join(created.match_id, "dora")
            await bob.reveal()  # version 5
        app = player_at(address, SpectateMatch(created.match_id))
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, app, "#status", "· connected ·")
            await until_shown(pilot, app, "#log", "v5 bob revealed purple pointed star")

            await first.stop(grace=None)
            first = None
            await until_shown(pilot, app, "#status", "· reconnecting… ·")

            second = await start(address, store_env)
            await until_shown(pilot, app, "#status", "· connected ·")
            async with connect(address, organiser_token=ORGANISER_TOKEN) as client:
                # The tokens are in the match's events: they work on the new server.
                await client.session(created.match_id, dora.token, seat=dora.seat).reveal()
            # The stream resumed after the last version shown: the next event, once.
            await until_shown(pilot, app, "#log", "v6 dora revealed purple rounded star")
            log = text_of(app, "#log")
            assert log.count("v5 bob revealed") == 1
            assert log.count("v6 dora revealed") == 1
            assert "39 down · 1 up" in text_of(app, "#seat-1")
    finally:
        if first is not None:
            await first.stop(grace=None)
        if second is not None:
            await second.stop(grace=None)
