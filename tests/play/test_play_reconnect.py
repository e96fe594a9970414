"""The player rides out a server restart: it says so, then carries on where it was."""

from __future__ import annotations

from server.serve import RunningServer, start
from tests.play.support import SIZE, player_at, text_of, until, until_shown
from totem_client import connect
from totem_client.play.openings import SpectateMatch

#: Nobody plays: the turn timer reveals for both seats, so events keep coming (JS-3.4).
TURN_TIMEOUT_MS = 100


async def test_the_screen_says_reconnecting_and_resumes_after_a_restart(
    store_env: dict[str, str],
) -> None:
    first: RunningServer | None = await start("127.0.0.1:0", store_env)
    assert first is not None
    port = first.port
    second: RunningServer | None = None
    try:
        async with connect(f"127.0.0.1:{port}") as client:
            created = await client.create_match(max_players=2, turn_timeout_ms=TURN_TIMEOUT_MS)
            for name in ("bob", "dora"):
                await client.join(created.match_id, name)
        app = player_at(f"127.0.0.1:{port}", SpectateMatch(created.match_id))
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, app, "#status", "· connected ·")
            await until_shown(pilot, app, "#log", "(the turn timer revealed it)")

            await first.stop(grace=None)
            first = None
            await until_shown(pilot, app, "#status", "· reconnecting… ·")
            before = app.summary.version if app.summary else 0

            second = await start(f"127.0.0.1:{port}", store_env)
            await until_shown(pilot, app, "#status", "· connected ·")
            # The stream resumed after the last version shown: later events, each once.
            await until(
                pilot,
                lambda: app.summary is not None and app.summary.version > before + 2,
                "events after the restart",
            )
            log = text_of(app, "#log")
            assert log.count(f"v{before + 1} ") == 1
    finally:
        if first is not None:
            await first.stop(grace=None)
        if second is not None:
            await second.stop(grace=None)
