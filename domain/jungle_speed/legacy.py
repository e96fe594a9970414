"""How the release of 2026-12-05 worked out the consequences its events did not record.

Its ``Revealed``, ``OutwardReveal``, ``WrongGrab``, ``DuelWon``, ``ArrowsWon``,
``PilesRecycled`` and ``PlayerFinished`` (version 1 of each) carry no next turn and no
cards moved by a last-card exception (JS-7): their bodies worked them out from the
state. Version 2 records them; a stored version-1 event is upcast with those fields
None (:mod:`domain.kernel.versions`), and its body calls the functions here, frozen
copies of that release's code, so that changing a rule's code today changes neither how
a new event replays (its fields say what happened) nor how an old one does (this code
does not change). Never edit them: a stored match of that release would replay
differently, and ``tests/test_stored_releases.py`` would say so.

``match`` is a :class:`~domain.jungle_speed.match.JungleSpeed` (not imported: that
module imports this one); only its cards and piles are read and moved here.
"""

from __future__ import annotations

from typing import Any

from domain.jungle_speed.cards import Kind


def turn_from(match: Any, seat: int) -> int | None:
    """The first active seat with face-down cards, clockwise from ``seat`` (JS-3.3)."""
    n = len(match.players)
    for i in range(n):
        s = (seat + i) % n
        if s not in match.places and match.down[s]:
            return s
    return None


def clockwise_after(match: Any, seat: int, among: list[int]) -> list[int]:
    n = len(match.players)
    return sorted(among, key=lambda s: (s - seat - 1) % n)


def collect_everything(match: Any, seat: int) -> None:
    """JS-5.2, JS-7.4: the others' face-up piles clockwise from one's left, then one's
    own, then the pot, under one's face-down pile."""
    seats = range(len(match.players))
    others = clockwise_after(match, seat, [s for s in seats if s != seat])
    for s in [*others, seat]:
        match.down[seat] += match.up[s]
        match.up[s] = []
    match.down[seat] += match.pot
    match.pot = []


def last_card(match: Any, seat: int, card_id: int) -> None:
    """The exceptions for a player's last face-down card (JS-7)."""
    kind = match.card(card_id).kind
    on_top = bool(match.up[seat]) and match.up[seat][-1] == card_id
    if kind is Kind.OUTWARD_ARROWS:
        if match.is_ru:
            match.pot.extend(match.up[seat])
            match.up[seat] = []
        elif on_top:
            match.pot.append(match.up[seat].pop())
    elif kind is Kind.COLOURED_ARROWS and on_top:
        match.coloured_ru = False
        collect_everything(match, seat)
    elif kind is Kind.INWARD_ARROWS:
        match.must_win = [seat, card_id]


def revealed(match: Any, seat: int, card_id: int) -> None:
    """A version-1 ``Revealed``: the card face up, JS-7, then the next turn."""
    if match._turn_up(seat, card_id):
        last_card(match, seat, card_id)
    match._prune()
    match.turn = turn_from(match, seat + 1)


def outward_revealed(match: Any, triggered_by: int, reveals: list[list[int]]) -> None:
    """A version-1 ``OutwardReveal``: every card face up, JS-7, the chained reveal
    waiting, then the next turn."""
    last = [[seat, card] for seat, card in reveals if match._turn_up(seat, card)]
    for seat, card in last:
        last_card(match, seat, card)
    match._prune()
    chained = [s for s, c in reveals if match.card(c).kind is Kind.OUTWARD_ARROWS]
    if chained:
        match.pending_outward = chained[0]
    if match.is_ru and not match.open_duels() and match.down[triggered_by]:
        match.turn = triggered_by
    else:
        start = match.turn if match.turn is not None else triggered_by + 1
        match.turn = turn_from(match, start)


def wrong_grab(match: Any, seat: int) -> None:
    """A version-1 ``WrongGrab``'s cards and next turn (JS-5.2)."""
    collect_everything(match, seat)
    match.turn = turn_from(match, seat)


def duel_turn(match: Any, winner: int, losers: list[int]) -> None:
    """A version-1 ``DuelWon``'s next turn (JS-4.5), once the cards have moved."""
    match.turn = turn_from(match, clockwise_after(match, winner, losers)[0])


def arrows_collected(match: Any, must_win: list[int] | None, winner: int) -> None:
    """A version-1 ``ArrowsWon``'s lost last-card race (JS-7.1) and next turn (JS-6.1),
    once the winner's pile is in the pot."""
    if must_win is not None and must_win[0] != winner:
        collect_everything(match, must_win[0])
    match.turn = turn_from(match, winner)


def recycled_turn(match: Any) -> None:
    """A version-1 ``PilesRecycled``'s next turn."""
    match.turn = turn_from(match, 0)


def finished_turn(match: Any, seat: int) -> None:
    """A version-1 ``PlayerFinished``'s next turn."""
    if match.turn == seat:
        match.turn = turn_from(match, seat + 1)
