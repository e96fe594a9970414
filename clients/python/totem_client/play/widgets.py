"""Widgets that more than one game's screen uses: a titled panel and the event log."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Log, Static


class Panel(Static):
    """A bordered panel with a title; hidden while it has nothing to say."""

    DEFAULT_CSS = """
    Panel { height: auto; border: round $foreground 40%; padding: 0 1; }
    Panel.-hidden { display: none; }
    """

    def __init__(self, title: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = title

    def show_content(self, content: Content | None) -> None:
        self.set_class(content is None, "-hidden")
        self.update(content or "")


class EventLog(Log):
    """The match's events in words, newest last."""

    DEFAULT_CSS = """
    EventLog { height: 1fr; min-height: 3; border: round $foreground 40%; }
    """

    can_focus = False

    def on_mount(self) -> None:
        self.border_title = "events"

    def on_resize(self) -> None:
        """Keep the newest event in view when a panel above appears (the result)."""
        if self.auto_scroll:
            self.scroll_end(animate=False, immediate=True, x_axis=False)


__all__ = ["EventLog", "Panel"]
