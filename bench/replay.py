"""Replaying a long match: the replay tool against reloading the aggregate at each version.

Run ``python bench/replay.py --help`` for the options. Everything runs in this process, on
a fresh store made for the run (a temporary SQLite file, or a PostgreSQL schema made for
the run and dropped after it).

The match. One genuine Jungle Speed match (ES, 4 players, turn timer off) of ``--events``
events (100,000 by default), made through the application (``storage.arena.Arena``
and the domain's commands, as the server makes them) and saved in batches of
:data:`SAVE_BATCH` events. A real match ends after a few hundred events, so its length
comes from late grabs (JS-5.3): after a duel or an inward-arrows race is decided, a grab
by one of its participants before the next reveal is recorded as late and changes
nothing, as when players keep slapping the totem after the race is over. Every such grab
is a stored event like any other. The match is first played in memory without them, to
count its decided races and its own events; it is then played again, the same moves in
the same order, with the missing events spread at random over those races as late grabs
by their participants, so that it ends at exactly ``--events`` events. Moves: a duel is
grabbed by one of its players (or left open for a while), an inward-arrows race by any
player, now and then someone grabs with nothing to win (a wrong grab, JS-5.2, which also
unblocks a table where nobody can reveal), otherwise the player whose turn it is reveals.
If the match would run past ``--events`` without late grabs, it is cut there, still in
play (after the command that reaches it, which may add an event or two). Making the
match is set-up: it is not measured.

What is measured, on a store opened read-only as ``totem-replay`` opens it
(``replay.store.open_arena``):

- **every step** (replay tool): read the match's records (``replay.store.read_records``:
  one query, each event decoded) and walk them all (``replay.store.walk``: each event
  applied in turn, the state after each one available), as ``totem-replay events`` and
  ``show`` do; total and per step (rendering the lines is not included);
- **at a version** (replay tool): read the records up to version N and walk them, as
  ``totem-replay at MATCH N`` does, for ``--versions`` random versions;
- **baseline**: ``arena.repository.get(match_id, version=N)``, the library reloading the
  aggregate from its stored events, for the same versions. For every step the baseline
  is reloading at each version 1 to E in turn: that is not run (it would take hours) but
  extrapolated from the sampled versions with a least-squares line a + b*N (the time to
  reload at version N), summed over N = 1..E; the output says so.

Each repetition (``--repetitions``) walks every step once, then times each version in a
fresh random order, the replay tool and the baseline alternating which goes first, so
that other work on the machine falls on both alike; the medians are kept. Wall time is
printed with this process's CPU time beside it, the steadier figure on a busy machine
(with PostgreSQL the server's own work is not in it). Ratios are baseline / replay tool: above
1 the replay tool is faster. ``--profile`` adds a short cProfile of one of each. The load
average is printed before and after: the machine may be busy with other work. Figures go
to docs/performance.md; tests never assert a duration.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

# Run as ``python bench/replay.py``, this file's folder comes first on the path and its
# name would hide the ``replay`` package that it measures.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from bench.harness import DEFAULT_DSN  # noqa: E402
from domain.jungle_speed import JungleSpeed, Options  # noqa: E402
from domain.kernel import MatchStatus, ReceiveStamp  # noqa: E402
from replay.store import last_event, open_arena, read_records, walk  # noqa: E402
from storage.arena import Arena, postgres_env  # noqa: E402

PLAYERS = 4
#: Events saved per transaction while the match is made.
SAVE_BATCH = 10_000
#: Chance that an open duel is left open for now (JS-4.7) while play goes on.
LEAVE_DUEL_OPEN = 0.3
#: Chance of a grab with nothing to win (JS-5.2) when nothing is open.
WRONG_GRAB = 0.03
ENTROPY = b"\x01\x02"
START_WALL_NS = 1_700_000_000_000_000_000


# ---- making the match ---------------------------------------------------------------------


class Stamps:
    """Receive stamps in increasing order; commands 40 ms apart, late grabs 2 ms."""

    def __init__(self) -> None:
        self.sequence = 0
        self.wall_ns = START_WALL_NS

    def __call__(self, after_ms: float = 40) -> ReceiveStamp:
        self.sequence += 1
        self.wall_ns += int(after_ms * 1_000_000)
        return ReceiveStamp(self.sequence, self.wall_ns, self.wall_ns)


def options() -> Options:
    return Options(variant="ES", max_players=PLAYERS, turn_timeout_ms=0)


def join_all(match: JungleSpeed, stamps: Stamps) -> None:
    for seat in range(PLAYERS):
        match.join(f"player{seat}", bytes([seat, 7, 7]), f"token-hash-{seat}", stamps())


def play_one(match: JungleSpeed, rng: random.Random, stamps: Stamps) -> str:
    """One legal command; returns what it was ("reveal", or the grab's outcome)."""
    duels, luck = match.open_duels(), rng.random()
    blocked = match.turn is None or match.reveal_refusal(match.turn) is not None
    active = [s for s in match.seats if match.active(s)]
    if duels and (luck >= LEAVE_DUEL_OPEN or blocked):
        return match.grab(rng.choice(duels[0]), stamps())  # JS-4.2
    if match.open_arrows():
        return match.grab(rng.choice(active), stamps())  # JS-6.1
    if luck < WRONG_GRAB or blocked or match.turn is None:
        return match.grab(rng.choice(active), stamps())  # JS-5.2
    match.reveal(match.turn, stamps())  # JS-3.1
    return "reveal"


def late_grabbers(match: JungleSpeed) -> list[int]:
    """Seats for which a grab now is late (JS-5.3): participants of a race just decided."""
    if match.status is not MatchStatus.PLAYING:
        return []
    return [s for s in match.seats if match.active(s) and match.grab_outcome(s)[0] == "late"]


def rehearse(seed: bytes, moves_seed: int, limit: int) -> tuple[int, int, bool]:
    """Play the match in memory without late grabs: its events, the decided races after
    which someone could grab late, and whether it ended within ``limit`` events."""
    match = JungleSpeed.create(options(), seed, ENTROPY)
    stamps, rng, races = Stamps(), random.Random(moves_seed), 0
    join_all(match, stamps)
    while match.status is MatchStatus.PLAYING and match.version < limit:
        if play_one(match, rng, stamps) in ("duel", "arrows") and late_grabbers(match):
            races += 1
    return match.version, races, match.status is not MatchStatus.PLAYING


@dataclass(frozen=True)
class Built:
    match_id: UUID
    events: int
    own_events: int
    late_grabs: int
    races: int
    ended: bool
    seconds: float


def build(env: dict[str, str], events: int, seed: int) -> Built:
    """Make and save the match (see the module's text); not measured."""
    began = time.perf_counter()
    secret = random.Random(seed).randbytes(32)
    own, races, ended = rehearse(secret, seed, events)
    missing = events - own if ended else 0
    if missing and not races:
        raise SystemExit(f"seed {seed}: no race was decided, so no late grab is possible")
    spread = random.Random(seed + 1)
    quota = Counter(spread.choices(range(races), k=missing))
    arena = Arena(env, seed_source=lambda: secret)
    try:
        created = arena.create_match(lambda s: JungleSpeed.create(options(), s, ENTROPY))
        assert isinstance(created, JungleSpeed)
        match, stamps, rng, race, saved = created, Stamps(), random.Random(seed), 0, 0
        join_all(match, stamps)
        while match.status is MatchStatus.PLAYING and match.version < events:
            outcome = play_one(match, rng, stamps)
            grabbers = late_grabbers(match) if outcome in ("duel", "arrows") else []
            if grabbers:
                for _ in range(quota[race]):
                    late = match.grab(spread.choice(grabbers), stamps(after_ms=2))
                    assert late == "late", late
                race += 1
            if match.version - saved >= SAVE_BATCH:
                arena.save(match)
                saved = match.version
        arena.save(match)
    finally:
        arena.close()
    # A match cut in play may pass ``events`` by the few events of its last command.
    if match.version != events and (ended or match.version < events):
        raise SystemExit(f"the match has {match.version} events, not {events}")
    seconds = time.perf_counter() - began
    return Built(match.id, match.version, min(own, match.version), missing, races, ended, seconds)


# ---- the store --------------------------------------------------------------------------


@dataclass(frozen=True)
class Store:
    env: dict[str, str]
    #: ``--db`` and environment for ``replay.store.open_arena``, as ``totem-replay`` gets them.
    db: str
    environ: dict[str, str]
    name: str


@contextlib.contextmanager
def fresh_store(kind: str, dsn: str) -> Iterator[Store]:
    """An empty store for the run: a temporary SQLite file, or a PostgreSQL schema of the
    run's own, dropped after it."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            path = str(Path(tmp) / "replay.db")
            env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path}
            yield Store(env, path, {}, "SQLite (a temporary file)")
        return
    import psycopg

    schema = f"totem_bench_{uuid.uuid4().hex[:12]}"
    env = postgres_env(dsn, schema)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)  # the replay tool takes PostgreSQL's settings from here
    try:
        yield Store(env, "", env, f"PostgreSQL (schema {schema}, over loopback)")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


# ---- measuring --------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    """One use of the replay tool: reading the records, then walking them (wall time),
    and the CPU time this process spent on both."""

    read: float
    walk: float
    cpu: float

    @property
    def total(self) -> float:
        return self.read + self.walk


@dataclass(frozen=True)
class Reload:
    """One use of the baseline: wall time and this process's CPU time."""

    wall: float
    cpu: float


def replay_tool(arena: Arena, match_id: UUID, version: int | None) -> Tool:
    """What ``totem-replay at MATCH N`` (a version) or ``events`` (None: every step)
    does before it renders anything."""
    cpu, began = time.process_time(), time.perf_counter()
    records = read_records(arena, match_id, version)  # ``at`` reads only up to N
    if version is not None:
        last_event(arena, match_id)  # ``at`` names the match's length too
    read = time.perf_counter()
    last = None
    for _event, match in walk(records, version):
        last = match
    done, cpu = time.perf_counter(), time.process_time() - cpu
    assert last is not None and last.version == (version or records[-1].version)
    return Tool(read - began, done - read, cpu)


def reload(arena: Arena, match_id: UUID, version: int) -> Reload:
    """The baseline: the library rebuilds the aggregate at ``version`` from the store."""
    cpu, began = time.process_time(), time.perf_counter()
    match = arena.repository.get(match_id, version=version)
    done, cpu = time.perf_counter(), time.process_time() - cpu
    assert match.version == version
    return Reload(done - began, cpu)


def median_tool(samples: list[Tool]) -> Tool:
    return Tool(
        statistics.median(s.read for s in samples),
        statistics.median(s.walk for s in samples),
        statistics.median(s.cpu for s in samples),
    )


def median_reload(samples: list[Reload]) -> Reload:
    return Reload(
        statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples)
    )


@dataclass(frozen=True)
class AtVersion:
    version: int
    tool: Tool
    baseline: Reload


def measure(
    arena: Arena, match_id: UUID, versions: list[int], repetitions: int, rng: random.Random
) -> tuple[Tool, list[AtVersion]]:
    """Every step once per repetition, then each version, in a fresh random order each
    time and with the two alternating which goes first, so that other work on the machine
    falls on both alike. Medians over the repetitions."""
    every: list[Tool] = []
    tools: dict[int, list[Tool]] = {v: [] for v in versions}
    baselines: dict[int, list[Reload]] = {v: [] for v in versions}
    for repetition in range(repetitions):
        every.append(replay_tool(arena, match_id, None))
        for version in rng.sample(versions, len(versions)):
            if repetition % 2 == 0:
                tools[version].append(replay_tool(arena, match_id, version))
                baselines[version].append(reload(arena, match_id, version))
            else:
                baselines[version].append(reload(arena, match_id, version))
                tools[version].append(replay_tool(arena, match_id, version))
    rows = [AtVersion(v, median_tool(tools[v]), median_reload(baselines[v])) for v in versions]
    return median_tool(every), rows


def fit_line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares t = a + b*N through the points (N, t); through the origin instead
    when that line would give a negative fixed cost, which no reload has."""
    xs, ys = [float(x) for x, _ in points], [y for _, y in points]
    if len(set(xs)) >= 2:
        slope, intercept = statistics.linear_regression(xs, ys)
        if intercept >= 0:
            return intercept, slope
    return 0.0, sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)


def reload_every_version(a: float, b: float, events: int) -> float:
    """Sum over N = 1..events of a + b*N: reloading the aggregate at each version."""
    return events * a + b * events * (events + 1) / 2


def profiled(call: Callable[[], object], top: int) -> str:
    profile = cProfile.Profile()
    profile.runcall(call)
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    total = next((line.strip() for line in lines if "function calls" in line), "")
    return "\n".join([f"#   {total}", *(f"#   {line}" for line in lines[start:] if line)])


# ---- the report -------------------------------------------------------------------------


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f}"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def ratio(baseline: float, tool: float) -> str:
    return f"{baseline / tool:,.2f}"


def report_versions(rows: list[AtVersion], events: int) -> None:
    print("\nAt a version: `totem-replay at` (read + walk to N) against `repository.get`:\n")
    print("| version N | replay: read ms | walk ms | total ms | repository.get ms | ratio |")
    print("|---|---|---|---|---|---|")
    for row in sorted(rows, key=lambda r: r.version):
        t = row.tool
        print(
            f"| {row.version:,} | {ms(t.read)} | {ms(t.walk)} | {ms(t.total)} "
            f"| {ms(row.baseline.wall)} | {ratio(row.baseline.wall, t.total)} |"
        )
    tool = sum(r.tool.total for r in rows)
    base = sum(r.baseline.wall for r in rows)
    ratios = [r.baseline.wall / r.tool.total for r in rows]
    print(
        f"\nAll {len(rows)} versions: replay tool {ms(tool)} ms, repository.get {ms(base)} ms, "
        f"ratio {ratio(base, tool)} (per version: median {statistics.median(ratios):.2f}, "
        f"{min(ratios):.2f} to {max(ratios):.2f})."
    )
    tool_cpu = sum(r.tool.cpu for r in rows)
    base_cpu = sum(r.baseline.cpu for r in rows)
    print(
        f"In CPU time of this process: replay tool {ms(tool_cpu)} ms, repository.get "
        f"{ms(base_cpu)} ms, ratio {ratio(base_cpu, tool_cpu)}."
    )
    walk_per_event = statistics.median(r.tool.walk / r.version for r in rows)
    read_per_event = statistics.median(r.tool.read for r in rows) / events
    a, b = fit_line([(r.version, r.baseline.wall) for r in rows])
    if b > walk_per_event:
        even = events * read_per_event / (b - walk_per_event)
        where = f"so it is the faster of the two below N = {even:,.0f}"
    else:
        where = "so it is the faster of the two at every N"
    print(
        f"Per event: the replay tool reads and decodes {us(read_per_event)} µs (all "
        f"{events:,} events, whatever N) and applies {us(walk_per_event)} µs (N events); "
        f"repository.get takes {us(b)} µs per event up to N (plus {ms(a)} ms), {where}."
    )


def report_every_step(every: Tool, rows: list[AtVersion], events: int) -> None:
    a, b = fit_line([(r.version, r.baseline.wall) for r in rows])
    baseline = reload_every_version(a, b, events)
    a_cpu, b_cpu = fit_line([(r.version, r.baseline.cpu) for r in rows])
    baseline_cpu = reload_every_version(a_cpu, b_cpu, events)
    print("\nEvery step: the replay tool walks once; the baseline reloads at each version.\n")
    print("| every step | replay tool | repository.get at each version (extrapolated) | ratio |")
    print("|---|---|---|---|")
    print(
        f"| total | {every.total:,.2f} s (read {every.read:,.2f} + walk {every.walk:,.2f}) "
        f"| {baseline:,.0f} s ({baseline / 3600:,.1f} h) | {ratio(baseline, every.total)} |"
    )
    print(
        f"| per step | {us(every.total / events)} µs | {ms(baseline / events)} ms "
        f"| {ratio(baseline, every.total)} |"
    )
    print(
        f"| CPU time, total | {every.cpu:,.2f} s | {baseline_cpu:,.0f} s "
        f"| {ratio(baseline_cpu, every.cpu)} |"
    )
    print(
        f"\nThe baseline is not run: reloading at version N took about {ms(a)} ms + "
        f"{us(b)} µs * N (least squares over the {len(rows)} versions below), summed over "
        f"N = 1..{events:,}."
    )


HELP = """\
Time replaying one long match (--events events) with the replay tool against the
eventsourcing library reloading the aggregate, both measured in this run, on a fresh
store read-only as totem-replay opens it. Not a test: nothing passes or fails.

  every step   replay.store.read_records (one query, every event decoded) and
               replay.store.walk over all events, as `totem-replay events` does;
               total and per step
  at N         read_records up to version N and walk them, as `totem-replay at MATCH N`,
               for --versions random versions
  baseline     arena.repository.get(match_id, version=N) for the same versions; for
               every step, reloading at each version 1..E, extrapolated from them
               with a line a + b*N (not run: it would take hours)

Printed: wall times (and this process's CPU time) and the ratios baseline / replay
tool, above 1 when the replay tool is faster; the load average before and after.
The match is a genuine 4-player Jungle Speed match (ES) made through the application
before anything is timed, brought to --events events by late grabs (JS-5.3): grabs
by a race's participants after it was decided, which are recorded and change nothing.
"""


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/replay.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=HELP,
    )
    parser.add_argument(
        "--events", type=int, default=100_000, help="events in the match (default 100000)"
    )
    parser.add_argument(
        "--store",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="a temporary SQLite file, or a PostgreSQL schema made and dropped by the run",
    )
    parser.add_argument(
        "--dsn", default=DEFAULT_DSN, help="PostgreSQL to use with --store postgres"
    )
    parser.add_argument(
        "--versions",
        type=int,
        default=8,
        help="random versions for `at` and the baseline (default 8)",
    )
    parser.add_argument(
        "--repetitions",
        type=int,
        default=3,
        help="times each measurement is taken, the median kept (default 3)",
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="the match's moves and the versions (default 1)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also profile one of each with cProfile"
    )
    args = parser.parse_args(argv)
    if args.events < 10:
        parser.error("--events must be at least 10")
    if not 2 <= args.versions <= args.events:
        parser.error("--versions must be between 2 and --events")
    if args.repetitions < 1:
        parser.error("--repetitions must be at least 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    shown = " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# python bench/replay.py {shown}".rstrip())
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores ({cpu_model()})"
    )
    print(f"# load average at the start: {load()}")
    with fresh_store(args.store, args.dsn) as store:
        print(f"# store: {store.name}")
        built = build(store.env, args.events, args.seed)
        print(
            f"# match {built.match_id}: {built.events:,} events, {built.own_events:,} of its "
            f"own play ({'ended' if built.ended else 'cut, still in play'}) and "
            f"{built.late_grabs:,} late grabs after {built.races} decided races; made and "
            f"saved in {built.seconds:.1f} s (not measured)"
        )
        rng = random.Random(args.seed + 2)
        versions = rng.sample(range(1, built.events + 1), args.versions)
        began = time.perf_counter()
        with open_arena(store.db, store.environ) as arena:
            every, rows = measure(arena, built.match_id, versions, args.repetitions, rng)
            report_every_step(every, rows, built.events)
            report_versions(rows, built.events)
            if args.profile:
                middle = sorted(versions)[len(versions) // 2]
                print(f"\n# cProfile, `at` version {middle:,} with the replay tool:")
                print(profiled(lambda: replay_tool(arena, built.match_id, middle), 12))
                print(f"# cProfile, repository.get at version {middle:,}:")
                print(profiled(lambda: reload(arena, built.match_id, middle), 12))
        print(f"\n# measured in {time.perf_counter() - began:.0f} s")
    print(f"# load average at the end: {load()}")


if __name__ == "__main__":
    main()
