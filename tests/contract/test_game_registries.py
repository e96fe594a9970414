"""Every registry of games lists the same games as the wire contract's ``Game`` enum, so
that a game cannot be half-registered: the rules, the server's codecs, the judge's tool,
and the Python client (its game table, its bots, its terminal player). The Node client's
table is held to the same enum by its own suite (clients/node/test/games.test.js)."""

from __future__ import annotations

from domain.games import GAMES as DOMAIN_GAMES
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
