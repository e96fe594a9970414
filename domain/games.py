"""The games this server plays, each with its aggregate and its views.

Adapters (the server, the replay tool) look a game up here instead of knowing each one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import duplicate as jungle_speed_duplicate
from domain.jungle_speed import options as jungle_speed_options
from domain.jungle_speed import views as jungle_speed_views
from domain.kernel.fork import forked_view
from domain.kernel.match import MatchAggregate, event_name
from domain.kernel.views import Viewer
from domain.tribes import Tribes
from domain.tribes import duplicate as tribes_duplicate
from domain.tribes import options as tribes_options
from domain.tribes import views as tribes_views
from domain.village import Village
from domain.village import duplicate as village_duplicate
from domain.village import options as village_options
from domain.village import views as village_views
from domain.village.commitments import SECRET_BYTES


@dataclass(frozen=True)
class Game:
    name: str
    aggregate: type[MatchAggregate]
    #: ``(match, event, viewer) -> (event name, visible fields)``
    event_view: Callable[[Any, object, Viewer], tuple[str, dict[str, Any]]]
    #: ``(match, viewer) -> visible state``
    state_view: Callable[[Any, Viewer], dict[str, Any]]
    #: ``(match, viewer) ->`` the keys ``viewer``'s state adds to a spectator's, or None
    #: when its state differs otherwise (see each game's ``personal_view``).
    personal_view: Callable[[Any, Viewer], dict[str, Any] | None]
    #: ``(options, seed, entropy, referee_token_hash[, secret=...]) ->`` a new match.
    create: Callable[..., MatchAggregate]
    #: ``(plain dict) ->`` the game's options, as a match's ``Created`` event stores them
    #: (a tournament keeps its tables' options so).
    options_from_dict: Callable[[dict[str, Any]], Any]
    #: ``(options, round_seed, seats) ->`` the options of a table of a tournament's
    #: duplicate round: the game's luck prearranged from the round's seed (TO-12.1).
    duplicate_luck: Callable[[Any, bytes, int], Any]
    #: Bytes of a secret of the server's that a match keeps besides its seed (0: none),
    #: drawn by the server and given to ``create`` as ``secret``: no seed derives it
    #: (Village's spell commitments, VI-2.2).
    secret_bytes: int = 0


EventView = Callable[[Any, object, Viewer], tuple[str, dict[str, Any]]]


def with_forks(view: EventView) -> EventView:
    """A game's event view that also shows a fork's first event, the same in every
    game (:mod:`domain.kernel.fork`), and never the history it carries."""

    def event_view(match: Any, evt: object, viewer: Viewer) -> tuple[str, dict[str, Any]]:
        if event_name(evt) == "Forked":
            return forked_view(match, evt, viewer)
        return view(match, evt, viewer)

    return event_view


GAMES: dict[str, Game] = {
    game.name: game
    for game in (
        Game(
            "jungle_speed",
            JungleSpeed,
            with_forks(jungle_speed_views.event_view),
            jungle_speed_views.state_view,
            jungle_speed_views.personal_view,
            JungleSpeed.create,
            jungle_speed_options.Options.from_dict,
            jungle_speed_duplicate.duplicate_luck,
        ),
        Game(
            "tribes",
            Tribes,
            with_forks(tribes_views.event_view),
            tribes_views.state_view,
            tribes_views.personal_view,
            Tribes.create,
            tribes_options.Options.from_dict,
            tribes_duplicate.duplicate_luck,
        ),
        Game(
            "village",
            Village,
            with_forks(village_views.event_view),
            village_views.state_view,
            village_views.personal_view,
            Village.create,
            village_options.Options.from_dict,
            village_duplicate.duplicate_luck,
            SECRET_BYTES,
        ),
    )
}


def game_of(match: MatchAggregate) -> Game:
    return GAMES[type(match).GAME]
