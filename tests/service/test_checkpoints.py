"""GetCheckpoint: a signed checkpoint of the transparency log of matches, which grows by
one leaf when a match is created and one when it ends, each leaf exactly as
docs/audit.md encodes it (rebuilt here from what clients saw), with consistency proofs
between any two sizes."""

from __future__ import annotations

import asyncio
from uuid import UUID

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.kernel import merkle
from domain.kernel.translog import Leaf, checkpoint_message
from server.serve import RunningServer
from tests.service.helpers import ORGANISER_TOKEN
from tests.service.test_signed_matches import scripted_deck
from totem.v1 import match_service_pb2
from totem_client import Client, connect
from totem_client.errors import TotemError


def verified(answer: match_service_pb2.GetCheckpointResponse, key: bytes) -> None:
    """The checkpoint is signed by the server's published key, on the documented message."""
    assert answer.public_key == key
    message = checkpoint_message(answer.tree_size, answer.root_hash, answer.timestamp_ms)
    Ed25519PublicKey.from_public_bytes(key).verify(answer.signature, message)


async def first_event_digest(client: Client, created: object) -> str:
    async for event in client.referee(created).watch():  # type: ignore[arg-type]
        return event.digest.hex()
    raise AssertionError("no event")


async def test_checkpoints_grow_with_each_creation_and_end_and_stay_consistent(
    server: RunningServer,
) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        _, key = await client.server_key()
        empty = await client.checkpoint()
        verified(empty, key)
        assert (empty.tree_size, empty.root_hash) == (0, merkle.EMPTY_ROOT)

        created = await client.create_match(
            max_players=2, turn_timeout_ms=0, specials=(0, 0, 0), prearranged_deal=scripted_deck()
        )
        match_id = UUID(created.match_id)
        creation = Leaf(
            "created",
            match_id,
            1,
            await asyncio.wait_for(first_event_digest(client, created), 30),
            game="jungle_speed",
            seed_commitment=created.seed_commitment.hex(),
        )
        one = await client.checkpoint()
        verified(one, key)
        assert one.tree_size == 1
        assert one.root_hash == merkle.root([creation.hash()])

        ana = await client.join(created.match_id, "ana")
        bo = await client.join(created.match_id, "bo")
        for _ in range(36):
            await ana.reveal()
            await bo.reveal()
        await ana.grab()  # the last duel: the match ends (JS-8.1), signed
        events = [e async for e in client.referee(created).watch()]
        last = events[-1]
        assert last.WhichOneof("event") == "match_ended"
        end = Leaf(
            "ended",
            match_id,
            last.version,
            last.digest.hex(),
            signature=last.match_ended.signature.hex(),
        )

        two = await client.checkpoint(consistent_with=one.tree_size)
        verified(two, key)
        assert two.tree_size == 2
        assert two.root_hash == merkle.root([creation.hash(), end.hash()])
        assert merkle.verify_consistency(
            1, 2, one.root_hash, two.root_hash, [bytes(p) for p in two.consistency_proof]
        )
        # A proof for another tree does not pass as this one's.
        assert not merkle.verify_consistency(
            1, 2, merkle.leaf_hash(b"other"), two.root_hash, list(two.consistency_proof)
        )

        with pytest.raises(TotemError) as refused:
            await client.checkpoint(consistent_with=3)
        assert refused.value.code == grpc.StatusCode.OUT_OF_RANGE
        assert "beyond the log's 2 leaves" in str(refused.value)
