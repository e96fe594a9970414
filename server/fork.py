"""ForkMatch's work: a new match from the state of another at one version.

Everything comes from this server's own store: a client names a match and a version,
never a state, so a fork can only continue a history the server recorded. The checks
come first and a refused fork writes nothing; then the fork and its entry in the list of
matches are saved together (:meth:`storage.arena.Arena.create_match`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from uuid import UUID

from domain.kernel.fork import fork, fork_refusal_at
from domain.kernel.match import MatchAggregate
from domain.kernel.stamps import ReceiveStamp
from server import auth
from server.failures import OutOfRange, PermissionDenied
from storage.arena import Arena


@dataclass(frozen=True)
class NewFork:
    """The fork as saved, and the tokens only its caller will ever see."""

    match: MatchAggregate
    referee_token: str
    player_tokens: list[str]


def check_referee(origin: MatchAggregate, token: str | None, organiser: bool) -> None:
    """Only the origin's referee or an organiser may fork it: a fork hands out a seat for
    every player, which is the referee's to do, as reissuing a token is."""
    if organiser:
        return
    if not token or auth.token_hash(token) != origin.referee_token_hash:
        raise PermissionDenied(
            "only the referee of the match (the token from CreateMatch) or an organiser "
            "can fork it",
        )


def check_version(origin: MatchAggregate, version: int) -> None:
    if not 1 <= version <= origin.version:
        raise OutOfRange(
            f"version {version} is not one of the match's versions (1 to {origin.version})",
        )


def fork_match(
    app: Arena,
    origin_id: UUID,
    version: int,
    token: str | None,
    stamp: ReceiveStamp,
    organiser: bool = False,
    keep_tokens: bool = False,
) -> NewFork:
    """Check, then create and save the fork (synchronous: runs in a store thread).
    ``organiser``: the caller's token is an organiser's. ``keep_tokens``: every seat
    keeps the origin's token (a tournament's replay, whose entrants play on with their
    entrant tokens, TO-10.3), and no new one is handed out."""
    origin = app.load(origin_id)
    check_referee(origin, token, organiser)
    check_version(origin, version)
    events = app.events_after(origin_id)
    refusal = fork_refusal_at(events, version)
    if refusal is not None:
        raise refusal
    history = events[:version]
    referee_token, referee_hash = auth.new_token()
    # A version in play: the seats were all taken by then, and are the origin's now.
    tokens = (
        [("", h) for h in origin.token_hashes]
        if keep_tokens
        else [auth.new_token() for _ in origin.players]
    )
    hashes = [digest for _, digest in tokens]
    created = app.create_match(
        lambda seed: fork(
            type(origin), history, seed, secrets.token_bytes(32), referee_hash, hashes, stamp
        )
    )
    return NewFork(created, referee_token, [token for token, _ in tokens if token])
