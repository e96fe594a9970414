"""Randomness and hidden information: JS-9.1 (committed seed, recorded shuffle) and
JS-9.2 (no face-down order, seed or prearranged deal in a player's or spectator's view).

The strongest check is byte-identity: two matches that differ only in hidden facts give
every player and every spectator the same bytes until a card that differs is revealed.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from domain_support import SEED, Stamps, arranged, new_match
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.jungle_speed import JungleSpeed, Options
from domain.jungle_speed.views import event_view, state_view
from domain.kernel import SeededRandom, Viewer, canonical_bytes, effective_seed

HIDDEN_KEYS = {"deck", "face_down", "seed", "prearranged_deal", "token_hash", "referee_token_hash"}


def keys_of(value: Any) -> set[str]:
    """Every dict key anywhere inside ``value``."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, (list, tuple)):
        return {k for v in value for k in keys_of(v)}
    return set()


def dealt_event(match: JungleSpeed) -> Any:
    return next(e for e in match.pending_events if type(e).__name__ == "Dealt")


# ---- JS-9.1 the shuffle ------------------------------------------------------------------


def test_js_9_1_created_records_the_commitment_and_the_dealt_event_the_deck() -> None:
    match, _ = new_match(3)
    assert match.seed_commitment == hashlib.sha256(SEED).hexdigest()
    dealt = dealt_event(match)
    assert sorted(dealt.deck) == list(range(80))
    assert dealt.deck != list(range(80))  # shuffled
    assert match.down[0][:3] == dealt.deck[0:9:3]


def test_js_9_1_the_shuffle_derives_from_the_effective_seed_with_player_entropy() -> None:
    """docs/randomness.md: E = SHA-256(S || SHA-256(e0) || …), creator's entropy first, then
    each join; the deck is Fisher-Yates over purpose ``jungle_speed/deal``."""
    stamps = Stamps()
    match = JungleSpeed.create(Options(max_players=3), SEED, entropy=b"creator")
    for seat, entropy in enumerate((b"alice", b"", b"carol")):
        match.join(f"p{seat}", entropy, "h", stamps())
    assert match.effective_seed() == effective_seed(SEED, [b"creator", b"alice", b"", b"carol"])
    expected = list(range(80))
    SeededRandom(match.effective_seed(), "jungle_speed/deal").shuffle(expected)
    assert dealt_event(match).deck == expected


def test_js_9_1_a_player_entropy_changes_the_deal_and_the_same_inputs_repeat_it() -> None:
    def deck(entropies: list[bytes], seed: bytes = SEED) -> list[int]:
        stamps = Stamps()
        match = JungleSpeed.create(Options(max_players=len(entropies)), seed)
        for i, entropy in enumerate(entropies):
            match.join(f"p{i}", entropy, "h", stamps())
        deck: list[int] = dealt_event(match).deck
        return deck

    base = deck([b"a", b"b"])
    assert deck([b"a", b"b"]) == base
    assert deck([b"a", b"c"]) != base
    assert deck([b"b", b"a"]) != base
    assert deck([b"a", b"b"], seed=b"\x01" * 32) != base


def test_js_9_1_and_js_2_4_a_prearranged_deal_is_used_as_given_whatever_the_seed() -> None:
    order = list(range(80))
    random.Random(5).shuffle(order)
    first, _ = new_match(4, deck=order, seed=b"a" * 32)
    second, _ = new_match(4, deck=order, seed=b"b" * 32)
    assert dealt_event(first).deck == order == dealt_event(second).deck
    assert first.down == second.down


# ---- JS-9.2 views ---------------------------------------------------------------------------


def test_js_9_2_event_views_hide_the_seed_the_deck_and_the_prearranged_deal() -> None:
    match, stamps = new_match(3, deck=arranged(3, []))
    match.reveal(0, stamps())
    for viewer in (Viewer.player(0), Viewer.player(2), Viewer.spectator()):
        views = [event_view(match, e, viewer) for e in match.pending_events]
        names = [name for name, _ in views]
        assert names[:5] == ["Created", "PlayerJoined", "PlayerJoined", "PlayerJoined", "Dealt"]
        for _, view in views:
            assert not keys_of(view) & HIDDEN_KEYS, keys_of(view) & HIDDEN_KEYS
        created, dealt = views[0][1], views[4][1]
        assert created["seed_commitment"] == hashlib.sha256(SEED).hexdigest()
        assert created["options"]["prearranged"] is True
        assert dealt["face_down_counts"] == [27, 27, 26]
        assert views[5][1]["card"]["id"] == match.up[0][0]  # a revealed card is public
    referee = [event_view(match, e, Viewer.referee()) for e in match.pending_events]
    assert referee[0][1]["seed"] == SEED.hex()
    assert referee[0][1]["options"]["prearranged_deal"] == match.options.prearranged_deal
    assert [c["id"] for c in referee[4][1]["deck"]] == match.options.prearranged_deal


def test_js_9_2_state_view_gives_counts_only_and_the_seed_only_after_the_end() -> None:
    match, stamps = new_match(2)
    match.reveal(0, stamps())
    for viewer in (Viewer.player(0), Viewer.player(1), Viewer.spectator()):
        view = state_view(match, viewer)
        assert not keys_of(view) & HIDDEN_KEYS
        assert [s["face_down_count"] for s in view["seats"]] == [39, 40]
        assert view["seats"][0]["top"]["id"] == match.up[0][-1]
    referee = state_view(match, Viewer.referee())
    assert [c["id"] for c in referee["seats"][1]["face_down"]] == match.down[1]
    assert referee["seed"] == SEED.hex()


def test_js_9_2_the_seed_is_public_once_the_match_has_ended() -> None:
    match, stamps = new_match(2, "RU")
    assert "seed" not in state_view(match, Viewer.spectator())
    rng = random.Random(3)
    while match.status.value == "playing":
        run_command(match, stamps, public_policy(match, rng, 2))
    assert state_view(match, Viewer.spectator())["seed"] == SEED.hex()
    name, ended = event_view(match, match.pending_events[-1], Viewer.spectator())
    assert name == "MatchEnded" and ended["seed"] == SEED.hex()


# ---- JS-9.2 byte-identical views ----------------------------------------------------------------

VIEWERS = [Viewer.spectator(), *(Viewer.player(s) for s in range(10))]


def public_policy(match: JungleSpeed, rng: random.Random, n: int) -> tuple[str, int]:
    """The next command, chosen only from what every player can see (and a shared rng)."""
    duels = match.open_duels()
    active = [s for s in range(n) if match.active(s)]
    if duels and rng.random() < 0.6:
        return "grab", rng.choice(duels[0])
    if match.open_arrows() and rng.random() < 0.6:
        return "grab", rng.choice(active)
    if rng.random() < 0.05:
        return "grab", rng.choice(active)
    if match.pending_outward is not None:
        return ("grab", rng.choice(active)) if duels else ("timer", 0)
    if match.turn is None:
        return "timer", 0
    return "reveal", match.turn


def run_command(match: JungleSpeed, stamps: Stamps, command: tuple[str, int]) -> None:
    kind, seat = command
    if kind == "grab":
        match.grab(seat, stamps())
    elif kind == "reveal":
        match.reveal(seat, stamps())
    else:
        match.fire_timer(stamps(after_ms=10_000))


def views_of(match: JungleSpeed, events: list[Any], n: int) -> list[bytes]:
    viewers = VIEWERS[: n + 1]
    return [canonical_bytes([event_view(match, e, v) for v in viewers]) for e in events]


def state_bytes(match: JungleSpeed, n: int) -> bytes:
    return canonical_bytes([state_view(match, v) for v in VIEWERS[: n + 1]])


def differs_hidden_only(
    n: int, variant: str, deck_a: list[int], deck_b: list[int], policy_seed: int
) -> int:
    """Play both decks with the same public policy; assert identical views up to the first
    reveal that differs. Returns how many events were identical."""
    a, stamps_a = new_match(n, variant, deck_a)
    b, stamps_b = new_match(n, variant, deck_b)
    rng_a, rng_b = random.Random(policy_seed), random.Random(policy_seed)
    identical = 0
    events_a, events_b = a.pending_events, b.pending_events
    for _ in range(400):
        views_a, views_b = views_of(a, events_a, n), views_of(b, events_b, n)
        pairs = zip(events_a, events_b, views_a, views_b, strict=False)
        for evt_a, evt_b, view_a, view_b in pairs:
            if view_a != view_b:
                # The first difference anyone but the referee sees is a revealed card.
                assert type(evt_a).__name__ in {"Revealed", "OutwardReveal"}, evt_a
                assert type(evt_b).__name__ == type(evt_a).__name__
                shown_a = getattr(evt_a, "card", None), getattr(evt_a, "reveals", None)
                shown_b = getattr(evt_b, "card", None), getattr(evt_b, "reveals", None)
                assert shown_a != shown_b
                return identical
            identical += 1
        assert len(events_a) == len(events_b)
        assert state_bytes(a, n) == state_bytes(b, n)
        if a.status.value != "playing":
            return identical
        command = public_policy(a, rng_a, n)
        assert command == public_policy(b, rng_b, n)
        version_a, version_b = a.version, b.version
        run_command(a, stamps_a, command)
        run_command(b, stamps_b, command)
        events_a = [e for e in a.pending_events if e.originator_version > version_a]
        events_b = [e for e in b.pending_events if e.originator_version > version_b]
    return identical


def hidden_variant(
    deck: list[int], n: int, variant: str, keep: int, rng: random.Random
) -> list[int]:
    """The same deck with the cards after the first ``keep`` of the deal order shuffled
    among themselves (the RU pot, public, is kept)."""
    dealt = (len(deck) // n) * n if variant == "RU" else len(deck)
    keep = min(keep, dealt)
    head, tail, pot = deck[:keep], deck[keep:dealt], deck[dealt:]
    tail = list(tail)
    rng.shuffle(tail)
    return head + tail + pot


def test_js_9_2_views_are_byte_identical_until_a_differing_card_is_revealed() -> None:
    for n, variant, keep in ((2, "ES", 20), (3, "RU", 30), (5, "ES", 40), (7, "RU", 12)):
        rng = random.Random(n)
        deck_a = list(range(80))
        rng.shuffle(deck_a)
        deck_b = hidden_variant(deck_a, n, variant, keep, rng)
        assert deck_a != deck_b
        identical = differs_hidden_only(n, variant, deck_a, deck_b, policy_seed=n)
        # Created, the joins, Dealt and at least the first reveal (a kept card).
        assert identical >= 1 + n + 1 + 1


def test_js_9_2_the_referee_view_does_differ() -> None:
    """The byte comparison can fail: the referee sees the decks differ at once."""
    deck_a = list(range(80))
    deck_b = hidden_variant(deck_a, 2, "ES", 10, random.Random(1))
    a, _ = new_match(2, deck=deck_a)
    b, _ = new_match(2, deck=deck_b)
    dealt_a, dealt_b = dealt_event(a), dealt_event(b)
    referee = Viewer.referee()
    assert canonical_bytes(event_view(a, dealt_a, referee)) != canonical_bytes(
        event_view(b, dealt_b, referee)
    )
    assert canonical_bytes(state_view(a, referee)) != canonical_bytes(state_view(b, referee))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 10),
    variant=st.sampled_from(["ES", "RU"]),
    deck_seed=st.integers(0, 2**32),
    keep=st.integers(0, 80),
    policy_seed=st.integers(0, 2**32),
)
def test_js_9_2_property_hidden_facts_never_reach_players_or_spectators(
    n: int, variant: str, deck_seed: int, keep: int, policy_seed: int
) -> None:
    rng = random.Random(deck_seed)
    deck_a = list(range(80))
    rng.shuffle(deck_a)
    deck_b = hidden_variant(deck_a, n, variant, keep, rng)
    differs_hidden_only(n, variant, deck_a, deck_b, policy_seed)
