"""Holding a store to the checkpoints of its transparency log.

A checkpoint (``totem checkpoint``, ``totem-replay checkpoint sign``) is a signed tree
head of the log of each match's creation and signed end (:mod:`domain.kernel.translog`).
Kept outside the store, it is what a store rewritten with its own key cannot satisfy:

- the store's log must still give the checkpoint's root at the checkpoint's size (a leaf
  removed, changed or reordered changes the root, RFC 9162);
- each match logged before that size must still give its leaves: its first event the
  logged digest and seed commitment, its ``MatchEnded`` the logged version, digest and
  signature. A deleted match, a truncated one and a whole match replaced (even re-signed
  with the store's key) each fail one of these, named with the match and the leaf;
- each logged match must still be in the list of matches (``MatchLogged``).

``verify --all --checkpoint FILE`` runs these after the per-match checks;
``checkpoint consistency OLD NEW`` proves from the store that NEW extends OLD.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from rich.text import Text

from domain.kernel import merkle
from domain.kernel.chain import stored_event_digest
from domain.kernel.match import is_final
from domain.kernel.randomness import commitment
from domain.kernel.translog import (
    BEGINNINGS,
    Checkpoint,
    CheckpointError,
    Leaf,
    LeafLogged,
)
from domain.tournament.aggregate import is_final as is_final_tournament
from replay.store import ReplayError, logged_matches
from storage.arena import Arena
from storage.keys import fingerprint
from storage.keys import verify as verify_signature
from storage.tournaments import TournamentStore


def read_checkpoint(path: str | Path, expected_key: bytes | None = None) -> Checkpoint:
    """A checkpoint file whose signature holds, by ``expected_key`` when given (else by
    the key the file names, which proves only that the file is whole)."""
    try:
        checkpoint = Checkpoint.from_json(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayError(f"cannot read the checkpoint {path}: {exc}") from exc
    except CheckpointError as exc:
        raise ReplayError(f"the checkpoint {path} cannot be read: {exc}") from exc
    if not verify_signature(checkpoint.public_key, checkpoint.signature, checkpoint.message()):
        raise ReplayError(
            f"the checkpoint {path} is not signed by the key it names "
            f"({fingerprint(checkpoint.public_key)}): it was altered"
        )
    if expected_key is not None and checkpoint.public_key != expected_key:
        raise ReplayError(
            f"the checkpoint {path} is signed by {fingerprint(checkpoint.public_key)}, "
            f"not by the --key given ({fingerprint(expected_key)})"
        )
    return checkpoint


def store_leaves(arena: Arena) -> list[Leaf]:
    """The store's transparency log, in order; a gap in it is a ReplayError."""
    leaves, gap = read_leaves(arena)
    if gap is not None:
        raise ReplayError(gap)
    return leaves


def read_leaves(arena: Arena) -> tuple[list[Leaf], str | None]:
    """The store's transparency log up to its first gap, and what the gap is (None when
    there is none): a leaf removed from the middle of the log."""
    leaves: list[Leaf] = []
    try:
        for index, logged in enumerate(arena.logged_leaves()):
            if not isinstance(logged, LeafLogged) or logged.originator_version != index + 1:
                return leaves, (
                    f"the store's transparency log has no leaf {index}: leaves were deleted "
                    "from the log"
                )
            leaves.append(logged.leaf())
    except Exception as exc:
        raise ReplayError(f"cannot read the store's transparency log: {exc}") from exc
    return leaves, None


@dataclass
class CheckpointReport:
    """What holding the store to one checkpoint found."""

    checkpoint: Checkpoint
    store_size: int
    root_ok: bool
    matches: int = 0
    tournaments: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.root_ok and not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "tree_size": self.checkpoint.tree_size,
            "root_hash": self.checkpoint.root_hash.hex(),
            "timestamp_ms": self.checkpoint.timestamp_ms,
            "key": fingerprint(self.checkpoint.public_key),
            "store_size": self.store_size,
            "root_reproduced": self.root_ok,
            "matches": self.matches,
            "tournaments": self.tournaments,
            "problems": list(self.problems),
        }


def check_store(arena: Arena, checkpoint: Checkpoint) -> CheckpointReport:
    """Hold the store to ``checkpoint`` (see the module's docstring)."""
    leaves, gap = read_leaves(arena)
    size = checkpoint.tree_size
    report = CheckpointReport(checkpoint, len(leaves), root_ok=False)
    if gap is not None and len(leaves) < size:
        report.problems.append(gap)
    elif len(leaves) < size:
        report.problems.append(
            f"the store's transparency log holds {len(leaves)} leaves, the checkpoint "
            f"{size}: leaves were deleted from the log"
        )
    else:
        root = merkle.root([leaf.hash() for leaf in leaves[:size]])
        report.root_ok = root == checkpoint.root_hash
        if not report.root_ok:
            report.problems.append(
                f"the store's transparency log no longer gives the checkpoint's root at "
                f"size {size} ({root.hex()[:16]}… instead of "
                f"{checkpoint.root_hash.hex()[:16]}…): a logged leaf was changed or removed"
            )
    covered = leaves[:size]
    listed = {entry.match_id for entry in logged_matches(arena)}
    listed_tournaments = {e.tournament_id for e in TournamentStore(arena).logged()}
    report.matches = len({leaf.match_id for leaf in covered if not leaf.of_tournament})
    report.tournaments = len({leaf.match_id for leaf in covered if leaf.of_tournament})
    unlisted: set[UUID] = set()
    for index, leaf in enumerate(covered):
        problem = leaf_problem(arena, leaf)
        if leaf.of_tournament:
            what, plural, entry, known = (
                "tournament",
                "tournaments",
                "TournamentLogged",
                listed_tournaments,
            )
        else:
            what, plural, entry, known = ("match", "matches", "MatchLogged", listed)
        if problem is not None:
            report.problems.append(f"leaf {index}, {leaf.describe()}: {problem}")
        elif leaf.match_id not in known and leaf.match_id not in unlisted:
            unlisted.add(leaf.match_id)
            report.problems.append(
                f"leaf {index}: {what} {leaf.match_id} is logged but missing from the list "
                f"of {plural} (its {entry} entry was deleted)"
            )
    return report


def leaf_problem(arena: Arena, leaf: Leaf) -> str | None:
    """Why the store's match no longer gives ``leaf``, or None if it does."""
    try:
        stored = arena.recorder.select_events(leaf.match_id, gt=leaf.version - 1, lte=leaf.version)
    except Exception as exc:
        return f"its events cannot be read ({exc})"
    if not stored:
        last = arena.recorder.select_events(leaf.match_id, desc=True, limit=1)
        if not last:
            what = "tournament" if leaf.of_tournament else "match"
            return f"the {what} is no longer in the store (deleted)"
        return truncation(last[0].originator_version, leaf)
    try:
        event = arena.mapper.to_domain_event(stored[0])
    except Exception as exc:
        return f"its event at version {leaf.version} cannot be read ({exc})"
    return event_problem(leaf, event)


def truncation(held: int, leaf: Leaf) -> str:
    """The match (or tournament) holds ``held`` events, fewer than the version of its
    logged end."""
    what = "tournament" if leaf.of_tournament else "match"
    return (
        f"the store holds only {held} events, the log says it ended at version "
        f"{leaf.version} (the {what} was truncated)"
    )


def event_problem(leaf: Leaf, event: Any) -> str | None:
    """Why ``event``, the match's (or tournament's) event at the leaf's version, is not
    the one ``leaf`` logged, or None if it is (its digest recomputed, never read)."""
    digest = stored_event_digest(event)
    what, final, ending = (
        ("tournament", is_final_tournament, "TournamentEnded")
        if leaf.of_tournament
        else ("match", is_final, "MatchEnded")
    )
    if leaf.kind in BEGINNINGS:
        seed = getattr(event, "seed", "")
        try:
            seed_commitment = commitment(bytes.fromhex(seed))
        except (TypeError, ValueError):
            seed_commitment = ""
        if digest != leaf.digest or seed_commitment != leaf.seed_commitment:
            return (
                f"the stored first event is not the one logged (digest {digest[:16]}…, "
                f"logged {leaf.digest[:16]}…): the {what} was replaced"
            )
        return None
    if not final(event):
        return (
            f"the event at version {leaf.version} is {type(event).__name__}, not the "
            f"logged {ending}: the {what} was rewritten"
        )
    signature = getattr(event, "signature", "") or ""
    if digest == leaf.digest and signature.lower() != leaf.signature:
        return (
            f"its {ending} carries another signature than the one logged ({what} digest "
            f"{digest[:16]}…, as logged): the {what} was re-signed"
        )
    if digest != leaf.digest:
        return (
            f"its {ending} is not the one logged ({what} digest {digest[:16]}…, logged "
            f"{leaf.digest[:16]}…): the {what} was replaced or re-signed"
        )
    return None


def print_report(out: Any, report: CheckpointReport, path: str) -> None:
    """The checkpoint's lines of ``verify --all``: each problem, then the verdict."""
    for problem in report.problems:
        line = Text.assemble(("FAILED", "bold red"))
        line.append(f" checkpoint: {problem}")
        out.print(line)
    c = report.checkpoint
    line = Text.assemble(
        ("OK", "bold green") if report.ok else ("FAILED", "bold red"),
        f" checkpoint {path} ({c.tree_size} leaves, root {c.root_hash.hex()[:16]}…, "
        f"signed {_when(c.timestamp_ms)} by {fingerprint(c.public_key)}): ",
    )
    if report.ok:
        tournaments = f" and {report.tournaments} tournaments" if report.tournaments else ""
        line.append(
            f"the store reproduces its root, and its {report.matches} matches{tournaments} "
            "still give their logged creation and end"
        )
    else:
        line.append(f"{len(report.problems)} problem(s): the store is not the one it signed")
    out.print(line)


def _when(timestamp_ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp_ms / 1000))
