"""Where a match's events come from: the event store or an audit bundle file.

Every command that takes MATCH reads it through :func:`load`, so a judge given only a
bundle can show, step through and verify the match exactly as from the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from replay.bundle import RefusalLines, open_bundle
from replay.claims import Claims, bundle_claims, store_claims
from replay.store import (
    Record,
    ReplayError,
    is_end,
    last_event,
    open_arena,
    read_records,
    resolve_match,
)

#: The file suffix that always means a bundle, so a mistyped path is not taken for an id.
BUNDLE_SUFFIX = ".jsonl"


@dataclass(frozen=True)
class Loaded:
    match_id: UUID
    records: list[Record]
    #: Where the records were read, for messages: ``bundle FILE`` or ``store``.
    source: str
    #: The version of the match's last event (``records`` may stop earlier: see ``upto``).
    last: int
    #: The match has ended: nothing of it is secret any more. A match still in play has
    #: hidden facts (its seed, face-down cards, secret spells) that only its referee and
    #: the organisers may see.
    ended: bool
    #: What the bundle's header or the store records of the match beside its events,
    #: read before them (:mod:`replay.claims`).
    claims: Claims | None = None
    #: A bundle's refusal lines (None: read from the store, or a bundle that holds none;
    #: ``replay.refusals.kept_refusals`` reads either).
    refusal_lines: RefusalLines | None = None

    @property
    def live(self) -> bool:
        return not self.ended


def is_bundle(match_text: str) -> bool:
    """MATCH names a bundle when it is an existing file or ends in ``.jsonl``."""
    return match_text.lower().endswith(BUNDLE_SUFFIX) or Path(match_text).is_file()


def load(db: str, match_text: str, upto: int | None = None) -> Loaded:
    """The records of MATCH: a bundle file's, else the store's match of that id or prefix.
    With ``upto``, a store's events after that version are not read (a bundle is read
    whole: it is one file)."""
    if is_bundle(match_text):
        path = Path(match_text)
        if not path.is_file():
            raise ReplayError(f"no audit bundle at {path}: not an existing file")
        bundle = open_bundle(path)
        last = bundle.records[-1].version if bundle.records else 0
        ended = bool(bundle.records) and is_end(bundle.records[-1].topic)
        claims = bundle_claims(bundle.header, bundle.match_id)
        return Loaded(
            bundle.match_id,
            bundle.records,
            f"bundle {path}",
            last,
            ended,
            claims,
            bundle.refusals,
        )
    with open_arena(db) as arena:
        match_id = resolve_match(arena, match_text)
        claims = store_claims(arena, match_id)
        records = read_records(arena, match_id, upto)
        if upto is None:
            last, topic = records[-1].version, records[-1].topic
        else:
            last, topic = last_event(arena, match_id)
        return Loaded(match_id, records, "store", last, is_end(topic), claims)
