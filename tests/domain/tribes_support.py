"""Helpers for the Tribes domain tests: matches with a fixed turn order, and moves written
the way a player says them.

A move is written ``"3@4"`` (the mover's size-3 totem from their mat onto space 4),
``"4>7"`` (lift the top of space 4, place it on space 7), ``"doom@4"`` / ``"mini@4"``
(a special totem from beside the board) or ``"4>"`` (lift only). A ``!badge`` suffix
names a badge (``"3@4!boldness"``). Each move is made by the seat whose turn it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain_support import Stamps

from domain.kernel import MatchStatus
from domain.tribes import Options, Tribes
from domain.tribes.pieces import DOOM, MINI, SPECIALS_BY_NAME, owner, size_of, tribe_totem

SEED = bytes(range(32))


def in_order(players: int) -> list[list[int]]:
    """Prearranged Cards of Truth that give every round the turn order 0, 1, 2 …"""
    return [list(range(1, players + 1))]


def new_tribes(
    players: int = 2,
    *,
    stamps: Stamps | None = None,
    seed: bytes = SEED,
    cards: list[list[int]] | None = None,
    **options: Any,
) -> tuple[Tribes, Stamps]:
    """A started match of ``players`` seats; every round in seat order unless ``cards``
    (None keeps seat order; ``[]`` draws the cards from the seed) or options say otherwise.
    The turn timer is off unless given."""
    stamps = stamps or Stamps()
    options.setdefault("turn_timeout_ms", 0)
    prearranged = in_order(players) if cards is None else (cards or None)
    opts = Options(max_players=players, prearranged_cards=prearranged, **options)
    match = Tribes.create(opts, seed)
    for seat in range(players):
        match.join(f"player {seat}", bytes([seat]), f"token-hash-{seat}", stamps())
    assert match.status is MatchStatus.PLAYING
    return match, stamps


def move(match: Tribes, stamps: Stamps, text: str) -> None:
    """Make one written move for the seat whose turn it is."""
    seat = match.turn
    assert seat is not None, "nobody's turn"
    body, _, badge = text.partition("!")
    named = badge or None
    if ">" in body:
        origin, _, destination = body.partition(">")
        if match.lifted is None:
            match.lift(seat, int(origin), stamps())
        if destination:
            match.place(seat, int(destination), stamps(), badge=named)
        return
    what, _, destination = body.partition("@")
    piece = SPECIALS_BY_NAME[what] if what in SPECIALS_BY_NAME else tribe_totem(seat, int(what))
    match.place(seat, int(destination), stamps(), totem=piece, badge=named)


def play(match: Tribes, stamps: Stamps, *moves: str) -> None:
    for text in moves:
        move(match, stamps, text)


def tops(match: Tribes) -> list[tuple[int | None, int] | str | None]:
    """The visible top of every space: ``(seat, size)``, ``"doom"``, ``"mini"`` or None."""
    found: list[tuple[int | None, int] | str | None] = []
    for space in match.spaces:
        piece = match.top(space)
        if piece is None:
            found.append(None)
        elif piece in (DOOM, MINI):
            found.append("doom" if piece == DOOM else "mini")
        else:
            found.append((owner(piece), size_of(piece)))
    return found


def stack(match: Tribes, space: int) -> list[tuple[int | None, int]]:
    """A stack bottom first, each piece as ``(seat, size)`` (specials: ``(None, size)``)."""
    return [(owner(p), size_of(p)) for p in match.board[space]]


def names_since(match: Tribes, version: int) -> list[str]:
    return [type(e).__name__ for e in match.pending_events if e.originator_version > version]


def last(match: Tribes, name: str) -> Any:
    """The last pending event called ``name``."""
    return next(e for e in reversed(match.pending_events) if type(e).__name__ == name)


def every(match: Tribes, name: str) -> list[Any]:
    return [e for e in match.pending_events if type(e).__name__ == name]


def win_round_for_seat_0(match: Tribes, stamps: Stamps, badge: str = "") -> None:
    """A 3×3 round in seat order 0, 1: seat 0 completes the top row on its third move."""
    suffix = f"!{badge}" if badge else ""
    play(match, stamps, "1@0", "1@6", "2@1", "2@7", f"3@2{suffix}")


def free_spaces(match: Tribes) -> Sequence[int]:
    return [s for s in match.spaces if not match.board[s]]
