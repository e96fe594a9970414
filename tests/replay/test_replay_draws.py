"""Every random draw is re-derived from the revealed seed: the deal (JS-9.1) and each
recycling of the piles (JS-3.4, decided here)."""

from __future__ import annotations

from typing import Any

from replay_support import Stamps

from domain.jungle_speed import JungleSpeed, Options
from domain.kernel.match import METADATA_FIELDS, event_name
from replay.jungle_speed import check_draws

SEED = bytes(range(32))


def recycled_match() -> JungleSpeed:
    """Two seats with no shape in common, so no duel: the piles get recycled twice."""
    stamps = Stamps()
    deck = [card for pair in zip(range(36), range(36, 72), strict=True) for card in pair]
    options = Options(
        max_players=2, inward_arrows=0, outward_arrows=0, coloured_arrows=0, prearranged_deal=deck
    )
    match = JungleSpeed.create(options, SEED, b"creator")
    for seat in range(2):
        match.join(f"p{seat}", bytes([seat]), f"hash{seat}", stamps())
    for _ in range(2):
        while match.turn is not None:
            match.reveal(match.turn, stamps())
        deadline = match.timer_deadline_ms()
        assert deadline is not None
        match.fire_timer(stamps(after_ms=deadline - stamps.wall_ms))
    return match


def fields(match: JungleSpeed, seed: str) -> list[tuple[int, str, dict[str, Any]]]:
    """The recorded fields, plus the seed as the final event reveals it."""
    events = [
        (
            e.originator_version,
            event_name(e),
            {k: v for k, v in vars(e).items() if k not in METADATA_FIELDS},
        )
        for e in match.collect_events()
    ]
    ended = {"reason": "completed", "result": [], "seed": seed}
    return [*events, (events[-1][0] + 1, "MatchEnded", ended)]


def test_recyclings_are_re_derived_from_the_revealed_seed() -> None:
    recorded = fields(recycled_match(), SEED.hex())
    assert [n for _, n, _ in recorded].count("PilesRecycled") == 2
    problems, notes = check_draws(recorded)
    assert problems == []
    assert "2 recyclings of the piles re-derived from the revealed seed" in notes


def test_a_forged_recycling_is_found_at_its_version() -> None:
    recorded = fields(recycled_match(), SEED.hex())
    second = [i for i, (_, n, _) in enumerate(recorded) if n == "PilesRecycled"][1]
    version, name, data = recorded[second]
    orders = [list(o) for o in data["orders"]]
    orders[0][0], orders[0][1] = orders[0][1], orders[0][0]
    recorded[second] = (version, name, dict(data, orders=orders))
    problems, _ = check_draws(recorded)
    assert problems == [
        (version, "recycling 1 of the piles is not the shuffle re-derived from the seed")
    ]


def test_another_seed_gives_other_recyclings() -> None:
    problems, _ = check_draws(fields(recycled_match(), "ff" * 32))
    assert [reason for _, reason in problems].count(
        "recycling 0 of the piles is not the shuffle re-derived from the seed"
    ) == 1
