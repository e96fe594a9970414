"""Refused grabs as race evidence: the grabs the server refused during a race, among its
contenders (docs/replay.md, "Refused grabs in a race").

A refused grab writes nothing to the match, so the race's events cannot show it; the
match's refusal log keeps it (:mod:`replay.refusals`). A refused grab belongs to a race
when the match was, as it was refused, at a version from the event that opened the race
(:attr:`RaceEvidence.opened`) up to the last one before the next card turned face up
after the decision: between the opening and the decision, or within the race's late
window (JS-5.3), when a late grab would have been recorded as one. For wrong grabs, the
window runs from the reveal before them to the next reveal. A refused grab inside the
windows of two races belongs to the one decided first.

It is shown among the other contenders in receive order (the match's receive numbers,
which number applied and refused commands together), labelled ``refused`` with the rule
and the reason it was refused for, its gap to the first grab received and its reaction
time, computed as for the others (:func:`replay.explain_rules.ranked`). It never
changes the race's winner: it was refused, and only the recorded grabs decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from domain.kernel.refusals import Refusal, refusal_view
from domain.kernel.stamps import ReceiveStamp
from domain.kernel.views import Viewer
from replay.explain_rules import REFUSED, Contender, RaceEvidence, ranked
from replay.refusals import Refusals
from replay.store import Record

#: Events that turn a card face up: a refused grab after one is no longer in the window
#: of a race decided before it (JS-5.3).
FRESH = frozenset({"Revealed", "OutwardReveal"})
#: Events that end a group of wrong grabs: cards turned face up or over (JS-5.2).
RESETS = FRESH | {"PilesRecycled", "Dealt"}


def is_grab(refusal: Refusal) -> bool:
    """A refused grab of a seated player (the referee grabs nothing)."""
    return refusal.seat is not None and refusal.action.rsplit(".", 1)[-1] == "grab"


def names_of(records: Sequence[Record]) -> dict[int, str]:
    """Each version's event name, from its topic: read without replaying the match."""
    return {r.version: r.topic.rsplit(".", 1)[-1] for r in records}


def players_of(records: Sequence[Record]) -> dict[int, str]:
    """Each seat's player name, from the ``PlayerJoined`` events (a fork's among the
    history it carries): read without replaying the match."""
    joined: list[dict[str, object]] = []
    for record in records:
        fields = vars(record.event) if record.event is not None else {}
        if record.topic.endswith(".PlayerJoined"):
            joined.append(fields)
        for entry in fields.get("history", []) if record.version == 1 else []:
            if str(entry.get("topic", "")).endswith(".PlayerJoined"):
                joined.append(entry.get("fields", {}))
    return {int(str(f["seat"])): str(f["name"]) for f in joined if "seat" in f and "name" in f}


def window(race: RaceEvidence, names: Mapping[int, str]) -> tuple[int, int]:
    """The versions a refused grab of ``race`` was refused at, first and last."""
    ends = RESETS if race.kind == "wrong" else FRESH
    last = max(names, default=race.decided)
    after = (v for v in range(race.decided + 1, last + 1) if names.get(v) in ends)
    return race.opened, next(after, last + 1) - 1


def refused_by_race(
    races: Sequence[RaceEvidence], refusals: Refusals, records: Sequence[Record]
) -> list[list[Refusal]]:
    """For each race (in the order given), the refused grabs that belong to it, in
    receive order; each refused grab belongs to one race at most (the first decided)."""
    names = names_of(records)
    windows = [window(race, names) for race in races]
    order = sorted(range(len(races)), key=lambda i: races[i].decided)
    found: list[list[Refusal]] = [[] for _ in races]
    for refusal in sorted(refusals.refusals, key=lambda r: r.receive):
        if not is_grab(refusal):
            continue
        for i in order:
            first, last = windows[i]
            if first <= refusal.version <= last:
                found[i].append(refusal)
                break
    return found


def with_refused(
    race: RaceEvidence,
    refused: Sequence[Refusal],
    viewer: Viewer,
    players: Mapping[int, str] | None = None,
) -> RaceEvidence:
    """``race`` with its refused grabs among its contenders, in receive order, each
    timed against the first received (refused or not): the winner is unchanged. The
    reason shown is what ``viewer`` may see of the refusal (``refusal_view``)."""
    if not refused:
        return race
    names = dict(players or {}) | {c.seat: c.player for c in race.contenders if c.player}
    merged = list(race.contenders)
    for refusal in sorted(refused, key=lambda r: r.receive):
        contender = _contender(race, refusal, viewer, names)
        at = next((i for i, c in enumerate(merged) if c.receive > refusal.receive), len(merged))
        merged.insert(at, contender)
    return dataclasses.replace(race, contenders=ranked(merged))


def with_refused_all(
    races: Sequence[RaceEvidence],
    refusals: Refusals | None,
    records: Sequence[Record],
    viewer: Viewer,
) -> list[RaceEvidence]:
    """Every race of a match with the refused grabs that belong to it (``refusals`` None,
    not in the evidence: the races as recorded)."""
    if refusals is None or not any(is_grab(r) for r in refusals.refusals):
        return list(races)
    players = players_of(records)
    return [
        with_refused(race, refused, viewer, players)
        for race, refused in zip(races, refused_by_race(races, refusals, records), strict=True)
    ]


def _contender(
    race: RaceEvidence, refusal: Refusal, viewer: Viewer, players: Mapping[int, str]
) -> Contender:
    view = refusal_view(refusal, viewer)
    reason = str(view["code"]) + (f": {view['message']}" if view.get("message") else "")
    return Contender.of(
        ReceiveStamp.from_dict(refusal.stamp),
        seat=int(refusal.seat or 0),
        player=players.get(int(refusal.seat or 0), ""),
        outcome=REFUSED,
        version=refusal.version,
        label=REFUSED,
        human_limit_ms=race.human_limit_ms,
        opened=race.opened,
        receive=refusal.receive,
        rule=refusal.rule,
        reason=reason,
    )


def race_with_refused(
    race: RaceEvidence,
    races: Sequence[RaceEvidence],
    refusals: Refusals | None,
    records: Sequence[Record],
    viewer: Viewer,
) -> RaceEvidence:
    """One race (one of the match's ``races``) with the refused grabs that belong to it,
    placed as :func:`with_refused_all` places them, so ``explain`` and ``disputes``
    agree."""
    merged = with_refused_all(races, refusals, records, viewer)
    return next((m for r, m in zip(races, merged, strict=True) if r.decided == race.decided), race)


def has_refused_grabs(refusals: Refusals | None) -> bool:
    """Whether any refused grab was kept (the races need reading against them)."""
    return refusals is not None and any(is_grab(r) for r in refusals.refusals)


def viewer_for(ended: bool) -> Viewer:
    """Who a race's refused grabs are shown to by a command open to everyone
    (``disputes``): an ended match hides nothing, so the referee's view; a match in
    play, the public's (the kind, status and rule, not the message)."""
    return Viewer.referee() if ended else Viewer.spectator()
