"""Village: the classes of stored events (VI-6.4). A stored event names its class by
topic, and its fields by name: a match recorded by one version replays in the next only
if every event class keeps both, whatever the code around it becomes."""

from __future__ import annotations

import inspect

from eventsourcing.utils import get_topic

from domain.kernel.match import MatchAggregate
from domain.kernel.topics import event_class
from domain.village import Village

#: Each event the Village aggregate declares, and the fields it records.
EVENTS = {
    "Created": ["entropy", "options", "referee_token_hash", "secret", "seed"],
    "Founded": ["birds", "families", "members", "owners", "pole", "stamp"],
    "DecisionAwaited": ["decision"],
    "RoundBegan": ["birds", "members", "pole", "restarts", "round", "stamp", "start_family"],
    "PhaseBegan": ["phase", "round"],
    "WipedOut": ["family", "lost", "phase"],
    "Dismantled": ["family", "phase", "pole"],
    "Arranged": ["by_default", "cottages", "discarded", "family", "stamp"],
    "SpellsChosen": [
        "birds",
        "by_default",
        "chits",
        "commitment",
        "count",
        "family",
        "salts",
        "spells",
        "stamp",
    ],
    "SpellPlaced": [
        "by_default",
        "chit",
        "cottage",
        "family",
        "place_next",
        "position",
        "salt",
        "spell",
        "stamp",
        "target_family",
    ],
    "SpellsPassed": ["family", "lost", "place_next", "stamp"],
    "PlacementsSubmitted": ["by_default", "count", "family", "placements", "stamp"],
    "PlacementsRevealed": ["placements"],
    "SpellsRevealed": ["by_default", "family", "phase", "reveals", "stamp"],
    "Born": ["children", "draws", "prearranged"],
    "CatchShared": ["catch", "claims"],
    "Feasted": ["meals"],
    "VictimsChosen": ["by_default", "family", "owed", "stamp", "starving", "turn", "victims"],
    "VictimsNamed": ["by_default", "count", "family", "stamp", "starving", "victims"],
    "VictimsRevealed": ["deaths", "names", "starving"],
    "IllnessStruck": ["deaths"],
    "YouthChosen": ["by_default", "family", "spared", "stamp"],
    "Aged": ["cottages", "newcomers", "spared"],
    "CensusTaken": ["birds", "blocked", "pieces", "sizes"],
    "RoundEnded": ["chits", "round", "unplaced", "unrevealed"],
    "TotemCompleted": [
        "birds",
        "contenders",
        "outcome",
        "sizes",
        "tied",
        "winner",
        "winning_seats",
    ],
}


def fields_of(cls: type) -> list[str]:
    """The fields an event class records: its own annotations, or, for a class declared
    ahead of its ``@event`` method (a versioned one), those of the class it was made from
    (the library derives the aggregate's event class from it)."""
    for klass in cls.__mro__:
        own = inspect.get_annotations(klass)
        if own and klass.__qualname__.startswith("Village."):
            return sorted(own)
    return []


def declared() -> dict[str, type]:
    """The event classes the aggregate itself declares (the kernel's are the kernel's)."""
    return {
        name: value
        for name, value in vars(Village).items()
        if isinstance(value, type) and issubclass(value, MatchAggregate.Event) and fields_of(value)
    }


def test_vi_6_4_every_event_keeps_its_topic_and_fields() -> None:
    classes = declared()
    assert sorted(classes) == sorted(EVENTS)
    for name, fields in EVENTS.items():
        cls = classes[name]
        assert get_topic(cls) == f"domain.village.match:Village.{name}"
        assert fields_of(cls) == fields, name
        assert event_class(get_topic(cls)) is cls
