"""How earlier releases worked out the consequences their events did not record.

The first release's ``Revealed``, ``OutwardReveal``, ``WrongGrab``, ``DuelWon``,
``ArrowsWon``, ``PilesRecycled`` and ``PlayerFinished`` (version 1 of each) carry no
next turn and no cards moved by a last-card exception (JS-7); the second's (version 2)
record those, but not the deal of a duel won (JS-4.3, JS-4.4), the pairs a grab annuls
(JS-4.6), the late-grab participants (JS-5.3), the pile an arrows race sends to the pot
(JS-6.1), the RU colour mode (JS-6.3), nor a ``Dealt``'s piles (JS-2.1). Their bodies
worked these out from the state. The current versions record them; a stored older event
is upcast with those fields None (:mod:`domain.kernel.versions`), and its body calls the
functions here, frozen copies of that release's code, so that changing a rule's code
today changes neither how a new event replays (its fields say what happened) nor how an
old one does (this code does not change). Never edit them: a stored match of those
releases would replay differently, and ``tests/test_stored_releases.py`` would say so.

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


def colour(match: Any, card_id: int) -> None:
    """A reveal's RU colour mode (JS-6.3): coloured arrows turn it on, any other special
    card off, until the next grab."""
    kind = match.card(card_id).kind
    if kind is not Kind.SYMBOL:
        match.coloured_ru = kind is Kind.COLOURED_ARROWS


def revealed(match: Any, seat: int, card_id: int) -> None:
    """A version-1 ``Revealed``: the card face up, JS-7, then the next turn."""
    last = match._turn_up(seat, card_id)
    colour(match, card_id)
    if last:
        last_card(match, seat, card_id)
    match._prune()
    match.turn = turn_from(match, seat + 1)


def outward_revealed(match: Any, triggered_by: int, reveals: list[list[int]]) -> None:
    """A version-1 ``OutwardReveal``: every card face up, JS-7, the chained reveal
    waiting, then the next turn."""
    last = []
    for seat, card in reveals:
        if match._turn_up(seat, card):
            last.append([seat, card])
        colour(match, card)
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


def deal(match: Any, seats: int, deck: list[int]) -> None:
    """A version-1 ``Dealt``'s piles (JS-2.1): RU deals floor(80/n) each and leaves the
    rest in the pot; ES deals everything."""
    dealt = (len(deck) // seats) * seats if match.is_ru else len(deck)
    match.down = [deck[s:dealt:seats] for s in range(seats)]
    match.up = [[] for _ in range(seats)]
    match.pot = deck[dealt:]


def open_duels(match: Any) -> list[list[int]]:
    """Open duels, each the sorted seats in it (JS-4.1, JS-4.6)."""
    tops = {s: pile[-1] for s, pile in enumerate(match.up) if pile}
    if match.is_ru:
        by_colour = match.coloured_ru
    else:
        by_colour = any(match.card(c).kind is Kind.COLOURED_ARROWS for c in tops.values())
    groups: dict[str, list[int]] = {}
    for seat, card_id in tops.items():
        key = match.card(card_id).key(by_colour)
        if key is not None:
            groups.setdefault(key, []).append(seat)
    duels = []
    for seats in groups.values():
        inside = [
            s
            for s in seats
            if any(t != s and sorted((tops[s], tops[t])) not in match.annulled for t in seats)
        ]
        if len(inside) >= 2:
            duels.append(sorted(inside))
    return sorted(duels)


def open_arrows(match: Any) -> list[int]:
    """Visible inward-arrows cards whose race is still open (JS-6.1, JS-4.7)."""
    return [
        pile[-1]
        for pile in match.up
        if pile
        and match.card(pile[-1]).kind is Kind.INWARD_ARROWS
        and pile[-1] not in match.spent_arrows
    ]


def sharing_symbol(match: Any, seat: int) -> list[int]:
    """A duel's participants, for late grabs (JS-5.3): every seat whose visible card
    shares the symbol of ``seat``'s, before any card moves."""
    tops = {s: pile[-1] for s, pile in enumerate(match.up) if pile}
    if match.is_ru:
        by_colour = match.coloured_ru
    else:
        by_colour = any(match.card(c).kind is Kind.COLOURED_ARROWS for c in tops.values())
    symbol = match.card(tops[seat]).key(by_colour)
    return [s for s, c in tops.items() if match.card(c).key(by_colour) == symbol]


def annul_all_but(match: Any, winner: int | None) -> None:
    """A grab resolves one race and annuls the others (JS-4.6, JS-6.1)."""
    tops = {s: pile[-1] for s, pile in enumerate(match.up) if pile}
    for duel in open_duels(match):
        if winner in duel:
            continue
        for a in duel:
            for b in duel:
                pair = sorted((tops[a], tops[b]))
                if a < b and pair not in match.annulled:
                    match.annulled.append(pair)
    match.spent_arrows += [c for c in open_arrows(match) if c not in match.spent_arrows]


def deal_duel(match: Any, winner: int, losers: list[int]) -> None:
    """The cards of a duel won go to its losers (JS-4.3, JS-4.4)."""
    winner_pile, match.up[winner] = match.up[winner], []
    pot, match.pot = match.pot, []
    if len(losers) == 1:
        (loser,) = losers
        match.down[loser] += winner_pile + match.up[loser] + pot
        match.up[loser] = []
    else:
        order = clockwise_after(match, winner, losers)
        for loser in order:
            match.down[loser] += match.up[loser]
            match.up[loser] = []
        for i, card_id in enumerate(winner_pile + pot):
            match.down[order[i % len(order)]].append(card_id)


def pot_pile(match: Any, winner: int) -> None:
    """The winner of an inward-arrows race puts their face-up pile into the pot (JS-6.1)."""
    match.pot += match.up[winner]
    match.up[winner] = []
