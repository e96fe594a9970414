"""Phase 2, magic (VI-2.2): spells chosen in secret, then placed face down.

Every family chooses at once; then, by default, families place one spell at a time in
turn order (``spells_a`` lets a family pass and lose the rest); under ``spells_b`` each
submits all its placements in secret and they go on the board together. These functions
check a family's command against the match and work out what its event records (the
salts and chits of a choice, the chit of a placement); they read the match and never
change it, so the aggregate stays the one place where events are triggered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.kernel.errors import InvalidArgument, RuleViolation
from domain.village import commitments
from domain.village.commands import ChooseSpells, PlaceSpell, SubmitPlacements
from domain.village.model import COTTAGES, SPELLS

if TYPE_CHECKING:
    from domain.village.match import Village

RULE = "VI-2.2"


def check_choice(cmd: ChooseSpells, pieces: int, birds: int) -> list[str]:
    """The spells ``cmd`` chooses, in the order of :data:`~domain.village.model.SPELLS`,
    for a family with ``pieces`` totem pieces and ``birds`` birds. Each spell at most
    once; one spell per piece, one more per sacrificed bird, and no bird sacrificed
    beyond what the spells need (VI-7.6)."""
    for spell in cmd.spells:
        if spell not in SPELLS:
            raise InvalidArgument(RULE, f"{spell!r} is not a spell")
    if len(set(cmd.spells)) != len(cmd.spells):
        raise RuleViolation(RULE, "a family casts each of its spells at most once a round")
    if cmd.birds < 0:
        raise InvalidArgument(RULE, "a number of birds cannot be negative")
    f = cmd.family
    if cmd.birds > birds:
        raise RuleViolation(RULE, f"family {f} has only {birds} birds to sacrifice")
    allowed = pieces + cmd.birds
    if len(cmd.spells) > allowed:
        raise RuleViolation(
            RULE,
            f"{len(cmd.spells)} spells need as many totem pieces and sacrificed birds; "
            f"family {f} has {pieces} pieces and sacrifices {cmd.birds} birds",
        )
    needed = max(0, len(cmd.spells) - pieces)
    if cmd.birds > needed:
        raise RuleViolation(
            "VI-7.6",
            f"{len(cmd.spells)} spells need {needed} sacrificed birds, not {cmd.birds}",
        )
    return [s for s in SPELLS if s in cmd.spells]


def sealed(
    secret: bytes, round_number: int, family: int, spells: list[str]
) -> tuple[list[str], list[str]]:
    """The salts and chits of a family's chosen spells (see
    :mod:`domain.village.commitments`): recorded with the choice, so that every later
    placement and reveal can show a chit the commitment already binds."""
    salts = [commitments.salt(secret, round_number, family, s) for s in spells]
    chits = [
        commitments.chit(round_number, family, s, x) for s, x in zip(spells, salts, strict=True)
    ]
    return salts, chits


def next_placer(match: Village) -> int | None:
    """The family that places next (VI-2.2): in turn order from where the rotation
    stands, the first with a spell left that has not passed (``spells_a``); a family
    with nothing left is skipped (VI-7.6)."""
    order = match.turn_order()
    for i in range(match.family_count):
        f = order[(match.place_next + i) % match.family_count]
        if match.hands[f] and not match.passed[f]:
            return f
    return None


def rotation_after(match: Village, family: int) -> int:
    """Where the placing rotation goes on once ``family`` has placed or passed (VI-2.2):
    with the family after it in turn order, counted from the start player. The
    ``SpellPlaced`` and ``SpellsPassed`` events record it."""
    return (family - match.start_family + 1) % match.family_count


def check_target(family_count: int, target_family: int, cottage: int) -> None:
    """A spell goes on a cottage that exists, of any family."""
    if not 0 <= target_family < family_count or not 0 <= cottage < COTTAGES:
        raise InvalidArgument(
            RULE,
            f"cottage {cottage} of family {target_family} does not exist: families are "
            f"0 to {family_count - 1}, cottages 0 to {COTTAGES - 1}",
        )


def check_placement(match: Village, cmd: PlaceSpell) -> tuple[str, str]:
    """The chit and salt of the spell ``cmd`` places: one the family chose and has not
    placed, on a cottage that exists."""
    if cmd.spell not in SPELLS:
        raise InvalidArgument(RULE, f"{cmd.spell!r} is not a spell")
    check_target(match.family_count, cmd.target_family, cmd.cottage)
    if cmd.spell not in match.hands[cmd.family]:
        raise RuleViolation(
            RULE, f"family {cmd.family} has no {cmd.spell} spell chosen and unplaced"
        )
    choice = match.choices[cmd.family]
    assert choice is not None
    index = choice["spells"].index(cmd.spell)
    return choice["chits"][index], choice["salts"][index]


def check_pass(spells_a: bool) -> None:
    """Passing, and losing the spells left, is the variation ``spells_a``'s."""
    if not spells_a:
        raise RuleViolation(RULE, "passing is only allowed with the variation spells_a")


def check_submission(match: Village, cmd: SubmitPlacements) -> list[list[Any]]:
    """``spells_b``: the placements ``cmd`` submits, as the event records them
    (``[spell, target family, cottage]``): each a chosen spell placed once, every one of
    them unless ``spells_a`` lets the family keep some back."""
    hand = match.hands[cmd.family]
    for spell, target, cottage in cmd.placements:
        if spell not in SPELLS:
            raise InvalidArgument(RULE, f"{spell!r} is not a spell")
        check_target(match.family_count, target, cottage)
        if spell not in hand:
            raise RuleViolation(
                RULE, f"family {cmd.family} has no {spell} spell chosen and unplaced"
            )
    spells = [p[0] for p in cmd.placements]
    if len(set(spells)) != len(spells):
        raise RuleViolation(RULE, "each chosen spell is placed once")
    if not match.options.spells_a and len(spells) != len(hand):
        raise RuleViolation(
            RULE, f"family {cmd.family} must place all {len(hand)} of its chosen spells"
        )
    return [[s, t, c] for s, t, c in cmd.placements]


def revealed_placements(match: Village) -> list[dict[str, Any]]:
    """``spells_b``: every submitted placement goes on the board at once, families in
    turn order, each in the order it listed them."""
    placed: list[dict[str, Any]] = []
    for f in match.turn_order():
        choice = match.choices[f]
        for spell, target, cottage in match.submissions[f] or []:
            assert choice is not None
            i = choice["spells"].index(spell)
            placed.append(
                {
                    "family": f,
                    "position": len(match.board) + len(placed),
                    "target_family": target,
                    "cottage": cottage,
                    "chit": choice["chits"][i],
                    "spell": spell,
                    "salt": choice["salts"][i],
                }
            )
    return placed
