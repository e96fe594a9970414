"""The base of every aggregate whose events form an audit chain: a match, a tournament,
a match's refusal log.

Each event such an aggregate triggers carries ``prev_digest`` (the digest of the event
before it, :data:`~domain.kernel.chain.GENESIS_DIGEST` for the first) and ``digest``
(the SHA-256 of its canonical encoding, :mod:`domain.kernel.chain`), added here as the
event is triggered, so that no subclass has to think of it. An aggregate that ends with
a final event names it (:meth:`ChainedAggregate.signs`): when a :class:`Signer` is given,
that event is signed as it is triggered, in the same event and so in the same save, over
the message :meth:`ChainedAggregate.signed_message` says.

Nothing here changes what an event records: the topics, the fields and the digests of
the events of every subclass are those its own classes declare.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar
from uuid import UUID

from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic

from domain.kernel.chain import GENESIS_DIGEST, event_digest, next_link
from domain.kernel.signing import PREFIX, Signer

C = TypeVar("C", bound="ChainedAggregate")


class ChainedAggregate(Aggregate):
    """An aggregate whose events form a hash chain, and whose final event may be signed.

    Subclasses declare their events as usual (``@event`` methods, or classes deriving
    from ``Event``); a subclass with a signed final event overrides :meth:`signs` and, if
    its signatures must never be mistaken for a match's, :data:`SIGNATURE_PREFIX`.
    """

    class Event(Aggregate.Event):
        prev_digest: str
        digest: str

        def mutate(self, aggregate: Any) -> Any:
            agg = super().mutate(aggregate)
            assert agg is not None
            agg.digest = self.digest
            return agg

    class Created(Event, Aggregate.Created):
        """The first event, chained to the genesis digest. A subclass's ``@event("Created")``
        on its ``__init__`` derives from it."""

    #: The digest of the latest event: the chain head, and once the final event is
    #: recorded, the digest the server signs.
    digest: str
    #: Signs the final event; given by the server (never stored, shared by copies). None
    #: (tests, tools): the final event is recorded unsigned.
    signer: Signer | None = None
    #: Attributes no event sets, never put in a snapshot: the server's signer holds its
    #: private key, and is given again to every aggregate the server loads.
    TRANSIENT: ClassVar[frozenset[str]] = frozenset({"signer"})
    #: The first line of the message the final event's signature covers
    #: (:func:`domain.kernel.signing.signed_message`): each kind of aggregate has its
    #: own, so that no signature of one kind can be passed off as another's.
    SIGNATURE_PREFIX: ClassVar[bytes] = PREFIX

    @classmethod
    def _create(cls: type[C], event_class: Any, *, id: UUID | None = None, **kwargs: Any) -> C:
        """Create the aggregate with its first event, chained to the genesis digest."""
        originator_id = id if id is not None else cls.create_id()
        timestamp = event_class.create_timestamp()
        fields = dict(
            kwargs,
            originator_topic=get_topic(cls),
            originator_id=originator_id,
            originator_version=cls.INITIAL_VERSION,
            timestamp=timestamp,
            prev_digest=GENESIS_DIGEST,
        )
        digest = event_digest(event_class.__name__, fields)
        return super()._create(
            event_class,
            id=originator_id,
            timestamp=timestamp,
            prev_digest=GENESIS_DIGEST,
            digest=digest,
            **kwargs,
        )

    def trigger_event(self, event_class: Any, **kwargs: Any) -> None:
        """Chain each event to the one before; sign the final one when a signer is given."""
        version = self.version + 1
        timestamp, digest = next_link(event_class, self.id, self.digest, version, kwargs)
        if self.signer is not None and self.signs(event_class):
            # The one place the aggregate ends: signed in the same event, so in the same
            # save. The signature is outside the digest (chain.NOT_HASHED).
            kwargs.update(
                self.signer.signature_fields(self.id, version, digest, self.SIGNATURE_PREFIX)
            )
        super().trigger_event(
            event_class, timestamp=timestamp, prev_digest=self.digest, digest=digest, **kwargs
        )

    @classmethod
    def signs(cls, event_class: type) -> bool:
        """Whether events of ``event_class`` are signed as they are triggered: the final
        event of the aggregate, whose ``signature`` and ``public_key`` fields (hex, empty
        when unsigned) the signer fills in. None by default."""
        return False
