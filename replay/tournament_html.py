"""``tournament export --html``: the result sheet as one HTML page, readable anywhere.

Plain HTML and inline CSS, no script and nothing loaded from anywhere: it prints, it
can be mailed and archived, and it reads the same in a browser that runs no script
(as :mod:`replay.html_parts` writes a match page's verification). Every stored text (a
title, an entrant's name, a dispute, a ruling's reason) is escaped: shown, never obeyed.
It holds the standings with the tie-breaks named, every round's tables with their
reasons, results and match ids with digests, the disputes and rulings, and the
verification as ``tournament verify`` reported it when the page was made.
"""

from __future__ import annotations

from html import escape
from typing import Any

from replay.audit import FAILED, OK
from replay.html import fill
from replay.tournament_show import table_result
from replay.tournament_view import criterion, ruling_text, seats_of

STATUS_WORDS = {OK: "OK", FAILED: "FAILED"}


def e(value: object) -> str:
    """Any value as escaped HTML text (quotes too: safe in an attribute)."""
    return escape("" if value is None else str(value), quote=True)


def page(d: dict[str, Any], verification: dict[str, Any]) -> str:
    """The whole page for :func:`replay.tournament_view.describe`'s object ``d`` and
    ``tournament verify``'s JSON object."""
    title = f"Totem Arena result sheet: {d['title'] or d['tournament_id']}"
    return fill(
        TEMPLATE,
        TITLE=e(title),
        CSS=CSS,
        HEAD=_head(d),
        VERIFICATION=_verification(verification),
        STANDINGS=_standings(d),
        ROUNDS="".join(_round(r) for r in d["rounds_played"]),
        DISPUTES=_disputes(d),
    )


def _head(d: dict[str, Any]) -> str:
    rows = [
        ("Tournament", d["tournament_id"]),
        ("Game", d["game"]),
        ("Format", f"{d['format']}, {d['table_size']} seats a table, {d['rounds']} rounds"),
        ("Duplicate tables", "yes" if d["duplicate"] else "no"),
        ("Entrants", ", ".join(x["entrant"] for x in d["entrants"])),
        ("Referees", ", ".join(d["referees"]) or "none"),
        ("Status", f"ended {d['ended_at']} UTC" if d["ended"] else "not ended"),
        ("Events", d["events"]),
        ("Digest", d["digest"]),
        ("Seed commitment", d["seed_commitment"]),
        ("Seed", d["seed"] or "not revealed"),
        ("Signed by", d["signed_by"] or "not signed"),
    ]
    cells = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows)
    return f'<h1>{e(d["title"] or "Tournament")}</h1><table class="facts">{cells}</table>'


def _verification(report: dict[str, Any]) -> str:
    first = report.get("first_failure")
    if report["ok"]:
        verdict = f"OK tournament {report['tournament_id']}: every check holds"
    else:
        assert first is not None
        verdict = (
            f"FAILED tournament {report['tournament_id']}: {first['check']} at "
            f"{first['where']}: {first['reason']}"
        )
    rows = "".join(
        f'<tr data-check="{e(name)}" data-status="{e(c["status"])}"><th>{e(name)}</th>'
        f'<td class="status">{e(STATUS_WORDS.get(c["status"], "not applicable"))}</td>'
        f"<td>{e(c['detail'])}</td></tr>"
        for name, c in report["checks"].items()
    )
    return (
        f'<section id="verification" data-ok="{str(report["ok"]).lower()}">'
        "<h2>Verification when this page was made (<code>totem-replay tournament verify"
        f'</code>)</h2><p class="verdict">{e(verdict)}</p><table class="checks">{rows}</table>'
        "</section>"
    )


def _standings(d: dict[str, Any]) -> str:
    keys = [t.replace("-", "_") for t in d["tie_breaks"]]
    head = "".join(f"<th>{e(criterion(t))}</th>" for t in d["tie_breaks"])
    rows = []
    for row in d["standings"]:
        values = "".join(f"<td>{e(_value(row.get(k)))}</td>" for k in keys)
        mark = " (withdrawn)" if row["withdrawn"] else ""
        rows.append(
            f'<tr data-entrant="{e(row["entrant"])}"><td>{e(row["rank"])}</td>'
            f"<td>{e(row['entrant'] + mark)}</td><td>{e(row['points'])}</td>{values}"
            f"<td>{e(row['played'])}</td><td>{e(row['byes'])}</td>"
            f"<td>{e(criterion(row['separated_by']))}</td></tr>"
        )
    title = "Final standings" if d["standings_final"] else "Standings so far (not final)"
    named = ", ".join(criterion(t) for t in ["points", *d["tie_breaks"], "seed"])
    return (
        f'<section id="standings"><h2>{e(title)}</h2><p>Ordered by {e(named)}.</p>'
        '<table class="standings"><tr><th>rank</th><th>entrant</th><th>points</th>'
        f"{head}<th>played</th><th>byes</th><th>separated from the next by</th></tr>"
        f"{''.join(rows)}</table></section>"
    )


def _value(value: object) -> str:
    return "-" if value is None else str(value)


def _round(r: dict[str, Any]) -> str:
    tables = []
    for t in r["tables"]:
        voided = "".join(
            f"<li>voided by a replay: match <code>{e(v['match_id'])}</code>, version "
            f"{e(v['version'])}, digest <code>{e(v['digest'])}</code></li>"
            for v in t["voided"]
        )
        digest = (
            f"version {e(t['version'])}, digest <code>{e(t['digest'])}</code>"
            if t["version"]
            else "no match digest"
        )
        tables.append(
            f'<tr data-match="{e(t["match_id"])}"><td>{e(t["table"])}</td>'
            f"<td>{e(' - '.join(t['seats']))}</td><td>{e(t['reason'])}</td>"
            f"<td>{e(table_result(t))}</td><td><code>{e(t['match_id'])}</code><br>{digest}"
            + (f"<ul>{voided}</ul>" if voided else "")
            + "</td></tr>"
        )
    byes = "".join(f"<li>{e(b['entrant'])}: {e(b['reason'])}</li>" for b in r["byes"])
    seed = r["duplicate_seed"]
    seed = f"<p>Duplicate seed <code>{e(seed)}</code></p>" if seed else ""
    return (
        f'<section class="round" id="round-{e(r["round"])}"><h2>Round {e(r["round"])}</h2>'
        f"<p>Started {e(r['started_at'])} UTC"
        + (f", ended {e(r['ended_at'])} UTC" if r["ended_at"] else ", under way")
        + f"</p>{seed}"
        '<table class="tables"><tr><th>table</th><th>seats</th><th>why they sit together</th>'
        f"<th>result</th><th>match</th></tr>{''.join(tables)}</table>"
        + (f"<p>Byes:</p><ul>{byes}</ul>" if byes else "")
        + "</section>"
    )


def _disputes(d: dict[str, Any]) -> str:
    disputes = "".join(
        f'<li data-dispute="{e(x["dispute"])}">#{e(x["dispute"])} by {e(x["entrant"])}, round '
        f"{e(x['round'])} table {e(x['table'])}, match <code>{e(x['match_id'])}</code> at "
        f"version {e(x['version'])}: &#x201C;{e(x['text'])}&#x201D; "
        + (f"(ruling {e(x['ruling'])})" if x["ruling"] else "(open)")
        + "</li>"
        for x in d["disputes"]
    )
    rulings = "".join(
        f'<li data-ruling="{e(r["ruling"])}">#{e(r["ruling"])} on dispute {e(r["dispute"])}, '
        f"judge <strong>{e(r['judge'])}</strong>, {e(r['at'])} UTC: "
        f"{e(ruling_text(r, seats_of(d, r['round'], r['table'])))}. Reason: "
        f"&#x201C;{e(r['reason'])}&#x201D;</li>"
        for r in d["rulings"]
    )
    return (
        '<section id="disputes"><h2>Disputes</h2>'
        + (f"<ul>{disputes}</ul>" if disputes else "<p>None.</p>")
        + '</section><section id="rulings"><h2>Rulings</h2>'
        + (f"<ul>{rulings}</ul>" if rulings else "<p>None.</p>")
        + "</section>"
    )


TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>@CSS@</style>
</head>
<body>
<header>@HEAD@</header>
@VERIFICATION@
@STANDINGS@
@ROUNDS@
@DISPUTES@
</body>
</html>
"""

CSS = """
body { font-family: system-ui, sans-serif; margin: 1em; background: #f6f4ee; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.2em; }
table { border-collapse: collapse; margin: .3em 0; }
th, td { border: 1px solid #bbb; padding: .2em .5em; text-align: left; vertical-align: top; }
code { font-size: .85em; word-break: break-all; }
#verification[data-ok="true"] .verdict { color: #0a6b2b; font-weight: bold; }
#verification[data-ok="false"] .verdict { color: #a40000; font-weight: bold; }
tr[data-status="failed"] .status { color: #a40000; font-weight: bold; }
tr[data-status="ok"] .status { color: #0a6b2b; }
@media print { body { background: #fff; } }
"""
