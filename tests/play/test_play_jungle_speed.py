"""`totem play jungle-speed`, driven headless with Textual's pilot against a real server.

Every assertion is on what the screen shows. Prearranged deals (JS-2.4) decide which
cards come up; bots that wait ten minutes stay out of the way of the keys the test
presses, bots that act at once make the races the test watches.
"""

from __future__ import annotations

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
from tests.service.helpers import DECK, INWARD, ORGANISER_TOKEN, deal_for, symbol
from totem_client import connect
from totem_client.play.jungle_speed_bots import NewMatch
from totem_client.play.openings import JoinMatch, SpectateMatch

#: A terminal of the usual width, where long sentences wrap.
NARROW = (80, 40)

#: Two cards of one shape in two colours: revealed by two seats, they open a duel (JS-4.1).
PURPLE_STAR = symbol(0, 0)
GREEN_STAR = symbol(0, 1)


COLOURED = next(c.id for c in DECK.cards if c.kind.value == "COLOURED_ARROWS")


def duel_deal(players: int = 2) -> tuple[int, ...]:
    """Seat 0 and seat 1 start with a pointed star each, seat 2 (if any) with inward arrows."""
    tops = {0: [PURPLE_STAR], 1: [GREEN_STAR]}
    if players > 2:
        tops[2] = [INWARD]
    return tuple(deal_for(players, tops))


async def test_a_new_match_against_bots_reveal_and_win_a_duel(server: RunningServer) -> None:
    opening = NewMatch(
        name="alice",
        players=2,
        turn_timeout_ms=0,
        bot_reaction_ms=NEVER_MS,
        bot_reveal_delay_ms=AT_ONCE_MS,
        prearranged_deal=duel_deal(),
    )
    app = player(server, opening)
    async with app.run_test(size=SIZE) as pilot:
        await until_shown(pilot, app, "#moves", "your moves: space reveal")
        await until_shown(pilot, app, "#seat-1", "bot-1")
        status = text_of(app, "#status")
        assert "Jungle Speed ES · playing" in status
        assert f"you: alice (seat 0) · match {app.match_id}" in status
        assert "▶ alice · you" in text_of(app, "#seat-0")
        assert "40 down · 0 up" in text_of(app, "#seat-0")
        assert "turn: you, alice (seat 0)" in text_of(app, "#table")
        # A match that is playing cannot be started: no s key.
        keys = ["space reveal", "g grab", "a grab: arrows", "q quit"]
        await until(pilot, lambda: footer_keys(app) == keys, f"the keys {keys}")

        await pilot.press("space")
        # Seat 0 shows its card; the bot reveals at once: a duel of two pointed stars.
        await until_shown(pilot, app, "#table", "open duels: alice ⚔ bot-1")
        assert "★ pointed star purple 39 down · 1 up" in text_of(app, "#seat-0")
        assert "★ pointed star green 39 down · 1 up" in text_of(app, "#seat-1")
        assert "g grab: wins the duel against bot-1" in text_of(app, "#moves")
        assert "v5 alice revealed purple pointed star" in text_of(app, "#log")

        # The player's commands go over one open Play stream (stamped as they are read).
        assert app.session is not None and app.session.on_stream
        await pilot.press("g")
        race = await until_shown(pilot, app, "#race", "duel won by alice (seat 0) against bot-1")
        assert "1. #" in race and " alice won, had seen v6" in race
        # JS-4.3: the loser took both face-up piles; JS-4.5: the loser reveals next, and
        # then it is alice's turn again.
        await until_shown(pilot, app, "#table", "turn: you, alice (seat 0)")
        assert "40 down · 1 up" in text_of(app, "#seat-1")
        assert "39 down · 0 up" in text_of(app, "#seat-0")
        assert "open duels: none" in text_of(app, "#table")


async def test_a_refused_reveal_shows_the_rule_and_the_reason(server: RunningServer) -> None:
    opening = NewMatch(
        name="alice",
        players=2,
        turn_timeout_ms=0,
        bot_reaction_ms=NEVER_MS,
        bot_reveal_delay_ms=NEVER_MS,
        prearranged_deal=tuple(deal_for(2, {0: [PURPLE_STAR]})),  # a card that opens nothing
    )
    app = player(server, opening)
    async with app.run_test(size=NARROW) as pilot:  # the reason wraps: all of it shows
        await until_shown(pilot, app, "#moves", "your moves: space reveal")
        await pilot.press("space")
        await until_shown(pilot, app, "#table", "turn: bot-1 (seat 1)")
        assert "your moves: none now (bot-1 reveals next" in text_of(app, "#moves")

        await pilot.press("space")  # out of turn: JS-3.1
        notice = await until_shown(pilot, app, "#notice", "reveal refused")
        assert (
            "reveal refused at v5 (FAILED_PRECONDITION, JS-3.1): "
            "only the player whose turn it is may reveal; it is seat 1's turn"
        ) in notice
        footer = app.game_screen.query_one("Footer")
        assert app.notice.region.bottom <= footer.region.y  # all of it in sight


async def test_a_special_card_and_coloured_mode_are_shown(server: RunningServer) -> None:
    opening = NewMatch(
        name="alice",
        players=2,
        turn_timeout_ms=0,
        bot_reaction_ms=NEVER_MS,
        bot_reveal_delay_ms=NEVER_MS,
        prearranged_deal=tuple(deal_for(2, {0: [COLOURED]})),
    )
    app = player(server, opening)
    async with app.run_test(size=SIZE) as pilot:
        await until_shown(pilot, app, "#moves", "space reveal")
        await pilot.press("space")
        # JS-6.3: while the coloured arrows are visible (ES), colours duel, not shapes.
        await until_shown(pilot, app, "#table", "coloured mode: colours duel, not shapes")
        assert "⇄ coloured arrows 39 down · 1 up" in text_of(app, "#seat-0")
        assert "v5 alice revealed coloured arrows" in text_of(app, "#log")


async def test_a_late_grab_is_shown_after_the_winner_in_receive_order(
    server: RunningServer,
) -> None:
    opening = NewMatch(
        name="alice",
        players=2,
        turn_timeout_ms=0,
        bot_reaction_ms=AT_ONCE_MS,
        bot_reveal_delay_ms=AT_ONCE_MS,
        prearranged_deal=duel_deal(),
    )
    app = player(server, opening)
    async with app.run_test(size=SIZE) as pilot:
        await until_shown(pilot, app, "#moves", "space reveal")
        await pilot.press("space")
        # The bot grabs at once: it wins, and the loser (alice) reveals next (JS-4.5).
        await until_shown(pilot, app, "#race", "duel won by bot-1 (seat 1) against alice")
        await pilot.press("g")  # after the duel was decided, before any reveal: late
        race = await until_shown(pilot, app, "#race", "alice late")
        first, second = race.index(" bot-1 won"), race.index(" alice late")
        assert race.index("1. #") < first < race.index("2. #") < second
        assert "alice grabbed late" in text_of(app, "#log")


async def test_es_grabs_for_the_arrows_with_a_key_of_its_own(server: RunningServer) -> None:
    opening = NewMatch(
        name="alice",
        players=3,
        turn_timeout_ms=0,
        bot_reaction_ms=NEVER_MS,
        bot_reveal_delay_ms=AT_ONCE_MS,
        prearranged_deal=duel_deal(3),
    )
    app = player(server, opening)
    async with app.run_test(size=SIZE) as pilot:
        await until_shown(pilot, app, "#moves", "space reveal")
        await pilot.press("space")
        # bot-1's star opens a duel with alice, bot-2's inward arrows a race (JS-6.1).
        await until_shown(pilot, app, "#table", "inward-arrows race open")
        assert "open duels: alice ⚔ bot-1" in text_of(app, "#table")
        assert "→← inward arrows 25 down · 1 up" in text_of(app, "#seat-2")
        moves = text_of(app, "#moves")
        assert "g grab: wins the duel against bot-1" in moves
        assert "a grab: wins the inward-arrows race" in moves

        await pilot.press("a")
        race = await until_shown(pilot, app, "#race", "inward-arrows race won by alice (seat 0)")
        assert "annulled: alice, bot-1" in race
        await until_shown(pilot, app, "#table", "open duels: none")


def every_bot_card_answers_alice() -> tuple[int, ...]:
    """Two seats, no special cards: each of the bot's cards has the shape of the card alice
    reveals just before it (JS-2.1 deals them in turn), so every bot reveal opens a duel."""
    alice = [symbol(shape, colour) for shape in range(18) for colour in (0, 2)]
    bot = [symbol(shape, colour) for shape in range(18) for colour in (1, 3)]
    return tuple(card for pair in zip(alice, bot, strict=True) for card in pair)


async def test_the_result_is_shown_when_the_match_ends(server: RunningServer) -> None:
    # Alice reveals whenever no duel is open and it is her turn, and never grabs; the bot
    # wins every duel, so alice takes both piles each time (JS-4.3) and reveals next
    # (JS-4.5). Once the bot has no card left it has finished, and in RU the first player
    # to finish wins (JS-8.2).
    opening = NewMatch(
        name="alice",
        players=2,
        variant="RU",
        turn_timeout_ms=0,
        bot_reaction_ms=AT_ONCE_MS,
        bot_reveal_delay_ms=AT_ONCE_MS,
        specials=(0, 0, 0),
        prearranged_deal=every_bot_card_answers_alice(),
    )
    app = player(server, opening)

    def ended() -> bool:
        return bool(app.game_screen.query_one("#result").display)

    def version() -> int:
        return app.summary.version if app.summary is not None else 0

    def alice_to_reveal() -> bool:
        moves, table = text_of(app, "#moves"), text_of(app, "#table")
        return "space reveal" in moves and "open duels: none" in table

    async with app.run_test(size=SIZE) as pilot:
        while not ended():
            await until(pilot, lambda: ended() or alice_to_reveal(), "alice's turn")
            if ended():
                break
            before = version()
            await pilot.press("space")
            await until(pilot, lambda before=before: version() > before, "alice's reveal")
        result = text_of(app, "#result")
        assert "Match ended (completed) 1. bot-1 (seat 1) 2. alice (seat 0)" in result
        assert "the match is over" in text_of(app, "#table")
        assert "the match is over: q quits" in text_of(app, "#moves")
        assert "finished place 1 0 down · 0 up" in text_of(app, "#seat-1")
        # RU lets nobody choose what a grab resolves: no arrows key (JS-6.1).
        keys = ["space reveal", "g grab", "q quit"]
        await until(pilot, lambda: footer_keys(app) == keys, f"the keys {keys}")
        await until_shown(pilot, app, "#status", "ended")
        assert "match over" in text_of(app, "#status")
        await until_shown(pilot, app, "#log", "the match ended")


async def test_join_a_match_by_id_and_start_it(server: RunningServer) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        created = await client.create_match(max_players=3, turn_timeout_ms=0)
        await client.join(created.match_id, "bob")
        app = player(server, JoinMatch(created.match_id, "carol"))
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, app, "#status", "you: carol (seat 1)")
            await until_shown(pilot, app, "#table", "waiting for players: 2 of 3 seats")
            assert "s start with the seats taken" in text_of(app, "#moves")
            await pilot.press("s")
            await until_shown(pilot, app, "#table", "turn: bob (seat 0)")
            assert "40 down · 0 up" in text_of(app, "#seat-1")
            assert "▶ bob" in text_of(app, "#seat-0")


async def test_spectate_a_match_by_id(server: RunningServer) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        created = await client.create_match(
            max_players=2, turn_timeout_ms=0, prearranged_deal=deal_for(2, {0: [PURPLE_STAR]})
        )
        bob = await client.join(created.match_id, "bob")
        await client.join(created.match_id, "dora")
        await bob.reveal()
        app = player(server, SpectateMatch(created.match_id))
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, app, "#table", "turn: dora (seat 1)")
            assert "spectating · match" in text_of(app, "#status")
            assert "spectating: you see what every spectator sees" in text_of(app, "#moves")
            await until_shown(pilot, app, "#seat-0", "39 down · 1 up")
            await until(pilot, lambda: footer_keys(app) == ["q quit"], "only the quit key")
            await pilot.press("space")  # not a spectator's key: nothing is sent
            await pilot.pause()
            assert text_of(app, "#notice") == ""


async def test_a_match_that_does_not_exist_cannot_be_joined(server: RunningServer) -> None:
    app = player(server, JoinMatch("00000000-0000-0000-0000-000000000000", "carol"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.failure is not None, "a failure")
    assert app.return_code == 1
    assert app.failure is not None and "NOT_FOUND" in app.failure
    assert app.match_id is None
