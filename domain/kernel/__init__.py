"""What every game shares: seats, randomness, views, the audit chain, errors."""

from domain.kernel.chain import GENESIS_DIGEST, canonical_bytes, event_digest
from domain.kernel.decisions import Decision
from domain.kernel.errors import DomainError, InvalidArgument, NotPermitted, RuleViolation
from domain.kernel.match import EndReason, MatchAggregate, MatchStatus
from domain.kernel.randomness import SeededRandom, commitment, effective_seed
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.views import Viewer, ViewerRole

__all__ = [
    "GENESIS_DIGEST",
    "Decision",
    "DomainError",
    "EndReason",
    "InvalidArgument",
    "MatchAggregate",
    "MatchStatus",
    "NotPermitted",
    "ReceiveStamp",
    "RuleViolation",
    "SeededRandom",
    "Viewer",
    "ViewerRole",
    "canonical_bytes",
    "commitment",
    "effective_seed",
    "event_digest",
]
