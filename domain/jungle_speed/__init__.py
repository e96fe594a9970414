"""Jungle Speed: a real-time race to grab the totem (rules JS-1 … JS-10)."""

from domain.jungle_speed.cards import Card, Deck, Kind
from domain.jungle_speed.match import JungleSpeed
from domain.jungle_speed.options import Options

__all__ = ["Card", "Deck", "JungleSpeed", "Kind", "Options"]
