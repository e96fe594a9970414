"""A client's own measure of a reaction (``ActRequest.reaction_ms``): recorded in the
command's receive stamp as evidence, refused when it cannot be a measure (JS-5.1)."""

from __future__ import annotations

import grpc
import pytest

from server.serve import RunningServer
from tests.service.helpers import (
    INWARD,
    bearer,
    create_and_join,
    deal_for,
    grab,
    js_event,
    reveal,
    stub,
    watch_until,
)
from totem.v1 import match_service_pb2 as ms


async def test_js_5_1_the_reaction_a_client_measured_is_in_the_stamp_for_everyone(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(
            client, 2, prearranged_deal=deal_for(2, {0: [INWARD]}), turn_timeout_ms=0
        )
        seen = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        revealed = await client.Act(
            ms.ActRequest(match_id=match_id, jungle_speed=reveal(), seen_version=seen),
            metadata=bearer(tokens[0]),
        )
        won = await client.Act(
            ms.ActRequest(
                match_id=match_id,
                jungle_speed=grab(),
                seen_version=revealed.version,
                reaction_ms=231,
            ),
            metadata=bearer(tokens[1]),
        )
        # A spectator sees the claim too: a stamp is public (JS-5.1).
        watched = await watch_until(client, match_id, won.version)

    assert [js_event(e) for e in revealed.events] == ["revealed"]
    assert not revealed.events[0].jungle_speed.revealed.stamp.HasField("client_reaction_ms")
    answered = [e.jungle_speed.arrows_won for e in won.events if js_event(e) == "arrows_won"]
    spectated = [e.jungle_speed.arrows_won for e in watched if js_event(e) == "arrows_won"]
    assert [a.stamp.client_reaction_ms for a in answered + spectated] == [231, 231]


@pytest.mark.parametrize(
    ("seen", "reaction", "words"),
    [
        (0, 200, "set seen_version too"),
        (None, 3_600_001, "more than 3600000"),
    ],
)
async def test_js_5_1_a_reaction_that_cannot_be_a_measure_is_refused_and_writes_nothing(
    server: RunningServer, seen: int | None, reaction: int, words: str
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_and_join(client, 2, turn_timeout_ms=0)
        before = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.Act(
                ms.ActRequest(
                    match_id=match_id,
                    jungle_speed=reveal(),
                    seen_version=before if seen is None else seen,
                    reaction_ms=reaction,
                ),
                metadata=bearer(tokens[0]),
            )
        after = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith("JS-5.1: ") and words in refused.value.details()
    assert after == before
