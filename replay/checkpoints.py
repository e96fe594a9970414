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

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import click
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rich.text import Text

from domain.kernel import merkle
from domain.kernel.chain import stored_event_digest
from domain.kernel.match import is_final
from domain.kernel.randomness import commitment
from domain.kernel.translog import (
    CREATED,
    Checkpoint,
    CheckpointError,
    Leaf,
    LeafLogged,
    checkpoint_message,
)
from replay import format as fmt
from replay.store import ReplayError, logged_matches, open_arena
from server.application import Arena
from server.keys import fingerprint, public_bytes
from server.keys import verify as verify_signature


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
    leaves = []
    try:
        for index, logged in enumerate(arena.logged_leaves()):
            if not isinstance(logged, LeafLogged) or logged.originator_version != index + 1:
                raise ReplayError(f"the store's transparency log has no leaf {index}: it was cut")
            leaves.append(logged.leaf())
    except ReplayError:
        raise
    except Exception as exc:
        raise ReplayError(f"cannot read the store's transparency log: {exc}") from exc
    return leaves


@dataclass
class CheckpointReport:
    """What holding the store to one checkpoint found."""

    checkpoint: Checkpoint
    store_size: int
    root_ok: bool
    matches: int = 0
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
            "problems": list(self.problems),
        }


def check_store(arena: Arena, checkpoint: Checkpoint) -> CheckpointReport:
    """Hold the store to ``checkpoint`` (see the module's docstring)."""
    leaves = store_leaves(arena)
    size = checkpoint.tree_size
    report = CheckpointReport(checkpoint, len(leaves), root_ok=False)
    if len(leaves) < size:
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
    report.matches = len({leaf.match_id for leaf in covered})
    unlisted: set[UUID] = set()
    for index, leaf in enumerate(covered):
        problem = leaf_problem(arena, leaf)
        if problem is not None:
            report.problems.append(f"leaf {index}, {leaf.describe()}: {problem}")
        elif leaf.match_id not in listed and leaf.match_id not in unlisted:
            unlisted.add(leaf.match_id)
            report.problems.append(
                f"leaf {index}: match {leaf.match_id} is logged but missing from the list "
                "of matches (its MatchLogged entry was deleted)"
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
            return "the match is no longer in the store (deleted)"
        return (
            f"the store holds only {last[0].originator_version} events, the log says it "
            f"ended at version {leaf.version} (the match was truncated)"
        )
    try:
        event = arena.mapper.to_domain_event(stored[0])
    except Exception as exc:
        return f"its event at version {leaf.version} cannot be read ({exc})"
    digest = stored_event_digest(event)
    if leaf.kind == CREATED:
        seed = getattr(event, "seed", "")
        try:
            seed_commitment = commitment(bytes.fromhex(seed))
        except (TypeError, ValueError):
            seed_commitment = ""
        if digest != leaf.digest or seed_commitment != leaf.seed_commitment:
            return (
                f"the stored first event is not the one logged (digest {digest[:16]}…, "
                f"logged {leaf.digest[:16]}…): the match was replaced"
            )
        return None
    if not is_final(event):
        return (
            f"the event at version {leaf.version} is {type(event).__name__}, not the "
            "logged MatchEnded: the match was rewritten"
        )
    signature = getattr(event, "signature", "") or ""
    if digest != leaf.digest or signature.lower() != leaf.signature:
        return (
            f"its MatchEnded is not the one logged (match digest {digest[:16]}…, logged "
            f"{leaf.digest[:16]}…): the match was replaced or re-signed"
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
        line.append(
            f"the store reproduces its root, and its {report.matches} matches still give "
            "their logged creation and end"
        )
    else:
        line.append(f"{len(report.problems)} problem(s): the store is not the one it signed")
    out.print(line)


def _when(timestamp_ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp_ms / 1000))


# ---- the command --------------------------------------------------------------------


@click.group("checkpoint")
def checkpoint() -> None:
    """Checkpoints of the store's transparency log of matches: sign one, or prove that
    two are consistent (the later log extends the earlier)."""


@checkpoint.command("sign")
@click.option(
    "--key-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="The server's private key (PEM), as `totem serve --key-file` uses it.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the checkpoint (JSON) to this file.",
)
@click.pass_context
def sign(ctx: click.Context, key_file: Path, output: Path) -> None:
    """Sign a checkpoint of the log as the store holds it now, with the server's key,
    without a running server (`totem checkpoint` asks a running one)."""
    private = _private_key(key_file)
    with open_arena(ctx.obj.db) as arena:
        leaves = store_leaves(arena)
    root = merkle.root([leaf.hash() for leaf in leaves])
    now_ms = time.time_ns() // 1_000_000
    made = Checkpoint(
        tree_size=len(leaves),
        root_hash=root,
        timestamp_ms=now_ms,
        public_key=public_bytes(private.public_key()),
        signature=private.sign(checkpoint_message(len(leaves), root, now_ms)),
    )
    output.write_text(made.to_json() + "\n")
    click.echo(
        f"checkpoint: {made.tree_size} leaves, root {root.hex()}, signed by "
        f"{fingerprint(made.public_key)}",
        err=True,
    )


def _private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise ReplayError(f"--key-file {path}: not an unencrypted PEM private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ReplayError(f"--key-file {path}: a {type(key).__name__}, not an Ed25519 key")
    return key


@checkpoint.command("consistency")
@click.argument("old", type=click.Path(exists=True, dir_okay=False))
@click.argument("new", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--key",
    metavar="HEX|FILE",
    help="The server's public key, obtained outside the store: both checkpoints must be "
    "signed by it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.pass_context
def consistency(ctx: click.Context, old: str, new: str, key: str | None, as_json: bool) -> None:
    """Prove that the log of checkpoint NEW extends that of OLD (RFC 9162 consistency
    proof, computed from the store's log and checked against both signed roots).

    Exit status 0 when consistent; 1 when not (one of them was signed over a log that
    was later rewritten, or the store is not theirs).
    """
    from replay.verifying import expected_key

    public_key = expected_key(key)
    first, second = read_checkpoint(old, public_key), read_checkpoint(new, public_key)
    if first.public_key != second.public_key:
        raise ReplayError(
            f"{old} and {new} are signed by different keys ({fingerprint(first.public_key)}, "
            f"{fingerprint(second.public_key)}): not checkpoints of one log"
        )
    if first.tree_size > second.tree_size:
        first, second, old, new = second, first, new, old
    with open_arena(ctx.obj.db) as arena:
        leaves = store_leaves(arena)
    hashes = [leaf.hash() for leaf in leaves]
    reason = None
    if len(hashes) < second.tree_size:
        reason = (
            f"the store's log holds {len(hashes)} leaves, fewer than {new}'s "
            f"{second.tree_size}: it cannot give the proof"
        )
    elif merkle.root(hashes[: second.tree_size]) != second.root_hash:
        reason = f"the store's log does not give {new}'s root at its size: the proof needs it"
    #: Whether the store could give a proof (else nothing is proven either way).
    provable = reason is None
    proof = (
        merkle.consistency_proof(first.tree_size, hashes[: second.tree_size]) if provable else []
    )
    ok = provable and merkle.verify_consistency(
        first.tree_size, second.tree_size, first.root_hash, second.root_hash, proof
    )
    if reason is None and not ok:
        reason = (
            f"the log of {second.tree_size} leaves signed in {new} does not begin with the "
            f"log of {first.tree_size} leaves signed in {old}: the log was rewritten between them"
        )
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": ok,
                    "old": {"file": old, "tree_size": first.tree_size},
                    "new": {"file": new, "tree_size": second.tree_size},
                    "proof": [p.hex() for p in proof],
                    "reason": reason,
                },
                indent=2,
            )
        )
    else:
        out = fmt.console()
        if ok:
            line = Text.assemble(("OK", "bold green"))
            line.append(
                f" {new} ({second.tree_size} leaves) extends {old} ({first.tree_size} "
                f"leaves): consistency proof of {len(proof)} hashes verified"
            )
        else:
            line = Text.assemble(("INCONSISTENT" if provable else "FAILED", "bold red"))
            line.append(f" {old} and {new}: {reason}")
        out.print(line)
    if not ok:
        ctx.exit(1)
