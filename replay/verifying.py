"""``totem-replay verify``: every check of one match, or of every match in the store.

Each check (the hash chain, the server's signature, the seed commitment, the random
draws, the spell reveals) is reported on its own line as OK, FAILED or not applicable;
the exit status is 0 only if none failed. ``--json`` gives the same as one stable object
(docs/replay.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from uuid import UUID

import click
from rich.console import Console
from rich.text import Text

from replay import format as fmt
from replay.audit import FAILED, OK, Report, checks_of, fork_origin, verify_records
from replay.checkpoints import check_store, read_checkpoint
from replay.checkpoints import print_report as print_checkpoint
from replay.claims import Claims, all_summaries, check_claims, logged_leaves, store_claims
from replay.receipts import check_receipt, read_receipt
from replay.refusal_check import check_refusals
from replay.refusals import kept_refusals, read_refusals
from replay.source import load
from replay.store import (
    Record,
    ReplayError,
    logged_matches,
    open_arena,
    read_records,
    stored_match_ids,
)
from storage.keys import KeyFileError, public_key_from_text
from storage.summaries import Summary

STYLES = {OK: "bold green", FAILED: "bold red"}
LABELS = {OK: "OK", FAILED: "FAILED"}


def _console() -> Console:
    return fmt.console()


def expected_key(text: str | None) -> bytes | None:
    """``--key``: 64 hex digits, PEM text, or a file holding either."""
    if text is None:
        return None
    path = Path(text)
    try:
        if path.is_file():
            text = path.read_text()
        return public_key_from_text(text)
    except (OSError, UnicodeDecodeError, KeyFileError) as exc:
        raise ReplayError(f"--key {text[:80]}: {exc}") from exc


def report_object(match_id: UUID, report: Report) -> dict[str, Any]:
    """The stable JSON shape of one match's verification (docs/replay.md)."""
    return {
        "match_id": str(match_id),
        "ok": report.ok,
        "events": report.events,
        "digest": report.digest,
        "first_bad_version": None if report.ok else report.first_bad_version,
        "checks": {
            c.name: {
                "status": c.status,
                "detail": c.detail,
                "problems": [
                    {"version": p.version, "reason": p.reason}
                    for p in sorted(report.problems, key=lambda p: p.version)
                    if p.check == c.name
                ],
            }
            for c in checks_of(report)
        },
        "notes": list(report.notes),
    }


def print_report(out: Console, match_id: UUID, report: Report) -> None:
    if report.ok:
        line = Text.assemble(("OK", "bold green"))
        line.append(
            f" match {match_id}: {report.events} events, chain intact from version 1 to "
            f"{report.events}, match digest {report.digest}"
        )
        out.print(line)
    else:
        bad = report.first_bad_version
        line = Text.assemble(("FAILED", "bold red"))
        line.append(f" match {match_id}: first bad version {bad}: ")
        line.append("; ".join(report.reasons_at(bad)))
        out.print(line)
        later = [p for p in report.problems if p.version != bad]
        for problem in sorted(later, key=lambda p: p.version):
            out.print(Text(f"  then version {problem.version}: {problem.reason}"))
    for check in checks_of(report):
        line = Text(f"  {check.name + ':':<17}")
        line.append(LABELS.get(check.status, "not applicable"), style=STYLES.get(check.status))
        line.append(f"  {check.detail}")
        out.print(line)
    for note in report.notes:
        out.print(Text(f"  {note}"))


@click.command(short_help="Check the chain, the signature, the seed and the random draws.")
@click.argument("match_text", metavar="[MATCH]", required=False)
@click.option("--all", "every", is_flag=True, help="Verify every match in the store.")
@click.option(
    "--commitment",
    metavar="HEX",
    help="The seed commitment published when the match was created: must be this match's.",
)
@click.option(
    "--digest",
    metavar="HEX",
    help="The match digest published (or signed) by the server: must be the last event's.",
)
@click.option(
    "--key",
    metavar="HEX|FILE",
    help="The server's public key, obtained outside the store (`totem server-key`): 64 hex "
    "digits, PEM, or a file holding either. An ended match must then be signed by it.",
)
@click.option(
    "--receipt",
    "receipt_file",
    metavar="FILE",
    help='A receipt the server signed for this match (docs/audit.md, "Receipts"): the '
    "store or bundle must hold at least its version, with the history it signed.",
)
@click.option(
    "--checkpoint",
    "checkpoint_file",
    metavar="FILE",
    help="With --all: a checkpoint of the transparency log kept outside the store "
    "(`totem checkpoint`). The store must reproduce its root, and every match it logged "
    "must still give its logged creation and end: catches a deleted, truncated or "
    "replaced match.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.pass_context
def verify(
    ctx: click.Context,
    match_text: str | None,
    every: bool,
    commitment: str | None,
    digest: str | None,
    key: str | None,
    receipt_file: str | None,
    checkpoint_file: str | None,
    as_json: bool,
) -> None:
    """Check a match: its hash chain, the server's signature, the seed commitment, the
    random draws and (Village) the spell reveals, each reported on its own. A fork's
    draws after its Forked event are re-derived from the fork's own seed. The refused
    commands kept beside the match (`refusals`): their log's chain, and every receive
    number held once by the events or a kept refusal, a failure naming the first bad
    receive number.

    With --receipt FILE, a receipt a player's client kept: the store or bundle must hold
    at least its version, with the history the server signed (truncation is caught).

    Exit status 0 when every check holds or does not apply; 1 when one fails, naming the
    first bad version. The events must also agree with what is recorded beside them:
    a bundle's header (match id, event count), or the store's log of matches, its
    summary of the match and its transparency log's leaves of the match (an ended match
    cut short, replaced or re-signed fails). --all checks every match in
    the store (MATCH is then omitted), those with events but no entry in the log and the
    entries with no events included, with a progress bar on stderr and a summary; with
    --checkpoint, it also holds the store to a checkpoint of its transparency log kept
    outside it.
    """
    if every == (match_text is not None):
        raise click.UsageError("give a MATCH, or --all for every match, not both")
    if every and (commitment or digest or receipt_file):
        raise click.UsageError(
            "--commitment, --digest and --receipt are values of one match: not with --all"
        )
    if checkpoint_file is not None and not every:
        raise click.UsageError("--checkpoint holds the whole store to a checkpoint: use --all")
    public_key = expected_key(key)
    receipt = None if receipt_file is None else read_receipt(receipt_file)
    db = ctx.obj.db
    if every:
        ok = _verify_all(db, public_key, as_json, checkpoint_file)
    else:
        assert match_text is not None
        loaded = load(db, match_text)
        match_id, records = loaded.match_id, loaded.records
        origin = None
        if loaded.source == "store":
            with open_arena(db) as arena:
                origin = origin_records(arena, records)
        report = verify_records(
            records,
            expected_commitment=commitment,
            expected_digest=digest,
            expected_key=public_key,
            origin=origin,
        )
        if loaded.claims is not None:
            check_claims(loaded.claims, records, report)
        check_refusals(report, records, kept_refusals(db, loaded), _where(loaded.source))
        if receipt is not None:
            where = "store" if loaded.source == "store" else "bundle"
            check_receipt(match_id, records, receipt, public_key, report, where)
        if as_json:
            click.echo(json.dumps(report_object(match_id, report), indent=2))
        else:
            print_report(_console(), match_id, report)
        ok = report.ok
    if not ok:
        ctx.exit(1)


def _verify_all(
    db: str, public_key: bytes | None, as_json: bool, checkpoint_file: str | None = None
) -> bool:
    """Verify every match of the store; print each failure and a summary. True if all
    hold. The matches are those of the log, then any other match that has events (its
    log entry was deleted), then any summary row of a match with neither. With a
    checkpoint, also hold the store to it (:mod:`replay.checkpoints`)."""
    out = _console()
    results: list[dict[str, Any]] = []
    held = None
    with open_arena(db) as arena:
        if checkpoint_file is not None:
            held = check_store(arena, read_checkpoint(checkpoint_file, public_key))
        # Events first, then summaries, then the logs: each is written with or before the
        # next, so a match created meanwhile by a running server is never half seen.
        stored = stored_match_ids(arena)
        summaries = all_summaries(arena)
        entries = logged_matches(arena)
        leaves, log_note = logged_leaves(arena)
        logged = {entry.match_id for entry in entries}
        unlogged = [m for m in stored if m not in logged]
        todo: list[tuple[UUID, int | None]] = [(e.match_id, e.originator_version) for e in entries]
        todo += [(match_id, None) for match_id in unlogged]
        for match_id, position in fmt.progress(todo, len(todo), "verifying"):
            claims = Claims(
                "the store",
                match_id=match_id,
                summary=(summaries or {}).get(match_id),
                summarised=None if summaries is None else match_id in summaries,
                logged=position is not None,
                position=position,
                leaves=leaves.get(match_id, ()),
                log_note=log_note,
            )
            results.append(_verify_one(arena, match_id, public_key, claims, match_id in stored))
        for match_id, row in (summaries or {}).items():
            if match_id not in logged and match_id not in stored:
                results.append(_lost(match_id, row))
    failed = [r for r in results if not r["ok"]]
    summary = {"matches": len(results), "ok": len(results) - len(failed), "failed": len(failed)}
    ok = not failed and (held is None or held.ok)
    if as_json:
        shown = {"ok": ok, "summary": summary, "matches": results}
        if held is not None:
            shown["checkpoint"] = held.as_json()
        click.echo(json.dumps(shown, indent=2))
        return ok
    for result in failed:
        line = Text.assemble(("FAILED", "bold red"))
        line.append(f" match {result['match_id']}: {_first_failure(result)}")
        out.print(line)
    line = Text.assemble(
        ("OK" if not failed else "FAILED", "bold green" if not failed else "bold red")
    )
    line.append(
        f" {summary['matches']} matches verified: {summary['ok']} OK, {summary['failed']} failed"
    )
    out.print(line)
    if held is not None and checkpoint_file is not None:
        print_checkpoint(out, held, checkpoint_file)
    return ok


def _lost(match_id: UUID, summary: Summary) -> dict[str, Any]:
    """A summary row whose match has neither events nor a log entry."""
    return {
        "match_id": str(match_id),
        "ok": False,
        "error": f"the store's summary of matches lists this match ({summary.game}, "
        f"{summary.version} events, status {summary.status}), but the store holds no event "
        "of it and its log has no entry for it: the match was deleted",
    }


def _verify_one(
    arena: Any, match_id: UUID, public_key: bytes | None, claims: Claims, seen: bool
) -> dict[str, Any]:
    """One match's report; ``seen``: whether its events were found when the store's
    events were listed (a match created since then is read all the same)."""
    try:
        records = read_records(arena, match_id)
    except ReplayError as exc:
        error = str(exc)
        if not seen:
            where = f" at position {claims.position}" if claims.position is not None else ""
            error = (
                f"the store's log of matches lists this match{where}, but the store holds "
                "no event of it: its events were deleted"
            )
        return {"match_id": str(match_id), "ok": False, "error": error}
    origin = origin_records(arena, records)
    report = verify_records(records, expected_key=public_key, origin=origin)
    check_claims(claims, records, report)
    try:
        check_refusals(report, records, read_refusals(arena, match_id))
    except ReplayError as exc:
        report.notes.append(f"the refused commands are not checked: {exc}")
    return report_object(match_id, report)


def verify_stored(
    arena: Any, match_id: UUID, expected_key: bytes | None = None
) -> tuple[list[Record], Report]:
    """A match of the store verified as ``verify MATCH`` verifies it (without outside
    values but the key): the chain, the signature, the seed and the draws, the store's
    records beside the events and the refused commands; with its records. For the
    matches a tournament's sheet lists (:mod:`replay.tournament_checks`). Raises
    ReplayError when the store holds no event of it."""
    claims = store_claims(arena, match_id)
    records = read_records(arena, match_id)
    report = verify_records(
        records, expected_key=expected_key, origin=origin_records(arena, records)
    )
    check_claims(claims, records, report)
    check_refusals(report, records, read_refusals(arena, match_id))
    return records, report


def _where(source: str) -> str:
    """How the refusals check names where the match was read: "store" or "bundle"."""
    return "store" if source == "store" else "bundle"


def origin_records(arena: Any, records: list[Record]) -> list[Record] | None:
    """For a fork, its origin's records up to the forked version, if this store holds
    them; else None (the carried history is then not compared)."""
    where = fork_origin(records)
    if where is None:
        return None
    try:
        return read_records(arena, UUID(where[0]), where[1])
    except (ReplayError, ValueError):
        return None


def _first_failure(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"unreadable: {result['error']}"
    for name, check in result["checks"].items():
        if check["status"] == FAILED:
            return f"{name}: {check['detail']}"
    return "failed"
