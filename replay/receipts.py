"""``verify --receipt FILE``: the store (or bundle) holds at least the version a server
receipt was signed for, with the history the server signed.

A receipt (docs/audit.md, "Receipts") is the server's Ed25519 signature over
:func:`domain.kernel.signing.receipt_message`: a match id, a version, a commitment to the
chain head at that version and the time. Players keep the newest their answers carried;
whoever holds the store cannot then remove the events after a receipt's version, nor
rewrite those before it, without the receipt failing, even with the server's key in hand
(re-signing the match does not change what the player kept). The check:

1. the file is a receipt (:func:`read_receipt`), of this match;
2. its key is the expected one (``--key``); without ``--key``, the key that signed the
   match's ``MatchEnded``, if it is signed; and its signature verifies by that key;
3. the records reach its version;
4. the commitment recomputed from the records (the seed of the first event, the digest
   recomputed from the event at that version) is the receipt's.

A failure is a problem at the receipt's version, under its own check, :data:`RECEIPT`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from domain.kernel.chain import stored_event_digest
from domain.kernel.signing import head_commitment, receipt_message
from replay.audit import Problem, Report
from replay.store import Record, ReplayError
from storage.keys import fingerprint
from storage.keys import verify as verify_signature

#: The check ``verify --receipt`` adds to a report.
RECEIPT = "receipt"
#: The value of a receipt file's ``format`` (clients/python/totem_client/receipts.py
#: writes it; clients/node/lib/receipts.js too).
FILE_FORMAT = "totem-arena receipt v1"
#: Each hex field of a receipt file and its length in bytes.
HEX_FIELDS = {"head_commitment": 32, "signature": 64, "public_key": 32}


@dataclass(frozen=True)
class Receipt:
    """A receipt as its file holds it."""

    match_id: UUID
    version: int
    head_commitment: bytes
    issued_at_ms: int
    signature: bytes
    public_key: bytes

    @property
    def issued_at(self) -> str:
        """When the server signed it, ISO 8601 in UTC, to the millisecond."""
        when = datetime.fromtimestamp(self.issued_at_ms / 1000, UTC)
        return when.isoformat(timespec="milliseconds")

    def message(self) -> bytes:
        return receipt_message(self.match_id, self.version, self.head_commitment, self.issued_at_ms)


def read_receipt(path: str | Path) -> Receipt:
    """The receipt in the file ``path``; a :class:`ReplayError` naming what is wrong."""
    path = Path(path)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReplayError(f"--receipt {path}: cannot read it: {exc.strerror}") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReplayError(f"--receipt {path}: not a receipt file (JSON expected): {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        raise ReplayError(
            f"--receipt {path}: not a receipt file: its format is not {FILE_FORMAT!r}"
        )
    try:
        match_id = UUID(str(data["match_id"]))
        version, issued = data["version"], data["issued_at_ms"]
        if not (type(version) is int and version >= 1 and type(issued) is int and issued >= 0):
            raise ValueError("version must be a whole number from 1, issued_at_ms from 0")
        raw = {name: bytes.fromhex(str(data[name])) for name in HEX_FIELDS}
        for name, size in HEX_FIELDS.items():
            if len(raw[name]) != size:
                raise ValueError(f"{name} must be {size} bytes ({2 * size} hex digits)")
    except KeyError as exc:
        raise ReplayError(f"--receipt {path}: the receipt has no {exc.args[0]}") from exc
    except ValueError as exc:
        raise ReplayError(f"--receipt {path}: the receipt is malformed: {exc}") from exc
    return Receipt(
        match_id, version, raw["head_commitment"], issued, raw["signature"], raw["public_key"]
    )


def check_receipt(
    match_id: UUID,
    records: list[Record],
    receipt: Receipt,
    expected_key: bytes | None,
    report: Report,
    source: str = "store",
) -> None:
    """Add the receipt's check to ``report`` (see the module docstring). ``source`` says
    where the records were read, for the messages: ``store`` or ``bundle FILE``."""
    report.added.append(RECEIPT)
    at = receipt.version
    signed = f"the server's receipt for version {at} (signed {receipt.issued_at})"

    def fail(reason: str) -> None:
        report.problems.append(Problem(at, f"{signed}: {reason}", RECEIPT))

    if receipt.match_id != match_id:
        fail(f"it is a receipt of match {receipt.match_id}, not of {match_id}")
        return
    key, against = receipt.public_key, "the receipt's own key"
    ended_key = _ended_key(records)
    if expected_key is not None:
        against = "the expected key"
        if key != expected_key:
            fail(
                f"signed by key {fingerprint(key)}, not by the expected key "
                f"{fingerprint(expected_key)}"
            )
            return
    elif ended_key is not None:
        against = "the key that signed MatchEnded"
        if key != ended_key:
            fail(
                f"signed by key {fingerprint(key)}, but the match's MatchEnded by "
                f"{fingerprint(ended_key)}: one of them is not the server's (give --key)"
            )
            return
    if not verify_signature(key, receipt.signature, receipt.message()):
        fail(
            f"its signature is not valid by key {fingerprint(key)}: the receipt was forged "
            "or altered"
        )
        return
    stored = {r.version: r for r in records}
    last = max(stored, default=0)
    record = stored.get(at)
    if last < at:
        fail(
            f"the {source} holds only {last} events of the match: events after version "
            f"{last} were removed"
        )
        return
    if record is None or record.event is None:
        fail(f"the {source}'s event at version {at} is missing or unreadable")
        return
    first = stored.get(1)
    try:
        seed = bytes.fromhex(str(vars(first.event)["seed"])) if first and first.event else b""
        digest = stored_event_digest(record.event)
    except (KeyError, TypeError, ValueError) as exc:
        fail(f"the {source}'s events give no seed or digest to check it with: {exc}")
        return
    if not seed or head_commitment(seed, match_id, at, digest) != receipt.head_commitment:
        fail(
            f"the {source}'s events 1 to {at} are not the history the server signed: "
            "they were changed, or the match was replaced"
        )
        return
    report.found[RECEIPT] = (
        f"{signed} by {fingerprint(key)} ({against}) matches the {source}'s events 1 to "
        f"{at}, of {last}"
    )
    if expected_key is None and ended_key is None:
        report.notes.append(
            "the receipt's key was not compared with the server's: give --key (`totem server-key`)"
        )


def _ended_key(records: list[Record]) -> bytes | None:
    """The public key recorded in a signed ``MatchEnded``, if the records hold one."""
    for record in records:
        if record.event is not None and type(record.event).__name__ == "MatchEnded":
            try:
                return bytes.fromhex(str(vars(record.event).get("public_key") or "")) or None
            except ValueError:
                return None
    return None
