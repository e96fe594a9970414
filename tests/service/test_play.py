"""Play: commands on one open stream, each answered in order, applied or refused (JS-5.1).

A Play request is an Act on a stream that is already open; these tests hold it to what
Act does (the same answer, the same refusal, nothing written by a refusal) and to what
only a stream does (the stream survives a refusal, answers keep the order of requests,
grabs on open streams race by the order their messages were read).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import grpc
import pytest
from google.rpc import error_details_pb2

from server.serve import RunningServer
from server.service import PLAY_ACCEPTED, MatchService
from tests.service.helpers import (
    INWARD,
    bearer,
    check_race,
    create_and_join,
    deal_for,
    grab,
    js_event,
    race_verdict,
    reveal,
    stub,
    symbol,
    watch_until,
)
from tests.service.tribes_helpers import create_tribes, penalise, tribes_event
from totem.v1 import match_service_pb2 as ms
from totem.v1 import match_service_pb2_grpc

BOUND = 30.0


def _play(match_id: str, command: object, seen_version: int = 0) -> ms.PlayRequest:
    return ms.PlayRequest(
        act=ms.ActRequest(match_id=match_id, jungle_speed=command, seen_version=seen_version)  # type: ignore[arg-type]
    )


async def _play_all(
    client: match_service_pb2_grpc.MatchServiceStub, token: str, requests: Sequence[ms.PlayRequest]
) -> list[ms.PlayResponse]:
    """Send every request on one stream, close it, and read every answer."""

    async def sent() -> AsyncIterator[ms.PlayRequest]:
        for request in requests:
            yield request

    call = client.Play(sent(), metadata=bearer(token))
    return [answer async for answer in call]


def _rule(status: object) -> str:
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)  # type: ignore[attr-defined]
    return str(info.metadata["rule"])


async def test_js_3_1_a_refused_command_is_answered_on_the_stream_which_stays_open(
    server: RunningServer,
) -> None:
    """Answers come one per request, in order; the refusal is Act's own (code, rule,
    sentence), it writes nothing, and the commands after it are still applied."""
    channel, client = stub(server.port)
    async with channel:
        # A deal in card order: the reveal shows a symbol, never a special card's extra events.
        match_id, _, tokens = await create_and_join(
            client, 3, turn_timeout_ms=0, prearranged_deal=deal_for(3, {})
        )
        version = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        # Seat 1 reveals out of turn first: refused (JS-3.1), then Act says the same.
        with pytest.raises(grpc.aio.AioRpcError) as by_act:
            await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[1])
            )
        answers = await asyncio.wait_for(
            _play_all(
                client,
                tokens[0],
                [_play(match_id, reveal()), _play(match_id, reveal()), _play("nope", reveal())],
            ),
            BOUND,
        )
        after = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version

    assert [a.WhichOneof("outcome") for a in answers] == ["applied", "refused", "refused"]
    applied, out_of_turn, no_match = answers
    assert applied.applied.version == version + 1
    assert js_event(applied.applied.events[0]) == "revealed"
    assert applied.applied.state.jungle_speed.turn == 1
    # The second reveal is seat 0's again, out of turn now: JS-3.1, as Act refuses it.
    assert out_of_turn.refused.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert _rule(out_of_turn.refused) == "JS-3.1" == by_act.value.details().split(":")[0]
    assert out_of_turn.refused.message.startswith("JS-3.1: ")
    assert no_match.refused.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert "not a match id" in no_match.refused.message
    # Only the applied reveal was written.
    assert after == version + 1


READY = ms.PlayRequest(ready=ms.PlayReady())


async def test_js_5_1_a_ready_request_is_answered_in_its_turn_and_is_no_command(
    server: RunningServer,
) -> None:
    """A ready request gets a ready answer in its place among the answers; it takes no
    receive stamp (the next command's sequence number follows the last command's) and
    writes nothing."""
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(
            client, 2, turn_timeout_ms=0, prearranged_deal=deal_for(2, {})
        )
        version = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        answers = await asyncio.wait_for(
            _play_all(client, tokens[0], [READY, _play(match_id, reveal()), READY, READY]), BOUND
        )
        after = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        next_reveal = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[1])
        )

    assert [a.WhichOneof("outcome") for a in answers] == ["ready", "applied", "ready", "ready"]
    assert after == version + 1
    first = answers[1].applied.events[0].jungle_speed.revealed.stamp
    second = next_reveal.events[0].jungle_speed.revealed.stamp
    assert first.on_stream and not second.on_stream
    assert second.sequence == first.sequence + 1


async def test_a_play_request_that_is_not_one_is_refused_and_the_stream_goes_on(
    server: RunningServer,
) -> None:
    channel, _ = stub(server.port)
    async with channel:
        _, client = stub(server.port)
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        raw = channel.stream_stream("/totem.v1.MatchService/Play")

        async def sent() -> AsyncIterator[bytes]:
            yield b"\xff\xff\xff"  # not a PlayRequest
            yield ms.PlayRequest().SerializeToString()  # no act
            yield _play(match_id, reveal()).SerializeToString()

        call = raw(sent(), metadata=bearer(tokens[0]))
        answers = [ms.PlayResponse.FromString(a) async for a in call]

    assert [a.WhichOneof("outcome") for a in answers] == ["refused", "refused", "applied"]
    assert all(a.refused.code == grpc.StatusCode.INVALID_ARGUMENT.value[0] for a in answers[:2])
    assert "not a valid Play request" in answers[0].refused.message
    assert "act or ready must be set" in answers[1].refused.message


async def test_a_play_stream_without_a_token_ends_unauthenticated(server: RunningServer) -> None:
    """The stream ends as soon as it opens: nothing on it could act. (The client sends
    nothing first: grpcio's asyncio client reports a write that races with the end of
    the stream as INTERNAL instead of the server's status, grpc/grpc#36066.)"""
    channel, client = stub(server.port)
    async with channel:
        call = client.Play()
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await asyncio.wait_for(call.read(), BOUND)
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "player token" in str(refused.value.details())
    assert PLAY_ACCEPTED not in tuple(await call.initial_metadata())


async def test_an_accepted_stream_says_so_before_any_request(server: RunningServer) -> None:
    """The initial metadata a client may wait for before it writes (grpcio's asyncio
    client reports a write racing with a refusal as INTERNAL, grpc/grpc#36066)."""
    channel, client = stub(server.port)
    async with channel:
        _, _, tokens = await create_and_join(client, 2)
        call = client.Play(metadata=bearer(tokens[0]))
        metadata = await asyncio.wait_for(call.initial_metadata(), BOUND)
        await call.done_writing()
        assert await asyncio.wait_for(call.read(), BOUND) is grpc.aio.EOF
    assert PLAY_ACCEPTED in tuple(metadata)


async def test_a_token_of_another_match_is_refused_per_request(server: RunningServer) -> None:
    """The stream's token acts for every request; a request for a match the token is not
    valid in is refused like Act's, and writes nothing there."""
    channel, client = stub(server.port)
    async with channel:
        mine, _, my_tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        theirs, _, _ = await create_and_join(client, 2, turn_timeout_ms=0)
        theirs_before = await client.GetMatch(ms.GetMatchRequest(match_id=theirs))
        answers = await asyncio.wait_for(
            _play_all(client, my_tokens[0], [_play(theirs, reveal()), _play(mine, reveal())]),
            BOUND,
        )
        theirs_after = await client.GetMatch(ms.GetMatchRequest(match_id=theirs))
    assert answers[0].refused.code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    assert answers[0].refused.message == "the token is not valid for this match"
    assert answers[1].WhichOneof("outcome") == "applied"
    assert theirs_after.summary.version == theirs_before.summary.version


async def test_js_6_1_js_5_1_grabs_on_open_streams_race_by_the_order_they_were_read(
    server: RunningServer,
) -> None:
    """Six seats, each on its own connection with a Play stream already open, grab at
    once: one wins, the one the server stamped first or the one drawn among the grabs
    read within the tie window after it (JS-4.2a), and every other grab is recorded as
    late with its own stamp."""
    players = 6
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_and_join(
            client, players, prearranged_deal=deal_for(players, {0: [INWARD]}), turn_timeout_ms=0
        )
        revealed = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
        )
        channels = [stub(server.port) for _ in tokens]
        queues: list[asyncio.Queue[ms.PlayRequest | None]] = [asyncio.Queue() for _ in tokens]

        async def sent(
            queue: asyncio.Queue[ms.PlayRequest | None],
        ) -> AsyncIterator[ms.PlayRequest]:
            while (request := await queue.get()) is not None:
                yield request

        calls = [
            c.Play(sent(q), metadata=bearer(t))
            for (_, c), q, t in zip(channels, queues, tokens, strict=True)
        ]
        try:
            for queue in queues:
                queue.put_nowait(_play(match_id, grab(), revealed.version))
            answers = await asyncio.wait_for(asyncio.gather(*(c.read() for c in calls)), BOUND)
            for queue in queues:
                queue.put_nowait(None)
            ends = await asyncio.wait_for(asyncio.gather(*(c.read() for c in calls)), BOUND)
        finally:
            for other, _ in channels:
                await other.close()
        last = max(a.applied.version for a in answers)
        events = await asyncio.wait_for(watch_until(client, match_id, last, referee), BOUND)

    assert all(end is grpc.aio.EOF for end in ends)
    # One race decided: by the first grab read, or drawn among those read within the tie
    # window after it (JS-4.2a); every other grab late.
    won, contenders, lates = race_verdict(events, "arrows_won")
    check_race(won, contenders, lates)
    stamps = [c.stamp for c in contenders] or [won.stamp]
    stamps += [g.stamp for g in lates]
    assert len({s.sequence for s in stamps}) == players
    assert all(s.seen_version == revealed.version for s in stamps)
    # Each stamp says it was taken as its message was read on an open stream.
    assert all(s.on_stream for s in stamps)
    outcomes = sorted(js_event(a.applied.events[0]) for a in answers)
    late = len(lates)
    assert outcomes == ["arrows_won"] * (players - late) + ["late_grab"] * late


async def test_js_4_2_a_duel_decided_by_a_stream_and_a_call_alike(server: RunningServer) -> None:
    """A grab on a Play stream and a grab by Act race in one receive order: whichever
    is stamped first wins the duel (JS-4.2) and the other is late, unless the second
    came within the first's tie window, when the winner is drawn (JS-4.2a)."""
    channel, client = stub(server.port)
    async with channel:
        deck = deal_for(2, {0: [symbol(0, 0)], 1: [symbol(0, 1)]})
        match_id, referee, tokens = await create_and_join(
            client, 2, prearranged_deal=deck, turn_timeout_ms=0
        )
        for seat in (0, 1):
            await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=reveal()),
                metadata=bearer(tokens[seat]),
            )
        seen = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        streamed, called = await asyncio.wait_for(
            asyncio.gather(
                _play_all(client, tokens[0], [_play(match_id, grab(), seen)]),
                client.Act(
                    ms.ActRequest(match_id=match_id, jungle_speed=grab(), seen_version=seen),
                    metadata=bearer(tokens[1]),
                ),
            ),
            BOUND,
        )
        last = max(streamed[0].applied.version, called.version)
        events = await asyncio.wait_for(watch_until(client, match_id, last, referee), BOUND)

    won, contenders, lates = race_verdict(events, "duel_won")
    check_race(won, contenders, lates)
    # Two grabs: both contenders of a tie (JS-4.2a), or a winner and a late grab.
    grabs = [(c.seat, c.stamp) for c in contenders] or [(won.winner, won.stamp)]
    grabs += [(g.seat, g.stamp) for g in lates]
    assert sorted(seat for seat, _ in grabs) == [0, 1]
    # Seat 0 grabbed on a stream, seat 1 by a call: the evidence says which was which.
    by_seat = dict(grabs)
    assert by_seat[0].on_stream and not by_seat[1].on_stream


async def test_tr_4_1_the_referee_plays_a_tribes_penalty_on_a_stream_and_is_refused_a_second(
    server: RunningServer,
) -> None:
    """Play is every game's: the referee's token acts for referee commands on it, and a
    Tribes refusal comes back with its rule, the stream going on."""
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, _ = await create_tribes(client, 2)

        def penalty() -> ms.PlayRequest:
            return ms.PlayRequest(act=ms.ActRequest(match_id=match_id, tribes=penalise(1)))

        answers = await asyncio.wait_for(_play_all(client, referee, [penalty(), penalty()]), BOUND)
    assert answers[0].WhichOneof("outcome") == "applied"
    assert tribes_event(answers[0].applied.events[0]) == "penalised"
    assert answers[1].refused.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert _rule(answers[1].refused) == "TR-4.1"


async def test_a_play_stream_reads_no_further_than_its_unanswered_bound() -> None:
    """The reading task takes a message only while fewer than the bound are unanswered:
    a client that floods its stream is held back by gRPC's flow control, not queued."""
    pulled = 0

    async def flood() -> AsyncIterator[int]:
        nonlocal pulled
        while True:
            await asyncio.sleep(0)  # a stream's read gives the loop a turn
            pulled += 1
            yield pulled

    class Reader:
        def _play_one(self, request: int, token: str) -> int:
            return request

    answers: asyncio.Queue[object] = asyncio.Queue()
    room = asyncio.Semaphore(3)
    reading = asyncio.create_task(
        MatchService._read_plays(Reader(), flood(), "token", answers, room)  # type: ignore[arg-type]
    )
    try:
        for _ in range(20):
            await asyncio.sleep(0)
        assert pulled == 3 and answers.qsize() == 3
        room.release()  # one answer written
        for _ in range(20):
            await asyncio.sleep(0)
        assert pulled == 4
    finally:
        reading.cancel()
