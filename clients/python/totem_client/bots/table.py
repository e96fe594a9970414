"""What every game's table of bots shares: running the bots together and the result."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from totem.v1 import common_pb2
from totem_client.client import Client
from totem_client.messages import MatchSummary
from totem_client.session import Session


class Bot(Protocol):
    """A bot plays one seat until the match ends and returns its final summary."""

    @property
    def name(self) -> str: ...

    def run(self) -> Coroutine[Any, Any, MatchSummary]: ...


B = TypeVar("B", bound=Bot)


@dataclass(frozen=True)
class Standing:
    """One line of a result: place (1 is first; ties share it), seat and name."""

    place: int
    seat: int
    name: str


@dataclass
class TableResult(Generic[B]):
    """How a match of bots ended."""

    match_id: str
    summary: MatchSummary
    bots: list[B]

    @property
    def standings(self) -> list[Standing]:
        names = {p.seat: p.name for p in self.summary.players}
        return sorted(
            (Standing(r.place, r.seat, names.get(r.seat, "?")) for r in self.summary.result),
            key=lambda s: (s.place, s.seat),
        )

    @property
    def end_reason(self) -> str:
        reason = common_pb2.EndReason.Name(self.summary.end_reason)
        return reason.removeprefix("END_REASON_").lower()


async def run_bots(match_id: str, bots: Sequence[B]) -> TableResult[B]:
    """Run every bot of a table to the end of its match; the first failure is raised as
    it is (the bots share one server)."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(bot.run(), name=f"bot {bot.name}") for bot in bots]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from failed
    summary = tasks[0].result()
    for task in tasks[1:]:
        # Every bot stopped at the end; take the summary with the most events.
        if task.result().version > summary.version:
            summary = task.result()
    return TableResult(match_id, summary, list(bots))


def bot_names(players: int, names: Sequence[str] | None) -> list[str]:
    chosen = list(names) if names is not None else [f"bot-{i + 1}" for i in range(players)]
    if len(chosen) != players:
        raise ValueError("give one name per player")
    return chosen


#: Called with the match id once every bot is seated.
OnSeated = Callable[[str], None]


async def play_seats(
    client: Client,
    match_id: str,
    tokens: Sequence[str],
    game: str,
    bot: Callable[[Session, int], B],
    *,
    on_seated: OnSeated | None = None,
) -> TableResult[B]:
    """Seat a bot in each seat of an existing match of ``game`` whose token is given,
    and play it to the end: the way to play a fork's seats (``totem-replay fork`` prints
    one token per seat), all of them or only some, the others left to their players.

    Each token's seat is the one the server says it holds (:meth:`Client.take_seat`).
    ``bot`` makes the bot of a session; its second argument is the bot's index among
    the tokens (for a seeded random generator). Raises :class:`ValueError` for no token,
    two tokens of one seat or a match of another game, and the server's
    :class:`~totem_client.errors.TotemError` for a token that holds no seat there.
    """
    if not tokens:
        raise ValueError("give at least one seat's token")
    sessions: list[Session] = []
    for token in tokens:
        session = await client.take_seat(match_id, token)
        if session.game != game:
            raise ValueError(f"match {match_id} is a game of {session.game}, not of {game}")
        if any(s.seat == session.seat for s in sessions):
            raise ValueError(f"two of the tokens hold seat {session.seat}")
        sessions.append(session)
    bots = [bot(session, i) for i, session in enumerate(sessions)]
    if on_seated is not None:
        on_seated(match_id)
    return await run_bots(match_id, bots)
