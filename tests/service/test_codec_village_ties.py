"""Village tie fields on the wire (VI-7.11): empty unless two or more families are tied."""

from __future__ import annotations

from server.codec import village as codec


def _completed(tied: list[int], winner: int | None) -> dict[str, object]:
    return {
        "contenders": [0, 1],
        "sizes": [12, 12, 9, 7],
        "birds": [10, 10, 0, 0],
        "tied": tied,
        "winner": winner,
        "winning_seats": [0] if winner == 0 else [0, 1],
    }


def test_vi_7_11_a_lone_winner_recorded_as_tied_goes_out_as_no_tie() -> None:
    """Matches recorded before VI-7.11 hold a lone winner in ``tied``; the wire says
    ``winner`` only."""
    message = codec.event_message("TotemCompleted", _completed([0], 0)).totem_completed
    assert list(message.tied) == [] and message.winner == 0


def test_vi_7_11_two_tied_families_go_out_as_tied() -> None:
    message = codec.event_message("TotemCompleted", _completed([0, 1], None)).totem_completed
    assert list(message.tied) == [0, 1] and not message.HasField("winner")
