"""``python -m server``: the server's own commands (``serve`` and its maintenance), as
the ``totem`` command has them, without the client's."""

from server.cli import main

main()
