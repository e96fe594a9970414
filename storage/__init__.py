"""The store: the event store of matches and refusal logs, the projection of match
summaries, the transparency log's storage, and the server's signing key as a file.

Both the server and the judge's tool (``totem-replay``) read and write matches through
this package; it depends on ``domain`` only, never on the server, the clients or the
wire contract.
"""
