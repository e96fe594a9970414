"""The terminal player's words for a tie (JS-4.2a): who was drawn, and who lost the draw."""

from __future__ import annotations

from totem.v1 import common_pb2
from totem.v1 import jungle_speed_pb2 as js
from totem.v1 import match_service_pb2 as ms
from totem_client.play.jungle_speed_text import Races, describe, race_lines
from totem_client.play.words import Names


def _tied_duel() -> ms.MatchEvent:
    stamps = [common_pb2.ReceiveStamp(sequence=n, seen_version=4) for n in (7, 8)]
    tie = js.JungleSpeedTie(
        window_us=200,
        contenders=[
            js.JungleSpeedContender(seat=1, stamp=stamps[0]),
            js.JungleSpeedContender(seat=0, stamp=stamps[1]),
        ],
        drawn=1,
    )
    won = js.DuelWon(winner=0, losers=[1], stamp=stamps[1], tie=tie)
    return ms.MatchEvent(version=5, jungle_speed=js.JungleSpeedEvent(duel_won=won))


def test_js_4_2a_the_log_says_the_winner_was_drawn_among_simultaneous_grabs() -> None:
    line = describe(_tied_duel(), Names())
    assert line == (
        "v5  seat 0 won the duel against seat 1, drawn among the simultaneous grabs of "
        "seat 1, seat 0 (JS-4.2a)"
    )


def test_js_4_2a_the_race_panel_lists_each_contender_and_who_lost_the_draw() -> None:
    races = Races()
    assert races.note(_tied_duel())
    assert races.last is not None
    assert [(g.seat, g.outcome) for g in races.last.grabs] == [(1, "lost the draw"), (0, "won")]
    panel = race_lines(races.last, Names()).plain
    assert "1. #7 seat 1 lost the draw" in panel and "2. #8 seat 0 won" in panel
