"""The pieces and the board of Tribes (TR-1, TR-3.1, TR-5).

A piece is an int, so that events stay plain data: a tribe totem is
``seat * 5 + size - 1`` (seat 0's sizes 1 to 5 are 0 to 4, seat 1's 5 to 9, and so on);
the Great Totem of Doom is :data:`DOOM` and the Mini-Totem of Chaos :data:`MINI`.
Spaces are numbered row by row from the top left: space ``row * size + column``.
"""

from __future__ import annotations

from functools import cache

#: Sizes of a tribe's totems (TR-1.1); the largest is the Grand Chief.
SIZES = (1, 2, 3, 4, 5)
CHIEF = 5
TOTEMS_PER_TRIBE = len(SIZES)

#: The special totems of the extended game (TR-5.3): they belong to no tribe.
DOOM = -1
MINI = -2
SPECIALS = (DOOM, MINI)
SPECIAL_NAMES = {DOOM: "doom", MINI: "mini"}
SPECIALS_BY_NAME = {name: piece for piece, name in SPECIAL_NAMES.items()}

#: The Virtue Badges in the order TR-1.5 lists them: a winner who names none takes the
#: first missing (TR-3.4).
BADGES = ("wisdom", "loyalty", "boldness", "tenacity")

#: Faces of the Dice of Fate (TR-5.1): a normal turn, the Great Totem of Doom must move,
#: the Mini-Totem of Chaos must move (TR-5.2).
BLANK = "blank"
LARGE = "large"
SMALL = "small"
FACES = (BLANK, LARGE, SMALL)
#: The die the rules decide (TR-5.1): four blank faces, one large totem, one small totem.
DEFAULT_FACES = (BLANK, BLANK, BLANK, BLANK, LARGE, SMALL)
#: The special totem each face demands (TR-5.2).
DEMANDS = {LARGE: DOOM, SMALL: MINI}

MIN_BOARD = 3
MAX_BOARD = 5


def tribe_totem(seat: int, size: int) -> int:
    return seat * TOTEMS_PER_TRIBE + size - 1


def is_special(piece: int) -> bool:
    return piece < 0


def owner(piece: int) -> int | None:
    """The seat whose tribe the piece belongs to; None for a special totem."""
    return None if is_special(piece) else piece // TOTEMS_PER_TRIBE


def size_of(piece: int) -> int:
    """A tribe totem's size, 1 to 5. The Doom counts as 6, larger than every tribe totem
    (TR-5.4); the Mini-Totem of Chaos as 0 (it covers nothing, TR-5.5)."""
    if piece == DOOM:
        return CHIEF + 1
    if piece == MINI:
        return 0
    return piece % TOTEMS_PER_TRIBE + 1


def describe(piece: int) -> str:
    """``seat 2's 4``, ``the Great Totem of Doom``: for messages and the replay tool."""
    if piece == DOOM:
        return "the Great Totem of Doom"
    if piece == MINI:
        return "the Mini-Totem of Chaos"
    return f"seat {owner(piece)}'s {size_of(piece)}"


@cache
def lines(size: int) -> tuple[tuple[int, int, int], ...]:
    """Every line of a board (TR-3.1): three consecutive spaces in a row, a column or a
    diagonal, each as its spaces in reading order. On boards larger than 3×3 any three in
    a row count, so lines overlap."""
    found: list[tuple[int, int, int]] = []
    for row in range(size):
        for col in range(size):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(row + k * dr, col + k * dc) for k in range(3)]
                if all(0 <= r < size and 0 <= c < size for r, c in cells):
                    a, b, c = (r * size + c for r, c in cells)
                    found.append((a, b, c))
    return tuple(sorted(found))


def lines_through(size: int, space: int) -> tuple[tuple[int, int, int], ...]:
    return tuple(line for line in lines(size) if space in line)


def corners(size: int) -> list[int]:
    """The four corners: the Salvation Spaces the rules decide (TR-5.6)."""
    return [0, size - 1, size * (size - 1), size * size - 1]
