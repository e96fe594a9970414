"""The signed result sheet, and what anyone holding a tournament's events can check.

A tournament's final event, ``TournamentEnded``, is its result sheet (TO-11.2): the final
standings, every table's match id with that match's final digest and version, every
ruling, and the revealed seed. The server signs its digest
(:func:`sheet_message`); since every event's digest covers the one before it, the
signature covers the whole tournament.

:func:`verify` needs nothing but the events (as loaded from the store, or decoded from
an export with :func:`domain.kernel.topics.chained_event_class`): it checks the chain,
replays the events, and recomputes what the tournament recorded from what came before
it: each round's pairing and duplicate seed, the seed's commitment, and the sheet. It
does no cryptography: the Ed25519 signature over :func:`sheet_message` is checked by
whoever verifies (the replay tool has the code), with the key the sheet names or one
published. Each match named on the sheet is verified on its own (``totem-replay
verify``), its final digest compared with the one the sheet lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.kernel.chain import first_broken_link
from domain.kernel.randomness import commitment
from domain.kernel.signing import TOURNAMENT_PREFIX, signed_message
from domain.tournament.aggregate import Tournament, is_final, standing_fields
from domain.tournament.standings import Standing

#: The checks :func:`verify` reports, each by name.
CHAIN, PAIRINGS, DUPLICATES, SEED, SHEET = (
    "chain",
    "pairings",
    "duplicate seeds",
    "seed commitment",
    "result sheet",
)


@dataclass(frozen=True)
class Finding:
    """One problem: the version of the event where it shows, the check that found it, and
    what is wrong, in a sentence."""

    version: int
    check: str
    message: str


def replay(events: Sequence[object]) -> Tournament:
    """The tournament the events build, applied one by one as the store would."""
    tournament: Any = None
    for evt in events:
        tournament = evt.mutate(tournament)  # type: ignore[attr-defined]
    if not isinstance(tournament, Tournament):
        raise ValueError("these events do not build a tournament")
    return tournament


def recompute_standings(
    events: Sequence[object], through_round: int | None = None
) -> tuple[Standing, ...]:
    """The standings from the events alone (TO-10.4): after round ``through_round``, or
    everything (None)."""
    return replay(events).standings(through_round)


def sheet_message(tournament_id: object, final: object) -> bytes:
    """The exact bytes the server's signature in ``TournamentEnded`` covers: the
    tournament's prefix, its id, the final event's version and digest, one per line."""
    data = vars(final)
    return signed_message(
        str(tournament_id), data["originator_version"], data["digest"], TOURNAMENT_PREFIX
    )


def verify(events: Sequence[object]) -> list[Finding]:
    """Every problem found in a tournament's events (none: it verifies). See the
    module's docstring for what is checked; the checks after the chain run only on an
    unbroken chain, and those of the sheet only once the tournament has ended."""
    broken = first_broken_link(events)
    if broken is not None:
        return [
            Finding(
                broken,
                CHAIN,
                "the event does not match its digest, or does not follow the one before it: "
                "an event was changed, removed or reordered",
            )
        ]
    findings: list[Finding] = []
    tournament: Any = None
    for evt in events:
        name = type(evt).__name__
        version = vars(evt)["originator_version"]
        if name == "RoundStarted" and isinstance(tournament, Tournament):
            findings += _check_round(tournament, evt, version)
        if is_final(evt) and isinstance(tournament, Tournament):
            findings += _check_sheet(tournament, evt, version)
        try:
            tournament = evt.mutate(tournament)  # type: ignore[attr-defined]
        except Exception as exc:  # a sequence no tournament could have recorded
            findings.append(Finding(version, CHAIN, f"{name} does not apply: {exc}"))
            return findings
    return findings


def _check_round(before: Tournament, evt: object, version: int) -> list[Finding]:
    """A round's recorded pairing and duplicate seed against the rules' (TO-9.2, TO-12.1)."""
    data = vars(evt)
    number = data["round"]
    findings = []
    try:
        paired = before.next_pairing()
    except Exception as exc:
        return [Finding(version, PAIRINGS, f"round {number} cannot be paired again: {exc}")]
    tables = [(t["table"], list(t["seats"]), t["reason"]) for t in data["tables"]]
    if paired.number != number or tables != [
        (t.number, list(t.seats), t.reason) for t in paired.tables
    ]:
        findings.append(
            Finding(version, PAIRINGS, f"round {number}'s tables are not the rules' pairing")
        )
    if [(b["entrant"], b["reason"]) for b in data["byes"]] != [
        (b.entrant, b.reason) for b in paired.byes
    ]:
        findings.append(Finding(version, PAIRINGS, f"round {number}'s byes are not the rules'"))
    expected = before.duplicate_seed_of(number)
    if data["duplicate_seed"] != (expected.hex() if expected is not None else ""):
        findings.append(
            Finding(
                version,
                DUPLICATES,
                f"round {number}'s duplicate seed is not the one the tournament's seed gives",
            )
        )
    return findings


def _check_sheet(before: Tournament, evt: object, version: int) -> list[Finding]:
    """The result sheet against the events before it (TO-11.2), and the revealed seed
    against the commitment made at creation."""
    data = vars(evt)
    findings = []
    if data["seed"] != before.seed or commitment(bytes.fromhex(data["seed"])) != (
        before.seed_commitment
    ):
        findings.append(
            Finding(version, SEED, "the revealed seed is not the one committed at creation")
        )
    if data["standings"] != [standing_fields(row) for row in before.standings()]:
        findings.append(
            Finding(version, SHEET, "the standings are not those the results and rulings give")
        )
    if data["matches"] != before.match_list():
        findings.append(Finding(version, SHEET, "the matches listed are not the tables'"))
    if data["rulings"] != [r.to_dict() for r in before.ruling_records]:
        findings.append(Finding(version, SHEET, "the rulings listed are not those recorded"))
    return findings
