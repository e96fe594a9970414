"""``tournament show`` as text: one section after another, as a judge reads a sheet."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from replay.tournament_view import criterion, ruling_text, seats_of


def lines(d: dict[str, Any]) -> Iterator[str]:
    """The text of :func:`replay.tournament_view.describe`'s object, line by line."""
    yield f"Tournament {d['tournament_id']}: {d['title'] or '(no title)'}"
    yield f"Game:      {d['game']} {_options(d['options'])}".rstrip()
    dup = ", duplicate tables" if d["duplicate"] else ""
    yield f"Format:    {d['format']}, {d['table_size']} seats a table, {d['rounds']} rounds{dup}"
    yield "Tie-breaks: points, " + ", ".join(criterion(t) for t in d["tie_breaks"]) + ", seed"
    status = f"ended {d['ended_at']} UTC" if d["ended"] else "not ended"
    yield f"Status:    {status}; {d['events']} events, digest {d['digest']}"
    yield f"Seed:      commitment {d['seed_commitment']}" + (
        f", revealed {d['seed']}" if d["seed"] else ", not revealed yet"
    )
    if d["signed_by"]:
        yield f"Signed by: {d['signed_by']}"
    yield ""
    yield "Entrants (seed order):"
    for e in d["entrants"]:
        out = f" from round {e['withdrawn_from_round']}" if e["withdrawn_from_round"] else ""
        yield f"  {e['seed']:>3}. {e['entrant']}" + (f"  (withdrawn{out})" if out else "")
    yield "Referees: " + (", ".join(d["referees"]) or "none")
    for rnd in d["rounds_played"]:
        yield ""
        yield from _round(rnd, d["rulings"])
    yield ""
    yield "Disputes:" if d["disputes"] else "Disputes: none"
    for x in d["disputes"]:
        ruled = f"ruling {x['ruling']}" if x["ruling"] else "OPEN"
        at = f"at version {x['version']}" if x["version"] else "its result"
        yield (
            f"  #{x['dispute']} by {x['entrant']}, round {x['round']} table {x['table']} "
            f"(match {x['match_id']}, {at}), {x['filed_at']} UTC: {x['text']!r} -> {ruled}"
        )
    yield "Rulings:" if d["rulings"] else "Rulings: none"
    for r in d["rulings"]:
        seats = seats_of(d, r["round"], r["table"])
        yield (
            f"  #{r['ruling']} on dispute {r['dispute']} (round {r['round']} table "
            f"{r['table']}), judge {r['judge']}, {r['at']} UTC: {ruling_text(r, seats)}"
        )
        yield f"      reason: {r['reason']}"
    yield ""
    yield from _standings(d)


def _options(options: dict[str, Any]) -> str:
    shown = [f"{k}={v}" for k, v in options.items() if not k.startswith("prearranged_")]
    return f"({', '.join(shown)})" if shown else ""


def _round(rnd: dict[str, Any], rulings: list[dict[str, Any]]) -> Iterator[str]:
    ended = f", ended {rnd['ended_at']} UTC" if rnd["ended_at"] else ", under way"
    yield f"Round {rnd['round']} (started {rnd['started_at']} UTC{ended})"
    if rnd["duplicate_seed"]:
        yield f"  duplicate seed {rnd['duplicate_seed']}"
    for t in rnd["tables"]:
        yield f"  table {t['table']}: {' - '.join(t['seats'])}   [{t['reason']}]"
        yield f"    match {t['match_id']}" + (
            f" (version {t['version']}, digest {t['digest']})" if t["version"] else ""
        )
        yield f"    result: {table_result(t)}"
        for r in rulings:
            if (r["round"], r["table"]) == (rnd["round"], t["table"]) and r["kind"] != "stands":
                yield f"    ruling #{r['ruling']}: {ruling_text(r, t['seats'])}"
        for v in t["voided"]:
            yield (
                f"    voided by a replay: match {v['match_id']} (version {v['version']}, "
                f"digest {v['digest']})"
            )
    for b in rnd["byes"]:
        yield f"  bye: {b['entrant']}   [{b['reason']}]"


def table_result(t: dict[str, Any]) -> str:
    """A table's recorded result (as played; a ruling may have replaced it)."""
    if t["places"] is None:
        return "none yet"
    shown = [
        f"{e} {p}" + (" (forfeit)" if e in t["forfeited"] else "")
        for e, p in sorted(zip(t["seats"], t["places"], strict=True), key=lambda x: x[1])
    ]
    how = "" if t["version"] else " (decided without a match)"
    return ", ".join(shown) + how


def _standings(d: dict[str, Any]) -> Iterator[str]:
    title = "Final standings" if d["standings_final"] else "Standings so far (not final)"
    tie_breaks = [t.replace("-", "_") for t in d["tie_breaks"]]
    yield f"{title}:"
    head = "  rank  entrant               points  " + "  ".join(
        f"{criterion(t.replace('_', '-')):>16}" for t in tie_breaks
    )
    yield head + "  played  byes  separated from the next by"
    for row in d["standings"]:
        values = "  ".join(f"{_value(row.get(t)):>16}" for t in tie_breaks)
        mark = " (withdrawn)" if row["withdrawn"] else ""
        yield (
            f"  {row['rank']:>4}  {(row['entrant'] + mark)[:20]:<20}  {_value(row['points']):>6}  "
            f"{values}  {row['played']:>6}  {row['byes']:>4}  {criterion(row['separated_by'])}"
        ).rstrip()


def _value(value: object) -> str:
    return "-" if value is None else str(value)
