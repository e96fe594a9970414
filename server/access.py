"""Organisers: who may create matches, and who sees every match as its referee.

A match's own tokens say who holds which role in that match: the referee's (given at
creation) and one per seat (given at join). Above the matches, the operator configures
organisers. An organiser may create matches and gets each one's referee token, to keep
or to hand to the referee they name; an organiser's credential also sees any match as its
referee does. Nobody else gets a referee token: when the operator opens creation to
anyone (within a quota), a match created without an organiser's credential has no
referee, so that whoever creates a match and plays in it never sees its hidden facts.

Organiser credentials are bearer tokens, stored as SHA-256 only, in a file of lines
``NAME HASH`` (``#`` starts a comment). The file is created on the first start with one
organiser whose token is printed once; ``totem organiser-token`` issues a new token for
an organiser, replacing a lost one or adding an organiser. A token can also be given in clear
through the environment (``TOTEM_ORGANISER_TOKEN``), for deployments that inject secrets
that way.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from server import auth

#: The organiser file beside a SQLite store is ``<db>.organisers``; with PostgreSQL, this
#: file in the working directory.
POSTGRES_ORGANISERS_FILE = "totem-organisers"
ORGANISER_TOKEN_ENV = "TOTEM_ORGANISER_TOKEN"
#: Matches one organiser may create per minute.
ORGANISER_CREATIONS_PER_MINUTE = 600
#: Matches one client address may create per minute when creation is open to anyone.
OPEN_CREATIONS_PER_MINUTE = 10

_LINE = re.compile(r"^(\S+)\s+([0-9a-f]{64})$")
_NAME = re.compile(r"^[^\s#]+$")


class OrganisersFileError(Exception):
    """The organiser file cannot be read or written: the server does not start."""


@dataclass(frozen=True)
class Organisers:
    """The organisers' token hashes, by name."""

    hashes: Mapping[str, str] = field(default_factory=dict)
    #: Where they were read from (None: not from a file).
    path: str | None = None
    #: A token made for the file this start created, to be shown once.
    new_token: str | None = None

    def name_of(self, token: str | None) -> str | None:
        """The organiser who holds ``token``, or None."""
        if not token:
            return None
        return self.name_of_hash(auth.token_hash(token))

    def name_of_hash(self, digest: str) -> str | None:
        """The organiser whose token hashes to ``digest``, or None."""
        for name, known in self.hashes.items():
            if known == digest:
                return name
        return None

    def with_token(self, name: str, token: str) -> Organisers:
        return Organisers({**self.hashes, name: auth.token_hash(token)}, self.path, self.new_token)


def default_file(env: Mapping[str, str]) -> str:
    """Beside a SQLite file (``<db>.organisers``); else :data:`POSTGRES_ORGANISERS_FILE`."""
    db = env.get("SQLITE_DBNAME")
    if env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite" and db and ":memory:" not in db:
        return f"{db}.organisers"
    return POSTGRES_ORGANISERS_FILE


def organiser_line(name: str, token: str) -> str:
    return f"{name} {auth.token_hash(token)}\n"


def load_or_create(path: str) -> Organisers:
    """The organisers of ``path``; if there is no such file, it is created (0600) with one
    organiser, ``organiser``, whose token is in ``new_token``."""
    file = Path(path)
    new_token = None
    if not file.exists():
        new_token, _ = auth.new_token()
        try:
            fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            raise OrganisersFileError(f"cannot create the organiser file {path}: {exc}") from exc
        with os.fdopen(fd, "w") as out:
            out.write("# Organisers of this Totem Arena server: NAME SHA256-OF-TOKEN\n")
            out.write(organiser_line("organiser", new_token))
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise OrganisersFileError(f"cannot read the organiser file {path}: {exc}") from exc
    hashes: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            raise OrganisersFileError(
                f"{path}, line {number}: expected NAME and the SHA-256 (64 hex digits) of a token"
            )
        hashes[match.group(1)] = match.group(2)
    return Organisers(hashes, path, new_token)


def issue_token(path: str, name: str) -> str:
    """A new token for organiser ``name`` in the existing file ``path``: its line
    replaces ``name``'s (so that a lost token stops working), or is appended for a new
    organiser. Comments and the other lines are kept; the file stays 0600 and is
    replaced at once, never left half written. Servers read the file when they start."""
    if not _NAME.match(name):
        raise OrganisersFileError(f"an organiser's name is one word without '#': not {name!r}")
    if not Path(path).exists():
        raise OrganisersFileError(
            f"no organiser file at {path}: `totem serve` creates it on its first start"
        )
    load_or_create(path)  # a file the server could not read is refused, not rewritten
    token, _ = auth.new_token()
    kept: list[str] = []
    replaced = False
    for raw in Path(path).read_text().splitlines(keepends=True):
        fields = raw.split("#", 1)[0].split()
        if fields and fields[0] == name:
            if not replaced:
                kept.append(organiser_line(name, token))
            replaced = True
            continue
        kept.append(raw if raw.endswith("\n") else raw + "\n")
    if not replaced:
        kept.append(organiser_line(name, token))
    temporary = f"{path}.new"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write("".join(kept))
        os.replace(temporary, path)
    except OSError as exc:
        raise OrganisersFileError(f"cannot write the organiser file {path}: {exc}") from exc
    return token


def from_env(organisers: Organisers, env: Mapping[str, str]) -> Organisers:
    """``organisers`` and the one whose token ``TOTEM_ORGANISER_TOKEN`` holds, if set."""
    token = env.get(ORGANISER_TOKEN_ENV, "").strip()
    return organisers.with_token("env", token) if token else organisers


class RateLimit:
    """At most ``per_minute`` actions per key, refilled evenly (a token bucket); answers
    how long to wait when none is left. Keys idle for a minute are forgotten, so memory
    follows the active keys only."""

    def __init__(self, per_minute: int, now: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._buckets: dict[str, tuple[float, float]] = {}
        self._now = now

    def take(self, key: str) -> int | None:
        """Spend one action of ``key``: None if allowed, else the milliseconds to wait."""
        now = self._now()
        rate = self.per_minute / 60.0
        if len(self._buckets) > 10_000:
            self._forget_idle(now)
        level, last = self._buckets.get(key, (float(self.per_minute), now))
        level = min(float(self.per_minute), level + (now - last) * rate)
        if level < 1.0:
            self._buckets[key] = (level, now)
            return max(1, round((1.0 - level) / rate * 1000))
        self._buckets[key] = (level - 1.0, now)
        return None

    def _forget_idle(self, now: float) -> None:
        for key, (_, last) in list(self._buckets.items()):
            if now - last > 60.0:
                with contextlib.suppress(KeyError):
                    del self._buckets[key]


@dataclass
class Access:
    """The server's organisers and its creation policy."""

    organisers: Organisers = field(default_factory=Organisers)
    #: Anyone may create matches (without a referee), within ``open_per_minute``.
    open_creation: bool = False
    organiser_per_minute: int = ORGANISER_CREATIONS_PER_MINUTE
    open_per_minute: int = OPEN_CREATIONS_PER_MINUTE

    def __post_init__(self) -> None:
        self._organiser_limit = RateLimit(self.organiser_per_minute)
        self._open_limit = RateLimit(self.open_per_minute)

    def is_organiser(self, token: str | None) -> bool:
        return self.organisers.name_of(token) is not None

    def is_organiser_hash(self, digest: str) -> bool:
        """:meth:`is_organiser`, for a token already hashed (every command hashes its
        token once, to find its seat)."""
        return self.organisers.name_of_hash(digest) is not None

    def creation(self, token: str | None, client: str) -> Creation:
        """Whether the holder of ``token``, calling from ``client`` (its address), may
        create a match now, and with a referee or not."""
        name = self.organisers.name_of(token)
        if name is not None:
            return Creation(True, True, self._organiser_limit.take(f"organiser {name}"))
        if not self.open_creation:
            return Creation(False, False, None)
        return Creation(True, False, self._open_limit.take(client))


@dataclass(frozen=True)
class Creation:
    allowed: bool
    #: The match gets a referee token, given to the creator.
    with_referee: bool
    #: Set when the creator's quota is spent: how long until it allows one more.
    retry_after_ms: int | None
