"""Helpers of the Village player tests: reach a decision, set a draft's cells by keys.

The keys pressed are the ones a person would press; the helpers read the screen's draft
only to know how many presses reach a value, as the Tribes tests read the cursor.
"""

from __future__ import annotations

from textual.pilot import Pilot

from tests.play.support import text_of, until
from totem.v1 import village_pb2 as pb
from totem_client.play.app import PlayApp
from totem_client.play.village import VillageScreen
from totem_client.play.village_drafts import key_of

#: Answering every other decision by its default takes a few dozen presses a round.
MOST_PRESSES = 60


def screen_of(app: PlayApp) -> VillageScreen:
    screen = app.game_screen
    assert isinstance(screen, VillageScreen)
    return screen


async def shows(pilot: Pilot[None], app: PlayApp, selector: str, *texts: str) -> None:
    """Wait until the widget ``selector`` shows every one of ``texts``."""
    await until(
        pilot,
        lambda: all(text in text_of(app, selector) for text in texts),
        f"{texts} in {selector}",
    )


async def owe(
    pilot: Pilot[None], app: PlayApp, family: int, kind: pb.VillageDecisionKind.ValueType
) -> None:
    """Answer every other owed decision with d (its default) until ``family`` owes a
    decision of ``kind``; select it with tab."""
    screen = screen_of(app)
    for _ in range(MOST_PRESSES):
        await until(pilot, lambda: bool(screen.decisions()), "a decision owed")
        owed = screen.decisions()
        if any(d.family == family and d.kind == kind for d in owed):
            for _ in range(len(owed)):
                current = screen.current()
                if current is not None and (current.family, current.kind) == (family, kind):
                    await pilot.pause()
                    return
                await pilot.press("tab")
            raise AssertionError("tab never selected the decision")
        current = screen.current()
        assert current is not None
        answered = key_of(current)
        await pilot.press("d")
        await until(
            pilot,
            lambda answered=answered: answered not in {key_of(d) for d in screen.decisions()},
            f"the default of {answered} taken",
        )
    raise AssertionError(f"family {family} never owed decision {kind}")


async def set_row(pilot: Pilot[None], app: PlayApp, label: str, values: list[int]) -> None:
    """Set the cells of the draft's row whose label starts with ``label`` to the options
    of index ``values``, with the arrows and + / -."""
    screen = screen_of(app)
    draft = screen.draft()
    assert draft is not None
    rows = [i for i, row in enumerate(draft.rows) if row.label.startswith(label)]
    assert rows, f"no row {label!r} in {[r.label for r in draft.rows]}"
    target = rows[0]
    for column, value in enumerate(values):
        assert value < len(draft.rows[target].cells[column].options), f"no value {value}"
    for _ in range(len(draft.rows)):
        if draft.row == target:
            break
        await pilot.press("down" if draft.row < target else "up")
    for column, value in enumerate(values):
        for _ in range(len(values)):
            if draft.column == column:
                break
            await pilot.press("right" if draft.column < column else "left")
        cell = draft.rows[target].cells[column]
        for _ in range(len(cell.options)):
            if cell.index == value:
                break
            await pilot.press("plus" if cell.index < value else "minus")
    assert draft.values(target) == values, f"the keys set {draft.values(target)}, not {values}"
    await pilot.pause()


async def sends(pilot: Pilot[None], app: PlayApp, words: str) -> None:
    """Wait until the owed panel says enter would send ``words``."""
    await shows(pilot, app, "#owed", f"enter sends: {words}")


async def logged(pilot: Pilot[None], app: PlayApp, *texts: str) -> None:
    """Wait until one line of the event log holds every one of ``texts`` (scrolled out
    of view or not)."""
    log = screen_of(app).events
    await until(
        pilot,
        lambda: any(all(t in line for t in texts) for line in log.lines),
        f"{texts} in the log",
    )
