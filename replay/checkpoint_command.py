"""``totem-replay checkpoint``: sign a checkpoint of the store's transparency log, prove
two checkpoints consistent, and prove one match against a checkpoint (its inclusion
proofs), for a judge who has only the match's bundle and the published checkpoint.

The checks themselves are :mod:`replay.checkpoints` and :mod:`replay.inclusion`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rich.text import Text

from domain.kernel import merkle
from domain.kernel.translog import Checkpoint, checkpoint_message
from replay import format as fmt
from replay.checkpoints import read_checkpoint, store_leaves
from replay.inclusion import check_inclusion, proof_json, proofs_from_store, read_proofs
from replay.source import load
from replay.store import ReplayError, open_arena, resolve_match
from storage.keys import fingerprint, public_bytes


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


@checkpoint.command("prove")
@click.argument("match_text", metavar="MATCH")
@click.option(
    "--checkpoint",
    "checkpoint_file",
    metavar="FILE",
    required=True,
    help="The checkpoint the match is to be proven against.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the inclusion proofs (JSON) to this file.",
)
@click.pass_context
def prove(ctx: click.Context, match_text: str, checkpoint_file: str, output: Path) -> None:
    """Write the inclusion proofs of MATCH's leaves (its creation, and its end if logged
    before the checkpoint) in the checkpoint's tree, from the store's log. With them, the
    match's bundle and the checkpoint, `checkpoint included` needs no store."""
    held = read_checkpoint(checkpoint_file)
    with open_arena(ctx.obj.db) as arena:
        match_id = resolve_match(arena, match_text)
        proofs = proofs_from_store(store_leaves(arena), held, match_id)
    output.write_text(proof_json(match_id, held, proofs) + "\n")
    click.echo(
        f"{len(proofs)} inclusion proof(s) of match {match_id} in {checkpoint_file} "
        f"({held.tree_size} leaves) written to {output}",
        err=True,
    )


@checkpoint.command("included")
@click.argument("match_text", metavar="MATCH")
@click.option(
    "--checkpoint",
    "checkpoint_file",
    metavar="FILE",
    required=True,
    help="The checkpoint, as published (kept outside the store).",
)
@click.option(
    "--proof",
    "proof_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="The match's inclusion proofs, from `checkpoint prove`.",
)
@click.option(
    "--key",
    metavar="HEX|FILE",
    help="The server's public key, obtained outside the store: the checkpoint must be "
    "signed by it.",
)
@click.pass_context
def included(
    ctx: click.Context,
    match_text: str,
    checkpoint_file: str,
    proof_file: Path,
    key: str | None,
) -> None:
    """Check that MATCH (a bundle, or a match of the store) is the match the checkpoint
    logged: its leaves, recomputed from its own events, are in the checkpoint's tree at
    the places the proofs give. Catches a bundle of another match, a replaced match,
    and one cut before the end the log recorded.

    Exit status 0 when every leaf is proven; 1 when one is not.
    """
    from replay.verifying import expected_key

    held = read_checkpoint(checkpoint_file, expected_key(key))
    loaded = load(ctx.obj.db, match_text)
    try:
        text = proof_file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayError(f"cannot read the proof file {proof_file}: {exc}") from exc
    holds, fails = check_inclusion(loaded.records, held, read_proofs(text, loaded.match_id, held))
    out = fmt.console()
    for line in fails:
        out.print(Text.assemble(("FAILED", "bold red"), f" {line}"))
    for line in holds:
        out.print(Text.assemble(("OK", "bold green"), f" {line}"))
    verdict = Text.assemble(
        ("FAILED", "bold red") if fails else ("OK", "bold green"),
        f" match {loaded.match_id} ({loaded.source}) against {checkpoint_file} "
        f"({held.tree_size} leaves, signed by {fingerprint(held.public_key)}): ",
        "not the match logged" if fails else "the match logged",
    )
    out.print(verdict)
    if fails:
        ctx.exit(1)
