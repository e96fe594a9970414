"""What each game's module in :mod:`totem_client.games` gives the client, and what its
parts of a session and of a client act through.

A game's typed commands (``session.reveal()``) and its creation from keywords
(``client.create_tribes(...)``) live in its own module, as classes that
:class:`~totem_client.session.Session` and :class:`~totem_client.client.Client` inherit
through the game table. Those classes name neither the session nor the client, which
import the table: they act through :class:`Acting` and :class:`Creating`, the one method
each needs, so that the types still hold without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from google.protobuf.message import Message

from totem.v1 import common_pb2
from totem_client.messages import ActResponse, CreatedMatch

#: A game's command message (``JungleSpeedCommand``, ...).
C = TypeVar("C", bound=Message, covariant=True)
C_contra = TypeVar("C_contra", bound=Message, contravariant=True)


@dataclass(frozen=True)
class GameInfo(Generic[C]):
    """How the contract names one game: its enum, and its field in the requests',
    events' and states' oneofs, with the message types of its options and commands."""

    name: str
    #: How people call it (``Jungle Speed``): in titles, results and refusals.
    title: str
    enum: common_pb2.Game.ValueType
    field: str
    options: type[Message]
    command: type[C]
    #: The game's command that starts a match early.
    start: Callable[[], C]
    #: How many seats a match may have (the game's rules), and a new one's default.
    seats: range
    default_seats: int

    @property
    def command_name(self) -> str:
        """Its name on the command line: ``totem bots jungle-speed``, ``totem play tribes``."""
        return self.name.replace("_", "-")


class Acting(Protocol[C_contra]):
    """What a game's commands are sent through: a session's ``act``."""

    async def act(self, command: C_contra, *, seen_version: int | None = None) -> ActResponse: ...


class Creating(Protocol):
    """What a game's match is created through: a client's ``create``."""

    async def create(
        self, game: str, options: Message | None = None, *, entropy: bytes = b""
    ) -> CreatedMatch: ...
