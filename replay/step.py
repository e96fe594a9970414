"""``step``: walking through a match one event at a time, forwards and backwards.

A :class:`Stepper` holds one state and applies the next stored event to it, so a step
never rebuilds the match. Applying an event changes the state in place and cannot be
undone; going back therefore restarts from the nearest kept copy of an earlier state
(one every ``every`` versions) and applies the few events after it.

The same walk serves a person at a terminal (single keys) and a script (``--to``,
``--script``): both end in :func:`run_script`'s commands, so what a test drives is what a
person sees.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import click
from rich.console import Console
from rich.text import Text

from domain.kernel.match import MatchAggregate, event_name
from domain.kernel.views import Viewer
from replay import format as fmt
from replay import games
from replay.integrity import warn_if_broken
from replay.source import load
from replay.store import Record, ReplayError, apply, walk


class HasStore(Protocol):
    """The command group's settings: where the store is."""

    db: str


#: Kinds every game has (``next end``): on top of each game's own (``GameReplay.kinds``).
COMMON_KINDS: dict[str, tuple[str, ...]] = {
    "join": ("PlayerJoined",),
    "end": ("MatchEnded",),
}

#: How often a copy of the state is kept: going back applies at most this many events.
KEEP_EVERY = 16


def kinds_of(match: MatchAggregate) -> dict[str, tuple[str, ...]]:
    """The kinds of event ``next KIND`` knows for this game: name -> event names."""
    game = games.replay_of(match)
    return {**COMMON_KINDS, **(dict(game.kinds) if game is not None else {})}


def kind_key(words: str) -> str:
    """``round end``, ``round-end`` and ``Round_End`` all name one kind."""
    return "-".join(words.replace("_", " ").replace("-", " ").lower().split())


class Stepper:
    """The state of a match at one version, moved by single events."""

    def __init__(self, records: list[Record], every: int = KEEP_EVERY) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        self.every = every
        self.events: list[Any] = []
        #: version -> an untouched copy of the state right after that version.
        self._kept: dict[int, MatchAggregate] = {}
        #: How many seats were taken by the end: a seat view needs one of them.
        self.seats_taken = 0
        for event, match in walk(records):
            self.events.append(event)
            self.seats_taken = len(match.players)
            version = len(self.events)
            if version == 1 or version % every == 0:
                self._kept[version] = copy.deepcopy(match)
        if not self.events:
            raise ReplayError("this match has no events")
        self._version = 1
        self._state = copy.deepcopy(self._kept[1])
        self.kinds = kinds_of(self._state)

    @property
    def version(self) -> int:
        return self._version

    @property
    def last(self) -> int:
        return len(self.events)

    @property
    def state(self) -> MatchAggregate:
        """The state right after :attr:`version` (do not change it)."""
        return self._state

    @property
    def event(self) -> Any:
        """The event at :attr:`version`, the one that led to :attr:`state`."""
        return self.events[self._version - 1]

    def forward(self) -> bool:
        """One event on; False (and no change) at the last version."""
        if self._version >= self.last:
            return False
        self._state = apply(self._state, self.events[self._version])
        self._version += 1
        return True

    def back(self) -> bool:
        """One event back; False (and no change) at version 1."""
        if self._version <= 1:
            return False
        self.goto(self._version - 1)
        return True

    def goto(self, version: int) -> None:
        """Move to ``version``: from the nearest kept state at or before it when that is
        closer than the current one (always, going back), then by applying events."""
        if not 1 <= version <= self.last:
            raise ReplayError(
                f"there is no version {version}: this match has versions 1 to {self.last}"
            )
        start = max(v for v in self._kept if v <= version)
        if version < self._version or start > self._version:
            # Back, or far ahead: the nearest kept state is the shorter way there.
            self._state = copy.deepcopy(self._kept[start])
            self._version = start
        while self._version < version:
            self.forward()

    def find(self, kind: str, forwards: bool = True) -> int | None:
        """The version of the next (or previous) event of ``kind``, if there is one."""
        names = self.names_of(kind)
        versions = (
            range(self._version + 1, self.last + 1) if forwards else range(self._version - 1, 0, -1)
        )
        return next((v for v in versions if event_name(self.events[v - 1]) in names), None)

    def names_of(self, kind: str) -> tuple[str, ...]:
        key = kind_key(kind)
        if key not in self.kinds:
            known = ", ".join(sorted(self.kinds))
            raise ReplayError(f"no kind of event {kind!r} in this game; kinds: {known}")
        return self.kinds[key]


# ---- what is shown at each step ----------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """Who is looking: the viewer and how to name them."""

    viewer: Viewer
    who: str
    seat: int | None = None


#: ``--referee``: the one way to see a live match's hidden facts.
referee_option = click.option(
    "--referee",
    is_flag=True,
    help="Show a match still in play as its referee sees it, hidden facts (seed, "
    "face-down cards, secret spells) included. Without it, a live match is shown as a "
    "spectator sees it; an ended match hides nothing.",
)


def viewer_of(seat: int | None, spectator: bool, referee: bool = False, live: bool = False) -> Seen:
    """The viewer asked for; without one, the referee for an ended match, a spectator for
    a live one (its secrets are the referee's and the organisers', asked for by name)."""
    if sum((seat is not None, spectator, referee)) > 1:
        raise click.UsageError("choose one of --seat, --spectator and --referee")
    if seat is not None:
        return Seen(Viewer.player(seat), f"seat {seat}", seat)
    if spectator:
        return Seen(Viewer.spectator(), "a spectator")
    if live and not referee:
        click.echo(
            "note: this match is still being played: shown as a spectator sees it "
            "(--referee shows its hidden facts)",
            err=True,
        )
        return Seen(Viewer.spectator(), "a spectator")
    return Seen(Viewer.referee(), "the referee")


def require_referee(live: bool, referee: bool, what: str) -> None:
    """Refuse ``what`` (which shows everything) for a live match without ``--referee``."""
    if live and not referee:
        raise ReplayError(
            f"this match is still being played: {what} would show its hidden facts; pass "
            "--referee to do it as its referee"
        )


def check_seat(seen: Seen, match: MatchAggregate, version: int) -> None:
    """A seat's view exists only once somebody sits there."""
    if seen.seat is not None and seen.seat >= len(match.players):
        raise ReplayError(
            f"seat {seen.seat} is not taken at version {version} ({len(match.players)} seats taken)"
        )


def frame(stepper: Stepper, seen: Seen) -> dict[str, Any]:
    """What ``seen`` saw at the stepper's version: the event and the state, both through
    the domain's own redaction (the same views the server sends). Before a seat is taken
    its player could only watch as a spectator, so that is what is shown then."""
    match, event = stepper.state, stepper.event
    shown, who = seen.viewer, seen.who
    if seen.seat is not None and seen.seat >= len(match.players):
        shown, who = Viewer.spectator(), f"a spectator (seat {seen.seat} not taken yet)"
    name, event_view = games.event_view(match, event, shown)
    return {
        "version": stepper.version,
        "last": stepper.last,
        "seen_by": who,
        "event": name,
        "timestamp": fmt.when(event.timestamp),
        "summary": games.summary(match, name, event_view),
        "event_view": event_view,
        "state": games.state_view(match, shown),
    }


def frame_lines(stepper: Stepper, data: dict[str, Any]) -> list[Text]:
    head = Text(f"Version {data['version']} of {data['last']}", style="bold")
    head.append(f"  seen by {data['seen_by']}", style="")
    event = Text(f"{data['event']}", style="bold")
    event.append(f"  {data['timestamp']} UTC  {data['summary']}", style="")
    lines = [head, event]
    lines += [Text(line) for line in games.state_lines(stepper.state, data["state"])]
    return lines


# ---- the script language ----------------------------------------------------------

SCRIPT_HELP = """\
One command per line or separated by ';' ('#' starts a comment):
  next | n             one event forwards       back | b | p    one event backwards
  next N | back N      N events                 goto V | g V    to version V
  first | last         version 1 / the last     next KIND       to the next event of KIND
  back KIND            to the previous event of KIND         show    print the current step
  kinds                list the kinds of event this game has
Each move prints the step it arrives at."""


@dataclass(frozen=True)
class Command:
    verb: str
    count: int = 1
    kind: str | None = None


def parse_script(text: str) -> list[Command]:
    """Parse the script language (:data:`SCRIPT_HELP`); a bad line is one clear error."""
    commands: list[Command] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        for part in raw.split("#", 1)[0].split(";"):
            words = part.split()
            if words:
                commands.append(_parse(words, number))
    return commands


_VERBS = {
    "n": "next",
    "next": "next",
    "forward": "next",
    "b": "back",
    "p": "back",
    "back": "back",
    "prev": "back",
    "g": "goto",
    "goto": "goto",
    "first": "first",
    "last": "last",
    "show": "show",
    "kinds": "kinds",
}


def _parse(words: list[str], line: int) -> Command:
    verb = _VERBS.get(words[0].lower())
    rest = words[1:]
    if verb is None:
        raise ReplayError(
            f"script line {line}: unknown command {words[0]!r} "
            "(see step --help; a --script FILE must exist)"
        )
    if verb in ("first", "last", "show", "kinds"):
        if rest:
            raise ReplayError(f"script line {line}: {verb} takes nothing after it")
        return Command(verb)
    if verb == "goto":
        if len(rest) != 1 or not rest[0].isdigit():
            raise ReplayError(f"script line {line}: goto needs one version number")
        return Command(verb, int(rest[0]))
    if not rest:
        return Command(verb)
    if len(rest) == 1 and rest[0].isdigit():
        return Command(verb, int(rest[0]))
    return Command(verb, kind=" ".join(rest))


def perform(stepper: Stepper, command: Command) -> str | None:
    """Carry out one command; return a note when it could not move as asked."""
    if command.verb == "goto":
        stepper.goto(command.count)
    elif command.verb == "first":
        stepper.goto(1)
    elif command.verb == "last":
        stepper.goto(stepper.last)
    elif command.kind is not None:
        forwards = command.verb == "next"
        found = stepper.find(command.kind, forwards)
        if found is None:
            where = "after" if forwards else "before"
            return f"no {kind_key(command.kind)} event {where} version {stepper.version}"
        stepper.goto(found)
    elif command.verb in ("next", "back"):
        move = stepper.forward if command.verb == "next" else stepper.back
        for _ in range(command.count):
            if not move():
                return "already at the " + ("last version" if command.verb == "next" else "first")
    return None


def kinds_text(stepper: Stepper) -> str:
    return "kinds: " + "; ".join(
        f"{kind} ({', '.join(names)})" for kind, names in sorted(stepper.kinds.items())
    )


# ---- the command ---------------------------------------------------------------------


class Output:
    """Prints steps as text or JSON Lines."""

    def __init__(self, stepper: Stepper, seen: Seen, as_json: bool) -> None:
        self.stepper, self.seen, self.as_json = stepper, seen, as_json
        self.console: Console = fmt.console()

    def step(self) -> None:
        data = frame(self.stepper, self.seen)
        if self.as_json:
            click.echo(json.dumps(data, ensure_ascii=False))
            return
        for line in frame_lines(self.stepper, data):
            self.console.print(line)

    def note(self, text: str) -> None:
        if self.as_json:
            click.echo(json.dumps({"note": text}, ensure_ascii=False))
        else:
            self.console.print(Text(text, style="yellow"))


def run_script(stepper: Stepper, commands: Sequence[Command], out: Output) -> None:
    for command in commands:
        if command.verb == "kinds":
            out.note(kinds_text(stepper))
            continue
        note = perform(stepper, command)
        if note is not None:
            out.note(note)
        out.step()


def read_script(text: str) -> str:
    """``--script``: the commands themselves, or a file holding them, or ``-`` for stdin."""
    if text == "-":
        return sys.stdin.read()
    path = Path(text)
    if "\n" not in text and ";" not in text and path.is_file():
        return path.read_text(encoding="utf-8")
    return text


KEYS_HELP = (
    "keys: n/→ next  p/← back  g+number+Enter go to version  k+kind+Enter next of kind  "
    "K+kind+Enter previous of kind  f first  l last  ? kinds  q quit"
)

#: Escape sequences of the arrow keys, as click.getchar returns them.
ARROWS = {"\x1b[C": "n", "\x1b[D": "p", "\xe0M": "n", "\xe0K": "p"}


def keys(getchar: Callable[[], str]) -> Iterator[str]:
    while True:
        key = getchar()
        yield ARROWS.get(key, key)


def interactive(stepper: Stepper, out: Output, getchar: Callable[[], str]) -> None:
    """Single keys at a terminal; each move redraws the step and the help line."""
    out.step()
    out.console.print(Text(KEYS_HELP, style="dim"))
    for key in keys(getchar):
        command = _key_command(key)
        if command == "quit":
            return
        if command is None:
            continue
        try:
            commands = parse_script(command)
            out.console.clear()
            run_script(stepper, commands, out)
        except ReplayError as exc:
            out.note(str(exc))
        out.console.print(Text(KEYS_HELP, style="dim"))


def _key_command(key: str) -> str | None:
    if key in ("q", "Q", "\x03", "\x04", "\x1b"):
        return "quit"
    simple = {"n": "next", " ": "next", "p": "back", "b": "back", "f": "first", "l": "last"}
    if key in simple:
        return simple[key]
    if key == "?":
        return "kinds"
    if key == "g":
        number = click.prompt("go to version", default="", show_default=False)
        return f"goto {number.strip()}" if number.strip() else None
    if key in ("k", "K"):
        kind = click.prompt("kind", default="", show_default=False)
        verb = "next" if key == "k" else "back"
        return f"{verb} {kind.strip()}" if kind.strip() else None
    return None


def kinds_help() -> str:
    """The kinds of event ``next KIND`` knows, as ``step --help`` lists them: those of
    every game, then each game's own with its notes (``grab (any grab)``), from the
    registry, so that a game's kinds are listed where they are defined."""
    per_game = "; ".join(
        f"{game.title} "
        + ", ".join(
            f"{kind} ({game.kind_notes[kind]})" if kind in game.kind_notes else kind
            for kind in game.kinds
        )
        for game in games.REPLAYS.values()
    )
    return f"Kinds: {', '.join(COMMON_KINDS)}, and per game: {per_game}."


#: ``step --help``.
STEP_HELP = f"""Walk through a match, drawing the event and the board at each step.

At a terminal, single keys move: n or → next, p or ← back, g then a version, k then a
kind (next event of that kind, K the previous one), f first, l last, ? kinds, q quit.
With --to or --script, or when input is not a terminal, it runs without keys: --to V
prints version V; --script runs the commands (one per line or ';'-separated) after
--to (or from version 1), printing each step it arrives at:

\b
  next | n [N]      N events forwards (1)    back | b | p [N]   N events backwards
  goto V | g V      to version V             first | last
  next KIND         next event of KIND       back KIND          previous one
  show              print the current step   kinds              the game's kinds

{kinds_help()} Each event and state is shown as the viewer (--seat N, --spectator,
--referee; else the referee for an ended match, a spectator for one still in play)
saw it, through the server's own redaction.
"""


@click.command(short_help="Walk through a match event by event (keys or a script).", help=STEP_HELP)
@click.argument("match_text", metavar="MATCH")
@click.option("--seat", type=click.IntRange(min=0), help="Show what this seat's player saw.")
@click.option("--spectator", is_flag=True, help="Show what a spectator saw.")
@click.option(
    "--to",
    "to_version",
    type=click.IntRange(min=1),
    help="Go to this version, print it and stop (not interactive).",
)
@click.option(
    "--script",
    metavar="TEXT|FILE",
    help="Run these commands (or the commands in FILE, or '-' for stdin) and stop.",
)
@click.option("--json", "as_json", is_flag=True, help="Print each step as a JSON line.")
@referee_option
@click.pass_obj
def step(
    settings: HasStore,
    match_text: str,
    seat: int | None,
    spectator: bool,
    referee: bool,
    to_version: int | None,
    script: str | None,
    as_json: bool,
) -> None:
    """``step``: its help is :data:`STEP_HELP`, which lists each game's kinds of event
    from the registry (:mod:`replay.games`)."""
    loaded = load(settings.db, match_text)
    seen = viewer_of(seat, spectator, referee, loaded.live)
    stepper = Stepper(loaded.records)
    if seen.seat is not None and seen.seat >= stepper.seats_taken:
        raise ReplayError(
            f"seat {seen.seat} is never taken in this match ({stepper.seats_taken} seats taken)"
        )
    out = Output(stepper, seen, as_json)
    commands = parse_script(read_script(script)) if script is not None else None
    if to_version is not None:
        stepper.goto(to_version)
    if commands is not None:
        if to_version is not None:
            out.step()
        run_script(stepper, commands, out)
    elif to_version is not None:
        out.step()
    elif not sys.stdin.isatty():
        # Not a terminal and nothing asked: the script is on stdin (maybe empty).
        run_script(stepper, [Command("show"), *parse_script(sys.stdin.read())], out)
    else:
        interactive(stepper, out, lambda: click.getchar())
    warn_if_broken(settings.db, loaded)
