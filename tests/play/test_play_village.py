"""`totem play village`, driven headless with Textual's pilot against a real server.

Every assertion is on what the screen shows. The bot answers at once; the user answers
its first decision with the default key, a key the match does not want now is refused
with its reason, and then zero deadlines let the match run to its end.
"""

from __future__ import annotations

from textual.pilot import Pilot

from server.serve import RunningServer
from tests.play import support
from tests.play.support import AT_ONCE_MS, NEVER_MS, SIZE, player, text_of, until, until_shown
from totem_client.play.app import PlayApp
from totem_client.play.openings import SpectateMatch
from totem_client.play.village_bots import NewVillageMatch


async def shows(pilot: Pilot[None], app: PlayApp, selector: str, *texts: str) -> None:
    """Wait until the widget ``selector`` shows every one of ``texts`` (a widget whose
    height follows its content shows all of it only once it is laid out again)."""
    await until(
        pilot,
        lambda: all(text in text_of(app, selector) for text in texts),
        f"{texts} in {selector}",
    )


async def test_a_match_against_a_bot_a_default_a_refusal_and_the_result(
    server: RunningServer,
) -> None:
    opening = NewVillageMatch(name="alice", players=2, bot_think_ms=AT_ONCE_MS, seed=1)
    app = player(server, opening, "village")
    async with app.run_test(size=SIZE) as pilot:
        await shows(pilot, app, "#owed", "arrange (VI-2.1)", "default: arrange")
        assert "Village" in text_of(app, "#status")
        await shows(pilot, app, "#table", "round 1 · phase 1")
        await shows(pilot, app, "#families", "family 0 (alice · yours)", "family 1 (bot-1)")

        # A reveal is not owed now: refused, with its rule and sentence.
        await pilot.press("n")
        await shows(pilot, app, "#notice", "keep spells secret refused", "FAILED_PRECONDITION, VI-")

        # The default of the arrangement, sent as is: family 0 is housed.
        await pilot.press("d")
        await until_shown(pilot, app, "#log", "family 0: arranged")


async def test_the_match_runs_to_its_result_on_zero_deadlines(server: RunningServer) -> None:
    opening = NewVillageMatch(
        name="alice",
        players=2,
        timeouts_ms={k: 0 for k in ("arrange", "choose", "place", "reveal", "victims", "youth")},
        bot_think_ms=AT_ONCE_MS,
        seed=2,
    )
    app = player(server, opening, "village")
    async with app.run_test(size=SIZE) as pilot:
        await support.until_over(
            pilot, app, lambda: "Match ended" in text_of(app, "#result"), "the result"
        )
        await shows(pilot, app, "#table", "the match is over")


async def test_a_spectator_sees_the_families_and_no_decisions(server: RunningServer) -> None:
    host = player(server, NewVillageMatch(name="alice", bot_think_ms=NEVER_MS), "village")
    async with host.run_test(size=SIZE) as pilot:
        await until_shown(pilot, host, "#owed", "arrange (VI-2.1)")
        assert host.match_id is not None
        watcher = player(server, SpectateMatch(host.match_id), "village")
        async with watcher.run_test(size=SIZE) as watching:
            await until_shown(watching, watcher, "#families", "family 1 (bot-1)")
            await until_shown(watching, watcher, "#owed", "spectating")
