"""Tribes: the stacking-totem game, base and extended (rules TR-1 … TR-8)."""

from domain.tribes.match import Tribes
from domain.tribes.options import Options

__all__ = ["Options", "Tribes"]
