"""``totem-replay explain``: grab races with every contender in server receive order, its
gap to the winner and its reaction time (JS-4.2, JS-5.1, JS-5.3, JS-6.1), wrong grabs
(JS-5.2), and the rule ids and facts behind Tribes and Village outcomes (TR-3, VI-2.6,
VI-2.9)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from replay_support import Stamps, as_referee, json_lines, open_store, store_match
from test_replay_tribes import store_tribes
from test_replay_village import ZERO, store_village

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import ReceiveStamp
from domain.kernel.match import MatchAggregate
from entrypoints.totem_replay import main
from server.serve import start
from tests.service.helpers import (
    INWARD,
    bearer,
    create_and_join,
    deal_for,
    grab,
    reveal,
    stub,
    symbol,
    watch_until,
)
from totem.v1 import match_service_pb2 as ms

MS = 1_000_000
#: The monotonic clock of the scripted races: any origin will do.
T0 = 5_000 * MS


def run(db: Path, *args: object) -> Result:
    argv: Sequence[str] = ["--db", str(db), *as_referee(args)]
    return CliRunner().invoke(main, argv)


def explained(db: Path, *args: object) -> dict[str, Any]:
    shown = run(db, "explain", *args, "--json")
    assert shown.exit_code == 0, shown.output
    data: dict[str, Any] = json.loads(shown.output)
    return data


def grab_stamp(
    sequence: int, at_ms: float, seen: int = 0, sent_ms: float | None = None
) -> ReceiveStamp:
    """A grab received at ``at_ms`` that says it had seen version ``seen``, whose event
    the server wrote to the grabber's stream at ``sent_ms`` (None: never)."""
    mono = T0 + int(at_ms * MS)
    sent = T0 + int(sent_ms * MS) if sent_ms is not None else 0
    wall = 1_700_000_000_000 * MS + mono
    return ReceiveStamp(sequence, mono, wall, seen, sent)


def scripted_match(db: Path, deal: list[int], players: int = 3) -> JungleSpeed:
    arena = open_store(db)
    options = Options(variant="ES", max_players=players, prearranged_deal=deal, turn_timeout_ms=0)
    created = arena.create_match(lambda seed: JungleSpeed.create(options, seed, b"\x01"))
    assert isinstance(created, JungleSpeed)
    stamps = Stamps()
    for seat in range(players):
        created.join(f"p{seat}", bytes([seat]), f"hash-{seat}", stamps())
    arena.save(created)
    arena.close()
    return created


def save(db: Path, match: MatchAggregate) -> None:
    arena = open_store(db)
    try:
        arena.save(match)
    finally:
        arena.close()


def test_js_6_1_js_4_2_inward_arrows_race_names_winner_order_gaps_and_a_fast_bot(
    tmp_path: Path,
) -> None:
    """Seat 2 is received first, 3 ms after the reveal reached its stream: it wins
    (JS-6.1, JS-4.2) and is flagged; seat 1, 252 ms after, and seat 0, whose reaction is
    unknown, are late (JS-5.3) and not flagged."""
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {0: [INWARD]}))
    match.reveal(0, grab_stamp(10, 0))
    revealed = match.version
    match.grab(2, grab_stamp(11, 40, seen=revealed, sent_ms=37))
    won = match.version
    match.grab(1, grab_stamp(12, 52, seen=revealed, sent_ms=-200))
    match.grab(0, grab_stamp(13, 95.5))
    late = match.version
    save(db, match)

    data = explained(db, match.id, won)
    assert data["event"] == "ArrowsWon" and "won by seat 2 (p2)" in data["title"]
    assert data["rules"][0] == "JS-6.1" and "JS-4.2" in data["rules"]
    contenders = data["contenders"]
    assert [c["seat"] for c in contenders] == [2, 1, 0]
    assert [c["sequence"] for c in contenders] == [11, 12, 13]
    assert [c["outcome"] for c in contenders] == ["won", "late", "late"]
    assert [c["label"] for c in contenders] == ["winner", "lost", "lost"]
    assert [c["gap_ms"] for c in contenders] == [0, 12, 55.5]
    assert [c["seen_version"] for c in contenders] == [revealed, revealed, 0]
    assert [c["reaction_ms"] for c in contenders] == [3, 252, None]
    assert [c["suspect"] for c in contenders] == [True, False, False]
    assert [c["player"] for c in contenders] == ["p2", "p1", "p0"]
    # A late grab belongs to the race it was late for: the same explanation.
    assert explained(db, match.id, late)["contenders"] == contenders
    # The limit is the judge's: at 2 ms nobody is suspect.
    lenient = explained(db, match.id, won, "--human-limit-ms", 2)
    assert [c["suspect"] for c in lenient["contenders"]] == [False, False, False]

    text = run(db, "explain", match.id, won).output
    lines = text.splitlines()
    assert lines[0].startswith(f"Version {won}: ArrowsWon: inward-arrows race won by seat 2")
    assert f"the Revealed event at version {revealed}" in text
    rows = [line for line in lines if "recv #" in line]
    assert [row.split()[0] for row in rows] == ["winner", "lost", "lost"]
    assert "SUSPECT" in rows[0] and "reaction 3.000 ms" in rows[0]
    assert "SUSPECT" not in rows[1] and "+12.000 ms" in rows[1]
    assert "reaction unknown" in rows[2] and "+55.500 ms" in rows[2]


def test_js_4_2_a_race_received_by_two_instances_is_shown_in_commit_order(
    tmp_path: Path,
) -> None:
    """Several server instances on one store: each grab's stamp names its instance, whose
    sequence and monotonic clock are its own. The contenders are listed in the order the
    match recorded them (commit order), with gaps on the wall clock between instances."""
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {0: [INWARD]}))
    match.reveal(0, grab_stamp(10, 0))
    on_a = grab_stamp(500, 40)
    match.grab(2, ReceiveStamp(500, on_a.monotonic_ns, on_a.wall_ns, instance="a"))
    won = match.version
    # b's sequence is lower and its monotonic clock far behind: neither says anything.
    on_b = grab_stamp(7, 43.25)
    match.grab(1, ReceiveStamp(7, 1, on_b.wall_ns, instance="b"))
    save(db, match)

    contenders = explained(db, match.id, won)["contenders"]
    assert [(c["seat"], c["outcome"], c["instance"]) for c in contenders] == [
        (2, "won", "a"),
        (1, "late", "b"),
    ]
    assert [c["gap_ms"] for c in contenders] == [0, 3.25]
    rows = [
        line for line in run(db, "explain", match.id, won).output.splitlines() if "recv #" in line
    ]
    assert "#500@a" in rows[0] and "#7@b" in rows[1] and "+3.250 ms" in rows[1]


def test_js_5_1_a_grab_stamped_on_an_open_stream_is_shown_as_such(tmp_path: Path) -> None:
    """A judge sees how each grab was stamped: as its message was read on an open Play
    stream, or when its call was admitted (which waits for gRPC), beside its gap."""
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {0: [INWARD]}))
    match.reveal(0, grab_stamp(10, 0))
    streamed = grab_stamp(11, 40)
    match.grab(2, dataclasses.replace(streamed, on_stream=True))
    won = match.version
    match.grab(1, grab_stamp(12, 40.5))
    save(db, match)

    contenders = explained(db, match.id, won)["contenders"]
    assert [(c["seat"], c["outcome"], c["on_stream"]) for c in contenders] == [
        (2, "won", True),
        (1, "late", False),
    ]
    rows = [
        line for line in run(db, "explain", match.id, won).output.splitlines() if "recv #" in line
    ]
    assert rows[0].split()[3] == "stream" and rows[1].split()[3] == "call"


def test_js_4_2_js_5_3_duel_then_js_5_2_wrong_grab_of_an_outsider(tmp_path: Path) -> None:
    """Seats 0 and 1 show the same shape: seat 1's grab, received first, wins the duel
    (JS-4.1, JS-4.2); seat 0's is late (JS-5.3); seat 2 was not in the duel, so its grab
    is wrong (JS-5.2) and not part of the duel's race."""
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {0: [symbol(3, 0)], 1: [symbol(3, 1)]}))
    match.reveal(0, grab_stamp(10, 0))
    match.reveal(1, grab_stamp(11, 10))
    match.grab(1, grab_stamp(12, 300, seen=match.version, sent_ms=20))
    won = match.version
    match.grab(0, grab_stamp(13, 301.25, seen=won - 1, sent_ms=21))
    match.grab(2, grab_stamp(14, 420, seen=won, sent_ms=400))
    wrong = match.version
    save(db, match)

    duel = explained(db, match.id, won)
    assert duel["event"] == "DuelWon" and "duel won by seat 1" in duel["title"]
    assert {"JS-4.1", "JS-4.2", "JS-5.3"} <= set(duel["rules"])
    assert [(c["seat"], c["outcome"], c["gap_ms"]) for c in duel["contenders"]] == [
        (1, "won", 0),
        (0, "late", 1.25),
    ]
    assert [c["reaction_ms"] for c in duel["contenders"]] == [280, 280.25]
    assert not any(c["suspect"] for c in duel["contenders"])

    outsider = explained(db, match.id, wrong)
    assert outsider["event"] == "WrongGrab" and outsider["rules"][0] == "JS-5.2"
    assert [(c["seat"], c["outcome"]) for c in outsider["contenders"]] == [(2, "wrong")]
    assert outsider["contenders"][0]["reaction_ms"] == 20
    assert outsider["contenders"][0]["label"] == "wrong grab"
    (row,) = [
        line for line in run(db, "explain", match.id, wrong).output.splitlines() if "recv #" in line
    ]
    assert row.split()[:2] == ["wrong", "grab"] and "winner" not in row


def test_an_event_that_decided_nothing_is_one_line_exit_0(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {}))
    shown = run(db, "explain", match.id, 1)
    assert shown.exit_code == 0
    assert shown.output == "nothing to explain at version 1: Created\n"
    assert explained(db, match.id, 2) == {"version": 2, "event": "PlayerJoined", "explained": False}
    missing = run(db, "explain", match.id, 999)
    assert missing.exit_code == 2
    assert missing.output.strip().endswith(f"this match has versions 1 to {match.version}")


# ---- rule outcomes: Jungle Speed (JS-8), Tribes (TR-3), Village (VI-2.6, VI-2.9) -------


def test_js_8_1_js_8_2_finishing_and_the_end(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    arena = open_store(db)
    try:
        match = store_match(arena, players=3, variant="ES")
    finally:
        arena.close()
    assert match.status.value == "ended"
    finished = _versions(db, match, "PlayerFinished")
    assert finished
    for version in finished:
        data = explained(db, match.id, version)
        assert data["rules"] == ["JS-8.1"] and "finishes" in data["title"]
    (ended,) = _versions(db, match, "MatchEnded")
    data = explained(db, match.id, ended)
    assert data["rules"] == ["JS-8.2"] and data["title"] == "match completed"
    assert data["facts"][0].startswith("ES: play goes on until two players remain")


def _versions(db: Path, match: MatchAggregate, name: str) -> list[int]:
    lines = json_lines(run(db, "events", match.id, "--json").output)
    return [line["version"] for line in lines if line["name"] == name]


def test_tr_3_1_tr_3_3_a_won_round_names_its_rules_and_lines(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    arena = open_store(db)
    try:
        match = store_tribes(arena, extended=True)
    finally:
        arena.close()
    lines = json_lines(run(db, "events", match.id, "--json").output)
    won = [line for line in lines if line["name"] == "RoundWon"]
    assert won
    for line in won:
        data = explained(db, match.id, line["version"])
        hashed = line["hashed"]
        assert {"TR-3.1", "TR-3.3"} <= set(data["rules"])
        assert ("TR-3.2" in data["rules"]) == (hashed["by"] == "revealed")
        assert f"seat {hashed['winner']}" in data["title"]
        for spaces in hashed["lines"]:
            assert f"line on spaces {', '.join(map(str, spaces))}" in data["facts"]
        assert ("TR-3.5" in data["rules"]) == hashed["feathers"]
        assert ("TR-3.4" in data["rules"]) == (hashed["badge"] is not None)


def test_vi_2_9_census_and_vi_2_6_feast_name_rules_and_facts(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    arena = open_store(db)
    try:
        match = store_village(arena, prearranged_sexes=["girl", "boy", "boy"], **ZERO)
    finally:
        arena.close()
    lines = {
        line["version"]: line for line in json_lines(run(db, "events", match.id, "--json").output)
    }
    census = [v for v, line in lines.items() if line["name"] == "CensusTaken"]
    feasts = [v for v, line in lines.items() if line["name"] == "Feasted"]
    assert census and feasts
    for version in census:
        data = explained(db, match.id, version)
        sizes = lines[version]["hashed"]["sizes"]
        assert data["rules"][0] == "VI-2.9"
        top = max(sizes)
        tie = sum(1 for s in sizes if s == top) > 1
        assert any(f.startswith("largest:") and f.endswith("(a tie)") == tie for f in data["facts"])
    for version in feasts:
        data = explained(db, match.id, version)
        assert data["rules"] == ["VI-2.6"]
        meals = lines[version]["hashed"]["meals"]
        assert len(data["facts"]) == len(meals)
        for meal, fact in zip(meals, data["facts"], strict=True):
            assert (f"{meal['deaths']} die (starvation)" in fact) == bool(meal["missing"])


# ---- a race over gRPC: the server's own stamps (JS-5.1) ----------------------------------


async def _react(port: int, match_id: str, token: str, version: int, delay: float) -> None:
    """A bot: watch, and once the event at ``version`` arrives wait ``delay`` seconds and
    grab, saying it saw that version."""
    channel, client = stub(port)
    async with channel:
        seen = await watch_until(client, match_id, version, token)
        assert seen[-1].version == version
        await asyncio.sleep(delay)
        request = ms.ActRequest(match_id=match_id, jungle_speed=grab(), seen_version=version)
        await client.Act(request, metadata=bearer(token))


async def test_js_5_1_grpc_race_flags_the_bot_that_grabs_within_5_ms_of_delivery(
    store_env: dict[str, str],
) -> None:
    """Two bots watch their own streams; the fast one grabs as soon as the reveal of the
    inward arrows reaches it, the slow one 600 ms later. The server stamps both; explain
    names the fast one winner, flags it as faster than a human (100 ms) and not the slow
    one, whose gap and reaction are at least its wait."""
    running = await start("127.0.0.1:0", store_env)
    try:
        channel, client = stub(running.port)
        async with channel:
            deck = deal_for(3, {0: [INWARD]})
            match_id, _, tokens = await create_and_join(
                client, 3, prearranged_deal=deck, turn_timeout_ms=0
            )
            # Version of the reveal: created, 3 joins, the deal, then the reveal.
            target = 6
            bots = [
                asyncio.create_task(_react(running.port, match_id, tokens[1], target, 0)),
                asyncio.create_task(_react(running.port, match_id, tokens[2], target, 0.6)),
            ]
            await asyncio.sleep(0.3)  # both streams open before the reveal
            revealed = await client.Act(
                ms.ActRequest(match_id=match_id, jungle_speed=reveal()), metadata=bearer(tokens[0])
            )
            assert revealed.version == target
            await asyncio.wait_for(asyncio.gather(*bots), 30)
    finally:
        await running.stop(grace=None)

    if store_env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        argv, env = ["--db", store_env["SQLITE_DBNAME"]], {}
    else:
        argv, env = ["--db", "/nonexistent/ignored.db"], dict(store_env)
    shown = CliRunner().invoke(
        main, [*argv, "explain", match_id, str(target + 1), "--json", "--referee"], env=env
    )
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["event"] == "ArrowsWon"
    fast, slow = data["contenders"]
    assert (fast["seat"], fast["outcome"], slow["seat"], slow["outcome"]) == (1, "won", 2, "late")
    assert fast["sequence"] < slow["sequence"]
    assert fast["seen_version"] == slow["seen_version"] == target
    assert fast["reaction_ms"] is not None and fast["suspect"]
    assert slow["reaction_ms"] >= 600 and not slow["suspect"]
    assert slow["gap_ms"] > 0


def test_explain_help_names_the_limit() -> None:
    shown = CliRunner().invoke(main, ["explain", "--help"])
    assert "--human-limit-ms" in shown.output and "default: 100" in shown.output


def test_js_5_1_the_reaction_a_client_measured_is_shown_beside_the_servers(
    tmp_path: Path,
) -> None:
    """A grab's client may send its own measure of the reaction (``reaction_ms``): a judge
    sees it beside the server's, and it marks nothing by itself."""
    db = tmp_path / "t.db"
    match = scripted_match(db, deal_for(3, {0: [INWARD]}))
    match.reveal(0, grab_stamp(10, 0))
    opened = match.version
    claimed = grab_stamp(11, 3, seen=opened, sent_ms=1)
    match.grab(2, dataclasses.replace(claimed, client_reaction_ms=180))
    won = match.version
    match.grab(1, grab_stamp(12, 400, seen=opened, sent_ms=1))
    save(db, match)

    contenders = explained(db, match.id, won)["contenders"]
    assert [(c["seat"], c["client_reaction_ms"], c["suspect"]) for c in contenders] == [
        (2, 180, True),
        (1, None, False),
    ]
    rows = [
        line for line in run(db, "explain", match.id, won).output.splitlines() if "recv #" in line
    ]
    assert "client says 180 ms" in rows[0] and "client says" not in rows[1]
