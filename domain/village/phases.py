"""The shape of a Village round: its eight phases and the decisions it awaits (VI-2).

A round runs its phases in order, each beginning with a *stage* (what the match is
doing: choosing spells, revealing them, feasting, taking the census …). Between stages
the match either runs a step by itself or awaits a *decision* from one or more families.
These tables name each phase and each kind of decision, the rule it belongs to and the
deadline option it uses, so that a refusal, a view or a timer can say which rule it
applies without reading the aggregate's code.
"""

from __future__ import annotations

#: The rule a command for a family the sender does not play names (VI-7.9), whatever
#: the decision it was for.
FAMILY_RULE = "VI-2.2"

#: Kinds of decision: the rule each belongs to, and the deadline option it uses.
DECISION_RULES: dict[str, str] = {
    "arrange": "VI-2.1",
    "choose": "VI-2.2",
    "place": "VI-2.2",
    "submit": "VI-2.2",
    "reveal": "VI-2.3",
    "victims": "VI-2.6",
    "name_victims": "VI-2.6",
    "youth": "VI-2.8",
}
DECISION_TIMEOUTS: dict[str, str] = {
    "arrange": "arrange",
    "choose": "choose",
    "place": "place",
    "submit": "place",
    "reveal": "reveal",
    "victims": "victims",
    "name_victims": "victims",
    "youth": "youth",
}
#: How a refusal names a decision a family does not owe.
DECISION_WORDS: dict[str, str] = {
    "arrange": "arrangement of the cottages",
    "choose": "choice of spells",
    "place": "spell placement",
    "submit": "submission of placements",
    "reveal": "decision to reveal spells",
    "victims": "choice of victims",
    "name_victims": "naming of victims",
    "youth": "choice of whom youth spares",
}
PHASE_NAMES: dict[int, str] = {
    1: "village",
    2: "magic",
    3: "births",
    4: "catch",
    5: "feast",
    6: "illness",
    7: "generation change",
    8: "totem construction",
}
#: The rule of each phase (VI-2.1 … VI-2.9).
PHASE_RULES: dict[int, str] = {
    1: "VI-2.1",
    2: "VI-2.2",
    3: "VI-2.4",
    4: "VI-2.5",
    5: "VI-2.6",
    6: "VI-2.7",
    7: "VI-2.8",
    8: "VI-2.9",
}
#: The stage each phase begins with (phase 1 begins with the round, in "arrange").
PHASE_STAGES: dict[int, str] = {
    2: "choose",
    3: "reveal",
    4: "reveal",
    5: "feast",
    6: "reveal",
    7: "reveal",
    8: "census",
}
