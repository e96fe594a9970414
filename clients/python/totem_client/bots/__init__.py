"""Bots that play matches through the client library."""

from totem_client.bots.jungle_speed import BotStats, JungleSpeedBot, TableResult, play_table
from totem_client.bots.table import Standing, play_seats
from totem_client.bots.tribes import TribesBot, TribesBotStats
from totem_client.bots.tribes import play_table as play_tribes_table
from totem_client.bots.village import VillageBot, VillageBotStats
from totem_client.bots.village import play_table as play_village_table

__all__ = [
    "BotStats",
    "JungleSpeedBot",
    "Standing",
    "TableResult",
    "TribesBot",
    "TribesBotStats",
    "VillageBot",
    "VillageBotStats",
    "play_seats",
    "play_table",
    "play_tribes_table",
    "play_village_table",
]
