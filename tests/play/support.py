"""Helpers of the player tests: read what the screen shows, wait for it to show something."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from server.serve import RunningServer
from tests.service.helpers import ORGANISER_TOKEN
from totem_client.play import GAMES
from totem_client.play.app import PlayApp
from totem_client.play.openings import Opening

#: Bound on any single wait, so that a broken test fails instead of hanging. Not a timing
#: assertion: nothing here checks how fast anything is.
BOUND = 60.0
#: A terminal large enough for every panel.
SIZE = (140, 48)

#: Bots that never grab or reveal while a test looks (the test ends long before).
NEVER_MS = (600_000.0, 600_000.0)
#: Bots that act at once.
AT_ONCE_MS = (0.0, 0.0)


def player(server: RunningServer, opening: Opening, game: str = "jungle-speed") -> PlayApp:
    """The player of ``game`` (its command name) for ``opening`` on the test's server."""
    return player_at(f"127.0.0.1:{server.port}", opening, game)


def player_at(address: str, opening: Opening, game: str = "jungle-speed") -> PlayApp:
    return PlayApp(GAMES[game], opening, address, organiser_token=ORGANISER_TOKEN)


def shown(widget: Widget) -> str:
    """The text a widget shows on screen, border and titles included, line by line."""
    width, height = widget.outer_size
    strips = widget.render_lines(Region(0, 0, width, height))
    return "\n".join(strip.text.rstrip() for strip in strips)


def screen_text(app: PlayApp) -> str:
    """The text of every visible widget of the game screen that shows words."""
    screen = app.game_screen
    parts = [shown(w) for w in screen.query("Static, Log") if w.display]
    return "\n".join(parts)


def footer_keys(app: PlayApp) -> list[str]:
    """The keys the footer offers, as shown: "space reveal", "q quit"."""
    keys = app.game_screen.query("FooterKey")
    return [" ".join(shown(key).split()) for key in keys if key.display]


def text_of(app: PlayApp, selector: str) -> str:
    """What the widget ``selector`` shows, its lines joined with single spaces (so that a
    sentence the terminal's width wrapped reads whole), side borders left out."""
    lines = shown(app.game_screen.query_one(selector)).splitlines()
    return " ".join(" ".join(line.strip(" │┃║╏╎").split()) for line in lines)


async def until(
    pilot: Pilot[None], condition: Callable[[], bool], what: str, bound: float = BOUND
) -> None:
    """Let the app run until ``condition`` holds (checked between frames)."""

    async def wait() -> None:
        while not condition():
            await pilot.pause(0.02)

    try:
        await asyncio.wait_for(wait(), bound)
    except TimeoutError:
        app = pilot.app
        screen = screen_text(app) if isinstance(app, PlayApp) else ""
        raise AssertionError(f"the screen never showed {what}:\n{screen}") from None


async def until_over(
    pilot: Pilot[None], app: PlayApp, condition: Callable[[], bool], what: str
) -> None:
    """Let the app run until ``condition`` holds, for as long as its match moves on: a
    whole match takes as long as the machine's load makes it, so the bound is on the
    time the version the app has shown stays the same (the match has hung), never on
    the match's length."""
    shown_version = -1
    while not condition():
        version = _version(app)
        if version == shown_version:
            raise AssertionError(f"the match stopped at v{version} before {what}")
        shown_version = version

        def done_or_moved(seen: int = version) -> bool:
            return condition() or _version(app) != seen

        with contextlib.suppress(AssertionError):
            await until(pilot, done_or_moved, f"{what}, or a version after v{version}")


def _version(app: PlayApp) -> int:
    """The version of the newest state the app has shown."""
    return app.summary.version if app.summary is not None else 0


async def until_shown(pilot: Pilot[None], app: PlayApp, selector: str, text: str) -> str:
    """Wait until the widget ``selector`` shows ``text``; return all it shows."""
    await until(pilot, lambda: text in text_of(app, selector), f"{text!r} in {selector}")
    return text_of(app, selector)
