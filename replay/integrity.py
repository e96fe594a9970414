"""The warning of every command that shows a match's evidence: the match fails ``verify``.

``show``, ``events``, ``at``, ``step``, ``explain`` and ``export`` replay what is stored,
and a forged event replays like a true one. So after printing, each checks the match as
``verify MATCH`` does without outside values (the chain, the signature against the key
the match records, the seed and the draws, and what the bundle's header or the store
records beside the events, :mod:`replay.claims`, and the refused commands kept beside
them, :mod:`replay.refusal_check`); when a check fails it prints one
warning on standard error naming the first bad version, and exits with status
:data:`EXIT_BROKEN`, as ``verify`` does. The check costs about three replays of the
match: the command has already read its events, and only the origin of a fork is read
again.
"""

from __future__ import annotations

import click

from replay.audit import Report, verify_records
from replay.claims import check_claims
from replay.refusal_check import check_refusals
from replay.refusals import kept_refusals
from replay.source import Loaded
from replay.store import open_arena, read_records
from replay.verifying import origin_records

#: The exit status of a command whose match fails verification, as ``verify``'s.
EXIT_BROKEN = 1


def check(db: str, loaded: Loaded) -> Report:
    """``verify``'s report on the loaded match, without outside values."""
    records, origin = loaded.records, None
    if loaded.source == "store":
        with open_arena(db) as arena:
            if not records or records[-1].version < loaded.last:
                records = read_records(arena, loaded.match_id)  # ``at``: read up to VERSION
            origin = origin_records(arena, records)
    report = verify_records(records, origin=origin)
    if loaded.claims is not None:
        check_claims(loaded.claims, records, report)
    where = "store" if loaded.source == "store" else "bundle"
    check_refusals(report, records, kept_refusals(db, loaded), where)
    return report


def warn_if_broken(db: str, loaded: Loaded) -> None:
    """Call once the evidence is printed: warn and exit :data:`EXIT_BROKEN` if the match
    fails verification; return quietly if it holds."""
    report = check(db, loaded)
    if report.ok:
        return
    bad = report.first_bad_version
    click.echo(
        f"warning: match {loaded.match_id} fails verification at version {bad}: "
        f"{'; '.join(report.reasons_at(bad))}. What is shown above may be forged: "
        "`totem-replay verify` says more.",
        err=True,
    )
    click.get_current_context().exit(EXIT_BROKEN)
