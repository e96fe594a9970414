"""What the replay tool knows of each game, beside the domain's own registry.

The domain gives each game's aggregate and views (:mod:`domain.games`); this adds the
text a judge reads and the re-derivation of the game's random draws, and what the
generic commands ask a game for instead of naming it: its title and kinds of event
(``step``), its explanations and grab races (``explain``, ``disputes``), its board on
the HTML pages. Each game's is in its own modules, registered here once. A game missing
here still replays: its events and states are shown field by field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from domain.games import game_of
from domain.kernel.match import MatchAggregate
from domain.kernel.views import Viewer
from replay import format as fmt
from replay import jungle_speed, tribes, village
from replay.draws import Carried, EventFields
from replay.explain_rules import Context, Explanation, GrabRaces


@dataclass(frozen=True)
class GameReplay:
    #: The game as a person reads its name: ``Jungle Speed``.
    title: str
    summarise: Callable[[Any, str, dict[str, Any]], str | None]
    state_lines: Callable[[Any, dict[str, Any]], list[str]]
    #: ``(events, carried) -> (problems as (version, reason), notes)``; ``carried`` is
    #: what a fork carries before its own events (:mod:`replay.draws`), else None.
    check_draws: Callable[[EventFields, Carried | None], tuple[list[tuple[int, str]], list[str]]]
    #: ``step``'s kinds of event (``next duel``): kind -> event names.
    kinds: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: What ``step --help`` adds to a kind's name: ``grab`` -> ``any grab``.
    kind_notes: Mapping[str, str] = field(default_factory=dict)
    #: ``explain``: a grab race or a rule outcome at one version, or None.
    explain: Callable[[Context], Explanation | None] | None = None
    #: The game's grab races, for ``explain`` and ``disputes``; None for a game whose
    #: grabs do not race (``disputes`` then has nothing to show of its matches).
    races: GrabRaces | None = None
    #: Events whose problems are reveals checked against the commitments the match made
    #: (``verify``'s "spell reveals"); none for a game that commits to nothing.
    commitment_events: frozenset[str] = frozenset()
    #: The HTML pages' drawing of a state (:mod:`replay.html`): a script defining
    #: ``draw(state, board)``, run in a scope of its own, and the CSS of the classes it
    #: draws with. Without one, the page shows the state's lines.
    board_script: str = ""
    board_css: str = ""


def _replay(module: ModuleType) -> GameReplay:
    """A game's entry, from the module that renders it: every such module names its
    functions and its kinds of step alike (and its ``STEP_KIND_NOTES``, ``explain``, ``RACES``,
    ``COMMITMENT_EVENTS``, ``BOARD_SCRIPT`` and ``BOARD_CSS``, if any)."""
    return GameReplay(
        module.TITLE,
        module.summarise,
        module.state_lines,
        module.check_draws,
        kinds=module.STEP_KINDS,
        kind_notes=getattr(module, "STEP_KIND_NOTES", {}),
        explain=getattr(module, "explain", None),
        races=getattr(module, "RACES", None),
        commitment_events=getattr(module, "COMMITMENT_EVENTS", frozenset()),
        board_script=getattr(module, "BOARD_SCRIPT", ""),
        board_css=getattr(module, "BOARD_CSS", ""),
    )


REPLAYS: dict[str, GameReplay] = {
    "jungle_speed": _replay(jungle_speed),
    "tribes": _replay(tribes),
    "village": _replay(village),
}


def replay_of(match: MatchAggregate) -> GameReplay | None:
    return REPLAYS.get(type(match).GAME)


def races_of(game: str) -> GrabRaces | None:
    """How the grab races of ``game`` are read; None for a game without them (or one
    this tool does not know)."""
    replay = REPLAYS.get(game)
    return replay.races if replay is not None else None


def event_view(match: MatchAggregate, event: object, viewer: Viewer) -> tuple[str, dict[str, Any]]:
    return game_of(match).event_view(match, event, viewer)


def state_view(match: MatchAggregate, viewer: Viewer) -> dict[str, Any]:
    return game_of(match).state_view(match, viewer)


def summary(match: MatchAggregate, name: str, view: dict[str, Any]) -> str:
    """One line for an event's view: the game's words, else the kernel's, else its fields."""
    game = replay_of(match)
    text = game.summarise(match, name, view) if game else None
    if text is None:
        text = fmt.kernel_summary(match, name, view)
    return text if text is not None else fmt.fields(view)


def state_lines(match: MatchAggregate, view: dict[str, Any]) -> list[str]:
    game = replay_of(match)
    if game is not None:
        return game.state_lines(match, view)
    return [f"{key}: {fmt.compact(value)}" for key, value in view.items()]


def check_draws(
    game: str, events: EventFields, carried: Carried | None = None
) -> tuple[list[tuple[int, str]], list[str]]:
    """The game's check of the draws of ``events``, one whole match (for a fork, its own
    events, ``carried`` what its ``Forked`` carries)."""
    replay = REPLAYS.get(game)
    if replay is None:
        return [], [f"random draws of {game} are not re-derived by this tool"]
    return replay.check_draws(events, carried)
