"""How the release of 2026-12-05 worked out the consequences its Village events did not
record.

Some of its events (version 1 of each) carried less than what they led to, and their
bodies worked the rest out with the rule code of the day:

- ``Founded`` and ``RoundBegan`` carried no ``pole``; their bodies gave a new family,
  and a restarted one, a pole of one piece (VI-1.3, VI-2.1);
- ``Aged`` carried only who was spared; its body aged every cottage (VI-2.8);
- ``SpellPlaced`` and ``SpellsPassed`` carried no ``place_next``; their bodies moved the
  placing rotation on (VI-2.2);
- ``VictimsChosen`` carried neither the deaths still owed nor the victims chosen so far;
  its body counted them (VI-2.6, ``feast_a``);
- ``TotemCompleted`` carried no ``outcome``; its body made it, emptying the tie field
  of matches recorded before VI-7.11, which held a lone winner in ``tied``.

Version 2 of each records those consequences; a stored version-1 event is upcast with
the new fields None (:mod:`domain.kernel.versions`), and its body calls the function
here, a frozen copy of that release's code, so that changing a rule's code today changes
neither how a new event replays nor how an old one does. Never edit them: a stored match
of that release would replay differently, and ``tests/test_stored_releases.py`` would
say so.

``match`` is a :class:`~domain.village.match.Village` (not imported: that module
imports this one); each function says what it reads and sets.
"""

from __future__ import annotations

from typing import Any

#: The kinds, youngest first, and what each became after a generation (None: died), as
#: that release had them.
KINDS = ("girl", "boy", "young_woman", "young_man", "mature_woman", "mature_man", "elder")
AGES_TO: dict[str, str | None] = {
    "girl": "young_woman",
    "boy": "young_man",
    "young_woman": "mature_woman",
    "young_man": "mature_man",
    "mature_woman": "elder",
    "mature_man": "elder",
    "elder": None,
}
CHILDREN = ("girl", "boy")
COTTAGES = 3


def _empty() -> dict[str, int]:
    return dict.fromkeys(KINDS, 0)


def age(match: Any, spared: list[dict[str, Any]]) -> None:
    """VI-2.8 as that release applied it: everyone but the spared ages one step, elders
    die; members who were children before are the next phase 1's new members (VI-7.8).
    Reads and sets the match's cottages and newcomers."""
    for f in match.families:
        for c in range(COTTAGES):
            kept = _empty()
            for s in spared:
                if s["family"] == f and s["cottage"] == c:
                    kept[s["kind"]] += 1
            before = match.cottages[f][c]
            after = dict(kept)
            for kind in KINDS:
                becomes = AGES_TO[kind]
                if becomes is not None:
                    after[becomes] += before.get(kind, 0) - kept.get(kind, 0)
            match.cottages[f][c] = after
            new = _empty()
            for kind in CHILDREN:
                stay = kept[kind]
                new[kind] += stay
                becomes = AGES_TO[kind]
                assert becomes is not None
                new[becomes] += before[kind] - stay
            match.newcomers[f][c] = new


def placed(match: Any, family: int) -> None:
    """VI-2.2 as that release applied it once ``family`` had placed a spell or passed:
    the placing rotation goes on with the family after it in turn order. Reads the
    match's start family and family count, sets its ``place_next``."""
    match.place_next = (family - match.start_family + 1) % match.family_count


def victims_done(match: Any, count: int) -> None:
    """VI-2.6 as that release applied it once ``count`` victims of the first starving
    family were chosen: they count against its deaths and, under ``feast_a``, the next
    family chooses; with none owed any more, the next starving family is first. Reads
    and sets the match's ``feast_queue`` and ``feast_turn``."""
    match.feast_queue[0][1] -= count
    match.feast_turn += 1
    if match.feast_queue[0][1] <= 0:
        match.feast_queue.pop(0)
        match.feast_turn = 0


def founded(match: Any) -> None:
    """VI-1.3 as that release applied it: every family's totem pole starts with one
    piece. Reads the match's family count, sets its ``poles``."""
    match.poles = [1] * match.family_count


def restarted(match: Any, family: int) -> None:
    """VI-2.1 as that release applied it: a restarted family's pole is reset to one
    piece. Sets the family's pole."""
    match.poles[family] = 1


def completed(match: Any, winner: int | None, tied: list[int], winning_seats: list[int]) -> None:
    """VI-4 and VI-7.11 as that release kept a match's outcome: a tie field holds the
    families tied, empty unless two or more are (a lone winner is not a tie). Sets the
    match's ``outcome``."""
    shown = list(tied) if len(tied) >= 2 else []
    match.outcome = {"winner": winner, "tied": shown, "seats": list(winning_seats)}
