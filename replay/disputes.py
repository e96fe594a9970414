"""``disputes``: every grab race of a match, or of every match in the store, with what
makes one worth a judge's look: a close call, a suspect reaction, late and wrong grabs,
a tie whose winner was drawn (JS-4.2a), and each seat's reaction times.

Races are read by :func:`replay.explain.races`, the reading ``explain`` shows one race
with: this module only selects, counts and lays them out. Which games have races is the
registry's to say (:func:`replay.games.races_of`): this module names no game.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import click
from rich.console import Console
from rich.text import Text

from replay import format as fmt
from replay import games
from replay.explain import contender_line, human_limit_option, races
from replay.explain_rules import (
    LOST_DRAW,
    REFUSED,
    TIE_RULE,
    WINNER,
    Contender,
    RaceEvidence,
    TieEvidence,
    tie_contender_text,
)
from replay.refusals import NOT_IN_EVIDENCE, Refusals, kept_refusals, read_refusals
from replay.refused_grabs import viewer_for, with_refused_all
from replay.source import load
from replay.step import HasStore
from replay.store import (
    Record,
    ReplayError,
    is_end,
    logged_matches,
    open_arena,
    read_records,
    walk,
)


@dataclass(frozen=True)
class SeatReactions:
    """One seat's reaction times over the grabs of a match (JS-5.1)."""

    seat: int
    player: str
    #: Grabs of this seat in the match's races, and how many of them have a known
    #: reaction time (the server saw both ends).
    grabs: int
    timed: int
    median_ms: float | None
    fastest_ms: float | None
    #: Reactions under the human limit.
    suspect: int

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def reaction_summary(contenders: Iterable[Contender]) -> list[SeatReactions]:
    """Per seat, in seat order: its grabs among ``contenders``, its median and fastest
    known reaction, and how many were suspect. Any contenders will do (a race's, a
    match's), so grabs kept as evidence elsewhere count once they are contenders."""
    by_seat: dict[int, list[Contender]] = {}
    for contender in contenders:
        by_seat.setdefault(contender.seat, []).append(contender)
    summary = []
    for seat, grabs in sorted(by_seat.items()):
        times = [c.reaction_ms for c in grabs if c.reaction_ms is not None]
        summary.append(
            SeatReactions(
                seat=seat,
                player=grabs[0].player,
                grabs=len(grabs),
                timed=len(times),
                median_ms=statistics.median(times) if times else None,
                fastest_ms=min(times) if times else None,
                suspect=sum(c.suspect for c in grabs),
            )
        )
    return summary


def contenders_of(race: RaceEvidence) -> list[Contender]:
    """The contenders ``disputes`` weighs for a race: the grabs its events recorded and
    the refused grabs the match kept for it, already merged in receive order and timed
    (:func:`replay.refused_grabs.with_refused_all`, by :func:`match_disputes`): they
    count in every mark and summary."""
    return race.contenders


def dispute(race: RaceEvidence, contenders: Sequence[Contender]) -> dict[str, Any]:
    """What ``disputes`` says of one race, from its contenders (:func:`contenders_of`):
    every mark is taken from them."""
    return {
        "version": race.decided,
        "kind": race.kind,
        "winner": race.winner,
        "opened": race.opened,
        "opened_by": race.opened_by,
        "left_open_by": race.left_open_by,
        "gap_ms": contenders[1].gap_ms if len(contenders) > 1 else None,
        "close_call": any(c.close_call for c in contenders),
        "suspect": [c.seat for c in contenders if c.suspect],
        "late": [c.seat for c in contenders if c.outcome == "late"],
        "wrong": [c.seat for c in contenders if c.outcome == "wrong"],
        "refused": [c.seat for c in contenders if c.outcome == REFUSED],
        "lost_draw": [c.seat for c in contenders if c.label == LOST_DRAW],
        "tie": race.tie.to_dict() if race.tie is not None else None,
        "contenders": [c.to_dict() for c in contenders],
    }


@dataclass(frozen=True)
class MatchDisputes:
    """Every race of one match, and its seats' reactions."""

    match_id: UUID
    game: str
    human_limit_ms: float
    races: list[RaceEvidence]
    #: Whether the match's refused commands are in the evidence (not in a bundle
    #: exported without them), and what is wrong with their log.
    refusals_kept: bool = True
    refusal_problems: tuple[str, ...] = ()

    def entries(self) -> list[dict[str, Any]]:
        return [dispute(race, contenders_of(race)) for race in self.races]

    def to_dict(self) -> dict[str, Any]:
        """What ``disputes --json`` prints for the match."""
        entries = self.entries()
        contenders = [c for race in self.races for c in contenders_of(race)]
        return {
            "match_id": str(self.match_id),
            "game": self.game,
            "human_limit_ms": self.human_limit_ms,
            "counts": {
                "races": sum(1 for e in entries if e["kind"] != "wrong"),
                "close_calls": sum(1 for e in entries if e["close_call"]),
                "suspect": sum(len(e["suspect"]) for e in entries),
                "late": sum(len(e["late"]) for e in entries),
                "wrong": sum(len(e["wrong"]) for e in entries),
                "refused": sum(len(e["refused"]) for e in entries),
            },
            "refusals": {
                "in_evidence": self.refusals_kept,
                "problems": list(self.refusal_problems),
            },
            "races": entries,
            "reactions": [s.to_dict() for s in reaction_summary(contenders)],
        }


def match_disputes(
    match_id: UUID,
    records: list[Record],
    human_limit_ms: float,
    refusals: Refusals | None = None,
    ended: bool = True,
) -> MatchDisputes:
    """Every race of one match, read as ``explain`` reads one, with the refused grabs of
    each (``refusals`` None: not in the evidence), shown as :func:`viewer_for` says."""
    _, created = next(walk(records, 1))
    found = races(records, human_limit_ms)
    merged = with_refused_all(found, refusals, records, viewer_for(ended))
    problems = tuple(refusals.problems) if refusals is not None else ()
    game = type(created).GAME
    return MatchDisputes(match_id, game, human_limit_ms, merged, refusals is not None, problems)


def _plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"


def print_match(out: Console, found: MatchDisputes) -> None:
    data = found.to_dict()
    counts = data["counts"]
    head = Text(f"Match {found.match_id}", style="bold")
    head.append(
        f": {_plural(counts['races'], 'race')}, {_plural(counts['close_calls'], 'close call')}, "
        f"{_plural(counts['suspect'], 'suspect reaction')}, "
        f"{_plural(counts['late'], 'late grab')}, {_plural(counts['wrong'], 'wrong grab')}, "
        f"{_plural(counts['refused'], 'refused grab')}"
    )
    ties = sum(1 for race in found.races if race.tie is not None)
    if ties:
        head.append(f", {_plural(ties, 'tie')} drawn ({TIE_RULE})")
    out.print(head)
    if not found.refusals_kept:
        out.print(Text(f"  refused grabs: {NOT_IN_EVIDENCE}"))
    for problem in found.refusal_problems[:1]:
        out.print(Text(f"  warning: the log of refused commands fails: {problem}", style="red"))
    if games.races_of(found.game) is None:
        out.print(Text(f"  no grab races: a {found.game} match"))
        return
    for race, entry in zip(found.races, data["races"], strict=True):
        out.print(_race_head(race, entry))
        if race.tie is not None:
            for line in _tie_lines(race.tie):
                out.print(Text(line))
        for i, contender in enumerate(contenders_of(race)):
            out.print(contender_line(contender, first=i == 0))
    reactions = data["reactions"]
    if reactions:
        out.print(
            Text(
                "Reactions per seat (from the event each grab saw reaching its stream; "
                f"SUSPECT under {found.human_limit_ms:g} ms):"
            )
        )
        for seat in reactions:
            out.print(_reaction_line(seat))


def _tie_lines(tie: TieEvidence) -> list[str]:
    """Under a race's head: its tie (JS-4.2a), the window and the draw, then each
    contender in receive order."""
    lines = [
        f"  tie ({TIE_RULE}): {len(tie.contenders)} simultaneous grabs within "
        f"{tie.window_us} µs, contender {tie.drawn} drawn from the match's committed "
        "randomness; the others lost the draw"
    ]
    return lines + [f"    {tie_contender_text(c)}" for c in tie.contenders]


def _race_head(race: RaceEvidence, entry: dict[str, Any]) -> Text:
    # Who won, or grabbed wrongly first: a refused grab received first decided nothing,
    # and the first of a tie (JS-4.2a) may have lost the draw.
    applied = [c for c in race.contenders if c.label != REFUSED]
    first = next((c for c in applied if c.label == WINNER), applied[0])
    who = f"seat {first.seat}" + (f" ({first.player})" if first.player else "")
    if race.kind == "wrong":
        line = Text(f"v{race.decided}  wrong grab by {who}")
        line.append(f"  last reveal: {race.opened_by} at v{race.opened}")
        return line
    what = "duel" if race.kind == "duel" else "inward-arrows race"
    line = Text(f"v{race.decided}  {what} won by {who}")
    line.append(f"  opened by {race.opened_by} at v{race.opened}")
    if race.left_open_by:
        line.append(f" (left open by v{', v'.join(map(str, race.left_open_by))})")
    if entry["gap_ms"] is not None:
        line.append(f"  gap {entry['gap_ms']:.3f} ms")
    if entry["close_call"]:
        line.append("  CLOSE CALL", style="bold yellow")
    if race.tie is not None:
        line.append(f"  TIE drawn ({TIE_RULE})", style="bold")
    return line


def _reaction_line(seat: dict[str, Any]) -> Text:
    who = f"seat {seat['seat']}" + (f" ({seat['player']})" if seat["player"] else "")
    line = Text(f"  {who:<22}  {_plural(seat['grabs'], 'grab')}, {seat['timed']} timed")
    if seat["median_ms"] is not None:
        line.append(f"  median {seat['median_ms']:.3f} ms  fastest {seat['fastest_ms']:.3f} ms")
    line.append(f"  suspect {seat['suspect']}", style="bold red" if seat["suspect"] else "")
    return line


@click.command(
    short_help="Every grab race: close calls, suspect reactions, late, wrong and refused grabs."
)
@click.argument("match_text", metavar="[MATCH]", required=False)
@click.option("--all", "every", is_flag=True, help="Every match in the store.")
@human_limit_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per match, one a line.")
@click.pass_obj
def disputes(
    settings: HasStore, match_text: str | None, every: bool, human_limit_ms: float, as_json: bool
) -> None:
    """Every grab race of MATCH (or, with --all, of every match in the store), for a
    judge looking for the ones to rule on.

    Each race (a duel or inward-arrows race won, JS-4.2, JS-6.1; wrong grabs since one
    reveal, JS-5.2): its version, the event that opened it (JS-4.7), the gap in ms from
    the first grab received to the second, CLOSE CALL when that gap is within the stamp
    precision (docs/api.md), and every grab in receive order, labelled winner, lost,
    late, wrong grab, lost draw (simultaneous with the winner's, which was drawn among
    them: the race's TIE, its window and each contender shown under its head, JS-4.2a)
    or refused (refused by the server during the race: it changes nothing), with its
    reaction time (SUSPECT under --human-limit-ms), as `explain`
    shows one race. Then each seat's reactions: median, fastest, how many
    suspect. Grab events and their stamps are public (JS-5.1): a match still in play is
    shown too. Matches of other games have no races: --all leaves them out.
    """
    if every == (match_text is not None):
        raise click.UsageError("give a MATCH, or --all for every match, not both")
    out = fmt.console()
    if match_text is not None:
        loaded = load(settings.db, match_text)
        kept = kept_refusals(settings.db, loaded)
        found = match_disputes(loaded.match_id, loaded.records, human_limit_ms, kept, loaded.ended)
        _show(out, found, as_json)
        return
    with open_arena(settings.db) as arena:
        entries = [e for e in logged_matches(arena) if games.races_of(e.game) is not None]
        if not entries and not as_json:
            out.print(f"no {_racing_games()} matches in this store")
        for entry in fmt.progress(entries, len(entries), "reading"):
            try:
                records = read_records(arena, entry.match_id)
                kept = read_refusals(arena, entry.match_id)
                ended = bool(records) and is_end(records[-1].topic)
                found = match_disputes(entry.match_id, records, human_limit_ms, kept, ended)
            except ReplayError as exc:
                if as_json:
                    error = {"match_id": str(entry.match_id), "game": entry.game, "error": str(exc)}
                    click.echo(json.dumps(error))
                else:
                    out.print(Text(f"Match {entry.match_id}: unreadable: {exc}", style="red"))
                continue
            _show(out, found, as_json)


def _racing_games() -> str:
    """The games whose matches have races, by name, for the line saying a store has none."""
    return " or ".join(game.title for game in games.REPLAYS.values() if game.races is not None)


def _show(out: Console, found: MatchDisputes, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(found.to_dict(), ensure_ascii=False))
    else:
        print_match(out, found)
