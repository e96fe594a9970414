"""The ``--json`` objects of ``list`` and ``show``: stable, for other tools.

Every key is always present (``null`` when it has no value yet), so a reader can rely on
the shape; each is documented in docs/replay.md, "JSON output". A key is never renamed
or given another meaning; new keys may be added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.kernel.match import MatchAggregate, MatchStatus, event_name
from storage.arena import MatchLogged


def _origin(match: MatchAggregate) -> dict[str, Any] | None:
    """A fork's origin: ``{"match_id", "version", "digest"}``; None for any other match."""
    origin = getattr(match, "origin", None)
    return dict(origin) if origin else None


def _options(match: MatchAggregate) -> dict[str, Any]:
    """Every option as given; a prearranged sequence only as its length (None when not
    given), since its content says what is still to come (as in the text output)."""
    options: dict[str, Any] = {}
    for key, value in (getattr(match, "options_data", {}) or {}).items():
        if key.startswith("prearranged_"):
            options[key] = None if value is None else len(value)
        else:
            options[key] = value
    return options


def _summary(match: MatchAggregate) -> dict[str, Any]:
    """The keys ``list`` and ``show`` share."""
    ended = match.status is MatchStatus.ENDED and match.end_reason is not None
    return {
        "match_id": str(match.id),
        "game": type(match).GAME,
        "variant": match.variant or None,
        "status": match.status.value,
        "end_reason": match.end_reason.value if ended and match.end_reason else None,
        "players": [{"seat": s, "name": name} for s, name in enumerate(match.players)],
        "max_players": match.max_players,
        "events": match.version,
        "result": [{"seat": r["seat"], "place": r["place"]} for r in match.result],
        "origin": _origin(match),
    }


def list_record(match: MatchAggregate) -> dict[str, Any]:
    """One line of ``list --json``."""
    return dict(_summary(match), error=None)


def unreadable(entry: MatchLogged, reason: str) -> dict[str, Any]:
    """The line of ``list --json`` for a match whose events cannot be replayed: what the
    list of matches says of it, and why."""
    return {"match_id": str(entry.match_id), "game": entry.game, "error": reason}


def show_record(match: MatchAggregate, events: Sequence[Any]) -> dict[str, Any]:
    """The object of ``show --json``; ``events`` are the match's, in order."""
    ended = next((e for e in events if event_name(e) == "MatchEnded"), None)
    return dict(
        _summary(match),
        options=_options(match),
        first_event_at=events[0].timestamp.isoformat(),
        last_event_at=events[-1].timestamp.isoformat(),
        digest=match.digest,
        seed_commitment=match.seed_commitment,
        seed=ended.seed if ended is not None else None,
        seed_revealed_at=ended.originator_version if ended is not None else None,
    )
