"""The replay tool on what a real server stored: played over gRPC, read after the server
stopped, on SQLite and on PostgreSQL (the shared ``store_env`` fixture)."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner, Result
from replay_support import as_referee, json_lines

from entrypoints.totem_replay import main
from server.serve import start
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import EventStream, MatchEvent, connect


def scripted_deck() -> list[int]:
    """72 symbol cards dealt to two seats so that nothing matches until both last cards
    share a shape: 36 reveals each, then one duel ends the match."""
    last_of_0, last_of_1, swapped = 4 * 8 + 0, 4 * 8 + 3, 4 * 17 + 3
    zero = [swapped] + [c for c in range(36) if c not in (last_of_0, last_of_1)] + [last_of_0]
    one = [c for c in range(36, 72) if c != swapped] + [last_of_1]
    return [card for pair in zip(zero, one, strict=True) for card in pair]


def replay(store_env: dict[str, str], *args: object) -> Result:
    """Run the tool on the store the server used, as an operator would: the SQLite file
    with --db, or PostgreSQL through the environment (where --db is ignored)."""
    if store_env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        argv = ["--db", store_env["SQLITE_DBNAME"]]
        env = {}
    else:
        argv, env = ["--db", "/nonexistent/ignored.db"], dict(store_env)
    return CliRunner().invoke(main, [*argv, *as_referee(args)], env=env)


async def test_matches_served_over_grpc_replay_and_verify(store_env: dict[str, str]) -> None:
    running = await start("127.0.0.1:0", store_env)
    try:
        async with connect(f"127.0.0.1:{running.port}", organiser_token=ORGANISER_TOKEN) as client:
            ended = await client.create_match(
                max_players=2,
                turn_timeout_ms=0,
                specials=(0, 0, 0),
                prearranged_deal=scripted_deck(),
                entropy=b"creator",
            )
            ana = await client.join(ended.match_id, "ana", entropy=b"ana's")
            bo = await client.join(ended.match_id, "bo")
            for _ in range(36):
                await ana.reveal()
                await bo.reveal()
            final = await ana.grab()
            referee = client.referee(ended)
            # The stream ends with the match; the bound only keeps a broken server from
            # hanging the test.
            watched = await asyncio.wait_for(_collect(referee.watch()), 60)

            playing = await client.create_match(max_players=3, turn_timeout_ms=0)
            seats = [await client.join(playing.match_id, f"p{i}") for i in range(3)]
            await seats[0].reveal()
    finally:
        await running.stop(grace=None)

    assert [e.version for e in watched] == list(range(1, final.version + 1))
    match_digest = watched[-1].digest.hex()

    listed = replay(store_env, "list")
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert len(lines) == 2
    assert any(ended.match_id in line and "ended (completed)" in line for line in lines)
    assert any(playing.match_id in line and " playing " in line for line in lines)

    ok = replay(
        store_env,
        "verify",
        ended.match_id[:8],
        "--commitment",
        ended.seed_commitment.hex(),
        "--digest",
        match_digest,
    )
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith(f"OK match {ended.match_id}: {final.version} events")
    assert match_digest in ok.stdout
    assert "deal prearranged in the options" in ok.stdout
    assert "revealed seed matches the commitment" in ok.stdout

    exported = json_lines(replay(store_env, "events", ended.match_id, "--json").stdout)
    assert [bytes.fromhex(r["digest"]) for r in exported] == [e.digest for e in watched]
    assert [r["name"] for r in exported][-3:] == ["DuelWon", "PlayerFinished", "MatchEnded"]

    at_end = replay(store_env, "at", ended.match_id, final.version)
    assert at_end.exit_code == 0, at_end.output
    assert "seat 1 (bo): 72 face down, 0 face up" in at_end.stdout  # JS-4.3
    assert "seat 0 (ana): 0 face down, 0 face up, finished 1st" in at_end.stdout

    commitment = playing.seed_commitment.hex()
    live = replay(store_env, "verify", playing.match_id, "--commitment", commitment)
    assert live.exit_code == 0, live.output
    assert "the seed is not revealed yet" in live.stdout
    shown = replay(store_env, "show", playing.match_id)
    assert shown.exit_code == 0, shown.output
    assert "Players:         seat 0 (p0); seat 1 (p1); seat 2 (p2)" in shown.stdout
    assert playing.seed_commitment.hex() in shown.stdout


async def _collect(stream: EventStream) -> list[MatchEvent]:
    return [event async for event in stream]
