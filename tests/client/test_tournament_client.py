"""The Python client of the TournamentService against a real server on loopback: its calls
and their typed answers, and refusals mapped to TotemError with the rule id
(docs/tournaments.md, TO-x.y)."""

from __future__ import annotations

import asyncio
from fractions import Fraction

import grpc
import pytest

from totem_client import Client, TotemError, connect
from totem_client.tournament import (
    OrganiserRefused,
    Penalise,
    Replace,
    Stands,
    TournamentClient,
)
from totem_client.tournament.results import Replay


@pytest.fixture
def tournaments(client: Client) -> TournamentClient:
    return TournamentClient.of(client)


async def _entered(
    tournaments: TournamentClient, names: list[str], **settings: object
) -> tuple[str, dict[str, str]]:
    created = await tournaments.create("tribes", **settings)  # type: ignore[arg-type]
    tokens = {}
    for name in names:
        ticket = await tournaments.add_entrant(created.tournament_id, name)
        tokens[name] = ticket.token
    return created.tournament_id, tokens


async def test_an_organiser_creates_enters_appoints_and_starts_a_round(
    tournaments: TournamentClient,
) -> None:
    """TO-8.1, TO-8.2, TO-8.3, TO-9.2: the calls and their typed answers."""
    created = await tournaments.create(
        "tribes", title="Spring open", rounds=2, dispute_window_ms=0, tie_breaks=["buchholz"]
    )
    assert len(created.seed_commitment) == 32
    tid = created.tournament_id
    tickets = [await tournaments.add_entrant(tid, name) for name in ("ana", "bo", "cy", "di")]
    assert [t.seed for t in tickets] == [1, 2, 3, 4]
    assert len({t.token for t in tickets}) == 4
    referee = await tournaments.appoint_referee(tid, "Ada")
    assert referee.token and referee.name == "Ada"

    info = await tournaments.get(tid)
    assert info.summary.title == "Spring open"
    assert (info.summary.game, info.summary.format) == ("tribes", "swiss")
    assert [e.name for e in info.entrants] == ["ana", "bo", "cy", "di"]
    assert info.referees == ("Ada",)
    assert info.tie_breaks == ("buchholz",)
    assert info.dispute_window_ms == 0
    assert info.seed_commitment == created.seed_commitment
    assert info.rounds == ()

    round_1 = await tournaments.start_round(tid)
    assert round_1.number == 1 and len(round_1.tables) == 2 and round_1.byes == ()
    assert sorted(e for t in round_1.tables for e in t.seats) == ["ana", "bo", "cy", "di"]
    assert all(t.reason and t.match_id and not t.has_result for t in round_1.tables)

    # TO-9.2, TO-9.3: the table's entrants come, and are seated together in the
    # pairing's order; asking again answers the same seat.
    table = round_1.table_of("ana")
    assert table is not None
    token_of = {t.name: t.token for t in tickets}
    seats = await asyncio.gather(
        *(tournaments.take_seat(tid, token=token_of[e]) for e in table.seats)
    )
    seat = seats[table.seats.index("ana")]
    again = await tournaments.take_seat(tid, token=tickets[0].token)
    assert seat == again
    assert (seat.round, seat.table, seat.match_id) == (1, table.number, table.match_id)
    assert seat.seat == table.seats.index("ana")

    listed = [s async for s in tournaments.list_all()]
    assert [s.tournament_id for s in listed] == [tid]
    assert listed[0].rounds == 2 and listed[0].rounds_started == 1
    assert listed[0].entrants == 4 and not listed[0].ended

    standings = await tournaments.standings(tid)
    assert sorted(r.entrant for r in standings.rows) == ["ana", "bo", "cy", "di"]
    assert all(r.points == Fraction(0) for r in standings.rows)
    assert standings.tie_breaks == ("buchholz",)
    assert await tournaments.list_disputes(tid) == []
    assert await tournaments.list_disputes(tid, token=referee.token) == []


async def test_refusals_carry_the_rule_id(tournaments: TournamentClient) -> None:
    """A refused call raises TotemError with the gRPC code and the rule id it cites."""
    tid, tokens = await _entered(tournaments, ["ana"], dispute_window_ms=0)

    with pytest.raises(TotemError) as too_few:  # TO-8.5: at least two to start
        await tournaments.start_round(tid)
    assert too_few.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert too_few.value.rule == "TO-8.5"

    with pytest.raises(TotemError) as same_name:  # TO-8.2: names are unique, capitals aside
        await tournaments.add_entrant(tid, "ANA")
    assert same_name.value.rule == "TO-8.2"
    assert same_name.value.code == grpc.StatusCode.FAILED_PRECONDITION

    await tournaments.add_entrant(tid, "bo")
    await tournaments.start_round(tid)
    with pytest.raises(TotemError) as early:  # TO-9.1: the round under way has no result
        await tournaments.start_round(tid)
    assert early.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert early.value.rule == "TO-9.1"
    assert "TO-9.1" in str(early.value)

    with pytest.raises(TotemError) as late:  # TO-8.2: entries close with round 1
        await tournaments.add_entrant(tid, "cy")
    assert late.value.rule == "TO-8.2"

    with pytest.raises(TotemError) as no_sheet:  # TO-11.1: no sheet before the end
        await tournaments.result_sheet(tid)
    assert no_sheet.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert no_sheet.value.rule == "TO-11.1"

    with pytest.raises(TotemError) as not_ended:  # TO-11.1
        await tournaments.end(tid)
    assert not_ended.value.rule == "TO-11.1"

    with pytest.raises(TotemError) as unknown:
        await tournaments.get("00000000-0000-0000-0000-000000000000")
    assert unknown.value.code == grpc.StatusCode.NOT_FOUND

    with pytest.raises(TotemError) as not_a_referee:  # TO-10.2: only a referee rules
        await tournaments.rule(tid, 1, Stands(), "no reason", token=tokens["ana"])
    assert not_a_referee.value.code in (
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
    )


async def test_an_organiser_call_without_the_organiser_token_is_refused(
    client: Client,
) -> None:
    """TO-8.1: only an organiser creates a tournament; the client says it had no token."""
    async with connect(client.address) as anyone:
        with pytest.raises(OrganiserRefused) as refused:
            await TournamentClient.of(anyone).create("tribes")
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert refused.value.had_token is False


async def test_client_side_checks_refuse_before_calling(tournaments: TournamentClient) -> None:
    with pytest.raises(ValueError, match="game must be one of"):
        await tournaments.create("chess")
    with pytest.raises(ValueError, match="format must be one of"):
        await tournaments.create("tribes", format="ladder")
    with pytest.raises(ValueError, match="tie-break"):
        await tournaments.create("tribes", tie_breaks=["coin"])


def test_verdicts_are_the_contracts() -> None:
    """TO-10.3: each verdict as the Rule request carries it."""
    assert Stands().to_proto().WhichOneof("verdict") == "stands"
    replace = Replace({"ana": 2, "bo": 1}, ("bo",)).to_proto().replace
    assert [(p.entrant, p.place) for p in replace.places] == [("ana", 2), ("bo", 1)]
    assert list(replace.forfeited) == ["bo"]
    assert Replay(7).to_proto().replay.version == 7
    assert Penalise("ana", Fraction(1, 2)).to_proto().penalise.points == "1/2"
    assert Penalise("ana", "0.5").to_proto().penalise.points == "1/2"


async def test_a_tournament_that_starts_its_own_rounds_says_so_TO_9_1(
    tournaments: TournamentClient,
) -> None:
    tid, _ = await _entered(tournaments, ["ana", "bo"], auto_rounds=True)
    assert (await tournaments.get(tid)).auto_rounds
    other, _ = await _entered(tournaments, ["ana", "bo"])
    assert not (await tournaments.get(other)).auto_rounds
