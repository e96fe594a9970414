"""Helpers for the domain tests: stamps, prearranged decks, matches, state snapshots.

Kept in its own module (not conftest) so test modules can import plain functions.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import pytest
from eventsourcing.application import Application
from eventsourcing.persistence import StoredEvent

from domain.jungle_speed import Deck, JungleSpeed, Options
from domain.kernel import DomainError, MatchStatus, ReceiveStamp
from domain.kernel.chain import UPCAST, event_digest, stored_event_digest
from domain.kernel.views import Viewer

SEED = bytes(range(32))
DECK_SIZE = 80
#: Options for a 72-card deck without special cards.
NO_SPECIALS = {"inward_arrows": 0, "outward_arrows": 0, "coloured_arrows": 0}

#: Special cards of the default deck (JS-1.3): ids follow the 72 symbol cards.
INWARD = (72, 73, 74)
OUTWARD = (75, 76, 77)
COLOURED = (78, 79)


def sym(shape: int, colour: int) -> int:
    """The id of the symbol card of this shape and colour index (``4 * shape + colour``)."""
    assert 0 <= shape < 18 and 0 <= colour < 4
    return 4 * shape + colour


class Stamps:
    """Receive stamps with increasing sequence numbers; wall time moves only when told."""

    def __init__(self, wall_ms: int = 1_000_000) -> None:
        self.sequence = 0
        self.wall_ms = wall_ms

    def __call__(self, after_ms: int = 0, seen: int = 0) -> ReceiveStamp:
        self.sequence += 1
        self.wall_ms += after_ms
        return ReceiveStamp(self.sequence, self.wall_ms * 1_000, self.wall_ms * 1_000_000, seen)

    def at(self, wall_ms: int) -> ReceiveStamp:
        """A stamp at an absolute wall time (must not go backwards)."""
        assert wall_ms >= self.wall_ms
        return self(after_ms=wall_ms - self.wall_ms)


def pile_sizes(n: int, variant: str, size: int = DECK_SIZE) -> tuple[list[int], int]:
    """How many cards each seat gets and how many go to the pot (JS-2.1), from the rule text:
    RU deals floor(size / n) each, the rest to the pot; ES deals everything, the first
    ``size mod n`` seats getting one more."""
    if variant == "RU":
        return [size // n] * n, size % n
    return [size // n + (1 if s < size % n else 0) for s in range(n)], 0


def deal_for(piles: Sequence[Sequence[int]], pot: Sequence[int] = ()) -> list[int]:
    """The deck order (top first) that deals exactly these face-down piles (each top first)
    and leaves ``pot`` (RU remainder): one card at a time, clockwise from seat 0."""
    n = len(piles)
    lengths = [len(p) for p in piles]
    assert all(lengths[0] - 1 <= x <= lengths[0] for x in lengths), lengths
    assert lengths == sorted(lengths, reverse=True), "earlier seats get the extra cards"
    deck = [piles[k % n][k // n] for k in range(sum(lengths))]
    return deck + list(pot)


def arranged(
    n: int,
    tops: Sequence[Sequence[int]],
    variant: str = "ES",
    pot: Sequence[int] | None = None,
    fill: Sequence[int] | None = None,
    size: int = DECK_SIZE,
) -> list[int]:
    """A deck order whose seat ``s`` pile starts with ``tops[s]`` (top first).

    ``size`` is the deck size (smaller when the options remove special cards).
    The remaining cards fill the piles (in ``fill`` order, else ascending ids) and, in RU,
    the pot (``pot`` if given). Tests reason only about the cards they place.
    """
    sizes, pot_size = pile_sizes(n, variant, size)
    placed = [c for top in tops for c in top] + list(pot or [])
    assert len(set(placed)) == len(placed), "a card placed twice"
    rest = [c for c in (fill if fill is not None else range(size)) if c not in placed]
    rest += [c for c in range(size) if c not in placed and c not in rest]
    piles = []
    for s in range(n):
        top = list(tops[s]) if s < len(tops) else []
        need = sizes[s] - len(top)
        assert need >= 0, f"seat {s} only holds {sizes[s]} cards"
        piles.append(top + rest[:need])
        rest = rest[need:]
    if pot is None:
        pot, rest = rest[:pot_size], rest[pot_size:]
    assert len(pot) == pot_size and not rest
    return deal_for(piles, pot)


def new_match(
    n: int,
    variant: str = "ES",
    deck: list[int] | None = None,
    seed: bytes = SEED,
    stamps: Stamps | None = None,
    **options: Any,
) -> tuple[JungleSpeed, Stamps]:
    """A started match of ``n`` players (seats 0 … n-1), with its stamp source."""
    stamps = stamps or Stamps()
    opts = Options(variant=variant, max_players=n, prearranged_deal=deck, **options)
    match = JungleSpeed.create(opts, seed)
    for s in range(n):
        match.join(f"player {s}", bytes([s]), f"token-hash-{s}", stamps())
    return match, stamps


def state_of(match: JungleSpeed) -> dict[str, Any]:
    """Everything the aggregate holds (but its pending events), as comparable plain data."""
    state = {k: v for k, v in vars(match).items() if k != "_pending_events"}
    state = copy.deepcopy(state)
    if isinstance(state.get("deck"), Deck):
        state["deck"] = state["deck"].cards  # Deck has no equality of its own.
    return state


def replays_as_played(
    match: Any, loaded: Sequence[Any], added: Mapping[str, Sequence[str]]
) -> list[Any]:
    """Check ``match``'s events as an earlier release stored them, ``loaded`` through
    the store's upcasters: each event named in ``added`` marked with the fields it was
    recorded without, all None; every digest recomputed over the fields as recorded;
    and the state they rebuild, worked out by that release's code, the one played (but
    for the last digest, chained again without those fields). Returns the upcast events."""
    upcast = [e for e in loaded if type(e).__name__ in added]
    for evt in upcast:
        fields = added[type(evt).__name__]
        assert getattr(evt, UPCAST) == sorted(fields)
        assert all(getattr(evt, field) is None for field in fields)
    for evt in loaded:
        assert stored_event_digest(evt) == evt.digest
    rebuilt = None
    for evt in loaded:
        rebuilt = evt.mutate(rebuilt)
    replayed, played = state_of(rebuilt), state_of(match)  # type: ignore[arg-type]
    assert replayed.pop("digest") != played.pop("digest")
    assert replayed == played
    return upcast


def event_names(events: Sequence[object]) -> list[str]:
    return [type(e).__name__ for e in events]


def events_since(match: JungleSpeed, version: int) -> list[Any]:
    """The events triggered after ``version``."""
    return [e for e in match.pending_events if e.originator_version > version]


def refused(
    match: JungleSpeed, rule: str, command: Callable[..., Any], *args: Any, **kwargs: Any
) -> DomainError:
    """Run a command the rules refuse: it raises a DomainError naming ``rule`` and changes
    nothing (no event, same state)."""
    version = match.version
    pending = len(match.pending_events)
    before = state_of(match)
    with pytest.raises(DomainError) as info:
        command(*args, **kwargs)
    assert info.value.rule == rule, info.value
    assert match.version == version
    assert len(match.pending_events) == pending
    assert state_of(match) == before
    return info.value


def play_turns(match: JungleSpeed, stamps: Stamps, count: int) -> None:
    """Let ``count`` players reveal in turn (no grabs)."""
    for _ in range(count):
        assert match.turn is not None
        match.reveal(match.turn, stamps())


def ending_deck(
    n: int,
    variant: str,
    size: int,
    ends: dict[int, Sequence[int]],
    pot: Sequence[int] | None = None,
    tops: dict[int, Sequence[int]] | None = None,
) -> list[int]:
    """A deck order where each pile ends (bottom) with chosen cards.

    Seat ``s``'s pile ends with ``ends[s]`` if given, else with ``sym(s, 0), sym(s, 1)``:
    distinct shapes per seat, so that in the last rounds of reveals no two seats duel.
    ``tops[s]`` (if given) starts seat ``s``'s pile. The other cards fill the piles
    between (ascending ids) and the RU pot.
    Every special card of the deck (ids 72 and up) must be placed by the caller.
    """
    sizes, pot_size = pile_sizes(n, variant, size)
    tails = [list(ends.get(s, [sym(s, 0), sym(s, 1)])) for s in range(n)]
    heads = [list((tops or {}).get(s, [])) for s in range(n)]
    placed = [c for part in tails + heads for c in part] + list(pot or [])
    assert len(set(placed)) == len(placed), "a card placed twice"
    assert all(c in placed for c in range(72, size)), "place every special card"
    rest = [c for c in range(72) if c not in placed]
    piles = []
    for s in range(n):
        need = sizes[s] - len(tails[s]) - len(heads[s])
        piles.append(heads[s] + rest[:need] + tails[s])
        rest = rest[need:]
    if pot is None:
        pot, rest = rest[:pot_size], rest[pot_size:]
    assert len(pot) == pot_size and not rest
    return deal_for(piles, pot)


def reveal_until(match: JungleSpeed, stamps: Stamps, seat: int, remaining: int) -> None:
    """Reveal in turn (no grabs) until it is ``seat``'s turn with ``remaining`` face-down
    cards left."""
    while not (match.turn == seat and len(match.down[seat]) == remaining):
        assert match.turn is not None
        match.reveal(match.turn, stamps())


def check_personal_views(match: Any, views: ModuleType) -> None:
    """A seat's state is a spectator's with only its own part added (``views`` is the
    game's views module), and the referee's is built whole: what lets the server build a
    spectator's state once for every seat."""
    spectator = views.state_view(match, Viewer.spectator())
    assert views.personal_view(match, Viewer.spectator()) == {}
    assert views.personal_view(match, Viewer.referee()) is None
    for seat in match.seats:
        viewer = Viewer.player(seat)
        personal = views.personal_view(match, viewer)
        assert personal is not None and not personal.keys() & spectator.keys()
        assert views.state_view(match, viewer) == {**spectator, **personal}, f"seat {seat}"


def check_pending_steps(match: Any, ended: set[int], first: int = 1) -> None:
    """A state in play owes an automatic step (``pending_step``, what refuses a fork
    there) exactly when no command ended at its version: ``ended`` holds the versions
    each command left. Versions before ``first`` are not checked."""
    rebuilt: Any = None
    for evt in match.pending_events:
        rebuilt = evt.mutate(rebuilt)
        if rebuilt.status is MatchStatus.PLAYING and rebuilt.version >= first:
            owed = rebuilt.pending_step()
            assert (owed is None) == (rebuilt.version in ended), (rebuilt.version, owed)


def stored_without(
    match: Any, added: Mapping[str, Sequence[str]], versions: Mapping[str, int] | None = None
) -> list[StoredEvent]:
    """``match``'s events as a release before ``added`` stored them: each event's fields
    named there left out, and every digest chained again over what is left (how that
    release hashed them). Without ``versions``, the first release: no event has a
    ``class_version``; with it, the release whose events named there had that version
    (the others as stored today)."""
    mapper = Application().mapper
    stored: list[StoredEvent] = []
    previous = None
    for evt in match.pending_events:
        name = type(evt).__name__
        fields = {k: v for k, v in vars(evt).items() if k not in added.get(name, ())}
        if previous is not None:
            fields["prev_digest"] = previous
        fields["digest"] = previous = event_digest(name, fields)
        item = mapper.to_stored_event(evt)
        state = mapper.transcoder.decode(item.state)
        if versions is None or versions.get(name) == 1:
            state.pop("class_version", None)
        elif name in versions:
            state["class_version"] = versions[name]
        kept = {k: v for k, v in state.items() if k not in added.get(name, ())}
        kept.update(prev_digest=fields["prev_digest"], digest=fields["digest"])
        stored.append(
            StoredEvent(
                originator_id=item.originator_id,
                originator_version=item.originator_version,
                topic=item.topic,
                state=mapper.transcoder.encode(kept),
            )
        )
    return stored
