"""`totem play tribes`, driven headless with Textual's pilot against a real server.

Every assertion is on what the screen shows. Prearranged Cards of Truth (TR-2.1) decide
who moves first and prearranged rolls what the die demands (TR-5.1); a bot that waits
ten minutes keeps its turn while the test looks, a bot that moves at once answers the
user's moves, and where every move must be known the test makes the other seat's moves
itself.
"""

from __future__ import annotations

from textual.pilot import Pilot

from server.serve import RunningServer
from tests.play.support import (
    AT_ONCE_MS,
    NEVER_MS,
    SIZE,
    footer_keys,
    player,
    text_of,
    until,
    until_shown,
)
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import connect
from totem_client.games.tribes import tribes_options
from totem_client.play.app import PlayApp
from totem_client.play.openings import JoinMatch, Opening, SpectateMatch
from totem_client.play.tribes import TribesScreen
from totem_client.play.tribes_bots import NewTribesMatch
from totem_client.session import Session

#: A terminal of the usual width, where long sentences wrap.
NARROW = (80, 40)


def tribes_player(server: RunningServer, opening: Opening) -> PlayApp:
    return player(server, opening, "tribes")


def screen_of(app: PlayApp) -> TribesScreen:
    screen = app.game_screen
    assert isinstance(screen, TribesScreen)
    return screen


async def shows(pilot: Pilot[None], app: PlayApp, selector: str, *texts: str) -> None:
    """Wait until the widget ``selector`` shows every one of ``texts`` (a widget whose
    height follows its content shows all of it only once it is laid out again)."""
    await until(
        pilot,
        lambda: all(text in text_of(app, selector) for text in texts),
        f"{texts} in {selector}",
    )


async def goto(pilot: Pilot[None], app: PlayApp, space: int) -> None:
    """Move the board's cursor to ``space`` with the arrow keys."""
    screen = screen_of(app)
    assert screen.state is not None and screen.cursor is not None
    size = screen.state.tribes.board_size
    row, column = divmod(screen.cursor, size)
    to_row, to_column = divmod(space, size)
    keys = ["down" if to_row > row else "up"] * abs(to_row - row)
    keys += ["right" if to_column > column else "left"] * abs(to_column - column)
    await pilot.press(*keys)
    await until_shown(pilot, app, "#board", f"cursor: space {space}")


async def test_a_new_match_against_a_bot_a_move_from_the_mat_and_a_lift(
    server: RunningServer,
) -> None:
    opening = NewTribesMatch(
        name="alice",
        players=2,
        turn_timeout_ms=0,
        bot_think_ms=AT_ONCE_MS,
        prearranged_cards=[[1, 2]],  # alice moves first
        seed=1,
    )
    app = tribes_player(server, opening)
    async with app.run_test(size=SIZE) as pilot:
        await until_shown(pilot, app, "#moves", "your turn")
        status = text_of(app, "#status")
        assert "Tribes base · playing" in status
        assert f"you: alice (seat 0) · match {app.match_id}" in status
        await shows(
            pilot,
            app,
            "#table",
            "round 1 · 0 moves made",
            "turn: you, alice (seat 0)",
            "order (Cards of Truth): alice (1) → bot-1 (2)",
            "last round: none yet",
        )
        await shows(
            pilot,
            app,
            "#tribes",
            "▶ alice · you card 1 mat 1 2 3 4 5 badges: none",
            "bot-1 card 2 mat 1 2 3 4 5 badges: none",
        )
        await shows(pilot, app, "#board", "board 3×3")
        await shows(pilot, app, "#moves", "1-5 a totem of your mat (1 2 3 4 5)")
        keys = ["tab next", "←↑↓→ hjkl move", "1-5 mat", "⏎ lift/place", "esc let go"]
        keys += ["b badge", "q quit"]
        await until(pilot, lambda: footer_keys(app) == keys, f"the keys {keys}")

        # A move from the mat: pick the 5, the cursor starts in the middle.
        await pilot.press("5")
        await shows(
            pilot,
            app,
            "#moves",
            "holding your 5 from your mat: may go to 0 1 2 3 4 5 6 7 8",
            "enter place it on space 4",
        )
        await shows(pilot, app, "#board", "→ may go here")
        await pilot.press("enter")
        await until_shown(pilot, app, "#log", "v6 alice moved its 5 from the mat to space 4")
        # The bot answers at once; then it is alice's turn again, with a totem to lift.
        await until_shown(pilot, app, "#log", "v7 bot-1 moved its")
        await shows(pilot, app, "#moves", "on a ↑ space lifts its top (4)")
        await shows(pilot, app, "#board", "5 alice")
        await shows(pilot, app, "#tribes", "mat 1 2 3 4 badges")

        # A move from the board: lift (nothing picked), then place on an offered space.
        await pilot.press("enter")
        await shows(pilot, app, "#table", "lifted: your 5 from space 4, waiting to be placed")
        await until_shown(pilot, app, "#moves", "holding your 5 lifted: may go to")
        await shows(pilot, app, "#board", "○ lifted from")
        # Back on its own space: refused, and the rule named once (TR-2.2a).
        await pilot.press("enter")
        refusal = (
            "place your 5 on space 4 refused at v8 (FAILED_PRECONDITION, TR-2.2a): "
            "a lifted totem cannot be put back on its own space"
        )
        await shows(pilot, app, "#notice", refusal)
        assert "TR-2.2a: a lifted" not in text_of(app, "#notice")
        await pilot.press("tab")  # the first space offered
        screen = screen_of(app)
        target = screen.cursor
        assert target is not None and target != 4
        await shows(pilot, app, "#moves", f"enter place it on space {target}")
        await pilot.press("enter")
        moved = f"v9 alice moved its 5 from space 4 to space {target}"
        await until_shown(pilot, app, "#log", moved)
        await shows(pilot, app, "#log", "v8 alice lifted its 5 from space 4, leaving it empty")
        await until(
            pilot, lambda: "lifted:" not in text_of(app, "#table"), "the lifted totem placed"
        )
        await until(pilot, lambda: text_of(app, "#notice") == "", "the refusal cleared")


async def test_a_move_out_of_turn_shows_the_rule_and_the_reason(server: RunningServer) -> None:
    opening = NewTribesMatch(
        name="alice",
        players=2,
        turn_timeout_ms=0,
        bot_think_ms=NEVER_MS,
        prearranged_cards=[[2, 1]],  # the bot moves first, and keeps its turn
    )
    app = tribes_player(server, opening)
    async with app.run_test(size=NARROW) as pilot:  # the reason wraps: all of it shows
        await until_shown(pilot, app, "#moves", "your moves: none now (bot-1 is moving)")
        await shows(pilot, app, "#table", "turn: bot-1 (seat 1)")
        await pilot.press("1")
        await until_shown(pilot, app, "#moves", "holding your 1 from your mat: not offered now")
        await pilot.press("enter")
        refusal = (
            "place your 1 on space 4 refused at v5 (FAILED_PRECONDITION, TR-2.2): "
            "it is seat 1's turn: only they may move now"
        )
        await shows(pilot, app, "#notice", refusal)
        footer = app.game_screen.query_one("Footer")
        assert app.notice.region.bottom <= footer.region.y  # all of it in sight


async def test_the_extended_game_the_die_the_doom_and_the_salvation_spaces(
    server: RunningServer,
) -> None:
    opening = NewTribesMatch(
        name="alice",
        players=2,
        extended=True,
        turn_timeout_ms=0,
        bot_think_ms=NEVER_MS,
        prearranged_cards=[[1, 2]],
        prearranged_dice=["large"],  # every roll: the Great Totem of Doom must move
    )
    app = tribes_player(server, opening)
    async with app.run_test(size=SIZE) as pilot:
        await shows(
            pilot,
            app,
            "#moves",
            "your turn: the die demands the Great Totem of Doom",
            "holding the Great Totem of Doom from beside the board: may go to 0 1 2",
        )
        await shows(
            pilot,
            app,
            "#table",
            "die: large totem: the Great Totem of Doom must move",
            "beside the board: the Great Totem of Doom, the Mini-Totem of Chaos",
        )
        await shows(pilot, app, "#status", "Tribes extended · playing")
        await shows(
            pilot, app, "#board", "✚ Salvation Space", "0 → ✚│1 → │2 → ✚", "│4 → │", "8 → ✚"
        )
        await until(pilot, lambda: "x special" in footer_keys(app), "the x key")

        # A click on a space moves the cursor there: space 8, the bottom right corner
        # (border and padding, then cells of three lines and CELL + 1 columns).
        await pilot.click("#board", offset=(2 + 1 + 2 * 10 + 3, 1 + 1 + 2 * 3 + 1))
        await until_shown(pilot, app, "#board", "cursor: space 8")
        await pilot.press("enter")
        await until_shown(
            pilot,
            app,
            "#log",
            "alice moved the Great Totem of Doom from beside the board to space 8",
        )
        await until_shown(pilot, app, "#table", "beside the board: the Mini-Totem of Chaos")
        await shows(pilot, app, "#board", "DOOM")
        await until_shown(pilot, app, "#table", "turn: bot-1 (seat 1)")


async def _move(pilot: Pilot[None], app: PlayApp, size: int, space: int) -> None:
    await pilot.press(str(size))
    await goto(pilot, app, space)
    await pilot.press("enter")


async def test_five_rounds_won_with_the_keys_end_the_match(server: RunningServer) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        # bob (seat 0) is the test's; carol (seat 1) the screen's, who moves first.
        options = tribes_options(max_players=2, turn_timeout_ms=0, prearranged_cards=[[2, 1]])
        created = await client.create("tribes", options)
        bob: Session = await client.join(created.match_id, "bob")
        app = tribes_player(server, JoinMatch(created.match_id, "carol"))
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, app, "#status", "you: carol (seat 1)")
            await until_shown(pilot, app, "#moves", "your turn")
            # Round 1 names a badge: tenacity, the fourth in the order of TR-1.5.
            await pilot.press("b", "b", "b", "b")
            await until_shown(pilot, app, "#moves", "badge a winning move names: tenacity")
            for round_ in range(1, 6):
                # Seven events a round: its start, five moves, the win (TR-2.1, TR-3.3).
                start = 5 + 7 * (round_ - 1)
                await until_shown(pilot, app, "#log", f"v{start} round {round_}: Cards")
                # carol: 1 on 6, 2 on 7, 3 on 8, a line; bob: 1 on 0, 2 on 1 between.
                for size, bob_space in ((1, 0), (2, 1), (3, None)):
                    await _move(pilot, app, size, 5 + size)
                    version = start + 2 * size - 1
                    moved = f"v{version} carol moved its {size} from the mat to space {5 + size}"
                    await until_shown(pilot, app, "#log", moved)
                    if bob_space is not None:
                        await bob.place(bob_space, size=size)
                        moved = f"v{version + 1} bob moved its {size} from the mat to space"
                        await until_shown(pilot, app, "#log", moved)
                if round_ == 1:
                    won = "last round: round 1 won by carol (a line 6-7-8): takes tenacity"
                    await shows(pilot, app, "#table", won)
                    await until_shown(pilot, app, "#tribes", "badges: tenacity")
                    await until_shown(pilot, app, "#moves", "names: the first you lack")

            await shows(
                pilot,
                app,
                "#result",
                "Match ended (completed) 1. carol (seat 1) 2. bob (seat 0)",
                "carol (seat 1) took the Feathers of Greatness",
            )
            await shows(
                pilot,
                app,
                "#table",
                "the match is over",
                "last round: round 5 won by carol (a line 6-7-8): takes the Feathers",
            )
            feathers = "badges: tenacity, wisdom, loyalty, boldness ★ the Feathers of Greatness"
            await shows(pilot, app, "#tribes", feathers)
            await shows(pilot, app, "#moves", "the match is over: q quits")
            await until(pilot, lambda: footer_keys(app) == ["q quit"], "only the quit key")
            await until_shown(pilot, app, "#status", "ended")
            await until_shown(pilot, app, "#status", "match over")
            await until_shown(pilot, app, "#log", "the match ended")


async def test_spectate_a_drawn_round(server: RunningServer) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        options = tribes_options(
            max_players=2, turn_timeout_ms=0, round_move_limit=1, prearranged_cards=[[1, 2]]
        )
        created = await client.create("tribes", options)
        bob = await client.join(created.match_id, "bob")
        await client.join(created.match_id, "dora")
        await bob.place(4, size=3)  # the one move the round allows: a draw
        app = tribes_player(server, SpectateMatch(created.match_id))
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(
                pilot,
                app,
                "#table",
                "last round: round 1 drawn (the move limit was reached): no badge",
            )
            await shows(pilot, app, "#table", "round 2 · 0 moves made")
            await shows(pilot, app, "#status", "spectating · match")
            await shows(pilot, app, "#moves", "spectating: you see what every spectator sees")
            await shows(pilot, app, "#log", "v6 bob moved its 3 from the mat to space 4")
            await until(pilot, lambda: footer_keys(app) == ["q quit"], "only the quit key")
            await pilot.press("1", "enter")  # not a spectator's keys: nothing is sent
            await pilot.pause()
            assert text_of(app, "#notice") == ""


async def test_join_a_match_by_id_and_start_it(server: RunningServer) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        created = await client.create("tribes", tribes_options(max_players=3, turn_timeout_ms=0))
        await client.join(created.match_id, "bob")
        app = tribes_player(server, JoinMatch(created.match_id, "carol"))
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, app, "#status", "you: carol (seat 1)")
            await until_shown(pilot, app, "#table", "waiting for players: 2 of 3 seats")
            await shows(pilot, app, "#moves", "s start with the seats taken")
            await shows(pilot, app, "#board", "the board appears when play begins")
            await pilot.press("s")
            await until_shown(pilot, app, "#table", "round 1 · 0 moves made")
            await shows(pilot, app, "#board", "board 3×3")  # two players: 3×3 (TR-1.2)
            assert "s start" not in footer_keys(app)
