"""``explain``: why one event of a match came out as it did.

For a grab race, every contender with the evidence of JS-5.1 and its reaction time; for a
rule outcome, the rule ids that decided it and the facts they used (each game's hook in
:mod:`replay.explain_rules`, registered in :mod:`replay.games`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click
from rich.text import Text

from domain.kernel.match import event_name, payload
from replay import format as fmt
from replay import games
from replay.explain_rules import HUMAN_LIMIT_MS, Contender, Context, Explanation
from replay.integrity import warn_if_broken
from replay.source import load
from replay.step import HasStore, Stepper, referee_option, require_referee
from replay.store import Record, ReplayError


def explain_records(
    records: list[Record], version: int, human_limit_ms: float = HUMAN_LIMIT_MS
) -> tuple[str, Explanation | None]:
    """The name of the event at ``version`` and what explains it (None: nothing to)."""
    stepper = Stepper(records)
    if not 1 <= version <= stepper.last:
        raise ReplayError(
            f"there is no version {version}: this match has versions 1 to {stepper.last}"
        )
    before = None
    if version > 1:
        stepper.goto(version - 1)
        before = stepper.state
    stepper.goto(version)
    events = [(e.originator_version, event_name(e), payload(e)) for e in stepper.events]
    ctx = Context(version, events, before, stepper.state, human_limit_ms)
    game = games.replay_of(stepper.state)
    hook = game.explain if game is not None else None
    return ctx.name, hook(ctx) if hook is not None else None


def contender_line(contender: Contender) -> Text:
    who = f"seat {contender.seat}" + (f" ({contender.player})" if contender.player else "")
    received = datetime.fromtimestamp(contender.wall_ns / 1e9, UTC)
    received_by = f"#{contender.sequence}" + (
        f"@{contender.instance}" if contender.instance else ""
    )
    via = "stream" if contender.on_stream else "call"
    line = Text(f"  {contender.outcome:<5}  recv {received_by:<7} {via:<6} {who:<22}")
    line.append(f" at {fmt.when(received)} UTC  ")
    line.append(f"+{contender.gap_ms:.3f} ms  " if contender.gap_ms else "winner  ")
    seen = f"v{contender.seen_version}" if contender.seen_version else "not given"
    line.append(f"had seen {seen}  ")
    if contender.reaction_ms is None:
        line.append("reaction unknown")
    else:
        line.append(f"reaction {contender.reaction_ms:.3f} ms")
    if contender.suspect:
        line.append("  SUSPECT", style="bold red")
    line.append(f"  (v{contender.version})")
    return line


def print_explanation(explanation: Explanation) -> None:
    out = fmt.console()
    head = Text(f"Version {explanation.version}: {explanation.event}: ", style="bold")
    head.append(explanation.title)
    out.print(head)
    out.print(Text(f"Rules: {', '.join(explanation.rules)}"))
    for fact in explanation.facts:
        out.print(Text(f"  - {fact}"))
    if explanation.contenders:
        limit = explanation.human_limit_ms
        out.print(
            Text(
                f"Contenders in the order the match recorded them: server receive order, "
                f"or commit order between server instances (stamped as its message was read "
                f"on an open stream, or when its call was admitted; gap to the first "
                f"received; reaction: from the event the grab saw reaching its stream; "
                f"suspect under {limit:g} ms):"
            )
        )
        for contender in explanation.contenders:
            out.print(contender_line(contender))


@click.command(short_help="Why an event came out as it did: a grab race or a rule.")
@click.argument("match_text", metavar="MATCH")
@click.argument("version", type=click.IntRange(min=1))
@click.option(
    "--human-limit-ms",
    type=click.FloatRange(min=0),
    default=HUMAN_LIMIT_MS,
    show_default=True,
    help="Flag a grab whose reaction time is under this as suspect.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
@referee_option
@click.pass_obj
def explain(
    settings: HasStore,
    match_text: str,
    version: int,
    human_limit_ms: float,
    as_json: bool,
    referee: bool,
) -> None:
    """Why the event at VERSION came out as it did.

    A Jungle Speed grab (a duel or inward-arrows race won, a late or a wrong grab): every
    grab recorded for the same race, in server receive order (JS-4.2), with its receive
    sequence and time, its gap to the first in milliseconds, the version its client said
    it had seen (JS-5.1), and its reaction time: from the server writing that version to
    the grabber's stream to receiving the grab (unknown when the server did not see
    both). A reaction under --human-limit-ms is flagged SUSPECT. A rule outcome (a Tribes
    round won or drawn, a revealed line; a Village feast, census, wipe-out or the end):
    the rule ids that decided it and the facts they used. Any other event: one line
    saying there is nothing to explain, exit status 0. The facts are the referee's: a
    match still in play is explained only with --referee.
    """
    loaded = load(settings.db, match_text)
    require_referee(loaded.live, referee, "an explanation")
    records = loaded.records
    name, explanation = explain_records(records, version, human_limit_ms)
    if explanation is None:
        if as_json:
            click.echo(json.dumps({"version": version, "event": name, "explained": False}))
        else:
            click.echo(f"nothing to explain at version {version}: {name}")
    elif as_json:
        click.echo(json.dumps({**explanation.to_dict(), "explained": True}, ensure_ascii=False))
    else:
        print_explanation(explanation)
    warn_if_broken(settings.db, loaded)
