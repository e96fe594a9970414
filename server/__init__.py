"""The game server: the eventsourcing application, match actors, the event hub and the
gRPC services. Depends on ``domain`` and the generated contract ``totem.v1``."""
