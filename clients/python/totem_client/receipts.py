"""The newest signed receipt of each match a client was answered for.

Every answer to a command (``ActResponse``, ``PlayResponse.applied``) carries the
server's receipt for the match's version and chain head (docs/audit.md, "Receipts"). A
player who keeps the newest one can later prove that a store, or a bundle, holds at least
that version with that history: ``totem-replay verify MATCH --receipt FILE``. With a
directory, each newer receipt is written to ``<dir>/<match id>.receipt.json`` at once, in
the receipt file format below, replacing the older one.

The file is UTF-8 JSON, one object: ``format`` (``"totem-arena receipt v1"``),
``match_id`` (canonical text), ``version`` and ``issued_at_ms`` (integers),
``head_commitment`` (64 hex digits), ``signature`` (128) and ``public_key`` (64).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from totem.v1 import match_service_pb2

Receipt = match_service_pb2.Receipt
log = logging.getLogger(__name__)

#: The value of a receipt file's ``format``.
FILE_FORMAT = "totem-arena receipt v1"
#: A receipt file's name ends so: ``<match id>.receipt.json``.
FILE_SUFFIX = ".receipt.json"


def receipt_object(receipt: Receipt) -> dict[str, Any]:
    """A receipt as its file holds it."""
    return {
        "format": FILE_FORMAT,
        "match_id": receipt.match_id,
        "version": receipt.version,
        "head_commitment": receipt.head_commitment.hex(),
        "issued_at_ms": receipt.issued_at_ms,
        "signature": receipt.signature.hex(),
        "public_key": receipt.public_key.hex(),
    }


def write_receipt(receipt: Receipt, path: str | Path) -> Path:
    """Write ``receipt`` to ``path`` in the receipt file format; whole or not at all (a
    crash never leaves half a file where the older receipt was)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(receipt_object(receipt), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def newer(receipt: Receipt, than: Receipt | None) -> bool:
    """Whether ``receipt`` is for a later version than ``than`` (or, at the same version,
    signed later)."""
    if than is None:
        return True
    return (receipt.version, receipt.issued_at_ms) > (than.version, than.issued_at_ms)


class Receipts:
    """The newest receipt per match; written to ``directory`` as it comes, if given."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = None if directory is None else Path(directory)
        #: Why the last receipt could not be written to :attr:`directory`, if it could not
        #: (it is kept in memory all the same, and the next is tried again).
        self.write_error: OSError | None = None
        self._newest: dict[str, Receipt] = {}

    def keep(self, receipt: Receipt) -> bool:
        """Keep ``receipt`` if it is the match's newest; whether it was."""
        if not receipt.match_id or not newer(receipt, self._newest.get(receipt.match_id)):
            return False
        self._newest[receipt.match_id] = receipt
        if self.directory is not None:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                write_receipt(receipt, self.path(receipt.match_id))
            except OSError as error:
                # The command was applied all the same: its answer must reach the caller.
                self.write_error = error
                log.warning("receipt of match %s not written: %s", receipt.match_id, error)
        return True

    def newest(self, match_id: str) -> Receipt | None:
        """The newest receipt kept for ``match_id``, if any."""
        return self._newest.get(match_id)

    def path(self, match_id: str) -> Path:
        """Where the receipt of ``match_id`` is written (in :attr:`directory`)."""
        if self.directory is None:
            raise ValueError("these receipts are kept in memory only: no directory")
        return self.directory / f"{match_id}{FILE_SUFFIX}"

    def __iter__(self) -> Iterator[Receipt]:
        return iter(self._newest.values())

    def __len__(self) -> int:
        return len(self._newest)
