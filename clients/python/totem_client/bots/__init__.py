"""Bots that play matches through the client library."""

from totem_client.bots.jungle_speed import BotStats, JungleSpeedBot, TableResult, play_table

__all__ = ["BotStats", "JungleSpeedBot", "TableResult", "play_table"]
