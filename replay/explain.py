"""``explain``: why one event of a match came out as it did.

For a grab race, every contender with the evidence of JS-5.1 and its reaction time; for a
rule outcome, the rule ids that decided it and the facts they used (each game's hook in
its replay module, registered in :mod:`replay.games`, on :mod:`replay.explain_rules`).
Races are read for a game whose entry has them (:class:`replay.explain_rules.GrabRaces`),
whatever its name.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from domain.kernel.match import MatchAggregate, event_name, payload
from domain.kernel.views import Viewer
from replay import format as fmt
from replay import games
from replay.explain_rules import (
    HUMAN_LIMIT_MS,
    REFUSED,
    TIE_RULE,
    WINNER,
    Contender,
    Context,
    Explanation,
    GrabRaces,
    RaceEvidence,
)
from replay.integrity import warn_if_broken
from replay.refusals import NOT_IN_EVIDENCE, Refusals, kept_refusals
from replay.refused_grabs import has_refused_grabs, race_with_refused
from replay.source import load
from replay.step import HasStore, Stepper, referee_option, require_referee
from replay.store import Record, ReplayError


def explain_records(
    records: list[Record], version: int, human_limit_ms: float = HUMAN_LIMIT_MS
) -> tuple[str, Explanation | None]:
    """The name of the event at ``version`` and what explains it (None: nothing to)."""
    stepper = Stepper(records)
    ctx = _context(stepper, _events(stepper), version, human_limit_ms)
    game = games.replay_of(ctx.after)
    hook = game.explain if game is not None else None
    return ctx.name, hook(ctx) if hook is not None else None


def race_evidence(
    records: list[Record], version: int, human_limit_ms: float = HUMAN_LIMIT_MS
) -> RaceEvidence | None:
    """The evidence of the grab race that the event at ``version`` belongs to: a won
    duel or inward-arrows race, a late grab (the race it was late for) or a wrong grab
    (the wrong grabs since the same reveal). None when that event is not a grab.

    What a judge rules on under JS-4.2 and JS-5.1, as data, for any command that shows
    it (``explain``, ``disputes``, a ruling sheet): the event that opened the race and
    the reveals that left it open (JS-4.7), and every contender in recorded order with
    its label (winner, lost, late, wrong grab), gap to the first received, reaction time
    and its marks (close call, suspect, sent before the opening). Raises ReplayError for
    a version the match does not have.
    """
    stepper = Stepper(records)
    ctx = _context(stepper, _events(stepper), version, human_limit_ms)
    grabs = _grab_races(stepper)
    return grabs.race_at(ctx) if grabs is not None else None


def races(records: list[Record], human_limit_ms: float = HUMAN_LIMIT_MS) -> list[RaceEvidence]:
    """Every grab race of a match, in the order they were decided: each won race (with
    its late grabs) and each group of wrong grabs made since one reveal, read as
    :func:`race_evidence` reads one. Empty for a game without grab races."""
    stepper = Stepper(records)
    grabs = _grab_races(stepper)
    if grabs is None:
        return []
    return _races(stepper, _events(stepper), human_limit_ms, grabs)


def race_explanations(
    records: list[Record], human_limit_ms: float = HUMAN_LIMIT_MS
) -> dict[int, Explanation]:
    """What ``explain`` says at each grab event of a match (a race's deciding event and
    each of its late or wrong grabs), by version: every race read once, as
    :func:`races` reads them, with one replay of the match for all (a page showing
    every race, :mod:`replay.evidence`)."""
    stepper = Stepper(records)
    grabs = _grab_races(stepper)
    if grabs is None:
        return {}
    events = _events(stepper)
    found: dict[int, Explanation] = {}
    for race in _races(stepper, events, human_limit_ms, grabs):
        for contender in race.contenders:
            ctx = _context(stepper, events, contender.version, human_limit_ms)
            found[contender.version] = grabs.explain(ctx, race)
    return found


def _grab_races(stepper: Stepper) -> GrabRaces | None:
    """How the match's game reads its grab races (its entry in :mod:`replay.games`);
    None for a game without them."""
    return games.races_of(type(stepper.state).GAME)


def _races(
    stepper: Stepper,
    events: list[tuple[int, str, dict[str, Any]]],
    human_limit_ms: float,
    grabs: GrabRaces,
) -> list[RaceEvidence]:
    found: list[RaceEvidence] = []
    covered: set[int] = set()
    for version, name, _ in events:
        if name not in grabs.deciding or version in covered:
            continue
        race = grabs.race_at(_context(stepper, events, version, human_limit_ms))
        if race is not None:
            found.append(race)
            covered.update(c.version for c in race.contenders)
    return found


def _events(stepper: Stepper) -> list[tuple[int, str, dict[str, Any]]]:
    return [(e.originator_version, event_name(e), payload(e)) for e in stepper.events]


def _context(
    stepper: Stepper,
    events: list[tuple[int, str, dict[str, Any]]],
    version: int,
    human_limit_ms: float,
) -> Context:
    """The event at ``version`` in its match, whose states the stepper moves to."""
    if not 1 <= version <= stepper.last:
        raise ReplayError(
            f"there is no version {version}: this match has versions 1 to {stepper.last}"
        )

    def at(wanted: int) -> MatchAggregate:
        stepper.goto(wanted)
        return stepper.state

    return Context(version, events, at, human_limit_ms)


def contender_line(contender: Contender, first: bool = False) -> Text:
    """One contender of a race: its label, receive order, how it was stamped, who, when,
    the gap to the first received, what it had seen, its reaction and its marks."""
    who = f"seat {contender.seat}" + (f" ({contender.player})" if contender.player else "")
    received = datetime.fromtimestamp(contender.wall_ns / 1e9, UTC)
    received_by = f"#{contender.sequence}" + (
        f"@{contender.instance}" if contender.instance else ""
    )
    via = "stream" if contender.on_stream else "call"
    line = Text(f"  {contender.label:<10}  recv {received_by:<7} {via:<6} {who:<22}")
    line.append(f" at {fmt.when(received)} UTC  ")
    line.append("first  " if first else f"{contender.gap_ms:+.3f} ms  ")
    seen = f"v{contender.seen_version}" if contender.seen_version else "not given"
    line.append(f"had seen {seen}  ")
    if contender.reaction_ms is None:
        line.append("reaction unknown")
    else:
        line.append(f"reaction {contender.reaction_ms:.3f} ms")
    if contender.client_reaction_ms is not None:
        line.append(f" (client says {contender.client_reaction_ms} ms)")
    if contender.close_call:
        line.append("  CLOSE CALL", style="bold yellow")
    if contender.suspect:
        line.append("  SUSPECT", style="bold red")
    if contender.before_opening:
        line.append("  SENT BEFORE THE OPENING", style="bold red")
    if contender.tie_index is not None:
        mark = "DRAWN" if contender.label == WINNER else "LOST THE DRAW"
        line.append(f"  {mark} ({TIE_RULE}, tie contender {contender.tie_index})", style="bold")
    if contender.label == REFUSED:
        why = f"under {contender.rule}: " if contender.rule else ""
        line.append(f"  REFUSED {why}{contender.reason}", style="bold magenta")
        line.append(f"  (refused at v{contender.version}, recv #{contender.receive} in match)")
        return line
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
    if explanation.race is not None:
        print_contenders(out, explanation.race)


def print_contenders(out: Console, race: RaceEvidence) -> None:
    """A race's contenders, one line each, under a line saying how to read them."""
    out.print(
        Text(
            f"Contenders in the order the match recorded them: server receive order, or "
            f"commit order between server instances (stamped as its message was read on an "
            f"open stream, or when its call was admitted; gap to the first received, a "
            f"CLOSE CALL within the stamp precision; reaction: from the event the grab saw "
            f"reaching its stream, SUSPECT under {race.human_limit_ms:g} ms):"
        )
    )
    for i, contender in enumerate(race.contenders):
        out.print(contender_line(contender, first=i == 0))
    if race.tie is not None:
        out.print(Text(TIE_NOTE))
    if any(c.label == REFUSED for c in race.contenders):
        out.print(Text(REFUSED_NOTE if race.tie is None else REFUSED_IN_TIE_NOTE))


#: ``--human-limit-ms``: where a reaction stops being a human's, for every command that
#: flags one.
human_limit_option = click.option(
    "--human-limit-ms",
    type=click.FloatRange(min=0),
    default=HUMAN_LIMIT_MS,
    show_default=True,
    help="Flag a grab whose reaction time is under this as suspect.",
)


@click.command(short_help="Why an event came out as it did: a grab race or a rule.")
@click.argument("match_text", metavar="MATCH")
@click.argument("version", type=click.IntRange(min=1))
@human_limit_option
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

    A Jungle Speed grab (a duel or inward-arrows race won, a late or a wrong grab): the
    event that opened the race (the one after which it stayed open, JS-4.7) and every
    grab recorded for it, in server receive order (JS-4.2), labelled winner, lost, late
    or wrong grab, and each grab the server refused during the race (kept beside the
    match), labelled refused with its rule and reason: it changes nothing. Grabs received
    within the tie window after the first were simultaneous (JS-4.2a): the deciding event
    records them all and the draw, the window is shown with each of them (seat, target,
    receive number, µs after the first), the one drawn is the winner, the others are
    labelled lost draw. Each grab with its receive sequence and time, its gap to the first in
    milliseconds (CLOSE CALL within the stamp precision of docs/api.md), the version its
    client said it had seen (JS-5.1), and its reaction time: from the server writing
    that version to the grabber's stream to receiving the grab (unknown when the server
    did not see both). A reaction under --human-limit-ms is flagged SUSPECT. A rule
    outcome (a Tribes round won or drawn, a revealed line; a Village feast, census,
    wipe-out or the end): the rule ids that decided it and the facts they used. Any
    other event: one line saying there is nothing to explain, exit status 0. The facts
    are the referee's: a match still in play is explained only with --referee.
    """
    loaded = load(settings.db, match_text)
    require_referee(loaded.live, referee, "an explanation")
    records = loaded.records
    name, explanation = explain_records(records, version, human_limit_ms)
    refusals = kept_refusals(settings.db, loaded) if explanation and explanation.race else None
    if explanation is not None and explanation.race is not None:
        if has_refused_grabs(refusals):
            race = race_with_refused(
                explanation.race, races(records, human_limit_ms), refusals, records, REFEREE
            )
            explanation = dataclasses.replace(explanation, race=race)
        for problem in refusals.problems[:1] if refusals else []:
            click.echo(f"warning: the log of refused commands fails: {problem}", err=True)
    if explanation is None:
        if as_json:
            click.echo(json.dumps({"version": version, "event": name, "explained": False}))
        else:
            click.echo(f"nothing to explain at version {version}: {name}")
    elif as_json:
        shown = {**explanation.to_dict(), "explained": True}
        if explanation.race is not None:
            shown["refusals"] = refusals_object(refusals)
        click.echo(json.dumps(shown, ensure_ascii=False))
    else:
        print_explanation(explanation)
        if explanation.race is not None and refusals is None:
            fmt.console().print(Text(f"Refused grabs: {NOT_IN_EVIDENCE}"))
    warn_if_broken(settings.db, loaded)


#: Under the contenders of a race decided by a tie.
TIE_NOTE = (
    f"Simultaneous grabs ({TIE_RULE}): received within the tie window after the first, "
    "they do not show who was first; the winner among them was drawn from the match's "
    "committed randomness (`verify` re-derives the draw once the seed is revealed), and "
    "the others lost the draw."
)

#: Under the contenders of a race that had refused grabs.
REFUSED_NOTE = (
    "A refused grab was not applied: it changes nothing in the race, whose winner is the "
    "first grab applied (JS-4.2); it is shown in receive order, with the rule and reason "
    "it was refused for, as evidence."
)
#: The same, for a race decided by a tie (JS-4.2a).
REFUSED_IN_TIE_NOTE = (
    "A refused grab was not applied: it changes nothing in the race, whose winner was "
    f"drawn among the simultaneous grabs applied ({TIE_RULE}); it is shown in receive "
    "order, with the rule and reason it was refused for, as evidence."
)
REFEREE = Viewer.referee()


def refusals_object(refusals: Refusals | None) -> dict[str, Any]:
    """What ``--json`` says of the refused commands beside a race: whether they are in
    the evidence, and what is wrong with their log."""
    if refusals is None:
        return {"in_evidence": False, "problems": [], "note": NOT_IN_EVIDENCE}
    return {"in_evidence": True, "problems": list(refusals.problems)}
