"""Replaying a long match: the replay tool against the library reloading the aggregate.

The match: a genuine 4-player Jungle Speed match (ES, no timer) made through the
application, brought to ``--events`` events by late grabs (JS-5.3: grabs by a race's
participants after it was decided, recorded, changing nothing), spread at random over its
decided races; made before anything is timed. Measured on the store opened read-only as
``totem-replay`` opens it: every step (``read_records`` and ``walk`` over all events, as
``totem-replay events``), ``at N`` for ``--versions`` random versions, and the baseline
``arena.repository.get(match_id, version=N)`` for the same versions; reloading at every
version is extrapolated from those (a least-squares line a + b*N summed over 1..E), not
run. Medians of ``--repetitions``, the two alternating which goes first; ratios are
baseline / replay tool.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from unittest import mock
from uuid import UUID

from bench import harness
from domain.jungle_speed import JungleSpeed, Options
from domain.kernel import MatchStatus, ReceiveStamp
from replay.store import last_event, open_arena, read_records, walk
from storage.arena import Arena

PLAYERS = 4
#: Events saved per transaction while the match is made.
SAVE_BATCH = 10_000
#: Chance that an open duel is left open for now (JS-4.7) while play goes on.
LEAVE_DUEL_OPEN = 0.3
#: Chance of a grab with nothing to win (JS-5.2) when nothing is open.
WRONG_GRAB = 0.03
ENTROPY = b"\x01\x02"
START_WALL_NS = 1_700_000_000_000_000_000
OPTIONS = Options(variant="ES", max_players=PLAYERS, turn_timeout_ms=0)


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


def play(match: JungleSpeed, seed: int, limit: int, stamps: Stamps) -> Iterator[list[int]]:
    """The seats join, then one legal command after another until the match ends or has
    ``limit`` events; after each, the seats for which a grab now is late (JS-5.3): the
    participants of a race it just decided."""
    rng = random.Random(seed)
    for seat in range(PLAYERS):
        match.join(f"player{seat}", bytes([seat, 7, 7]), f"token-hash-{seat}", stamps())
    while match.status is MatchStatus.PLAYING and match.version < limit:
        duels, luck = match.open_duels(), rng.random()
        blocked = match.turn is None or match.reveal_refusal(match.turn) is not None
        active = [s for s in match.seats if match.active(s)]
        if duels and (luck >= LEAVE_DUEL_OPEN or blocked):
            outcome = match.grab(rng.choice(duels[0]), stamps())  # JS-4.2
        elif match.open_arrows():
            outcome = match.grab(rng.choice(active), stamps())  # JS-6.1
        elif luck < WRONG_GRAB or blocked or match.turn is None:
            outcome = match.grab(rng.choice(active), stamps())  # JS-5.2
        else:
            match.reveal(match.turn, stamps())  # JS-3.1
            outcome = "reveal"
        decided = outcome in ("duel", "arrows") and match.status is MatchStatus.PLAYING
        after = [s for s in match.seats if decided and match.active(s)]
        yield [s for s in after if match.grab_outcome(s)[0] == "late"]


def build(env: dict[str, str], events: int, seed: int, store: str) -> tuple[UUID, int]:
    """Make and save the match (see the module's text), not measured: its id and length.
    It is played in memory first, without late grabs, for its length and its races."""
    began = time.perf_counter()
    secret = random.Random(seed).randbytes(32)
    rehearsal = JungleSpeed.create(OPTIONS, secret, ENTROPY)
    races = sum(bool(late) for late in play(rehearsal, seed, events, Stamps()))
    own, ended = rehearsal.version, rehearsal.status is not MatchStatus.PLAYING
    missing = events - own if ended else 0
    if missing and not races:
        raise SystemExit(f"seed {seed}: no race was decided, so no late grab is possible")
    spread = random.Random(seed + 1)
    quota = Counter(spread.choices(range(races), k=missing))
    arena = Arena(env, seed_source=lambda: secret)
    try:
        match = arena.create_match(lambda s: JungleSpeed.create(OPTIONS, s, ENTROPY))
        assert isinstance(match, JungleSpeed)
        stamps, race, saved = Stamps(), 0, 0
        for grabbers in play(match, seed, events, stamps):
            for _ in range(quota[race] if grabbers else 0):
                late = match.grab(spread.choice(grabbers), stamps(after_ms=2))
                assert late == "late", late
            race += bool(grabbers)
            if match.version - saved >= SAVE_BATCH:
                arena.save(match)
                saved = match.version
        arena.save(match)
    finally:
        arena.close()
    # A match cut in play may pass ``events`` by the few events of its last command.
    if match.version != events and (ended or match.version < events):
        raise SystemExit(f"the match has {match.version} events, not {events}")
    print(
        f"{store}: match of {match.version:,} events, {min(own, match.version):,} of its own "
        f"play ({'ended' if ended else 'cut, still in play'}) and {missing:,} late grabs after "
        f"{races} decided races; made in {time.perf_counter() - began:.1f} s"
    )
    return match.id, match.version


# ---- measuring --------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    """One use of the replay tool: reading the records, then walking them (seconds)."""

    read: float
    walk: float

    @property
    def total(self) -> float:
        return self.read + self.walk


def replay_tool(arena: Arena, match_id: UUID, version: int | None) -> Tool:
    """What ``totem-replay at MATCH N`` (a version) or ``events`` (None: every step)
    does before it renders anything."""
    began = time.perf_counter()
    records = read_records(arena, match_id, version)  # ``at`` reads only up to N
    if version is not None:
        last_event(arena, match_id)  # ``at`` names the match's length too
    read = time.perf_counter()
    last = None
    for _event, match in walk(records, version):
        last = match
    assert last is not None and last.version == (version or records[-1].version)
    return Tool(read - began, time.perf_counter() - read)


def reload(arena: Arena, match_id: UUID, version: int) -> float:
    """The baseline: the library rebuilds the aggregate at ``version`` from the store."""
    began = time.perf_counter()
    assert arena.repository.get(match_id, version=version).version == version
    return time.perf_counter() - began


def median_tool(samples: list[Tool]) -> Tool:
    return Tool(*(statistics.median(getattr(s, f) for s in samples) for f in ("read", "walk")))


def measure(
    arena: Arena, match_id: UUID, versions: list[int], repetitions: int, rng: random.Random
) -> tuple[Tool, dict[int, tuple[Tool, float]]]:
    """Every step once per repetition, then each version in a fresh random order, the two
    alternating which goes first. Medians over the repetitions: every step's, and each
    version's (replay tool, baseline)."""
    every: list[Tool] = []
    tools: dict[int, list[Tool]] = {v: [] for v in versions}
    baselines: dict[int, list[float]] = {v: [] for v in versions}
    for repetition in range(repetitions):
        every.append(replay_tool(arena, match_id, None))
        for version in rng.sample(versions, len(versions)):
            for which in (0, 1) if repetition % 2 == 0 else (1, 0):
                if which == 0:
                    tools[version].append(replay_tool(arena, match_id, version))
                else:
                    baselines[version].append(reload(arena, match_id, version))
    at = {v: (median_tool(tools[v]), statistics.median(baselines[v])) for v in versions}
    return median_tool(every), at


def fit_line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares t = a + b*N through the points (N, t); through the origin instead
    when that line would give a negative fixed cost, which no reload has."""
    xs, ys = [float(x) for x, _ in points], [y for _, y in points]
    if len(set(xs)) >= 2:
        slope, intercept = statistics.linear_regression(xs, ys)
        if intercept >= 0:
            return intercept, slope
    return 0.0, sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)


def report(every: Tool, at: dict[int, tuple[Tool, float]], events: int) -> None:
    a, b = fit_line([(v, base) for v, (_, base) in at.items()])
    baseline = events * a + b * events * (events + 1) / 2  # a + b*N summed over 1..events
    print(
        f"\nEvery step: replay tool {every.total:,.2f} s (read {every.read:,.2f} + walk "
        f"{every.walk:,.2f}), reloading at each version {baseline:,.0f} s (extrapolated: "
        f"{a * 1e3:,.0f} ms + {b * 1e6:,.1f} µs * N, summed over N = 1..{events:,}): ratio "
        f"{baseline / every.total:,.2f}\n"
    )
    rows = []
    for v, (t, base) in sorted(at.items()):
        millis = (f"{x * 1e3:,.0f}" for x in (t.read, t.walk, t.total, base))
        rows.append([f"{v:,}", *millis, f"{base / t.total:,.2f}"])
    header = ["version N", "replay: read ms", "walk ms", "total ms", "repository.get ms", "ratio"]
    print(harness.markdown_table(header, rows))
    tool, base = sum(t.total for t, _ in at.values()), sum(b for _, b in at.values())
    ratio = f"{base / tool:,.2f}"
    print(
        f"\nAll {len(at)} versions: {tool * 1e3:,.0f} ms against {base * 1e3:,.0f}, ratio {ratio}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = harness.arguments(__doc__, root=False)
    parser.add_argument("--events", type=int, default=100_000, help="events in the match")
    parser.add_argument("--versions", type=int, default=8, help="random versions for `at`")
    parser.add_argument("--repetitions", type=int, default=3, help="the median is kept")
    parser.add_argument("--seed", type=int, default=1, help="the match's moves and versions")
    args = parser.parse_args(argv)
    if not 2 <= args.versions <= args.events:
        parser.error("--versions must be between 2 and --events")
    print(harness.machine_line())
    with harness.fresh_store(args.store, args.dsn) as (env, name, _):
        match_id, events = build(env, args.events, args.seed, name)
        rng = random.Random(args.seed + 2)
        versions = rng.sample(range(1, events + 1), args.versions)
        # The replay tool takes PostgreSQL's settings from the process's environment.
        with mock.patch.dict(os.environ, env), open_arena(env.get("SQLITE_DBNAME", "")) as arena:
            every, at = measure(arena, match_id, versions, args.repetitions, rng)
            report(every, at, events)


if __name__ == "__main__":
    main()
