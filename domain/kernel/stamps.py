"""Receive stamps: how time enters the domain, as data (JS-5.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReceiveStamp:
    """When and in which order the server received a command.

    The server takes it the moment a request handler starts, before any await, and
    passes it into the command; the aggregate records it in the resulting event. Receive
    order (``sequence``) decides grab races; the clocks are evidence for a judge.
    Timer firings carry a stamp too, taken when the timer fired.
    """

    sequence: int
    monotonic_ns: int
    wall_ns: int
    seen_version: int = 0
    #: When the event at ``seen_version`` was written to this player's stream, on the
    #: ``monotonic_ns`` clock; 0 when unknown. Evidence of reaction time, never of order.
    seen_sent_monotonic_ns: int = 0
    #: The server instance that took the request ("" for a lone server): ``sequence``
    #: and ``monotonic_ns`` are that instance's own, comparable only between its stamps.
    instance: str = ""
    #: Taken as the command's message was read on a Play stream the client had open;
    #: False: when gRPC handed the command's call (Act, JoinMatch) to the server. The
    #: second waits for gRPC to admit the call, the first does not: a judge comparing
    #: two close grabs weighs that.
    on_stream: bool = False
    #: The command's receive number in its match: 1, 2, 3... in the order the match's
    #: actor took its commands, refused ones included (kept in the match's refusal
    #: log, :mod:`domain.kernel.refusals`); 0 for what is no command of a player or the
    #: referee (a timer firing, a join) and in stamps stored before the numbers existed.
    receive: int = 0
    #: The client's own measure of the reaction, in ms from showing the event at
    #: ``seen_version`` to the player's press, on the client's clock; None when the
    #: client sent none. A claim, kept as evidence beside ``seen_sent_monotonic_ns``:
    #: nothing is decided by it.
    client_reaction_ms: int | None = None

    @property
    def wall_ms(self) -> int:
        return self.wall_ns // 1_000_000

    def to_dict(self) -> dict[str, Any]:
        """The form stored in events (JSON-compatible). A lone server's stamps leave
        ``instance`` out, and a call's leave ``on_stream`` out: they are stored as they
        were before instances and streams, and an unnumbered stamp leaves ``receive``
        out."""
        data: dict[str, Any] = {
            "sequence": self.sequence,
            "monotonic_ns": self.monotonic_ns,
            "wall_ns": self.wall_ns,
            "seen_version": self.seen_version,
            "seen_sent_monotonic_ns": self.seen_sent_monotonic_ns,
        }
        if self.instance:
            data["instance"] = self.instance
        if self.on_stream:
            data["on_stream"] = True
        if self.receive:
            data["receive"] = self.receive
        if self.client_reaction_ms is not None:
            data["client_reaction_ms"] = self.client_reaction_ms
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReceiveStamp:
        """A stamp read back from its stored form, the one way stored stamps are read.

        Stored stamps are never rewritten (events are hashed into their chain from
        their fields), so every form ever stored must read: :meth:`to_dict` leaves
        ``instance``, ``on_stream``, ``receive`` and ``client_reaction_ms`` out when they
        are their defaults,
        and stamps stored before reaction evidence have no ``seen_sent_monotonic_ns``
        (nor, the oldest, ``seen_version``). A field left out reads as its default;
        the values are taken as stored, so ``to_dict`` gives back the stored form.
        """
        return cls(
            sequence=data["sequence"],
            monotonic_ns=data["monotonic_ns"],
            wall_ns=data["wall_ns"],
            seen_version=data.get("seen_version", 0),
            seen_sent_monotonic_ns=data.get("seen_sent_monotonic_ns", 0),
            instance=data.get("instance", ""),
            on_stream=data.get("on_stream", False),
            receive=data.get("receive", 0),
            client_reaction_ms=data.get("client_reaction_ms"),
        )
