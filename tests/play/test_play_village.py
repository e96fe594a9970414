"""`totem play village`, driven headless with Textual's pilot against a real server.

Every assertion is on what the screen shows. The bot answers at once; the user answers
each kind of decision by keys (VI-2.1 … VI-2.8), each sending the command the draft
shows, and a key the match does not want now is refused with its reason; then zero
deadlines let a match run to its end.
"""

from __future__ import annotations

from server.serve import RunningServer
from tests.play import support
from tests.play.support import AT_ONCE_MS, NEVER_MS, SIZE, player, text_of, until_shown
from tests.play.village_keys import logged, owe, screen_of, sends, set_row, shows
from totem.v1 import village_pb2 as pb
from totem_client.play.openings import SpectateMatch
from totem_client.play.village_bots import NewVillageMatch


async def test_a_match_against_a_bot_a_default_a_refusal_and_the_result(
    server: RunningServer,
) -> None:
    opening = NewVillageMatch(name="alice", players=2, bot_think_ms=AT_ONCE_MS, seed=1)
    app = player(server, opening, "village")
    async with app.run_test(size=SIZE) as pilot:
        await shows(
            pilot, app, "#owed", "family 0 (alice): arrange the cottages (VI-2.1)", "default:"
        )
        assert "Village" in text_of(app, "#status")
        await shows(pilot, app, "#table", "round 1 · phase 1")
        await shows(pilot, app, "#families", "family 0 (alice · yours)", "family 1 (bot-1)")

        # Everyone in cottage 0, above its capacity of 6: refused, with its rule.
        draft = screen_of(app).draft()
        assert draft is not None
        for row in draft.rows:
            await set_row(pilot, app, row.label, [len(row.cells[0].options) - 1, 0, 0])
        await sends(pilot, app, "arrange 2yw 2ym 1mw 1mm 1E | empty | empty")
        await pilot.press("enter")
        await shows(pilot, app, "#notice", "arrange the cottages for family 0 refused", "VI-2.1")

        # The default of the arrangement, sent as is: family 0 is housed.
        await pilot.press("d")
        await until_shown(pilot, app, "#log", "family 0 (alice) arranged its cottages")


async def test_the_match_runs_to_its_result_on_zero_deadlines(server: RunningServer) -> None:
    opening = NewVillageMatch(
        name="alice",
        players=2,
        timeouts_ms={k: 0 for k in ("arrange", "choose", "place", "reveal", "victims", "youth")},
        bot_think_ms=AT_ONCE_MS,
        seed=2,
    )
    app = player(server, opening, "village")
    async with app.run_test(size=SIZE) as pilot:
        await support.until_over(
            pilot, app, lambda: "Match ended" in text_of(app, "#result"), "the result"
        )
        await shows(pilot, app, "#table", "the match is over")


async def test_a_spectator_sees_the_families_and_no_decisions(server: RunningServer) -> None:
    host = player(server, NewVillageMatch(name="alice", bot_think_ms=NEVER_MS), "village")
    async with host.run_test(size=SIZE) as pilot:
        await until_shown(pilot, host, "#owed", "arrange the cottages (VI-2.1)")
        assert host.match_id is not None
        watcher = player(server, SpectateMatch(host.match_id), "village")
        async with watcher.run_test(size=SIZE) as watching:
            await until_shown(watching, watcher, "#families", "family 1 (bot-1)")
            await until_shown(watching, watcher, "#owed", "spectating")


async def test_every_decision_of_a_round_by_keys(server: RunningServer) -> None:
    """Family 0 houses its hunters together, sacrifices birds for spells, puts lack on
    its hunters' cottage and reveals it: it catches nothing and starves (VI-2.5, VI-2.6),
    helps another family with the spells it does not need itself,
    chooses its victim, and its youth spell spares one person from age (VI-2.8)."""
    opening = NewVillageMatch(name="alice", players=2, bot_think_ms=AT_ONCE_MS, seed=3)
    app = player(server, opening, "village")
    K = pb
    async with app.run_test(size=SIZE) as pilot:
        # VI-2.1: the cells of each kind's row are cottages 0 | 1 | 2.
        await owe(pilot, app, 0, K.VILLAGE_DECISION_KIND_ARRANGE)
        await set_row(pilot, app, "young woman", [2, 0, 0])
        await set_row(pilot, app, "young man", [2, 0, 0])
        await set_row(pilot, app, "mature woman", [0, 1, 0])
        await set_row(pilot, app, "mature man", [1, 0, 0])
        await set_row(pilot, app, "elder", [0, 1, 0])
        await sends(pilot, app, "arrange 2yw 2ym 1mm | 1mw 1E | empty")
        await pilot.press("enter")
        arranged = "family 0 (alice) arranged its cottages: 2yw 2ym 1mm | 1mw 1E | empty"
        await logged(pilot, app, arranged)

        # VI-2.2: six spells, five of them paid with birds (the pole gives one): one bird
        # is left for a need of two.
        await owe(pilot, app, 0, K.VILLAGE_DECISION_KIND_CHOOSE)
        spells = ("girls", "abundance", "lack", "big cure", "little cure", "youth")
        for spell in spells:
            await set_row(pilot, app, spell, [1])
        await set_row(pilot, app, "birds to sacrifice", [5])
        await sends(pilot, app, f"choose {', '.join(spells)}, sacrificing 5 birds")
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) chose 6 spells in secret, sacrificing 5")

        # Each spell placed: lack, girls and youth on its own cottage 0, the cure on the
        # bot's family 1 (its targets are every cottage of every family).
        for spell, target in (
            ("lack", "family 0 (alice) cottage 0"),
            ("girls", "family 0 (alice) cottage 0"),
            ("youth", "family 0 (alice) cottage 0"),
            ("big cure", "family 1 (bot-1) cottage 2"),
            ("little cure", "family 1 (bot-1) cottage 1"),
            ("abundance", "family 3 (bot-1) cottage 0"),
        ):
            await owe(pilot, app, 0, K.VILLAGE_DECISION_KIND_PLACE)
            draft = screen_of(app).draft()
            assert draft is not None
            spell_index = draft.rows[0].cells[0].options.index(spell)
            target_index = draft.rows[1].cells[0].options.index(target)
            await set_row(pilot, app, "spell", [spell_index])
            await set_row(pilot, app, "on", [target_index])
            await sends(pilot, app, f"place {spell} on {target}")
            await pilot.press("enter")
            await logged(pilot, app, f"family 0 (alice) placed {spell} face down on {target}")

        # VI-2.3: girls revealed in phase 3, lack in phase 4 (the default reveals all: the
        # toggle hides one and shows it again).
        await owe(pilot, app, 0, K.VILLAGE_DECISION_KIND_REVEAL)
        await set_row(pilot, app, "#", [0])
        await sends(pilot, app, "reveal nothing (keep them secret)")
        await set_row(pilot, app, "#", [1])
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) revealed girls")
        await owe(pilot, app, 0, K.VILLAGE_DECISION_KIND_REVEAL)
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) revealed", "lack (#", "in phase 4")
        await logged(pilot, app, "family 0 (alice) 0 (0 hunters)")

        # VI-2.6: one bird for a need of two: one victim, chosen by the family, never an
        # elder; the keys take the mature woman instead of the default's child.
        await owe(pilot, app, 0, K.VILLAGE_DECISION_KIND_VICTIMS)
        draft = screen_of(app).draft()
        assert draft is not None
        for row in draft.rows:
            if not row.label.startswith("cottage 1: mature woman"):
                await set_row(pilot, app, row.label, [0])
        await set_row(pilot, app, "cottage 1: mature woman", [1])
        await sends(pilot, app, "victims: a mature woman of cottage 1")
        await pilot.press("enter")
        await shows(
            pilot,
            app,
            "#log",
            "family 0 (alice) chose the victims of family 0 (alice): a mature woman of cottage 1",
        )

        # VI-2.8: youth on cottage 0 spares one of its people: a young woman, not the
        # default's mature man.
        await owe(pilot, app, 0, K.VILLAGE_DECISION_KIND_YOUTH)
        draft = screen_of(app).draft()
        assert draft is not None
        for row in draft.rows:
            await set_row(pilot, app, row.label, [0])
        await set_row(pilot, app, "cottage 0: young woman", [1])
        await sends(pilot, app, "spare a young woman of cottage 0")
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) spared a young woman of cottage 0 from age")


async def test_a_pass_by_key_under_spells_a(server: RunningServer) -> None:
    """spells_a (VI-2.2): after placing one of its two spells, family 0 passes with p and
    loses the other."""
    opening = NewVillageMatch(
        name="alice", players=2, variations=("spells_a",), bot_think_ms=AT_ONCE_MS, seed=4
    )
    app = player(server, opening, "village")
    async with app.run_test(size=SIZE) as pilot:
        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_CHOOSE)
        for spell in ("girls", "boys"):
            await set_row(pilot, app, spell, [1])
        await set_row(pilot, app, "birds to sacrifice", [1])
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) chose 2 spells in secret, sacrificing 1 bird")
        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_PLACE)
        await shows(pilot, app, "#owed", "p pass")
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) placed")
        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_PLACE)
        await pilot.press("p")
        await logged(pilot, app, "family 0 (alice) passed, losing 1 unplaced spells")


async def test_placements_submitted_and_victims_named_by_keys(server: RunningServer) -> None:
    """spells_b and feast_b together (VI-7.10): family 0 submits every placement at once,
    lack on its hunters' cottage, abundance on a rival's; twins and lack starve it of two
    birds, and family 2 names its share of the victims (VI-2.6)."""
    opening = NewVillageMatch(
        name="alice",
        players=2,
        variations=("spells_b", "feast_b"),
        bot_think_ms=AT_ONCE_MS,
        seed=5,
    )
    app = player(server, opening, "village")
    async with app.run_test(size=SIZE) as pilot:
        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_ARRANGE)
        await set_row(pilot, app, "young woman", [2, 0, 0])
        await set_row(pilot, app, "young man", [2, 0, 0])
        await set_row(pilot, app, "mature woman", [0, 1, 0])
        await set_row(pilot, app, "mature man", [1, 0, 0])
        await set_row(pilot, app, "elder", [0, 1, 0])
        await pilot.press("enter")
        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_CHOOSE)
        spells = ("twins", "abundance", "lack", "big cure", "little cure", "youth")
        for spell in spells:
            await set_row(pilot, app, spell, [1])
        await set_row(pilot, app, "birds to sacrifice", [5])
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) chose 6 spells in secret, sacrificing 5")

        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_SUBMIT)
        draft = screen_of(app).draft()
        assert draft is not None
        home = "family 0 (alice) cottage 0"
        rival = "family 3 (bot-1) cottage 0"
        for row in draft.rows:
            target = rival if row.label == "abundance" else home
            await set_row(pilot, app, row.label, [row.cells[0].options.index(target)])
        await shows(pilot, app, "#owed", f"abundance on {rival}", f"lack on {home}")
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) submitted 6 placements in secret")
        await logged(pilot, app, "the placements went on the board")

        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_REVEAL)
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) revealed twins")
        await owe(pilot, app, 0, pb.VILLAGE_DECISION_KIND_REVEAL)
        await pilot.press("enter")
        await logged(pilot, app, "family 0 (alice) revealed", "lack (#", "in phase 4")

        await owe(pilot, app, 2, pb.VILLAGE_DECISION_KIND_NAME_VICTIMS)
        draft = screen_of(app).draft()
        assert draft is not None
        for row in draft.rows:
            await set_row(pilot, app, row.label, [0])
        await set_row(pilot, app, "cottage 1: mature woman", [1])
        await sends(pilot, app, "victims: a mature woman of cottage 1")
        await pilot.press("enter")
        await logged(pilot, app, "family 2 (alice) named 1 victims of family 0 (alice) in secret")
