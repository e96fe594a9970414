"""The rules of the games: pure Python, no I/O, no clock, no global random.

Each game is an ``eventsourcing`` aggregate in its own package; ``domain.kernel`` holds
what every game shares (seats, the seeded random source, views, the audit chain).
"""
