"""Every registry of games lists the same games as the wire contract's ``Game`` enum, so
that a game cannot be half-registered: the rules, the server's codecs, the judge's tool,
and the Python client (its game table, its bots, its terminal player). The Node client's
table is held to the same enum by its own suite (clients/node/test/games.test.js)."""

from __future__ import annotations

import importlib

from domain.games import GAMES as DOMAIN_GAMES
from domain.kernel.errors import DomainError
from entrypoints.totem import main as totem
from replay.games import REPLAYS
from server.codec import CODECS, GAME_ENUMS
from totem.v1 import common_pb2
from totem_client.games import GAMES as CLIENT_GAMES
from totem_client.play import GAMES as PLAYED_GAMES


def _contract_games() -> set[str]:
    names = common_pb2.Game.keys()
    return {n.removeprefix("GAME_").lower() for n in names if n != "GAME_UNSPECIFIED"}


def _command_games(group: str) -> set[str]:
    commands = totem.commands[group].commands  # type: ignore[attr-defined]
    return {name.replace("-", "_") for name in commands}


def test_every_python_registry_lists_the_contracts_games() -> None:
    games = _contract_games()
    assert len(games) >= 3
    registries = {
        "domain.games": set(DOMAIN_GAMES),
        "server.codec.CODECS": set(CODECS),
        "server.codec.GAME_ENUMS": set(GAME_ENUMS),
        "replay.games": set(REPLAYS),
        "totem_client.games.GAMES": set(CLIENT_GAMES),
        "totem_client.play.GAMES": {key.replace("-", "_") for key in PLAYED_GAMES},
        "totem bots": _command_games("bots"),
        "totem play": _command_games("play"),
    }
    assert {name: found for name, found in registries.items() if found != games} == {}


def test_js_1_5_tr_1_1_vi_1_1_the_clients_seat_ranges_are_what_the_rules_accept() -> None:
    """The client offers ``--players`` within its table's seats; the rules decide: a
    count the client offers that the server would refuse (or the reverse) is a bug."""
    for name, game in CLIENT_GAMES.items():
        options = importlib.import_module(f"domain.{name}.options").Options
        accepted = set()
        for seats in range(0, 13):
            try:
                options(max_players=seats).validate()
            except DomainError:
                continue
            accepted.add(seats)
        assert set(game.seats) == accepted, name
        assert game.default_seats in accepted, name
