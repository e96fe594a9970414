"""Proving one match against a published checkpoint, without the store.

A judge given a match's audit bundle and a checkpoint published elsewhere can hold the
bundle to the checkpoint if someone with the store also gives the **inclusion proofs** of
the match's leaves (RFC 9162 2.1.3): ``checkpoint prove`` writes them, ``checkpoint
included`` checks them. The leaves are never taken from the proof file: they are
recomputed from the match's own events (its first event's digest and seed commitment, its
``MatchEnded``'s version, digest and signature), so a bundle that is not the logged match,
or one cut before the end the log recorded, fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.games import GAMES
from domain.kernel import merkle
from domain.kernel.chain import stored_event_digest
from domain.kernel.match import is_final
from domain.kernel.randomness import commitment
from domain.kernel.translog import CREATED, ENDED, Checkpoint, Leaf
from replay.store import Record, ReplayError

#: The ``format`` of a proof file.
PROOF_FORMAT = "totem-arena inclusion v1"


@dataclass(frozen=True)
class LeafProof:
    """Leaf ``index`` of the tree of ``tree_size`` leaves is the match's ``kind`` leaf."""

    index: int
    kind: str
    proof: list[bytes]


def proof_json(match_id: UUID, checkpoint: Checkpoint, proofs: list[LeafProof]) -> str:
    """The proof file: one JSON object (docs/audit.md)."""
    return json.dumps(
        {
            "format": PROOF_FORMAT,
            "match_id": str(match_id),
            "tree_size": checkpoint.tree_size,
            "root_hash": checkpoint.root_hash.hex(),
            "leaves": [
                {"index": p.index, "kind": p.kind, "proof": [h.hex() for h in p.proof]}
                for p in proofs
            ],
        },
        indent=2,
    )


def read_proofs(text: str, match_id: UUID, checkpoint: Checkpoint) -> list[LeafProof]:
    """The proofs of a proof file, which must be of this match and this checkpoint."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ReplayError(f"the proof file is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != PROOF_FORMAT:
        raise ReplayError(f"not a proof file: its format must be {PROOF_FORMAT!r}")
    if data.get("match_id") != str(match_id):
        raise ReplayError(f"the proof file is of match {data.get('match_id')}, not {match_id}")
    if (data.get("tree_size"), data.get("root_hash")) != (
        checkpoint.tree_size,
        checkpoint.root_hash.hex(),
    ):
        raise ReplayError("the proof file is of another checkpoint (tree size or root differ)")
    proofs = []
    for entry in data.get("leaves") or []:
        try:
            index, kind = entry["index"], entry["kind"]
            hashes = [bytes.fromhex(h) for h in entry["proof"]]
        except (TypeError, KeyError, ValueError) as exc:
            raise ReplayError(f"the proof file has a malformed leaf: {exc!r}") from None
        if not isinstance(index, int) or kind not in (CREATED, ENDED):
            raise ReplayError(f"the proof file has a malformed leaf: {entry!r}")
        proofs.append(LeafProof(index, kind, hashes))
    return proofs


def leaves_of(records: list[Record]) -> dict[str, Leaf]:
    """The match's leaves as its own events give them: its creation, and its end if its
    last event is ``MatchEnded``. Digests are recomputed, never read."""
    if not records or records[0].event is None:
        raise ReplayError("the match's first event cannot be read: run `verify`")
    first = records[0].event
    game = next(
        (g.name for g in GAMES.values() if get_topic(g.aggregate) == first.originator_topic),
        None,
    )
    if game is None:
        raise ReplayError("the match's first event creates no match of a known game")
    try:
        seed_commitment = commitment(bytes.fromhex(first.seed))
    except (AttributeError, TypeError, ValueError):
        raise ReplayError("the match's first event records no seed") from None
    leaves = {
        CREATED: Leaf(
            CREATED,
            UUID(str(first.originator_id)),
            first.originator_version,
            stored_event_digest(first),
            game=game,
            seed_commitment=seed_commitment,
        )
    }
    last = records[-1].event
    if last is not None and is_final(last):
        leaves[ENDED] = Leaf(
            ENDED,
            UUID(str(last.originator_id)),
            last.originator_version,
            stored_event_digest(last),
            signature=(getattr(last, "signature", "") or "").lower(),
        )
    return leaves


def check_inclusion(
    records: list[Record], checkpoint: Checkpoint, proofs: list[LeafProof]
) -> tuple[list[str], list[str]]:
    """What holds (first list) and what fails (second) of the match against the
    checkpoint: each proven leaf recomputed from the events must be in the tree."""
    leaves = leaves_of(records)
    held: list[str] = []
    failed: list[str] = []
    for proven in proofs:
        leaf = leaves.get(proven.kind)
        if leaf is None:
            failed.append(
                f"leaf {proven.index}: the log recorded the end of this match, but its "
                f"events stop at version {records[-1].version} without MatchEnded "
                "(the match was truncated)"
            )
            continue
        if merkle.verify_inclusion(
            proven.index, checkpoint.tree_size, leaf.hash(), proven.proof, checkpoint.root_hash
        ):
            held.append(f"leaf {proven.index}: {leaf.describe()} is in the checkpoint's tree")
        else:
            failed.append(
                f"leaf {proven.index}: {leaf.describe()}, as these events give it, is not the "
                "leaf the checkpoint's tree holds there: the match is not the one logged"
            )
    kinds = {p.kind for p in proofs}
    if CREATED not in kinds:
        failed.append("the proof file proves no creation leaf")
    if ENDED in leaves and ENDED not in kinds:
        held.append(
            "the match ended after the checkpoint (its end is not in it): a later "
            "checkpoint covers it"
        )
    return held, failed


def proofs_from_store(leaves: list[Leaf], checkpoint: Checkpoint, match_id: UUID) -> list[Any]:
    """The inclusion proofs of the match's leaves in the checkpoint's tree, from the
    store's log, which must still give the checkpoint's root."""
    size = checkpoint.tree_size
    if len(leaves) < size:
        raise ReplayError(
            f"the store's transparency log holds {len(leaves)} leaves, fewer than the "
            f"checkpoint's {size}: it cannot prove anything of it"
        )
    hashes = [leaf.hash() for leaf in leaves[:size]]
    if merkle.root(hashes) != checkpoint.root_hash:
        raise ReplayError(
            "the store's transparency log does not give the checkpoint's root: it cannot "
            "prove anything of it (run `verify --all --checkpoint`)"
        )
    proofs = [
        LeafProof(index, leaf.kind, merkle.inclusion_proof(index, hashes))
        for index, leaf in enumerate(leaves[:size])
        if leaf.match_id == match_id
    ]
    if not proofs:
        raise ReplayError(
            f"match {match_id} is not in the checkpoint's {size} leaves: created after it, "
            "or before the store had a log"
        )
    return proofs
