"""What a judge's pages show beside the match: race evidence and the verification result.

Both come from the tools a judge runs at a terminal, ``explain``'s reading of a race and
``verify``'s checks, so a page never says more, or other, than they say. They are
computed when the page is made; the page itself only shows them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from domain.kernel.views import Viewer
from replay.audit import verify_records
from replay.explain import race_explanations, refusals_object
from replay.refusal_check import check_refusals
from replay.refusals import Refusals, kept_refusals
from replay.refused_grabs import has_refused_grabs, with_refused_all
from replay.source import Loaded
from replay.store import Record, open_arena
from replay.verifying import origin_records, report_object


def race_pages(records: list[Record], refusals: Refusals | None) -> dict[int, dict[str, Any]]:
    """``explain --json``'s reading at every grab event of the match (a race's deciding
    event, each late or wrong grab), by version: its title, rules, facts and every
    contender with its receive stamp, gap and reaction time, the refused grabs of the
    race among them (``refusals`` None: not in the evidence, which ``refusals`` in each
    says). Every race is read once, with one replay of the match for all
    (:func:`replay.explain.race_explanations`). The one place the pages ask ``explain``."""
    explanations = race_explanations(records)
    if has_refused_grabs(refusals):
        races = list({e.race.decided: e.race for e in explanations.values() if e.race}.values())
        merged = with_refused_all(races, refusals, records, Viewer.referee())
        by_decided = {race.decided: race for race in merged}
        explanations = {
            v: dataclasses.replace(e, race=by_decided[e.race.decided]) if e.race else e
            for v, e in explanations.items()
        }
    shown = refusals_object(refusals)
    return {v: {**e.to_dict(), "refusals": shown} for v, e in explanations.items()}


def verification(db: str, loaded: Loaded) -> dict[str, Any]:
    """``verify --json``'s object for the match as loaded: each check (chain, signature,
    seed commitment, random draws, spell reveals) with its status and detail. A fork in
    the store is compared with its origin there, as ``verify`` does."""
    origin = None
    if loaded.source == "store":
        with open_arena(db) as arena:
            origin = origin_records(arena, loaded.records)
    report = verify_records(loaded.records, origin=origin)
    where = "store" if loaded.source == "store" else "bundle"
    check_refusals(report, loaded.records, kept_refusals(db, loaded), where)
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
