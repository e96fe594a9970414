"""What a judge's pages show beside the match: race evidence and the verification result.

Both come from the tools a judge runs at a terminal, ``explain``'s reading of a race and
``verify``'s checks, so a page never says more, or other, than they say. They are
computed when the page is made; the page itself only shows them.
"""

from __future__ import annotations

from typing import Any

from replay.audit import verify_records
from replay.explain import explain_records
from replay.source import Loaded
from replay.store import Record, open_arena
from replay.verifying import origin_records, report_object

#: Events that end a Jungle Speed grab race, or are a grab outside one: ``explain`` reads
#: their race (JS-4.2, JS-5.1, JS-5.2). Only these are asked about, since each reading
#: replays the match.
RACE_EVENTS = frozenset({"DuelWon", "ArrowsWon", "LateGrab", "WrongGrab"})


def race_evidence(records: list[Record], version: int, name: str) -> dict[str, Any] | None:
    """``explain --json``'s reading of the race the event at ``version`` belongs to: its
    title, rules, facts and every contender with its receive stamp, gap and reaction
    time; None when the event is not part of a race. The one place the pages ask
    ``explain``."""
    if name not in RACE_EVENTS:
        return None
    _, explanation = explain_records(records, version)
    if explanation is None or not explanation.contenders:
        return None
    return explanation.to_dict()


def verification(db: str, loaded: Loaded) -> dict[str, Any]:
    """``verify --json``'s object for the match as loaded: each check (chain, signature,
    seed commitment, random draws, spell reveals) with its status and detail. A fork in
    the store is compared with its origin there, as ``verify`` does."""
    origin = None
    if loaded.source == "store":
        with open_arena(db) as arena:
            origin = origin_records(arena, loaded.records)
    report = verify_records(loaded.records, origin=origin)
    return report_object(loaded.match_id, report)


def signature_of(event: Any) -> dict[str, str] | None:
    """The server's signature and public key (hex) that ``MatchEnded`` records over the
    match digest; None for any other event, or when the match was not signed."""
    if type(event).__name__ != "MatchEnded":
        return None
    signature, key = getattr(event, "signature", ""), getattr(event, "public_key", "")
    if not signature:
        return None
    return {"signature": str(signature), "public_key": str(key)}
