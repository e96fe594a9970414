"""The commands a user runs, composed from the parts that do the work.

``totem`` is the server's commands (:mod:`server.cli`) with the client's (bots, the
terminal player, the server's key) and the commands that fetch evidence from a running
server (:mod:`entrypoints.checkpoint`); ``totem-replay`` is the judge's tool
(:mod:`replay.cli`), which reads stores and files only, with :mod:`entrypoints.fork`,
which asks a running server to fork a match. Only this package imports both the server
or the judge's tool and the client, so that neither of those needs the other.
"""
