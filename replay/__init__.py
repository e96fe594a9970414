"""``totem-replay``: rebuild, inspect and verify stored matches without a running server.

The tool reads the same event store as ``totem serve`` (an SQLite file, or PostgreSQL
through the library's ``POSTGRES_*`` variables), never writes to it, and rebuilds every
state by applying the stored events: it never re-decides anything. See docs/replay.md.
"""
