"""What ``tournament show`` and the HTML result sheet say of a tournament, from its
events alone: one plain object, rendered as text (:mod:`replay.tournament_show`), as
JSON (``show --json``) and as HTML (:mod:`replay.tournament_html`).

The standings are the sheet's once the tournament has ended (its ``TournamentEnded``,
which ``tournament verify`` holds to the results and rulings), and before that the
ones the results and rulings so far give (TO-10.4). No secret is shown: the seed and
the rounds' duplicate seeds only once the final event has revealed them, and never a
token's hash.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from domain.tournament import Tournament
from domain.tournament import sheet as sheets
from domain.tournament.aggregate import TableState, is_final, standing_fields
from domain.tournament.verdicts import RulingKind

#: How each criterion of the standings is named to a reader.
CRITERIA = {
    "points": "points",
    "buchholz": "Buchholz",
    "median-buchholz": "median Buchholz",
    "sonneborn-berger": "Sonneborn-Berger",
    "head-to-head": "head-to-head",
    "seed": "seed",
}


def when(ms: int | None) -> str | None:
    """Wall milliseconds as UTC text, to the second."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def describe(tournament_id: object, events: list[Any]) -> dict[str, Any]:
    """The whole description (keys in docs/tournaments.md, "Verifying a result sheet")."""
    tournament = sheets.replay(events)
    ended = is_final(events[-1])
    final = vars(events[-1]) if ended else None
    rows = final["standings"] if final else [standing_fields(r) for r in tournament.standings()]
    return {
        "tournament_id": str(tournament_id),
        "title": tournament.title,
        "game": tournament.game,
        "options": dict(tournament.options),
        "format": tournament.format.value,
        "table_size": tournament.table_size,
        "rounds": tournament.total_rounds(),
        "duplicate": tournament.duplicate,
        "tie_breaks": [t.value for t in tournament.tie_breaks],
        "ended": ended,
        "ended_at": when(final["at_ms"]) if final else None,
        "events": len(events),
        "digest": tournament.digest,
        "seed_commitment": tournament.seed_commitment,
        "seed": final["seed"] if final else None,
        "signed_by": (final.get("public_key") or None) if final else None,
        "entrants": [
            {
                "seed": n,
                "entrant": e,
                "withdrawn_from_round": tournament.withdrawn.get(e),
            }
            for n, e in enumerate(tournament.field() or tournament.registered, start=1)
        ],
        "referees": list(tournament.referees),
        "rounds_played": [_round(tournament, s.number, ended) for s in tournament.round_states],
        "disputes": [
            {
                "dispute": d.number,
                "entrant": d.entrant,
                "round": d.round,
                "table": d.table,
                "match_id": d.match_id,
                "version": d.version,
                "text": d.text,
                "filed_at": when(d.filed_ms),
                "ruling": d.ruled,
            }
            for d in tournament.disputes
        ],
        "rulings": [r.to_dict() | {"at": when(r.at_ms)} for r in tournament.ruling_records],
        "standings_final": ended,
        "standings": [dict(row) for row in rows],
    }


def _round(tournament: Tournament, number: int, ended: bool) -> dict[str, Any]:
    state = tournament.round_state(number)
    return {
        "round": number,
        "started_at": when(state.started_ms),
        "ended_at": when(state.ended_ms),
        "dispute_deadline": when(state.dispute_deadline_ms),
        "duplicate_seed": (state.duplicate_seed or None) if ended else None,
        "tables": [_table(t) for t in state.tables],
        "byes": [{"entrant": b.entrant, "reason": b.reason} for b in state.byes],
    }


def _table(table: TableState) -> dict[str, Any]:
    result = table.result
    return {
        "table": table.number,
        "seats": list(table.seats),
        "reason": table.reason,
        "match_id": table.match_id,
        "digest": table.digest,
        "version": table.version,
        "places": list(result.places) if result else None,
        "forfeited": sorted(result.forfeited) if result else list(table.forfeits),
        "voided": [dict(v) for v in table.voided],
    }


def criterion(name: str | None) -> str:
    return CRITERIA.get(name or "", name or "")


def ruling_text(ruling: dict[str, Any], seats: list[str] | None = None) -> str:
    """What a ruling decided, in words."""
    kind = ruling["kind"]
    if kind == RulingKind.STANDS.value:
        return "the result stands"
    if kind == RulingKind.REPLACE.value:
        named = seats or [f"seat {i}" for i in range(len(ruling["places"]))]
        places = ", ".join(f"{e} {p}" for e, p in zip(named, ruling["places"], strict=False))
        forfeits = f"; forfeited: {', '.join(ruling['forfeited'])}" if ruling["forfeited"] else ""
        return f"the result is replaced: {places}{forfeits}"
    if kind == RulingKind.PENALTY.value:
        return f"penalty: {ruling['points']} point(s) off {ruling['entrant']}"
    if kind == RulingKind.REPLAY.value:
        return f"played again from version {ruling['version']}, as match {ruling['match_id']}"
    return str(kind)


def seats_of(described: dict[str, Any], round_number: int, table: int) -> list[str] | None:
    try:
        return list(described["rounds_played"][round_number - 1]["tables"][table - 1]["seats"])
    except (IndexError, KeyError):
        return None
