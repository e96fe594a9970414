"""The parts of a judge's pages written in HTML when the page is made: the verification
result (as ``verify`` reports it), a race's evidence (as ``explain`` reads it, a tie
whose winner was drawn included, JS-4.2a) and the server's signature.

They are plain HTML, not drawn by a script, so that they print, and read the same in a
browser that runs no script. Every stored text is escaped: a player's name is shown,
never obeyed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any

from replay import format as fmt
from replay.audit import FAILED, OK

STATUS_WORDS = {OK: "OK", FAILED: "FAILED"}


def verification_html(report: dict[str, Any], when: str) -> str:
    """``verify``'s verdict and each of its checks (``report``: its ``--json`` object),
    saying when it was computed (``when``: for instance "when this page was made")."""
    match_id, events, digest = report["match_id"], report["events"], report["digest"]
    if report["ok"]:
        verdict = (
            f"OK match {match_id}: {events} events, chain intact from version 1 to "
            f"{events}, match digest {digest}"
        )
    else:
        bad = report["first_bad_version"]
        reasons = [
            p["reason"]
            for check in report["checks"].values()
            for p in check["problems"]
            if p["version"] == bad
        ]
        verdict = f"FAILED match {match_id}: first bad version {bad}: " + "; ".join(reasons)
    status = OK if report["ok"] else FAILED
    rows = []
    for name, check in report["checks"].items():
        word = STATUS_WORDS.get(check["status"], "not applicable")
        rows.append(
            f'<tr data-check="{escape(name)}" data-status="{escape(check["status"])}">'
            f"<th>{escape(name)}</th>"
            f'<td class="status {escape(check["status"].replace(" ", "-"))}">{word}</td>'
            f"<td>{escape(check['detail'])}</td></tr>"
        )
    notes = "".join(f"<li>{escape(note)}</li>" for note in report["notes"])
    return (
        f'<section class="verification" id="verification" data-ok="{str(report["ok"]).lower()}">'
        f"<h2>Verification {escape(when)} (<code>totem-replay verify</code>)</h2>"
        f'<p class="verdict {status}">{escape(verdict)}</p>'
        f'<table class="checks">{"".join(rows)}</table>'
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
        + "</section>"
    )


def race_html(evidence: dict[str, Any]) -> str:
    """A race as ``explain`` reads it (``evidence``: its ``--json`` object): what decided
    it, the rules, the facts, and every contender in the order the match recorded them."""
    version = int(evidence["version"])
    facts = "".join(f"<li>{escape(str(fact))}</li>" for fact in evidence.get("facts", []))
    limit = evidence.get("human_limit_ms")
    rows = "".join(_contender_row(c) for c in evidence.get("contenders", []))
    return (
        f'<section class="race" data-version="{version}">'
        f"<h3>Race evidence at version {version} (<code>totem-replay explain</code>): "
        f"{escape(str(evidence.get('title', '')))}</h3>"
        f"<p>Rules: {escape(', '.join(map(str, evidence.get('rules', []))))}</p>"
        f"<ul>{facts}</ul>"
        + _tie_html((evidence.get("race") or {}).get("tie"))
        + '<table class="contenders"><thead><tr><th>outcome</th><th>receive order</th>'
        "<th>stamped on</th><th>seat</th><th>received (UTC)</th><th>after the first</th>"
        "<th>had seen</th><th>reaction</th><th>event</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        '<p class="small">In the order the match recorded them: server receive order, or '
        "commit order between server instances (JS-4.2). Stamped on a <em>stream</em> as "
        "its message was read on an open Play stream, on a <em>call</em> when its call was "
        "admitted. Reaction: from the server writing the version the grab had seen to the "
        "grabber's stream, to receiving the grab, network both ways included"
        + (f"; suspect under {limit:g} ms" if isinstance(limit, (int, float)) else "")
        + ". A <em>refused</em> grab was refused by the server (the rule and reason say "
        "why) and kept as evidence in the match's refusal log: it changes nothing in the "
        "race. A grab that <em>lost the draw</em> was simultaneous with the winner's "
        "(JS-4.2a): received within the tie window after the first, the winner among them "
        "drawn from the match's committed randomness. Evidence for a judge, never a "
        "verdict: order alone decides, or, among simultaneous grabs, the draw.</p>"
        + _refusals_note(evidence.get("refusals"))
        + "</section>"
    )


def _refusals_note(refusals: Any) -> str:
    """What the page says when the refused grabs are not in the evidence, or their log
    fails its chain."""
    if not isinstance(refusals, dict):
        return ""
    if not refusals.get("in_evidence", True):
        return f'<p class="refusals-note">Refused grabs: {escape(str(refusals.get("note")))}</p>'
    problems = refusals.get("problems") or []
    if problems:
        return (
            '<p class="refusals-note suspect">The log of refused commands fails: '
            f"{escape(str(problems[0]))}</p>"
        )
    return ""


def _tie_html(tie: Any) -> str:
    """A tie (JS-4.2a, ``tie`` as ``explain --json`` gives it under ``race``): the window,
    the index drawn and the winner, then each contender in receive order."""
    if not isinstance(tie, dict):
        return ""
    rows = []
    for c in tie.get("contenders", []):
        seat = f"seat {c['seat']}" + (f" ({c['player']})" if c.get("player") else "")
        order = f"#{c['sequence']}" + (f"@{c['instance']}" if c.get("instance") else "")
        number = f"#{int(c['receive'])}" if c.get("receive") else "none"
        drawn = (
            '<strong class="drawn">drawn: the winner</strong>'
            if c.get("drawn")
            else '<strong class="lost-draw">lost the draw</strong> (JS-4.2a)'
        )
        cells = [
            str(int(c["index"])),
            escape(seat),
            escape(str(c.get("target", ""))),
            escape(order),
            number,
            f"+{float(c['after_first_us']):g} µs",
            drawn,
        ]
        rows.append(
            f'<tr data-tie-index="{int(c["index"])}" data-seat="{int(c["seat"])}"'
            f' data-drawn="{str(bool(c.get("drawn"))).lower()}">'
            + "".join(f"<td>{cell}</td>" for cell in cells)
            + "</tr>"
        )
    n = len(rows)
    winner = int(tie["winner"])
    return (
        f'<div class="tie" data-drawn="{int(tie["drawn"])}" data-winner="{winner}">'
        f"<p><strong>Simultaneous grabs (JS-4.2a)</strong>: {n} grabs received within the tie "
        f"window of {int(tie['window_us'])} µs after the first; contender "
        f"{int(tie['drawn'])} of {n} was drawn from the match's committed randomness: "
        f"seat {winner} wins, the others lost the draw.</p>"
        '<table class="tie-contenders"><thead><tr><th>contender</th><th>seat</th>'
        "<th>target</th><th>receive order</th><th>receive number</th><th>after the first</th>"
        f"<th>draw</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _contender_row(c: dict[str, Any]) -> str:
    seat = f"seat {c['seat']}" + (f" ({c['player']})" if c.get("player") else "")
    order = f"#{c['sequence']}" + (f"@{c['instance']}" if c.get("instance") else "")
    received = fmt.when(datetime.fromtimestamp(int(c["wall_ns"]) / 1e9, UTC))
    gap = f"+{c['gap_ms']:.3f} ms" if c.get("gap_ms") else "first received"
    seen = f"v{c['seen_version']}" if c.get("seen_version") else "not given"
    reaction = c.get("reaction_ms")
    reacted = "unknown" if reaction is None else f"{reaction:.3f} ms"
    if c.get("client_reaction_ms") is not None:
        reacted += f" (client says {int(c['client_reaction_ms'])} ms)"
    if c.get("suspect"):
        reacted += ' <strong class="suspect">SUSPECT</strong>'
    outcome = escape(str(c["outcome"]))
    event = f"v{int(c['version'])}"
    if c.get("label") == "refused":
        why = f"under {c['rule']}: " if c.get("rule") else ""
        outcome = f'<strong class="refused">refused</strong> {escape(why + str(c.get("reason")))}'
        event = f"refused at v{int(c['version'])}"
    elif c.get("tie_index") is not None:
        index = int(c["tie_index"])
        if c.get("label") == "lost draw":
            lost = '<strong class="lost-draw">lost the draw</strong>'
            outcome = f"{lost} (JS-4.2a, contender {index})"
        else:
            outcome = f"{outcome}: drawn (JS-4.2a, contender {index})"
    cells = [
        outcome,
        escape(order),
        "stream" if c.get("on_stream") else "call",
        escape(seat),
        received,
        gap,
        seen,
        reacted,
        event,
    ]
    labelled = c.get("label") in ("refused", "lost draw")
    return (
        f'<tr data-seat="{int(c["seat"])}" data-sequence="{int(c["sequence"])}"'
        + (f' data-label="{escape(str(c["label"]))}">' if labelled else ">")
        + "".join(f"<td>{cell}</td>" for cell in cells)
        + "</tr>"
    )


def signature_html(
    match_id: str, digest: str, signature: dict[str, str] | None, ended: bool
) -> str:
    """The match digest and the server's signature over it, in full, to be compared
    with the key the operator publishes (``totem server-key``)."""
    rows = [("Match", match_id), ("Match digest", digest)]
    if signature is None:
        why = "MatchEnded carries no server signature" if ended else "the match has not ended"
        rows.append(("Signature", f"none: {why}"))
    else:
        rows.append(("Server public key (Ed25519)", signature["public_key"]))
        rows.append(("Signature (Ed25519)", signature["signature"]))
    cells = "".join(
        f"<tr><th>{escape(k)}</th><td><code>{escape(v)}</code></td></tr>" for k, v in rows
    )
    return f'<table class="signature" id="signature">{cells}</table>'


CSS = """
.verification, .race { background: #fff; border: 1px solid #bbb; border-radius: 6px;
  padding: .5em; margin: .5em 0; }
.verification h2, .race h3 { font-size: 1em; margin: 0 0 .3em; }
.verdict { font-family: monospace; font-weight: bold; overflow-wrap: anywhere; }
.verdict.ok, .status.ok { color: #1e7a1e; } .verdict.failed, .status.failed { color: #b01010; }
.status { font-weight: bold; white-space: nowrap; } .small { font-size: .8em; }
table { border-collapse: collapse; } th, td { text-align: left; vertical-align: top;
  padding: .1em .5em; border-bottom: 1px solid #ddd; font-size: .85em; }
.signature code { overflow-wrap: anywhere; } .suspect { color: #b01010; }
.refused { color: #8a1a8a; } .lost-draw { color: #8a5a00; } .drawn { color: #1e7a1e; }
.tie { border-left: 3px solid #8a5a00; padding-left: .5em; margin: .3em 0; }
"""
