"""The game server: the use cases (:mod:`server.application`), match actors, the event
hub and the gRPC services. Depends on ``domain``, ``storage`` and the generated contract
``totem.v1``; never on the clients or the judge's tool.

gRPC core reads ``GRPC_EXPERIMENTS`` once, when ``grpc`` is first imported, so the
server's own setting is made here, before any of its modules imports ``grpc``; an
operator's ``GRPC_EXPERIMENTS`` is kept as given. See :data:`GRPC_EXPERIMENTS`.
"""

import os

#: gRPC core experiments the server turns off. With the EventEngine listener (gRPC's
#: default), requests that reach the machine within about 2 ms of one another are handed
#: to the event loop in an order unrelated to their arrival: in 6-way grab races the
#: first request on the wire won 9% of the time, the last 32%. The older listener hands
#: them over in arrival order: every pair of grabs 50 µs or more apart on the wire was
#: stamped in that order. Receive order decides grab races (JS-6.1); see
#: docs/performance.md, "Grab races".
GRPC_EXPERIMENTS = "-event_engine_listener"

os.environ.setdefault("GRPC_EXPERIMENTS", GRPC_EXPERIMENTS)
