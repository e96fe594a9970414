"""Refused grabs of a race on a real server are the judge's evidence: played over gRPC
(the scenario of tests/service/test_refusals_kept.py), read after the server stopped
with `explain`, `disputes`, `verify` and a bundle (JS-4.2, JS-5.1, JS-5.3, JS-6.1)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import grpc
import pytest
from test_replay_server import replay

from tests.service.helpers import INWARD, bearer, create_and_join, deal_for, grab, reveal, stub
from tests.service.limits_helpers import LOOSE, serving
from totem.v1 import match_service_pb2 as ms


async def test_js_4_2_refused_grabs_of_a_served_race_are_shown_and_verified(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    # Two commands per seat, none given back during the test: the third is refused.
    limits = dataclasses.replace(LOOSE, commands_per_second=0.001, command_burst=2)
    async with serving(store_env, limits) as running:
        channel, client = stub(running.port)
        async with channel:
            deck = deal_for(2, {0: [INWARD]})
            match_id, _, tokens = await create_and_join(
                client, 2, prearranged_deal=deck, turn_timeout_ms=0
            )
            opened = await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
            )  # #1: the inward arrows open a race for everyone (JS-6.1)
            bogus = ms.ActRequest(match_id=match_id, seen_version=999, jungle_speed=grab())
            with pytest.raises(grpc.aio.AioRpcError):  # #2: refused, a version never seen
                await client.Act(bogus, metadata=bearer(tokens[1]))
            act = ms.ActRequest(match_id=match_id, jungle_speed=grab())
            won = await client.Act(act, metadata=bearer(tokens[0]))  # #3 wins
            await client.Act(act, metadata=bearer(tokens[1]))  # #4, late (JS-5.3)
            with pytest.raises(grpc.aio.AioRpcError):  # #5: seat 1's commands are spent
                await client.Act(act, metadata=bearer(tokens[1]))
    assert won.version == opened.version + 1

    explained = replay(store_env, "explain", match_id, won.version, "--json")
    assert explained.exit_code == 0, explained.output
    data = json.loads(explained.stdout)
    assert [(c["seat"], c["label"], c["receive"]) for c in data["contenders"]] == [
        (1, "refused", 2),
        (0, "winner", 3),
        (1, "lost", 4),
        (1, "refused", 5),
    ]
    assert data["race"]["winner"] == 0
    bogus_grab, _, _, spent = data["contenders"]
    assert bogus_grab["version"] == opened.version and bogus_grab["seen_version"] == 999
    assert bogus_grab["reason"].startswith("INVALID_ARGUMENT: seen_version 999")
    assert spent["reason"].startswith("RESOURCE_EXHAUSTED: seat 1 sent more than")

    shown = replay(store_env, "disputes", match_id)
    assert shown.exit_code == 0, shown.output
    assert "1 race" in shown.stdout.splitlines()[0] and "2 refused grabs" in shown.stdout

    verified = replay(store_env, "verify", match_id)
    assert verified.exit_code == 0, verified.output
    assert (
        "refusals:        OK  receive numbers 1 to 5 each held once: 3 by applied commands, "
        "2 by kept refusals"
    ) in verified.stdout

    bundle = tmp_path / "served.jsonl"
    assert replay(store_env, "export", match_id, "-o", bundle).exit_code == 0
    again = replay(store_env, "explain", bundle, won.version, "--json")
    assert json.loads(again.stdout)["contenders"] == data["contenders"]
    assert replay(store_env, "verify", bundle).exit_code == 0
