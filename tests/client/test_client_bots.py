"""Tables of Jungle Speed bots play whole matches against a real server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.limits import Limits
from tests.client.support import BOUND, kind, limited_server
from tests.service.helpers import ORGANISER_TOKEN
from totem.v1 import common_pb2, jungle_speed_pb2
from totem_client import Client, MatchEvent, connect
from totem_client.bots import TableResult
from totem_client.bots.base import StreamBot
from totem_client.bots.jungle_speed import JungleSpeedBot, play_table
from totem_client.bots.table import run_bots

#: Short, so that a bot that stops playing is replaced by the timer and no test hangs.
TURN_TIMEOUT_MS = 200
#: A whole match is longer than one wait; still a bound, not a timing assertion.
MATCH_BOUND = 240.0


async def spectate(client: Client, match_id: str) -> list[MatchEvent]:
    """Every event of a match, read with Watch until the server ends the stream."""
    return [event async for event in client.watch(match_id)]


def bot_stamps(events: list[MatchEvent]) -> list[common_pb2.ReceiveStamp]:
    """The receive stamps of the players' commands: reveals on a turn, and grabs."""
    return [
        getattr(e.jungle_speed, kind(e)).stamp
        for e in events
        if kind(e) in ("duel_won", "arrows_won", "wrong_grab", "late_grab")
        or (kind(e) == "revealed" and e.jungle_speed.revealed.cause == 1)
    ]


@pytest.mark.parametrize(("players", "variant"), [(2, "ES"), (4, "ES"), (4, "RU")])
async def test_bots_play_a_match_to_its_end(client: Client, players: int, variant: str) -> None:
    seated: list[str] = []
    spectator: list[asyncio.Task[list[MatchEvent]]] = []

    def watch_from_the_start(match_id: str) -> None:
        seated.append(match_id)
        spectator.append(asyncio.create_task(spectate(client, match_id)))

    result: TableResult = await asyncio.wait_for(
        play_table(
            client,
            players,
            variant=variant,
            turn_timeout_ms=TURN_TIMEOUT_MS,
            seed=7,
            on_seated=watch_from_the_start,
        ),
        MATCH_BOUND,
    )
    events = await asyncio.wait_for(spectator[0], BOUND)

    assert seated == [result.match_id]
    view = await client.get(result.match_id)
    assert view.summary.status == common_pb2.MATCH_STATUS_ENDED
    assert view.summary.end_reason == common_pb2.END_REASON_COMPLETED
    assert result.summary.version == view.summary.version
    assert result.end_reason == "completed"
    assert sorted(p.seat for p in view.summary.result) == list(range(players))
    # Places rank the seats: 1 is first, and players sharing a place have the same
    # number (several can finish at once, JS-8.2).
    places = [p.place for p in view.summary.result]
    assert min(places) == 1
    if variant == "RU":  # JS-8.2: the first to finish win, every other player is second
        assert places.count(1) < players
        assert set(places) == {1, 2}
    else:  # ES: each place is one more than the number of seats placed strictly better
        for place in places:
            assert place == 1 + sum(1 for other in places if other < place)
    assert [s.name for s in result.standings] == [
        next(p.name for p in view.summary.players if p.seat == s.seat) for s in result.standings
    ]

    # The spectator's stream ended by itself with the match: every event once, in order.
    assert [e.version for e in events] == list(range(1, view.summary.version + 1))
    assert kind(events[-1]) == "match_ended"

    # The bots played: they revealed on their turns and grabbed; a command the server
    # refused was never sent again before the match changed.
    reveals_by_seat = {
        e.jungle_speed.revealed.seat
        for e in events
        if kind(e) == "revealed" and e.jungle_speed.revealed.cause == 1  # REVEAL_CAUSE_TURN
    }
    assert reveals_by_seat == set(range(players))
    assert sum(bot.stats.reveals for bot in result.bots) == sum(
        1 for e in events if kind(e) == "revealed" and e.jungle_speed.revealed.cause == 1
    )
    assert any(kind(e) in ("duel_won", "arrows_won") for e in events)
    for bot in result.bots:
        assert len(set(bot.stats.refusals)) == len(bot.stats.refusals)

    # JS-5.1: the bots sent their commands on Play streams, as racing players should:
    # every reveal on a turn and every grab was stamped as read on an open stream.
    stamps = bot_stamps(events)
    assert stamps and all(stamp.on_stream for stamp in stamps)


async def test_a_bot_refused_a_play_stream_plays_on_by_act_calls(tmp_path: Path) -> None:
    """One stream a connection: each bot's Watch takes its connection's, the Play stream
    it then asks for is refused (RESOURCE_EXHAUSTED), and the bots play the match to its
    end by Act calls, their commands stamped as calls (JS-5.1)."""
    async with (
        limited_server(tmp_path, Limits(streams_per_connection=1)) as first,
        # A connection of its own: channels to one address share one by default.
        connect(
            first.address,
            organiser_token=ORGANISER_TOKEN,
            options=[("grpc.use_local_subchannel_pool", 1)],
        ) as second,
    ):
        created = await first.create_match(max_players=2, turn_timeout_ms=TURN_TIMEOUT_MS)
        bots = [
            JungleSpeedBot(await client.join(created.match_id, f"bot {i}"))
            for i, client in enumerate((first, second))
        ]
        result = await asyncio.wait_for(run_bots(created.match_id, bots), MATCH_BOUND)
        events = await asyncio.wait_for(spectate(first, result.match_id), BOUND)

    assert result.end_reason == "completed"
    stamps = bot_stamps(events)
    assert stamps and not any(stamp.on_stream for stamp in stamps)


async def test_a_bot_needs_a_seat(client: Client) -> None:
    created = await client.create_match(max_players=2)
    watcher = client.spectate(created.match_id)
    with pytest.raises(ValueError):
        JungleSpeedBot(watcher)
    player = await client.join(created.match_id, "alice")
    with pytest.raises(ValueError):
        JungleSpeedBot(player, reaction_ms=(50, 10))


async def test_a_bot_stops_when_its_match_has_ended(client: Client) -> None:
    result = await asyncio.wait_for(
        play_table(client, 2, turn_timeout_ms=TURN_TIMEOUT_MS), MATCH_BOUND
    )
    # A bot joining the story late: it finds the match over and returns at once.
    late = JungleSpeedBot(client.session(result.match_id, seat=0))
    summary = await asyncio.wait_for(late.run(), BOUND)
    assert summary.status == common_pb2.MATCH_STATUS_ENDED
    assert late.stats.grabs == 0 and late.stats.refusals == []


async def test_bots_break_a_round_that_would_repeat_for_ever(client: Client) -> None:
    # No special cards; seat 0 holds the first nine shapes, seat 1 the other nine: no two
    # visible cards ever match, however the recycled piles are shuffled (PilesRecycled),
    # so no round ever opens a race. Only a deliberate grab changes it.
    deal = [card for pair in zip(range(0, 36), range(36, 72), strict=True) for card in pair]
    created = await client.create_match(
        max_players=2, turn_timeout_ms=50, specials=(0, 0, 0), prearranged_deal=deal
    )
    sessions = [await client.join(created.match_id, name) for name in ("alice", "bob")]
    bots = [JungleSpeedBot(s, reaction_ms=(1, 5), reveal_delay_ms=(1, 3)) for s in sessions]
    summaries = await asyncio.wait_for(asyncio.gather(*(bot.run() for bot in bots)), MATCH_BOUND)
    assert all(s.status == common_pb2.MATCH_STATUS_ENDED for s in summaries)
    assert sorted(p.seat for p in summaries[0].result) == [0, 1]
    assert sum(bot.stats.stall_breaks for bot in bots) >= 1
    events = [e async for e in client.watch(created.match_id)]
    kinds = [kind(e) for e in events]
    first_break = kinds.index("wrong_grab")
    assert kinds[:first_break].count("piles_recycled") >= 2
    assert "duel_won" not in kinds[:first_break]


def _seen_by_a_player(
    state: jungle_speed_pb2.JungleSpeedState,
) -> jungle_speed_pb2.JungleSpeedState:
    """The referee's state without what only the referee sees, or a player's without
    what only that player is told (its legal actions)."""
    copy = jungle_speed_pb2.JungleSpeedState()
    copy.CopyFrom(state)
    copy.ClearField("legal")
    copy.options.ClearField("prearranged_deal")
    for seat in copy.seats:
        seat.ClearField("face_down")
    return copy


@pytest.mark.parametrize(("players", "variant"), [(3, "ES"), (3, "RU")])
async def test_bots_play_from_the_stream_alone_to_the_referees_final_state(
    client: Client, players: int, variant: str
) -> None:
    created = await client.create_match(
        variant=variant, max_players=players, turn_timeout_ms=TURN_TIMEOUT_MS
    )
    sessions = [await client.join(created.match_id, f"bot-{i}") for i in range(players)]

    def no_get_match(*args: object, **kwargs: object) -> None:
        raise AssertionError("a bot called GetMatch")

    get_match, client._stub.GetMatch = client._stub.GetMatch, no_get_match
    try:
        bots = [JungleSpeedBot(s, reaction_ms=(1, 5), reveal_delay_ms=(1, 5)) for s in sessions]
        summaries = await asyncio.wait_for(
            asyncio.gather(*(bot.run() for bot in bots)), MATCH_BOUND
        )
    finally:
        client._stub.GetMatch = get_match
    referee = await client.referee(created).get()
    assert referee.summary.status == common_pb2.MATCH_STATUS_ENDED
    for session, summary in zip(sessions, summaries, strict=True):
        assert session.state is not None
        assert summary == referee.summary == session.state.summary
        assert _seen_by_a_player(session.state.jungle_speed) == _seen_by_a_player(
            referee.jungle_speed
        )
    # A grab offered by the state at the version a bot had seen is never wrong there; it
    # can only arrive wrong if the match moved on in between (someone else won the race,
    # then the loser revealed before the grab arrived: JS-5.3 makes it wrong, not late).
    events = [e async for e in client.watch(created.match_id, with_state=False)]
    stall_breaks = sum(b.stats.stall_breaks for b in bots)
    wrong = [e for e in events if kind(e) == "wrong_grab"]
    stale = [e for e in wrong if e.jungle_speed.wrong_grab.stamp.seen_version < e.version - 1]
    assert len(wrong) - len(stale) <= stall_breaks


async def test_a_bot_told_to_stop_as_the_match_changes_stops() -> None:
    """A bot's thinking time ends at the next change of the match; cancelled at the very
    moment that change comes, the bot stops. (With ``asyncio.wait_for`` on Python 3.11
    the cancellation was lost and the bot played on: a table of bots did not stop.)"""
    bot = object.__new__(StreamBot)
    bot._changed = asyncio.Event()
    thinking = asyncio.create_task(bot._changed_within(60))
    await asyncio.sleep(0)  # the bot is thinking
    bot._changed.set()
    thinking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await thinking
