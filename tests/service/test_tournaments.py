"""TournamentService over real gRPC (docs/tournaments.md, TO-x.y): rounds paired and
their matches created by the server, entrants seated with their entrant tokens, results
recorded as the matches end, disputes and rulings, the end and its signed sheet."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from uuid import UUID

import grpc
import pytest
from click.testing import CliRunner

from domain.kernel.chain import first_broken_link
from domain.tournament.sheet import verify
from entrypoints.totem_replay import main as totem_replay
from server.serve import RunningServer
from storage.keys import ALGORITHM
from tests.service.helpers import ORGANISER_TOKEN, bearer, organiser, rule_of
from tests.service.tournament_helpers import Stubs
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms
from totem.v1 import tournament_service_pb2 as tp

ENTRANTS = ["ann", "bob", "cat", "dan"]


@pytest.fixture
async def stubs(server: RunningServer) -> AsyncIterator[Stubs]:
    made = Stubs(server.port)
    try:
        yield made
    finally:
        await made.close()


async def refusal(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call  # type: ignore[misc]
    return info.value


async def test_a_swiss_tournament_runs_to_its_signed_sheet_TO_9_TO_11(
    server: RunningServer, stubs: Stubs
) -> None:
    field = await stubs.create(ENTRANTS, rounds=2)
    first = await stubs.start_round(field)
    # TO-9.2: two tables, each with its reason and a match of its own.
    assert [list(t.seats) for t in first.tables] == [["ann", "cat"], ["bob", "dan"]]
    assert all(t.reason for t in first.tables)
    assert len({t.match_id for t in first.tables}) == 2
    for table in first.tables:
        await stubs.play_table(field, table)
    await stubs.round_ended(field, 1)
    second = await stubs.start_round(field)
    assert second.number == 2
    for table in second.tables:
        await stubs.play_table(field, table)
    events = await stubs.events(field, "TournamentEnded")
    tournament = await stubs.get(field)
    assert tournament.summary.ended
    assert tournament.standings[0].entrant == "ann"
    # Each table's result names its match's final digest and version (TO-9.4).
    for state in tournament.rounds:
        for table in state.tables:
            match = await stubs.matches.GetMatch(ms.GetMatchRequest(match_id=table.match_id))
            assert match.summary.status == common_pb2.MATCH_STATUS_ENDED
            assert table.version == match.summary.version
            assert len(table.digest) == 64
    # TO-11.2: the sheet is every event, the last one signed by the server's key.
    sheet = await stubs.tournaments.GetResultSheet(
        tp.GetResultSheetRequest(tournament_id=field.tournament_id)
    )
    key = await stubs.matches.GetServerKey(ms.GetServerKeyRequest())
    assert key.algorithm == ALGORITHM and sheet.public_key == key.public_key
    assert sheet.signature and sheet.digest == events[-1].digest
    lines = sheet.sheet.decode().splitlines()
    assert json.loads(lines[0])["tournament_id"] == field.tournament_id
    assert len(lines) == 1 + len(events)
    stored = list(server.app.events.get(UUID(field.tournament_id)))
    assert first_broken_link(stored) is None
    assert verify(stored) == []
    db = server.app.env.get("SQLITE_DBNAME")
    assert db or server.app.persistence == "eventsourcing.postgres"
    if db:  # the judge's tool, on the store as the server left it
        for args in (["verify", "--all"], ["tournament", "verify", field.tournament_id]):
            judged = CliRunner().invoke(totem_replay, ["--db", db, *args])
            assert judged.exit_code == 0, judged.output


async def test_entrant_tokens_take_their_own_seats_and_nobody_else_does_TO_9_2(
    stubs: Stubs,
) -> None:
    field = await stubs.create(ENTRANTS[:2])
    table = (await stubs.start_round(field)).tables[0]
    stranger = await refusal(
        stubs.matches.JoinMatch(
            ms.JoinMatchRequest(match_id=table.match_id, name="eve", any_seat=True)
        )
    )
    assert stranger.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert rule_of(stranger) == "TO-9.2"
    # Bob comes first, and waits for Ann; both are seated in the pairing's order.
    bob = asyncio.create_task(stubs.seat(field, "bob"))
    await stubs.first(field, "Arrived", entrant="bob")
    assert not bob.done()
    ann = await stubs.seat(field, "ann")
    assert (ann.seat, (await bob).seat) == (0, 1) and ann.match_id == table.match_id
    assert list(table.seats) == ["ann", "bob"]
    # Asking again answers the same seat; the entrant token acts in the match.
    assert (await stubs.seat(field, "bob")).seat == 1
    view = await stubs.matches.GetMatch(
        ms.GetMatchRequest(match_id=table.match_id), metadata=bearer(field.tokens["bob"])
    )
    assert view.role == common_pb2.VIEWER_ROLE_PLAYER and view.seat == 1
    assert view.summary.status == common_pb2.MATCH_STATUS_PLAYING
    wrong = await refusal(
        stubs.tournaments.TakeSeat(
            tp.TakeSeatRequest(tournament_id=field.tournament_id), metadata=bearer("nobody's")
        )
    )
    assert wrong.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_disputes_are_ruled_by_the_tournament_s_referees_only_TO_10(
    stubs: Stubs,
) -> None:
    field = await stubs.create(ENTRANTS, rounds=1)
    round_ = await stubs.start_round(field)
    disputed, other = round_.tables
    await stubs.play_table(field, disputed, winner=disputed.seats[0])
    loser = disputed.seats[1]
    # TO-10.1: while the other table plays, the loser disputes the result.
    filed = await stubs.tournaments.FileDispute(
        tp.FileDisputeRequest(
            tournament_id=field.tournament_id,
            match_id=disputed.match_id,
            version=0,
            text="the totem was mine",
        ),
        metadata=bearer(field.tokens[loser]),
    )
    queue = await stubs.tournaments.ListDisputes(
        tp.ListDisputesRequest(tournament_id=field.tournament_id),
        metadata=bearer(field.referee_token),
    )
    assert [(d.number, d.entrant, d.text) for d in queue.disputes] == [
        (filed.dispute, loser, "the totem was mine")
    ]
    replaced = tp.Verdict(
        replace=tp.ReplaceResult(
            places=[
                tp.EntrantPlace(entrant=loser, place=1),
                tp.EntrantPlace(entrant=disputed.seats[0], place=2),
            ]
        )
    )
    # TO-10.2: the organiser is not a referee of the tournament.
    denied = await refusal(
        stubs.tournaments.Rule(
            tp.RuleRequest(
                tournament_id=field.tournament_id,
                dispute=filed.dispute,
                verdict=replaced,
                reason="seen on the replay",
            ),
            metadata=organiser(),
        )
    )
    assert denied.code() == grpc.StatusCode.PERMISSION_DENIED
    ruled = await stubs.tournaments.Rule(
        tp.RuleRequest(
            tournament_id=field.tournament_id,
            dispute=filed.dispute,
            verdict=replaced,
            reason="seen on the replay",
        ),
        metadata=bearer(field.referee_token),
    )
    assert ruled.ruling == 1
    await stubs.play_table(field, other)
    await stubs.events(field, "TournamentEnded")
    tournament = await stubs.get(field)
    assert [(r.judge, r.kind) for r in tournament.rulings] == [("Ada", "replace-result")]
    top = {r.entrant: r.points for r in tournament.standings}
    assert top[loser] == "1" and top[disputed.seats[0]] == "0"


async def test_a_replay_ruling_forks_the_match_for_the_same_entrants_TO_10_3(
    stubs: Stubs,
) -> None:
    field = await stubs.create(ENTRANTS, rounds=1)
    table, other = (await stubs.start_round(field)).tables
    await stubs.play_table(field, table)
    # While the other table plays, the round's dispute window is not yet open or closed.
    filed = await stubs.tournaments.FileDispute(
        tp.FileDisputeRequest(
            tournament_id=field.tournament_id,
            match_id=table.match_id,
            version=5,
            text="replay from the start",
        ),
        metadata=bearer(field.tokens[table.seats[1]]),
    )
    ruled = await stubs.tournaments.Rule(
        tp.RuleRequest(
            tournament_id=field.tournament_id,
            dispute=filed.dispute,
            verdict=tp.Verdict(replay=tp.ReplayFrom(version=5)),
            reason="the stop was a mistake",
        ),
        metadata=bearer(field.referee_token),
    )
    assert ruled.replay_match_id and ruled.replay_match_id != table.match_id
    # The fork is the table's match now; each entrant's token is still their seat's.
    again = await stubs.seat(field, table.seats[1])
    assert again.match_id == ruled.replay_match_id
    seats = await stubs.seat_table(field, table)
    await stubs.stop(ruled.replay_match_id, {seats[table.seats[1]]: 1, seats[table.seats[0]]: 2})
    await stubs.recorded(field, ruled.replay_match_id)
    await stubs.play_table(field, other)
    await stubs.events(field, "TournamentEnded")
    tournament = await stubs.get(field)
    final = tournament.rounds[0].tables[0]
    assert final.match_id == ruled.replay_match_id
    # The fork's result is the table's: the entrant who disputed won it.
    assert list(final.places) == [2, 1]
    assert {r.entrant: r.points for r in tournament.standings}[table.seats[1]] == "1"


async def test_refusals_name_their_rule_and_write_nothing_TO_9_1_TO_11_1(
    server: RunningServer, stubs: Stubs
) -> None:
    stranger = await refusal(
        stubs.tournaments.CreateTournament(
            tp.CreateTournamentRequest(
                game=common_pb2.GAME_TRIBES,
                format=tp.TOURNAMENT_FORMAT_SWISS,
                table_size=2,
            )
        )
    )
    assert stranger.code() == grpc.StatusCode.PERMISSION_DENIED
    too_many = await refusal(
        stubs.tournaments.CreateTournament(
            tp.CreateTournamentRequest(
                game=common_pb2.GAME_TRIBES,
                format=tp.TOURNAMENT_FORMAT_SINGLE_ELIMINATION,
                table_size=3,
            ),
            metadata=organiser(),
        )
    )
    assert too_many.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert rule_of(too_many) == "TO-4.1"
    field = await stubs.create(ENTRANTS[:2])
    await stubs.start_round(field)
    before = (await stubs.get(field)).summary.version
    early = await refusal(
        stubs.tournaments.StartRound(
            tp.StartRoundRequest(tournament_id=field.tournament_id), metadata=organiser()
        )
    )
    assert early.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert rule_of(early) == "TO-9.1"
    no_sheet = await refusal(
        stubs.tournaments.GetResultSheet(
            tp.GetResultSheetRequest(tournament_id=field.tournament_id)
        )
    )
    assert no_sheet.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert rule_of(no_sheet) == "TO-11.1"
    late = await refusal(
        stubs.tournaments.AddEntrant(
            tp.AddEntrantRequest(tournament_id=field.tournament_id, name="eve"),
            metadata=organiser(),
        )
    )
    assert late.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert (await stubs.get(field)).summary.version == before
    missing = await refusal(
        stubs.tournaments.GetTournament(
            tp.GetTournamentRequest(tournament_id="6f1c2a52-0d3c-4d4b-9a38-9c3b0c7e2f11")
        )
    )
    assert missing.code() == grpc.StatusCode.NOT_FOUND
    garbled = await refusal(
        stubs.tournaments.GetTournament(tp.GetTournamentRequest(tournament_id="x"))
    )
    assert garbled.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_nobody_is_shown_a_token_hash_or_the_seed_before_the_end(stubs: Stubs) -> None:
    field = await stubs.create(ENTRANTS[:2], duplicate=True)
    await stubs.start_round(field)
    events = await stubs.events(field, "RoundStarted")
    shown = " ".join(e.fields_json for e in events)
    assert "token_hash" not in shown
    assert '"seed"' not in shown and "duplicate_seed" not in shown
    # Nor any token's hash under another name, in the events or in GetTournament.
    hashes = [hashlib.sha256(t.encode()).hexdigest() for t in field.tokens.values()]
    hashes += [hashlib.sha256(ORGANISER_TOKEN.encode()).hexdigest()]
    public = shown + str(await stubs.get(field))
    assert not [h for h in hashes if h in public]


async def test_every_table_of_a_duplicate_round_gets_the_same_luck_TO_12_1(
    stubs: Stubs,
) -> None:
    field = await stubs.create(ENTRANTS, rounds=2, duplicate=True)
    rounds = [await stubs.start_round(field)]
    for table in rounds[0].tables:
        await stubs.play_table(field, table)
    await stubs.round_ended(field, 1)
    rounds.append(await stubs.start_round(field))
    luck = []
    for round_ in rounds:
        cards = []
        for table in round_.tables:
            # The organisers see a table as its referee: the prearranged luck included.
            seen = await stubs.matches.GetMatch(
                ms.GetMatchRequest(match_id=table.match_id), metadata=organiser()
            )
            options = seen.tribes.options
            assert options.prearranged
            cards.append([list(c.cards) for c in options.prearranged_cards])
            spectator = await stubs.matches.GetMatch(ms.GetMatchRequest(match_id=table.match_id))
            assert spectator.tribes.options.prearranged
            assert not spectator.tribes.options.prearranged_cards
        assert cards[0] and cards[0] == cards[1]
        luck.append(cards[0])
    # Each round draws its own luck from the tournament's seed.
    assert luck[0] != luck[1]


async def test_a_tournament_may_start_its_rounds_by_itself_TO_9_1(stubs: Stubs) -> None:
    field = await stubs.create(ENTRANTS, rounds=3, auto_rounds=True)
    await stubs.start_round(field)  # the first round is the organiser's
    for number in (1, 2, 3):
        started = await stubs.first(field, "RoundStarted", round=number)
        for table in json.loads(started.fields_json)["tables"]:
            listed = tp.TournamentTable(seats=table["seats"], match_id=table["match_id"])
            await stubs.play_table(field, listed)
    await stubs.events(field, "TournamentEnded")
    tournament = await stubs.get(field)
    assert tournament.auto_rounds and len(tournament.rounds) == 3
