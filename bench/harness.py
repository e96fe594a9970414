"""The benchmarks' shared pieces: ``totem serve`` in a process of its own on a fresh store
(a temporary SQLite file or a PostgreSQL schema made for the run), from this tree or from
``--server-root DIR``; a fresh store's environment for a server run in-process;
percentiles and chi-square tests; markdown tables; the common options.

Each script in this folder answers one question of docs/performance.md and imports what
it needs from here (``python bench/NAME.py`` puts this folder first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import os
import platform
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from storage.arena import postgres_env

#: The benchmarks' organiser: only an organiser may create matches.
ORGANISER_TOKEN = secrets.token_urlsafe(32)
ORGANISER = (("authorization", f"Bearer {ORGANISER_TOKEN}"),)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DSN = os.environ.get(
    "TOTEM_TEST_POSTGRES", "host=127.0.0.1 port=5432 user=postgres dbname=test"
)
#: Seconds any one step (a call, a reply from a process) may take before the run stops.
STEP_TIMEOUT = 30.0


# ---- statistics -------------------------------------------------------------------------


def upper_gamma_regularized(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): a series below x = a + 1, a continued fraction above
    (the classic Numerical Recipes pair, ``gser`` and ``gcf``)."""
    if x <= 0:
        return 1.0
    log_prefactor = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return math.exp(log_prefactor) * h


def chi_square_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for a chi-square variable with ``dof`` degrees of freedom."""
    return upper_gamma_regularized(dof / 2, statistic / 2)


def chi_square_uniform(counts: Sequence[int]) -> tuple[float, float]:
    """Pearson's statistic for ``counts`` against equal shares, and its p-value."""
    total = sum(counts)
    if total == 0 or len(counts) < 2:
        return 0.0, 1.0
    expected = total / len(counts)
    statistic = sum((c - expected) ** 2 / expected for c in counts)
    return statistic, chi_square_sf(statistic, len(counts) - 1)


def chi_square_against(counts: Sequence[int], expected: Sequence[int]) -> tuple[float, float]:
    """Pearson's statistic for ``counts`` against the shares of ``expected``, and its
    p-value: do the counts follow that other distribution?"""
    total, base = sum(counts), sum(expected)
    cells = [(c, total * e / base) for c, e in zip(counts, expected, strict=True) if e]
    if total == 0 or len(cells) < 2:
        return 0.0, 1.0
    statistic = sum((c - e) ** 2 / e for c, e in cells)
    return statistic, chi_square_sf(statistic, len(cells) - 1)


def one_against_rest(count: int, total: int, cells: int) -> float:
    """p-value of one cell's count against its equal share (chi-square, 1 dof)."""
    if total == 0:
        return 1.0
    share = 1 / cells
    expected_in, expected_out = total * share, total * (1 - share)
    statistic = (count - expected_in) ** 2 / expected_in + (
        (total - count) - expected_out
    ) ** 2 / expected_out
    return chi_square_sf(statistic, 1)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation between order statistics."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# ---- stores -----------------------------------------------------------------------------


@contextmanager
def fresh_store(postgres: str | None) -> Iterator[tuple[dict[str, str], str]]:
    """A fresh, empty store: a temporary SQLite file or a PostgreSQL schema, removed after."""
    if postgres is None:
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": str(Path(tmp) / "bench.db"),
            }
            yield env, "SQLite (temporary file)"
        return
    import psycopg

    schema = f"totem_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        impl = psycopg.pq.__impl__
        yield postgres_env(postgres, schema), f"PostgreSQL (schema {schema}, psycopg {impl})"
    finally:
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


# ---- the machine --------------------------------------------------------------------------


def machine_line() -> str:
    """What a benchmark's figures were measured on, printed first by each of them."""
    import grpc

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, "
        f"Python {sys.version.split()[0]}, grpcio {grpc.__version__}; load average at the "
        f"start: {load}"
    )


def busy_ticks() -> int:
    """CPU time spent by every process of the machine, in clock ticks (Linux)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return user + nice + system + irq + softirq


def process_ticks(pids: Sequence[int]) -> int:
    """CPU time spent by these processes (all their threads), in clock ticks (Linux)."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


# ---- the server -------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In the server's process before it runs: SIGTERM when the coordinator dies, however
    it dies (Linux; elsewhere the server is stopped only by :meth:`Server.stop`)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def add_server_root(parser: argparse.ArgumentParser) -> None:
    """The option that runs the server of another source tree: a before and an after
    measured side by side, by the same clients, in one session."""
    parser.add_argument(
        "--server-root",
        type=Path,
        metavar="DIR",
        help="run the server from another source tree, e.g. a commit exported with "
        "'git archive COMMIT | tar -x -C DIR' (the clients stay this tree's)",
    )


def server_root(args: argparse.Namespace) -> Path:
    return ROOT if args.server_root is None else args.server_root.resolve()


class Server:
    """``totem serve`` in a process of its own, on a fresh store."""

    #: What the server prints on stderr once it listens, with its port.
    READY = re.compile(r"totem serving on [^\s:]+:(\d+)")

    def __init__(
        self,
        store: str,
        dsn: str,
        workdir: Path,
        root: Path = ROOT,
        extra_env: dict[str, str] | None = None,
        nice: int = 0,
        args: Sequence[str] = (),
        unlimited: bool = True,
    ) -> None:
        """``args``: more options of ``totem serve``; ``unlimited``: no bound on a
        seat's commands (races, throughput), or the server's defaults (what bounds them)."""
        self.store = store
        self.dsn = dsn
        self.schema: str | None = None
        env = dict(os.environ) | (extra_env or {})
        for name in list(env):
            if name.startswith(("POSTGRES_", "SQLITE_")) or name == "PERSISTENCE_MODULE":
                del env[name]
        if store == "postgres":
            self.schema = f"totem_race_{uuid.uuid4().hex[:12]}"
            self._sql(f'CREATE SCHEMA "{self.schema}"')
            env.update(postgres_env(dsn, self.schema))
        else:
            env["PERSISTENCE_MODULE"] = "eventsourcing.sqlite"
        env["TOTEM_KEY_FILE"] = str(workdir / "server.key")  # the run's own signing key
        env["TOTEM_ORGANISER_TOKEN"] = ORGANISER_TOKEN  # who creates the races' matches
        env["TOTEM_ORGANISERS"] = str(workdir / "organisers")  # never a file beside the code
        if unlimited:
            env["TOTEM_COMMANDS_PER_SECOND"] = env["TOTEM_COMMAND_BURST"] = "1000000000"
        if root != ROOT:
            # Another source tree's server: its packages come before the installed ones.
            paths = [root, root / "protos", root / "clients" / "python"]
            env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
        self._start(
            [
                *(sys.executable, "-m", "server", "serve", "--address", "127.0.0.1:0"),
                *("--db", str(workdir / "bench.db"), "--log-level", "WARNING", *args),
            ],
            root,
            env,
            workdir / "server.log",
            nice,
        )

    def _start(self, argv: list[str], cwd: Path, env: dict[str, str], log: Path, nice: int) -> None:
        """Start the process, its stderr to ``log``; wait until it listens; renice it."""
        self.log_path = log
        self.log = log.open("w+b")
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            preexec_fn=_die_with_parent,
        )
        self.port = self._wait_ready()
        if nice:
            # Per thread on Linux: every thread the server has; later ones inherit it.
            for task in Path(f"/proc/{self.process.pid}/task").iterdir():
                os.setpriority(os.PRIO_PROCESS, int(task.name), nice)

    def _sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True, connect_timeout=5) as conn:
            conn.execute(statement)

    def _wait_ready(self) -> int:
        deadline = time.monotonic() + STEP_TIMEOUT
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
            found = self.READY.search(text)
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the server did not start:\n{self.log_path.read_text()}")

    def rss_mb(self) -> float:
        """The server process's resident memory (Linux)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return math.nan

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()
        if self.schema is not None:
            self._sql(f'DROP SCHEMA "{self.schema}" CASCADE')
            self.schema = None


# ---- reporting ----------------------------------------------------------------------------


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table, each cell as ``str`` gives it."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# ---- options ------------------------------------------------------------------------------


def add_store(parser: argparse.ArgumentParser, default: str = "sqlite") -> None:
    """``--store sqlite|postgres`` and ``--dsn``."""
    parser.add_argument(
        "--store", choices=("sqlite", "postgres"), default=default, help="event store"
    )
    parser.add_argument("--dsn", default=DEFAULT_DSN, help="PostgreSQL (a schema per run)")
