"""Every answer to a command carries the server's signed receipt (docs/audit.md,
"Receipts"): Act's ``ActResponse`` and Play's ``PlayResponse.applied``. The receipt's
signature verifies with the key GetServerKey publishes, and it reveals nothing hidden:
its fields are public facts and a commitment to the chain head keyed by the match's
secret seed, never the head digest (computed over the face-down deck) or a hash of it."""

from __future__ import annotations

import hashlib
import hmac
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel.signing import head_commitment, receipt_message
from domain.kernel.views import Viewer
from server import codec
from server.serve import RunningServer
from storage.keys import ephemeral
from tests.service.helpers import ORGANISER_TOKEN
from tests.service.test_shared_states import SEED, Clock, assert_each_field_once, seated
from totem.v1 import match_service_pb2 as ms
from totem_client import connect

#: The receipt's fields: nothing else may ever be added without a look at what it shows.
RECEIPT_FIELDS = {
    "match_id",
    "version",
    "head_commitment",
    "issued_at_ms",
    "signature",
    "public_key",
}


def check_receipt(server: RunningServer, answer: ms.ActResponse, public_key: bytes) -> None:
    """The answer's receipt is the server's, for the answer's version, and commits to
    the stored chain head through the match's seed."""
    receipt = answer.receipt
    assert {field.name for field, _ in receipt.ListFields()} == RECEIPT_FIELDS
    assert receipt.version == answer.version
    assert receipt.public_key == public_key
    message = receipt_message(
        receipt.match_id, receipt.version, receipt.head_commitment, receipt.issued_at_ms
    )
    Ed25519PublicKey.from_public_bytes(public_key).verify(receipt.signature, message)

    match = server.app.load(UUID(receipt.match_id))
    assert match.version == receipt.version  # the answer comes once the events are stored
    seed = bytes.fromhex(match.seed)
    assert receipt.head_commitment == head_commitment(seed, match.id, match.version, match.digest)
    # As docs/audit.md, "The head commitment", spells it out.
    documented = f"totem-arena receipt head v1\n{match.id}\n{match.version}\n{match.digest}"
    assert receipt.head_commitment == hmac.new(seed, documented.encode(), "sha256").digest()
    assert (
        message
        == (
            f"totem-arena receipt v1\n{receipt.match_id}\n{receipt.version}\n"
            f"{receipt.head_commitment.hex()}\n{receipt.issued_at_ms}"
        ).encode()
    )
    # Nothing computable without the seed: not the digest, nor a hash of it.
    digest = bytes.fromhex(match.digest)
    wire = receipt.SerializeToString()
    assert digest not in wire
    assert hashlib.sha256(digest).digest() not in wire
    assert hashlib.sha256(match.digest.encode()).digest() not in wire
    assert seed not in wire


async def test_act_and_play_answers_carry_the_servers_receipt(server: RunningServer) -> None:
    async with connect(f"127.0.0.1:{server.port}", organiser_token=ORGANISER_TOKEN) as client:
        _, public_key = await client.server_key()
        created = await client.create_match(max_players=2, specials=(0, 0, 0))
        ana = await client.join(created.match_id, "ana")
        bo = await client.join(created.match_id, "bo")

        by_act = await ana.reveal()  # an Act call
        check_receipt(server, by_act, public_key)

        async with bo.playing():  # a Play stream
            by_play = await bo.reveal()
        check_receipt(server, by_play, public_key)
        assert by_play.receipt.version > by_act.receipt.version

        # The client keeps the newest of each match.
        newest = client.receipts.newest(created.match_id)
        assert newest == by_play.receipt


def test_the_receipt_is_written_once_in_the_answers_bytes() -> None:
    """The answer is assembled as bytes (:func:`server.codec.act_answer`): the receipt
    is one field of it, written once, beside the state embedded after it."""
    clock = Clock()
    match = seated(JungleSpeed.create(JungleSpeedOptions(max_players=2), SEED, b""), 2, clock)
    match.signer = ephemeral().signer()
    match.reveal(0, clock())
    data = codec.act_answer(match, Viewer.player(0))
    assert_each_field_once(ms.ActResponse, data)
    answer = ms.ActResponse.FromString(data)
    assert answer.receipt.version == answer.version == match.version
    assert answer.state.summary.version == match.version
