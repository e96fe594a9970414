"""A match's refused commands, kept as evidence beside it (docs/audit.md, "Refused
commands").

A refused command writes nothing to its match: the match's state and version stay as
they were and the command's answer is its error. Yet a refused grab during a race is
the very thing a player disputes, so the server keeps each refused command of a seated
player (or of the referee) in the match's *refusal log*: an aggregate of its own, whose
id is derived from the match's (:func:`refusal_log_id`), and whose events form a hash
chain exactly as a match's do (:mod:`domain.kernel.chain`), so that changing, removing
or reordering a kept refusal is detected the same way.

Receive numbers: the server numbers the commands of one match 1, 2, 3... in the order
the match's actor takes them (its receive order), refused or not. An applied command's
number is in the stamp of its events (``ReceiveStamp.receive``); a refused command's is
in its record here. Between the two, every number is accounted for: a number is spent
only by a command that left a record, so the next command takes it again otherwise.

The log is bounded: each seat (and the referee) has :attr:`RefusalLog.quota` records at
most; beyond it, refused commands are only counted (:class:`NotKept`), take no number,
and leave no record, so that a player sending refused commands in a loop cannot fill
the store.

Who may see a record is decided here (:func:`refusal_view`), as for events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.kernel.chained import ChainedAggregate
from domain.kernel.views import Viewer

#: Records kept per seat of a match (and for the referee) unless the server says
#: otherwise; each is a few hundred bytes.
DEFAULT_QUOTA = 100
#: How much of a command's arguments a record keeps.
MAX_COMMAND_CHARS = 200
#: How much of a refusal's message a record keeps.
MAX_MESSAGE_CHARS = 300


def refusal_log_id(match_id: UUID) -> UUID:
    """The id of the refusal log of ``match_id``: derived, so that anyone holding the
    match id finds its refusals, and no match id is ever one (match ids are random)."""
    return uuid5(NAMESPACE_URL, f"/totem/matches/{match_id}/refusals")


@dataclass(frozen=True)
class Refusal:
    """One refused command as the server saw it."""

    #: The command's receive number in its match (see the module's docstring).
    receive: int
    #: The match's version when it was refused (which the refusal left unchanged):
    #: the refusal comes after that event and before the next.
    version: int
    #: The seat that sent it; None for the referee.
    seat: int | None
    #: What kind of command it was, e.g. ``jungle_speed.grab``: shown to everyone.
    action: str
    #: The command in short, its arguments included: shown to its sender and the referee.
    command: str
    #: The gRPC status it was answered with, e.g. ``FAILED_PRECONDITION``.
    code: str
    #: The rule id the refusal cited ("" when none: a rate limit, a bad field).
    rule: str
    #: The sentence its sender was answered with.
    message: str
    #: Its receive stamp (``ReceiveStamp.to_dict()``), its number included.
    stamp: dict[str, Any]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Refusal:
        return cls(**data)


class RefusalLog(ChainedAggregate):
    """The refused commands of one match, in receive order, each an event of a hash
    chain (:mod:`domain.kernel.chained`, as a match's); and how many more each seat had
    refused beyond the quota. Nothing in it is signed."""

    class Event(ChainedAggregate.Event):
        pass

    class Opened(Event, Aggregate.Created):
        match_id: str
        quota: int

    @classmethod
    def open(cls, match_id: UUID, quota: int = DEFAULT_QUOTA) -> RefusalLog:
        """A new, empty log for ``match_id`` (saved with its first record)."""
        if quota < 0:
            raise ValueError("a quota of refusals cannot be negative")
        return cls._create(
            cls.Opened, id=refusal_log_id(match_id), match_id=str(match_id), quota=quota
        )

    def __init__(self, match_id: str, quota: int) -> None:
        self.match_id = match_id
        self.quota = quota
        self.refusals: list[Refusal] = []
        #: Records kept, and refusals only counted, per seat (None: the referee).
        self.kept: dict[int | None, int] = {}
        self.not_kept: dict[int | None, int] = {}
        #: The highest receive number a record here holds.
        self.last_receive = 0

    def keeps(self, seat: int | None) -> bool:
        """Whether a refusal of ``seat``'s is kept (its quota is not spent)."""
        return self.kept.get(seat, 0) < self.quota

    def keep(self, refusal: Refusal) -> None:
        """Record ``refusal``; its receive number must follow every number before it."""
        if not self.keeps(refusal.seat):
            raise ValueError(f"the quota of refusals of seat {refusal.seat} is spent")
        if refusal.receive <= self.last_receive:
            raise ValueError(
                f"receive number {refusal.receive} is not after {self.last_receive}, "
                "the last one kept"
            )
        self._refused(
            receive=refusal.receive,
            version=refusal.version,
            seat=refusal.seat,
            action=refusal.action,
            command=refusal.command[:MAX_COMMAND_CHARS],
            code=refusal.code,
            rule=refusal.rule,
            message=refusal.message[:MAX_MESSAGE_CHARS],
            stamp=dict(refusal.stamp),
        )

    def count_not_kept(self, seat: int | None, more: int) -> None:
        """``more`` refusals of ``seat``'s beyond its quota: recorded as a running total."""
        if more > 0:
            self._not_kept(seat=seat, total=self.not_kept.get(seat, 0) + more)

    @event("Refused")
    def _refused(
        self,
        receive: int,
        version: int,
        seat: int | None,
        action: str,
        command: str,
        code: str,
        rule: str,
        message: str,
        stamp: dict[str, Any],
    ) -> None:
        self.refusals.append(
            Refusal(receive, version, seat, action, command, code, rule, message, dict(stamp))
        )
        self.kept[seat] = self.kept.get(seat, 0) + 1
        self.last_receive = receive

    @event("NotKept")
    def _not_kept(self, seat: int | None, total: int) -> None:
        self.not_kept[seat] = total


def refusal_view(refusal: Refusal, viewer: Viewer) -> dict[str, Any]:
    """A refusal as ``viewer`` may see it. The referee and the refused player see it
    whole (the player was answered with its message anyway). Anyone else sees that the
    seat's command of that kind was refused at that moment, and under which rule, but
    neither its arguments nor the message: a Village command names secret choices, and
    a message may explain a refusal by what only its sender may know."""
    whole = {
        "receive": refusal.receive,
        "version": refusal.version,
        "seat": refusal.seat,
        "action": refusal.action,
        "command": refusal.command,
        "code": refusal.code,
        "rule": refusal.rule,
        "message": refusal.message,
        "stamp": dict(refusal.stamp),
    }
    if viewer.sees_everything or (viewer.seat is not None and viewer.seat == refusal.seat):
        return whole
    for hidden in ("command", "message"):
        del whole[hidden]
    return whole
