"""``python -m server`` is the ``totem`` command."""

from server.cli import main

main()
