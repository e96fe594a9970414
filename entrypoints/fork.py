"""``totem-replay fork``: play a disputed position again, on a live server.

The one command of the judge's tool that talks to a server: it lives beside the
commands composed here, so that the tool itself (:mod:`replay`) needs no client.

The tool only asks: the server forks the match from its own store (``ForkMatch``,
docs/api.md), so what the fork starts from is what the server recorded, whatever store
this tool reads. The answer holds the only copy of the fork's tokens: they are printed
once, to hand to each seat's player and keep for the referee.
"""

from __future__ import annotations

import json
from typing import Any

import click
import grpc

from replay.store import ReplayError
from totem.v1 import common_pb2, match_service_pb2_grpc
from totem.v1 import match_service_pb2 as ms
from totem_client import options
from totem_client.client import ClientTls
from totem_client.service_client import bearer_metadata

#: Where the ``totem`` client looks for the server, so both tools agree by default.
DEFAULT_SERVER = "127.0.0.1:50051"


def call_fork(
    server: str,
    token: str,
    match_id: str,
    version: int,
    timeout: float,
    tls: ClientTls | None = None,
) -> tuple[ms.ForkMatchResponse, list[str], str]:
    """The fork's answer, its seats' names as its referee sees them, and its game as the
    ``totem`` commands name it (``jungle-speed``, ``tribes``, ``village``)."""
    channel = (
        grpc.insecure_channel(server)
        if tls is None
        else grpc.secure_channel(server, tls.credentials())
    )
    with channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        try:
            forked: ms.ForkMatchResponse = stub.ForkMatch(
                ms.ForkMatchRequest(match_id=match_id, version=version),
                metadata=bearer_metadata(token),
                timeout=timeout,
            )
            view: ms.GetMatchResponse = stub.GetMatch(
                ms.GetMatchRequest(match_id=forked.match_id),
                metadata=bearer_metadata(forked.referee_token),
                timeout=timeout,
            )
        except grpc.RpcError as error:
            raise ReplayError(_refusal(server, error)) from error
    names = [player.name for player in view.summary.players]
    game = common_pb2.Game.Name(view.summary.game).removeprefix("GAME_").lower()
    return forked, names, game.replace("_", "-")


def _refusal(server: str, error: grpc.RpcError) -> str:
    code = error.code() if isinstance(error, grpc.Call) else None
    details = error.details() if isinstance(error, grpc.Call) else str(error)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return f"cannot reach the server at {server}: {details}"
    name = code.name if code is not None else "error"
    if code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
        # The server names its own metadata; the user of this tool sets --token.
        details = (
            f"{details}; give the match's referee token or an organiser's as --token "
            "(env TOTEM_TOKEN)"
        )
    return f"the server refused the fork ({name}): {details}"


def fork_record(
    origin: str, version: int, forked: ms.ForkMatchResponse, names: list[str]
) -> dict[str, Any]:
    """The ``--json`` object (keys documented in docs/replay.md, "JSON output")."""
    return {
        "match_id": forked.match_id,
        "origin": {"match_id": origin, "version": version},
        "version": forked.version,
        "seed_commitment": forked.seed_commitment.hex(),
        "referee_token": forked.referee_token,
        "seats": [
            {"seat": seat, "name": name, "token": token}
            for seat, (name, token) in enumerate(zip(names, forked.player_tokens, strict=True))
        ],
    }


@click.command(short_help="Fork a match at VERSION into a new live match on a server.")
@click.argument("match_id", metavar="MATCH")
@click.argument("version", type=click.IntRange(min=1))
@click.option(
    "--server",
    metavar="ADDR",
    envvar="TOTEM_ADDRESS",
    default=DEFAULT_SERVER,
    show_default=True,
    help="host:port of the running server that holds the match (env TOTEM_ADDRESS).",
)
@click.option(
    "--token",
    metavar="TOKEN",
    envvar="TOTEM_TOKEN",
    required=True,
    help="The match's referee token, from CreateMatch, or an organiser's token (env TOTEM_TOKEN).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds to wait for the server's answer.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@options.tls
def fork(
    match_id: str,
    version: int,
    server: str,
    token: str,
    timeout: float,
    as_json: bool,
    tls: ClientTls | None,
) -> None:
    """Start a new live match on the server from the exact state of MATCH right after
    its event VERSION, so that a disputed position can be played again.

    MATCH is the full match id. The server reads the state from its own store; the fork
    has the same seats, a new token for each seat and for its referee, and a new seed.
    Prints the fork's id and every token: hand each seat's to its player, who takes the
    seat with `totem play GAME --join FORK --token TOKEN`, or to bots with
    `totem bots GAME --join FORK --token TOKEN ...`.
    """
    forked, names, game = call_fork(server, token, match_id, version, timeout, tls)
    record = fork_record(match_id, version, forked, names)
    if as_json:
        click.echo(json.dumps(record, ensure_ascii=False))
        return
    click.echo(f"Forked match {match_id} at version {version} into {forked.match_id}")
    click.echo(f"Seed commitment: {record['seed_commitment']}")
    click.echo(f"Referee token:   {forked.referee_token}")
    for seat in record["seats"]:
        click.echo(f"Seat {seat['seat']} ({seat['name']}): {seat['token']}")
    # Not "Seat ..." lines: those are the seats' own, one each, for scripts to read.
    click.echo(f"Play a seat:     totem play {game} --join {forked.match_id} --token TOKEN")
    click.echo(f"With bots:       totem bots {game} --join {forked.match_id} --token TOKEN ...")
