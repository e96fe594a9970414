"""Refused commands kept as evidence, and the receive numbers of a match's commands.

Every ``Act`` (or ``Play`` command) travels to its match's actor with an :class:`Intake`:
its receive stamp, who sent it once the token is found valid, and what it said in short.
The actor numbers it when it runs (:meth:`RefusalKeeper.number`): one more than the last
number the match's events or its refusal log hold, so the numbers follow the actor's
order, which is the receive order.
If the command is refused, the keeper records it in the match's refusal log
(:mod:`domain.kernel.refusals`), after the command's answer, and nothing is written to
the match.

Saving never holds the race back. A refusal's record is saved by the group commit
(:mod:`server.commits`) from a task of its own, after the answer; the records that
arrive while one save runs go together in the next. The save of a command the match
applies carries the records not yet saved, in the same transaction, so an applied
command's number is never stored while a smaller refused one is not. Refusals beyond a
seat's quota are counted in memory and the count is written with the next save.

With several server instances on one store, each instance's actor numbers the commands
it takes from what the store held when it loaded the match; two instances refusing
commands of one match at once may conflict on the log: the later save is then dropped
and logged (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from uuid import UUID

from google.protobuf import text_format
from google.protobuf.message import Message

from domain.kernel.match import MatchAggregate
from domain.kernel.refusals import DEFAULT_QUOTA, Refusal, RefusalLog
from domain.kernel.stamps import ReceiveStamp
from server.errors import to_service_error

if TYPE_CHECKING:
    from server.commits import Committer

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Intake:
    """A command on its way to its match's actor; the actor numbers its stamp, the
    command's work says whose it is once the token is checked (:attr:`kept`)."""

    stamp: ReceiveStamp
    #: The kind of command, e.g. ``jungle_speed.grab``.
    action: str
    #: The command in short, with its arguments.
    command: str
    seat: int | None = None
    #: The match's version when the command ran.
    version: int = 0
    #: The token was valid for the match: a refusal from here on is kept.
    kept: bool = False


def intake_of(request: Message, kind: str, stamp: ReceiveStamp) -> Intake:
    """The intake of an ``ActRequest`` whose command is its field ``kind``: its action is
    ``kind`` and the game command's own kind (``jungle_speed.grab``), its command in short
    that message in one line of protobuf text."""
    command = getattr(request, kind)
    oneofs = command.DESCRIPTOR.oneofs_by_name
    inner = command.WhichOneof("command") if "command" in oneofs else None
    action = f"{kind}.{inner}" if inner else kind
    text = text_format.MessageToString(command, as_one_line=True)
    return Intake(stamp, action, f"{kind} {{{text}}}" if text else kind)


class RefusalKeeper:
    """The refusal log of one match, held by its actor: numbers its commands, records
    its refusals and saves them (see the module's docstring)."""

    def __init__(
        self,
        match_id: UUID,
        stored: RefusalLog | None,
        committer: Committer,
        quota: int = DEFAULT_QUOTA,
        on_task: Callable[[asyncio.Task[None]], None] | None = None,
    ) -> None:
        self.match_id = match_id
        self.log = stored
        self.committer = committer
        self.quota = quota
        #: The highest receive number given to a command that left a record here.
        self.last_receive = stored.last_receive if stored is not None else 0
        #: Refusals beyond a seat's quota not yet counted in the log.
        self._uncounted: dict[int | None, int] = {}
        #: Events taken from the log for a save that has not succeeded yet.
        self._unsaved: list[Any] = []
        self._task: asyncio.Task[None] | None = None
        self._on_task = on_task
        #: A save of the log alone failed: this keeper keeps nothing more (the actor's
        #: next copy of the match reads the log again).
        self.broken = False

    def number(self, intake: Intake, match: MatchAggregate, after: int = 0) -> None:
        """Give ``intake`` the next receive number of ``match``, above ``after``: the
        number of the command before it in the same batch, which neither the match nor
        the log may hold yet (a race held open, :mod:`domain.kernel.ties`)."""
        receive = max(match.last_receive, self.last_receive, after) + 1
        intake.stamp = dataclasses.replace(intake.stamp, receive=receive)
        intake.version = match.version

    def keep(self, intake: Intake, error: Exception) -> None:
        """Record ``intake``'s refusal (or count it, beyond its seat's quota) and have it
        saved soon. An error the service does not explain (an incident) is no refusal of
        the rules and is not kept."""
        refusal = to_service_error(error)
        if refusal is None or not intake.kept or self.broken or not intake.stamp.receive:
            return
        if self.log is None:
            self.log = RefusalLog.open(self.match_id, self.quota)
        if not self.log.keeps(intake.seat):
            self._uncounted[intake.seat] = self._uncounted.get(intake.seat, 0) + 1
            return
        self.log.keep(
            Refusal(
                receive=intake.stamp.receive,
                version=intake.version,
                seat=intake.seat,
                action=intake.action,
                command=intake.command,
                code=refusal.code.name,
                rule=refusal.rule,
                message=refusal.message,
                stamp=intake.stamp.to_dict(),
            )
        )
        self.last_receive = intake.stamp.receive
        self.save_soon()

    def save_soon(self) -> None:
        """Save what is not saved yet from a task, unless one is at it already."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._save(), name=f"refusals of {self.match_id}"
            )
            if self._on_task is not None:
                self._on_task(self._task)

    def take(self) -> list[Any]:
        """The log's events not saved yet (the counts beyond the quota written first), to
        save with the match's events; a caller whose save failed gives them back
        (:meth:`not_saved`)."""
        if self.log is not None:
            for seat, more in self._uncounted.items():
                self.log.count_not_kept(seat, more)
            self._uncounted.clear()
            self._unsaved.extend(self.log.collect_events())
        taken, self._unsaved = self._unsaved, []
        return taken

    def not_saved(self, events: list[Any]) -> None:
        """A save carrying ``events`` (from :meth:`take`) failed: they go with the next."""
        self._unsaved[:0] = events

    async def _save(self) -> None:
        events = self.take()
        while events:
            try:
                await self.committer.save(None, *events)
            except Exception as error:
                # Saved alone, the log's own events failed: another instance wrote to
                # it, or the store refuses writes. Not tried again for ever.
                log.warning(
                    "match %s: %d refused commands not kept: %r", self.match_id, len(events), error
                )
                self.broken = True
                return
            events = self.take()

    async def settled(self) -> None:
        """Wait until the saves under way are done (the server stops)."""
        if self._task is not None:
            await asyncio.shield(self._task)
