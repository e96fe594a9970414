"""What a family starts with (VI-1.3) and what a wiped-out family restarts with (VI-2.1).

Kept apart from the aggregate so that the kits read as the rule states them; the
aggregate records the kit it used in its ``Founded`` and ``RoundBegan`` events, so a
change here would change only matches played after it, never a replay.
"""

from __future__ import annotations

from domain.village.options import Options

#: A starting family (VI-1.3) and a restart (VI-2.1; variation ``village``).
START_KIT: dict[str, int] = {
    "young_woman": 2,
    "young_man": 2,
    "mature_woman": 1,
    "mature_man": 1,
    "elder": 1,
}
START_BIRDS = 6
#: The pieces of a starting family's totem pole (VI-1.3) and of a restarted one's (VI-2.1).
START_POLE = 1
RESTART_POLE = 1
RESTART_KIT: dict[str, int] = {
    "young_woman": 1,
    "young_man": 1,
    "mature_woman": 1,
    "mature_man": 1,
    "elder": 1,
}
RESTART_BIRDS = 5
VILLAGE_RESTART_KIT: dict[str, int] = {
    "young_woman": 1,
    "young_man": 1,
    "mature_woman": 1,
    "mature_man": 1,
}
VILLAGE_RESTART_BIRDS = 3


def families_for(players: int) -> int:
    """Four families with two players (each plays two), else one per player (VI-1.1)."""
    return 4 if players == 2 else players


def restart_kit(options: Options) -> tuple[dict[str, int], int]:
    """The members and birds a wiped-out family restarts with (VI-2.1): fewer, and no
    elder, under the variation ``village``."""
    if options.village:
        return VILLAGE_RESTART_KIT, VILLAGE_RESTART_BIRDS
    return RESTART_KIT, RESTART_BIRDS
