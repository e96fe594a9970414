"""Revealing and pacing: JS-3.1 … JS-3.4 (turn order, skipping, the turn timer)."""

from __future__ import annotations

from domain_support import (
    NO_SPECIALS,
    SEED,
    Stamps,
    arranged,
    events_since,
    new_match,
    refused,
    sym,
)

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel.randomness import SeededRandom


def test_js_3_1_players_reveal_in_turn_clockwise_others_are_refused_unpenalised() -> None:
    match, stamps = new_match(3)
    order = []
    for _ in range(7):
        assert match.turn is not None
        for other in {0, 1, 2} - {match.turn}:
            refused(match, "JS-3.1", match.reveal, other, stamps())
        order.append(match.turn)
        match.reveal(match.turn, stamps())
    assert order == [0, 1, 2, 0, 1, 2, 0]


def test_js_3_1_reveals_by_unknown_seats_and_before_the_start_are_refused() -> None:
    match, stamps = new_match(2)
    refused(match, "JS-1.5", match.reveal, 2, stamps())
    refused(match, "JS-1.5", match.reveal, -1, stamps())
    waiting = JungleSpeed.create(Options(max_players=3), SEED)
    waiting.join("a", b"", "h", stamps())
    # Before the deal (JS-2.1) nobody holds a card: the refusal cites the start.
    err = refused(waiting, "JS-2.1", waiting.reveal, 0, stamps())
    assert err.message == "the match has not started yet"
    refused(waiting, "JS-2.1", waiting.grab, 0, stamps())


def test_js_3_2_a_reveal_moves_the_top_face_down_card_onto_the_face_up_pile() -> None:
    """JS-3.2: the top face-down card, and only it, goes onto the revealer's face-up pile,
    where it becomes the visible card; the event records which card it was."""
    match, stamps = new_match(2, deck=list(range(80)))
    below = match.down[0][1:]
    match.reveal(0, stamps())
    assert match.up[0] == [0]
    assert match.down[0] == below
    match.reveal(1, stamps())
    match.reveal(0, stamps())
    assert match.up[0] == [0, 2]
    assert match.visible() == {0: 2, 1: 1}
    (revealed,) = events_since(match, match.version - 1)
    assert type(revealed).__name__ == "Revealed"
    assert (revealed.seat, revealed.card, revealed.cause) == (0, 2, "turn")


def test_js_3_3_a_player_without_face_down_cards_is_skipped_but_stays_in() -> None:
    """JS-3.3: a player with no face-down cards loses their turns (it passes to the next
    player who has some) but stays in the game while they hold face-up cards (JS-8.1)."""
    # No special cards (72-card deck), two players, 36 cards each. Seat 1 wins an early
    # duel, so seat 0 holds two more cards and seat 1 runs out of face-down cards first.
    deck = arranged(2, [[sym(0, 0)], [sym(0, 1)]], size=72)
    match, stamps = new_match(2, deck=deck, **NO_SPECIALS)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.grab(1, stamps()) == "duel"
    assert [len(p) for p in match.down] == [37, 35]
    while match.down[1]:
        assert match.turn is not None
        match.reveal(match.turn, stamps())
    assert match.up[1] and not match.down[1]
    assert match.active(1)
    assert match.turn == 0
    match.reveal(0, stamps())
    assert match.turn == 0  # seat 1 is skipped
    refused(match, "JS-3.1", match.reveal, 1, stamps())
    assert match.active(1)


def test_js_3_4_the_turn_timer_reveals_for_the_player_with_cause_timeout() -> None:
    match, stamps = new_match(3, turn_timeout_ms=10_000)
    match.reveal(0, stamps())
    last = stamps.wall_ms
    assert match.timer_deadline_ms() == last + 10_000
    early = stamps.at(last + 9_999)
    assert not match.timer_due(early)
    refused(match, "JS-3.4", match.fire_timer, early)
    down = list(match.down[1])
    version = match.version
    on_time = stamps.at(last + 10_000)
    assert match.timer_due(on_time)
    match.fire_timer(on_time)
    (revealed,) = events_since(match, version)
    assert type(revealed).__name__ == "Revealed"
    assert (revealed.seat, revealed.card, revealed.cause) == (1, down[0], "timeout")
    assert revealed.stamp == on_time.to_dict()
    assert match.up[1] == [down[0]]
    assert match.turn == 2
    # The timer restarts from the firing.
    assert match.timer_deadline_ms() == last + 20_000


def test_js_3_4_any_stamped_event_restarts_the_timer() -> None:
    match, stamps = new_match(2, turn_timeout_ms=1_000)
    match.reveal(0, stamps())
    match.grab(1, stamps(after_ms=900))  # a wrong grab, stamped later
    refused(match, "JS-3.4", match.fire_timer, stamps(after_ms=500))
    match.fire_timer(stamps(after_ms=500))


def test_js_3_4_a_turn_timeout_of_zero_turns_the_timer_off() -> None:
    match, stamps = new_match(2, turn_timeout_ms=0)
    assert match.timer_deadline_ms() is None
    refused(match, "JS-3.4", match.fire_timer, stamps(after_ms=10**9))


def test_js_3_4_the_timer_is_refused_before_the_start() -> None:
    """Before the deal there is no turn to time (JS-2.1 is cited); after the end, see
    test_js_8_2_match_ended_reveals_the_seed_and_every_command_is_refused_after."""
    stamps = Stamps()
    waiting = JungleSpeed.create(Options(max_players=3), SEED)
    refused(waiting, "JS-2.1", waiting.fire_timer, stamps(after_ms=10**7))


def test_js_3_4_min_reveal_interval_rejects_a_reveal_too_soon_after_the_previous() -> None:
    match, stamps = new_match(2, min_reveal_interval_ms=500)
    match.reveal(0, stamps())
    refused(match, "JS-3.4", match.reveal, 1, stamps(after_ms=499))
    match.reveal(1, stamps(after_ms=1))  # 500 ms after the first reveal
    assert match.up[1]


def test_js_3_4_min_reveal_interval_default_zero_allows_back_to_back_reveals() -> None:
    match, stamps = new_match(2)
    match.reveal(0, stamps())
    match.reveal(1, stamps())
    assert match.up[0] and match.up[1]


def test_js_3_4_when_nobody_can_reveal_the_timer_turns_the_face_up_piles_over() -> None:
    # Two players, no special cards, 36 each, no grabs: after 72 reveals nobody has
    # face-down cards and nobody can reveal (duels stay open, JS-4.7).
    match, stamps = new_match(2, deck=list(range(72)), **NO_SPECIALS)
    for _ in range(72):
        assert match.turn is not None
        match.reveal(match.turn, stamps())
    assert match.turn is None and match.down == [[], []]
    ups = [list(p) for p in match.up]
    refused(match, "JS-3.4", match.fire_timer, stamps(after_ms=9_999))
    version = match.version
    match.fire_timer(stamps(after_ms=1))
    assert [type(e).__name__ for e in events_since(match, version)] == ["PilesRecycled"]
    # Each pile is shuffled with the match's seed, its own stream per recycling, so that
    # the same reveals cannot repeat for ever; the shuffled piles are recorded.
    rng = SeededRandom(match.effective_seed(), "jungle_speed/recycle/0")
    shuffled = []
    for pile in ups:
        positions = list(range(len(pile)))
        rng.shuffle(positions)
        shuffled.append([pile[i] for i in positions])
    assert match.down == shuffled
    assert match.down != ups  # turned over in order, the same 72 reveals would come again
    assert match.up == [[], []]
    assert match.turn == 0
