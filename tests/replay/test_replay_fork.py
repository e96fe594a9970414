"""``totem-replay fork`` against a running server, then the fork read back from the store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import grpc
import pytest
from click.testing import CliRunner, Result
from replay_support import json_lines

from entrypoints.totem_replay import main
from server.serve import RunningServer, start
from tests.client.support import sqlite_store
from tests.service.helpers import ORGANISER_TOKEN, act, bearer, deal_for, grab, stub, symbol
from totem.v1 import match_service_pb2 as ms
from totem_client import connect

#: Seat 0's first card and seat 1's show the same shape: a duel once both are up (JS-4.1).
DUEL_DEAL = deal_for(2, {0: [symbol(0, 0), symbol(1, 1)], 1: [symbol(0, 1), symbol(2, 2)]})


@pytest.fixture
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RunningServer]:
    db = tmp_path_factory.mktemp("served") / "totem.db"
    running = await start(
        "127.0.0.1:0",
        sqlite_store(db),
    )
    try:
        yield running
    finally:
        await running.stop(grace=None)


async def invoke(*args: object, env: dict[str, str] | None = None) -> Result:
    """Run the tool in a thread: the server it calls runs on this test's event loop."""
    return await asyncio.to_thread(CliRunner().invoke, main, list(map(str, args)), env=env)


async def duel_at_version_6(port: int) -> tuple[str, str]:
    """A match of ana and bo whose duel is open at version 6; its id and referee token."""
    async with connect(f"127.0.0.1:{port}", organiser_token=ORGANISER_TOKEN) as client:
        created = await client.create_match(
            max_players=2, turn_timeout_ms=0, prearranged_deal=DUEL_DEAL
        )
        ana = await client.join(created.match_id, "ana")
        bo = await client.join(created.match_id, "bo")
        await ana.reveal()
        await bo.reveal()
        await bo.grab()  # bo wins the duel at version 7: the fork replays the race
    return created.match_id, created.referee_token


async def test_fork_prints_the_new_match_and_a_token_per_seat(served: RunningServer) -> None:
    origin, referee = await duel_at_version_6(served.port)
    address = f"127.0.0.1:{served.port}"
    printed = await invoke("fork", origin, 6, "--server", address, "--token", referee)
    as_json = await invoke(
        "fork", origin, 6, "--server", address, "--json", env={"TOTEM_TOKEN": referee}
    )
    assert printed.exit_code == 0, printed.output
    assert as_json.exit_code == 0, as_json.output
    lines = printed.stdout.splitlines()
    assert lines[0].startswith(f"Forked match {origin} at version 6 into ")
    fork_id = lines[0].split()[-1]
    tokens = {line.split()[1]: line.split()[-1] for line in lines if line.startswith("Seat ")}
    assert set(tokens) == {"0", "1"}
    assert any(line.startswith("Referee token: ") for line in lines)
    # How a seat's token is used, with the fork's own id and game.
    assert f"totem play jungle-speed --join {fork_id} --token TOKEN" in printed.stdout
    assert f"totem bots jungle-speed --join {fork_id} --token TOKEN ..." in printed.stdout
    record = json.loads(as_json.stdout)
    assert record["origin"] == {"match_id": origin, "version": 6}
    assert [(s["seat"], s["name"]) for s in record["seats"]] == [(0, "ana"), (1, "bo")]
    assert record["version"] == 1 and len(bytes.fromhex(record["seed_commitment"])) == 32
    assert record["match_id"] not in (origin, fork_id)  # each call makes its own fork

    # JS-4.2: this time ana grabs first, with the fork's token, and wins the duel.
    channel, client = stub(served.port)
    async with channel:
        won = await act(client, fork_id, tokens["0"], grab())
        state = await client.GetMatch(ms.GetMatchRequest(match_id=fork_id))
        # The origin's referee token is not the fork's.
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.GetMatch(ms.GetMatchRequest(match_id=fork_id), metadata=bearer(referee))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert [e.jungle_speed.duel_won.winner for e in won.events] == [0]
    assert state.jungle_speed.turn == 1  # the loser starts the next turn (JS-4.5)


async def test_fork_errors_are_one_line_with_status_2(served: RunningServer) -> None:
    origin, referee = await duel_at_version_6(served.port)
    address = f"127.0.0.1:{served.port}"
    beyond = await invoke("fork", origin, 99, "--server", address, "--token", referee)
    not_referee = await invoke("fork", origin, 6, "--server", address, "--token", "nope")
    no_token = await invoke("fork", origin, 6, "--server", address)
    assert beyond.exit_code == 2
    assert beyond.stderr.strip().splitlines() == [
        "Error: the server refused the fork (OUT_OF_RANGE): "
        "version 99 is not one of the match's versions (1 to 7)"
    ]
    assert not_referee.exit_code == 2 and "(PERMISSION_DENIED)" in not_referee.stderr
    assert "as --token (env TOTEM_TOKEN)" in not_referee.stderr
    assert no_token.exit_code == 2 and "--token" in no_token.stderr


async def test_a_fork_replays_shows_its_origin_and_verifies(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    db = tmp_path_factory.mktemp("forked") / "totem.db"
    running = await start(
        "127.0.0.1:0",
        sqlite_store(db),
    )
    try:
        origin, referee = await duel_at_version_6(running.port)
        address = f"127.0.0.1:{running.port}"
        made = await invoke("fork", origin, 6, "--server", address, "--token", referee, "--json")
        fork_id = json.loads(made.stdout)["match_id"]
    finally:
        await running.stop(grace=None)
    listed = json_lines((await invoke("--db", db, "list", "--json")).stdout)
    shown = json.loads((await invoke("--db", db, "show", fork_id, "--json")).stdout)
    origin_shown = json.loads((await invoke("--db", db, "show", origin, "--json")).stdout)
    events = json_lines((await invoke("--db", db, "events", fork_id, "--json")).stdout)
    verified = await invoke("--db", db, "verify", fork_id)
    events_text = await invoke("--db", db, "events", fork_id)
    shown_text = await invoke("--db", db, "show", fork_id)
    at_start = await invoke("--db", db, "at", fork_id, 1, "--spectator", "--json")
    origin_at = await invoke("--db", db, "at", origin, 6, "--spectator", "--json")
    assert [r["match_id"] for r in listed] == [origin, fork_id]
    assert listed[1]["origin"]["match_id"] == origin
    assert shown["origin"]["version"] == 6
    assert shown["status"] == "playing" and shown["events"] == 1
    assert [p["name"] for p in shown["players"]] == ["ana", "bo"]
    assert shown["seed_commitment"] != origin_shown["seed_commitment"]
    assert [r["name"] for r in events] == ["Forked"]
    assert "history" not in events[0]["view"]
    assert verified.exit_code == 0, verified.output
    assert f"a fork of {origin} at version 6: the draws it carries are the origin's" in (
        verified.stdout
    )
    assert "the seed is not revealed: the match has not ended" in verified.stdout
    assert events_text.exit_code == 0, events_text.output
    assert " Forked " in events_text.stdout and origin in events_text.stdout
    assert f"Forked from:     {origin} at version 6 (digest " in shown_text.stdout
    fork_state, origin_state = json.loads(at_start.stdout), json.loads(origin_at.stdout)
    for changed in ("seed_commitment", "turn_deadline_ms"):
        fork_state.pop(changed), origin_state.pop(changed)
    assert fork_state == origin_state
