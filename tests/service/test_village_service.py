"""Village over real gRPC: whole matches, deadlines, bad input refused with the rule and
nothing written, and hidden information never on a player's or spectator's stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest

from server.serve import RunningServer, start
from tests.service.helpers import bearer, organiser, stub, watch_until
from tests.service.test_bad_input import refusal, rule_of, stored
from tests.service.village_helpers import (
    Stub,
    act,
    create_village,
    drive,
    long_deadlines,
    state,
    village_event,
)
from totem.v1 import common_pb2
from totem.v1 import match_service_pb2 as ms
from totem.v1 import village_pb2 as vi

SEED = bytes(range(32))
GOOD_SPELLS = (vi.VILLAGE_SPELL_TWINS, vi.VILLAGE_SPELL_ABUNDANCE, vi.VILLAGE_SPELL_BIG_CURE)


def sensible(view: vi.VillageState, owed: vi.VillageOwedDecision) -> vi.VillageCommand | None:
    """Cast good spells on its own cottages with the pole's free pieces; else defaults."""
    if owed.kind == vi.VILLAGE_DECISION_KIND_CHOOSE:
        spells = list(GOOD_SPELLS[: owed.choose.pieces])
        return vi.VillageCommand(
            choose_spells=vi.VillageChooseSpells(family=owed.family, spells=spells)
        )
    return None


async def test_a_whole_match_of_sensible_players_ends_with_the_totem(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, referee, tokens = await create_village(client, 3, **long_deadlines())
        first = await state(client, match_id, tokens[0])
        assert [d.kind for d in first.legal.decisions] == [vi.VILLAGE_DECISION_KIND_ARRANGE]
        assert first.decision.parties == [0] and first.decision.rule == "VI-2.1"
        end = await drive(client, match_id, tokens, sensible)
        assert max(f.pole for f in end.families) == 6  # VI-4.1
        assert end.outcome.seats
        # VI-7.11: a tie field holds two or more families, or none.
        assert len(end.outcome.tied) != 1
        assert end.outcome.HasField("winner") == (not end.outcome.tied)
        summary = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary
        assert summary.status == common_pb2.MATCH_STATUS_ENDED
        assert summary.game == common_pb2.GAME_VILLAGE
        assert summary.end_reason == common_pb2.END_REASON_COMPLETED
        assert end.seed  # revealed at the end
        assert not end.secret  # never to anyone but the referee (VI-2.3)
        whole = await state(client, match_id, referee)
        assert len(whole.secret) == 32


async def test_silent_players_are_run_to_the_end_by_the_deadlines(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_village(
            client,
            3,
            arrange_timeout_ms=0,
            choose_timeout_ms=0,
            place_timeout_ms=0,
            reveal_timeout_ms=0,
            victims_timeout_ms=0,
            youth_timeout_ms=0,
        )
        call = client.Watch(ms.WatchRequest(match_id=match_id), metadata=bearer(tokens[1]))
        events: list[ms.MatchEvent] = []
        async for event in call:
            events.append(event)
        names = [village_event(e) for e in events]
        assert names[-1] == "match_ended" and "totem_completed" in names
        assert events[-1].match_ended.reason == common_pb2.END_REASON_COMPLETED
        answered = [
            getattr(e.village, n)
            for e, n in zip(events, names, strict=True)
            if n in ("arranged", "spells_chosen", "spells_revealed")
        ]
        assert answered and all(a.by_default for a in answered)


async def test_a_pending_decision_survives_a_restart_and_its_deadline_fires(
    store_env: dict[str, str],
) -> None:
    first = await start("127.0.0.1:0", store_env)
    channel, client = stub(first.port)
    try:
        # Long enough that the first server is stopped before it fires.
        match_id, _, tokens = await create_village(client, 2, arrange_timeout_ms=2_000)
        pending = await state(client, match_id, tokens[0])
        assert pending.legal.decisions[0].kind == vi.VILLAGE_DECISION_KIND_ARRANGE
        version = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
    finally:
        await first.stop(grace=None)
        await channel.close()

    second = await start("127.0.0.1:0", store_env)
    channel, client = stub(second.port)
    try:
        async with channel:
            call = client.Watch(
                ms.WatchRequest(match_id=match_id, after_version=version),
                metadata=bearer(tokens[0]),
            )
            while True:
                event = await asyncio.wait_for(call.read(), 30)
                assert event is not grpc.aio.EOF
                if village_event(event) == "arranged":
                    break
            call.cancel()
            assert event.village.arranged.family == 0 and event.village.arranged.by_default
    finally:
        await second.stop(grace=None)


# ---- bad input ------------------------------------------------------------------------


def _spells(family: int, *spells: Any, birds: int = 0) -> vi.VillageCommand:
    return vi.VillageCommand(
        choose_spells=vi.VillageChooseSpells(family=family, spells=list(spells), birds=birds)
    )


def _is_choosing(view: vi.VillageState) -> bool:
    return view.decision.kind == vi.VILLAGE_DECISION_KIND_CHOOSE


async def _refused(
    server: RunningServer,
    client: Stub,
    match_id: str,
    token: str,
    command: vi.VillageCommand,
    code: grpc.StatusCode,
    rule: str,
) -> str:
    before = stored(server)
    error = await refusal(act(client, match_id, token, command))
    assert error.code() == code, error.details()
    assert rule_of(error) == rule
    assert (error.details() or "").startswith(f"{rule}: ")
    assert stored(server) == before  # a refused command writes nothing
    return error.details() or ""


async def test_vi_7_9_a_command_for_a_family_the_seat_does_not_play_is_permission_denied(
    server: RunningServer,
) -> None:
    """VI-7.9: refused like a command for another seat, naming VI-2.2, with a sentence
    that says why, whatever the decision; nothing is written."""
    denied = grpc.StatusCode.PERMISSION_DENIED
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_village(client, 2, **long_deadlines())
        # Seat 0 plays families 0 and 2 (VI-7.1); family 0's arrangement is awaited.
        arrange = (await state(client, match_id, tokens[0])).legal.decisions[0].default
        details = await _refused(server, client, match_id, tokens[1], arrange, denied, "VI-2.2")
        assert details == "VI-2.2: seat 1 does not play family 0: it cannot act for it"
        await drive(client, match_id, tokens, until=_is_choosing)
        for family, token in ((1, tokens[0]), (3, tokens[0]), (0, tokens[1]), (2, tokens[1])):
            choice = _spells(family)
            details = await _refused(server, client, match_id, token, choice, denied, "VI-2.2")
            assert f"does not play family {family}" in details
        await act(client, match_id, tokens[0], _spells(2))  # its own: accepted


async def test_bad_input_is_refused_naming_the_rule_and_writes_nothing(
    server: RunningServer,
) -> None:
    invalid, failed = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_village(client, 2, **long_deadlines())
        # Family 0 (seat 0) arranges first: a cottage above 6 (VI-2.1).
        crowded = vi.VillageArrange(
            family=0,
            cottages=[
                vi.VillageCounts(young_woman=2, young_man=2, mature_woman=1, mature_man=1, elder=1),
                vi.VillageCounts(),
                vi.VillageCounts(),
            ],
        )
        await _refused(
            server,
            client,
            match_id,
            tokens[0],
            vi.VillageCommand(arrange=crowded),
            invalid,
            "VI-2.1",
        )
        # Another player's family: seat 1 does not play family 0 (VI-7.9).
        fine = (await state(client, match_id, tokens[0])).legal.decisions[0].default
        denied = grpc.StatusCode.PERMISSION_DENIED
        await _refused(server, client, match_id, tokens[1], fine, denied, "VI-2.2")
        # A decision out of phase: nothing to reveal in phase 1 (VI-2.3).
        reveal = vi.VillageCommand(reveal_spells=vi.VillageRevealSpells(family=0))
        await _refused(server, client, match_id, tokens[0], reveal, failed, "VI-2.3")
        await drive(client, match_id, tokens, until=_is_choosing)
        # More spells than pieces plus sacrificed birds (VI-2.2): one piece, no bird.
        two = _spells(0, vi.VILLAGE_SPELL_TWINS, vi.VILLAGE_SPELL_GIRLS)
        await _refused(server, client, match_id, tokens[0], two, failed, "VI-2.2")
        await act(client, match_id, tokens[0], _spells(0, vi.VILLAGE_SPELL_TWINS))
        # Already chosen this round (VI-2.2).
        again = _spells(0, vi.VILLAGE_SPELL_GIRLS)
        await _refused(server, client, match_id, tokens[0], again, failed, "VI-2.2")
        for family, token in ((1, tokens[1]), (2, tokens[0]), (3, tokens[1])):
            await act(client, match_id, token, _spells(family))
        # Family 0 places: a spell it does not hold (VI-2.2).
        view = await state(client, match_id, tokens[0])
        assert [d.kind for d in view.legal.decisions] == [vi.VILLAGE_DECISION_KIND_PLACE]
        stray = vi.VillageCommand(
            place_spell=vi.VillagePlaceSpell(
                family=0, spell=vi.VILLAGE_SPELL_LACK, target_family=0, cottage=0
            )
        )
        await _refused(server, client, match_id, tokens[0], stray, failed, "VI-2.2")
        unknown = vi.VillageCommand(
            place_spell=vi.VillagePlaceSpell(family=0, spell=99, target_family=0, cottage=0)
        )
        await _refused(server, client, match_id, tokens[0], unknown, invalid, "VI-2.2")
        empty = vi.VillageCommand()
        await _refused(server, client, match_id, tokens[0], empty, invalid, "VI-2")


def _starving(view: vi.VillageState, owed: vi.VillageOwedDecision) -> vi.VillageCommand | None:
    """Family 0 houses all but its elder in cottage 0, sacrifices five birds for six spells and
    puts lack and infertility on itself: it catches nothing and starves (VI-2.5, VI-2.6)."""
    if owed.family != 0:
        return None
    if owed.kind == vi.VILLAGE_DECISION_KIND_ARRANGE:
        everyone = vi.VillageCounts()
        everyone.CopyFrom(owed.arrange.members)
        elders = vi.VillageCounts(elder=everyone.elder)
        everyone.elder = 0
        return vi.VillageCommand(
            arrange=vi.VillageArrange(family=0, cottages=[everyone, elders, vi.VillageCounts()])
        )
    if owed.kind == vi.VILLAGE_DECISION_KIND_CHOOSE:
        six = (
            vi.VILLAGE_SPELL_LACK,
            vi.VILLAGE_SPELL_INFERTILITY,
            vi.VILLAGE_SPELL_GIRLS,
            vi.VILLAGE_SPELL_BOYS,
            vi.VILLAGE_SPELL_BIG_CURE,
            vi.VILLAGE_SPELL_LITTLE_CURE,
        )
        return _spells(0, *six, birds=5)
    return None


def _victims_owed(view: vi.VillageState) -> bool:
    return view.decision.kind == vi.VILLAGE_DECISION_KIND_VICTIMS


async def test_an_elder_is_refused_as_a_victim_where_the_rules_forbid_it(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_village(client, 2, **long_deadlines())
        await drive(client, match_id, tokens, _starving, until=_victims_owed)
        view = await state(client, match_id, tokens[0])
        (owed,) = view.legal.decisions
        assert owed.family == 0 and owed.victims.starving == 0 and not owed.victims.elders
        assert all(c.kind != vi.VILLAGE_KIND_ELDER for c in owed.victims.candidates)
        elder = vi.VillagePerson(cottage=0, kind=vi.VILLAGE_KIND_ELDER)
        command = vi.VillageCommand(
            choose_victims=vi.VillageChooseVictims(family=0, victims=[elder] * owed.victims.count)
        )
        failed = grpc.StatusCode.FAILED_PRECONDITION
        await _refused(server, client, match_id, tokens[0], command, failed, "VI-2.6")
        # Another seat may not choose for the starving family (VI-7.9).
        other = vi.VillageCommand(choose_victims=vi.VillageChooseVictims(family=0, victims=[]))
        denied = grpc.StatusCode.PERMISSION_DENIED
        await _refused(server, client, match_id, tokens[1], other, denied, "VI-2.2")
        answer = await act(client, match_id, tokens[0], owed.default)
        assert answer.state.village.families[0].cottages[1].elder == 1


async def test_bad_village_options_are_invalid_arguments(server: RunningServer) -> None:
    channel, client = stub(server.port)
    async with channel:
        for options, rule in (
            (vi.VillageOptions(max_players=5), "VI-1.1"),
            (vi.VillageOptions(choose_timeout_ms=3_600_001), "VI-2.2"),
            (vi.VillageOptions(prearranged_sexes=[7]), "VI-2.4"),
        ):
            error = await refusal(
                client.CreateMatch(
                    ms.CreateMatchRequest(game=common_pb2.GAME_VILLAGE, village=options),
                    metadata=organiser(),
                )
            )
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and rule_of(error) == rule


# ---- hidden information -----------------------------------------------------------------


@pytest.fixture
async def fixed_seed_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    running = await start("127.0.0.1:0", store_env, seed_source=lambda: SEED)
    try:
        yield running
    finally:
        await running.stop(grace=None)


def _timeless(event: ms.MatchEvent) -> bytes:
    """The event without clocks, identity, and the hashes salted by each match's own
    secret (different in every match whatever is chosen)."""
    event = ms.MatchEvent.FromString(event.SerializeToString())
    event.ClearField("recorded_at")
    event.state.summary.ClearField("match_id")
    event.state.summary.ClearField("created_at")
    body = event.village
    kind = body.WhichOneof("event")
    if kind is not None:
        inner = getattr(body, kind)
        for field in ("stamp", "commitment", "chit"):
            if field in inner.DESCRIPTOR.fields_by_name:
                inner.ClearField(field)
        if kind == "decision_awaited":
            inner.decision.ClearField("opened_ms")
            inner.decision.ClearField("deadline_ms")
        if kind == "round_ended":
            for chits in inner.chits:
                chits.ClearField("chits")
    _scrub_state(event.state.village)
    return event.SerializeToString(deterministic=True)


def _scrub_state(view: vi.VillageState) -> None:
    view.decision.ClearField("opened_ms")
    view.decision.ClearField("deadline_ms")
    for family in view.families:
        family.ClearField("commitment")
    for spot in view.board:
        spot.ClearField("chit")
    for owed in view.legal.decisions:
        owed.ClearField("deadline_ms")


def _hiding(spell: Any) -> Callable[[vi.VillageState, vi.VillageOwedDecision], Any]:
    """Family 1 casts ``spell`` on its own cottage 2 and never reveals it; everyone else
    casts nothing."""

    def policy(view: vi.VillageState, owed: vi.VillageOwedDecision) -> vi.VillageCommand | None:
        if owed.kind == vi.VILLAGE_DECISION_KIND_CHOOSE:
            spells = [spell] if owed.family == 1 else []
            return _spells(owed.family, *spells)
        if owed.kind == vi.VILLAGE_DECISION_KIND_PLACE:
            (hand,) = owed.place.hand
            return vi.VillageCommand(
                place_spell=vi.VillagePlaceSpell(
                    family=owed.family, spell=hand, target_family=owed.family, cottage=2
                )
            )
        if owed.kind == vi.VILLAGE_DECISION_KIND_REVEAL:
            return vi.VillageCommand(reveal_spells=vi.VillageRevealSpells(family=owed.family))
        return None

    return policy


def _second_round(view: vi.VillageState) -> bool:
    return view.round == 2


async def _hidden_play(
    port: int, spell: Any
) -> tuple[dict[str, list[ms.MatchEvent]], list[str], dict[str, vi.VillageState]]:
    channel, client = stub(port)
    async with channel:
        match_id, _, tokens = await create_village(
            client, 2, prearranged_sexes=[1, 2] * 50, **long_deadlines()
        )
        await drive(client, match_id, tokens, _hiding(spell), until=_second_round)
        last = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        streams = {
            "other player": await watch_until(client, match_id, last, tokens[0]),
            "spectator": await watch_until(client, match_id, last),
        }
        views = {
            "other player": await state(client, match_id, tokens[0]),
            "spectator": await state(client, match_id),
        }
        # Refusals to the other player name no spell of family 1.
        errors = []
        for command in (
            vi.VillageCommand(reveal_spells=vi.VillageRevealSpells(family=1, positions=[0])),
            vi.VillageCommand(reveal_spells=vi.VillageRevealSpells(family=0, positions=[0])),
            _spells(1, spell),
        ):
            errors.append((await refusal(act(client, match_id, tokens[0], command))).details())
        return streams, errors, views


async def test_vi_5_streams_identical_whatever_the_unrevealed_spell(
    fixed_seed_server: RunningServer,
) -> None:
    (a, errors_a, views_a), (b, errors_b, views_b) = await asyncio.wait_for(
        asyncio.gather(
            _hidden_play(fixed_seed_server.port, vi.VILLAGE_SPELL_ILLNESS),
            _hidden_play(fixed_seed_server.port, vi.VILLAGE_SPELL_YOUTH),
        ),
        120,
    )
    for viewer in a:
        first, second = [_timeless(e) for e in a[viewer]], [_timeless(e) for e in b[viewer]]
        assert first == second, viewer
        placed = [e.village.spell_placed for e in a[viewer] if village_event(e) == "spell_placed"]
        assert placed and all(p.spell == vi.VILLAGE_SPELL_UNSPECIFIED for p in placed)
        for view in (views_a[viewer], views_b[viewer]):
            assert all(s.spell == vi.VILLAGE_SPELL_UNSPECIFIED for s in view.board)
            assert not view.families[1].owned and not view.families[1].spells
            assert not view.secret
    for message in (*errors_a, *errors_b):
        assert "illness" not in message and "youth" not in message
    assert errors_a == errors_b


def _submitting(view: vi.VillageState) -> bool:
    return view.decision.kind == vi.VILLAGE_DECISION_KIND_SUBMIT


async def test_spells_b_placements_stay_secret_until_placed_and_spells_after(
    server: RunningServer,
) -> None:
    channel, client = stub(server.port)
    async with channel:
        match_id, _, tokens = await create_village(client, 2, spells_b=True, **long_deadlines())

        def one_spell(view: vi.VillageState, owed: vi.VillageOwedDecision) -> Any:
            if owed.kind == vi.VILLAGE_DECISION_KIND_CHOOSE:
                spells = {0: [vi.VILLAGE_SPELL_GIRLS], 1: [vi.VILLAGE_SPELL_LACK]}
                return _spells(owed.family, *spells.get(owed.family, []))
            return None

        await drive(client, match_id, tokens, one_spell, until=_submitting)
        submit = vi.VillageSubmitPlacements(
            family=1,
            placements=[
                vi.VillagePlacement(spell=vi.VILLAGE_SPELL_LACK, target_family=0, cottage=1)
            ],
        )
        answer = await act(client, match_id, tokens[1], vi.VillageCommand(submit_placements=submit))
        mine = answer.state.village.families[1]
        assert mine.owned and list(mine.placements) == list(submit.placements)
        view = await state(client, match_id, tokens[0])
        assert view.families[1].submitted and not view.families[1].placements
        assert not (await state(client, match_id)).families[1].placements
        (owed,) = view.legal.decisions
        assert owed.family == 0 and owed.kind == vi.VILLAGE_DECISION_KIND_SUBMIT
        version = (await act(client, match_id, tokens[0], owed.default)).version
        for token in (tokens[0], None):
            events = await watch_until(client, match_id, version, token)
            for event in events:
                body = event.village
                if body.HasField("placements_submitted"):
                    submitted = body.placements_submitted
                    assert submitted.count == 1
                    if submitted.family == 1 or token is None:
                        assert not submitted.placements
                if body.HasField("placements_revealed"):
                    placed = body.placements_revealed.placements
                    assert len(placed) == 2
                    assert all(
                        p.spell == vi.VILLAGE_SPELL_UNSPECIFIED and not p.salt
                        for p in placed
                        if p.family == 1
                    )
                families = event.state.village.families
                assert len(families) < 2 or not families[1].placements
                for spot in event.state.village.board:
                    if spot.owner == 1 or token is None:
                        assert spot.spell == vi.VILLAGE_SPELL_UNSPECIFIED
            board = (await state(client, match_id, token)).board
            assert [s.owner for s in board] == [0, 1]
