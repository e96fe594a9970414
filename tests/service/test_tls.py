"""TLS and mutual TLS, with certificates the test makes; plaintext only on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from entrypoints.totem import main as totem_main
from entrypoints.totem_replay import main as replay_main
from server.cli import _loopback, main
from server.serve import RunningServer, ServerTls, start
from tests.service.helpers import ORGANISER_TOKEN
from tests.service.pki import Authority, make_pki
from totem_client import ClientTls, TotemError, connect


@pytest.fixture(scope="module")
def pki() -> Authority:
    return make_pki()


@pytest.fixture
async def tls_server(store_env: dict[str, str], pki: Authority) -> AsyncIterator[RunningServer]:
    running = await start("localhost:0", store_env, tls=ServerTls(pki.server.cert, pki.server.key))
    yield running
    await running.stop(grace=0)


@pytest.fixture
async def mtls_server(store_env: dict[str, str], pki: Authority) -> AsyncIterator[RunningServer]:
    running = await start(
        "localhost:0",
        store_env,
        tls=ServerTls(pki.server.cert, pki.server.key, client_ca=pki.ca.cert),
    )
    yield running
    await running.stop(grace=0)


async def _lists(port: int, tls: ClientTls | None) -> bool:
    try:
        async with connect(f"localhost:{port}", tls=tls, call_timeout=5) as client:
            async for _ in client.list_matches():
                break
    except TotemError:
        return False
    return True


async def test_a_tls_server_answers_clients_that_trust_its_ca_and_no_plaintext(
    tls_server: RunningServer, pki: Authority
) -> None:
    assert await _lists(tls_server.port, ClientTls(ca=pki.ca.cert))
    assert not await _lists(tls_server.port, None)
    assert not await _lists(tls_server.port, ClientTls(ca=pki.stranger.cert))


async def test_mutual_tls_admits_only_clients_with_a_certificate_its_ca_signed(
    mtls_server: RunningServer, pki: Authority
) -> None:
    ca = pki.ca.cert
    assert await _lists(
        mtls_server.port, ClientTls(ca=ca, cert=pki.client.cert, key=pki.client.key)
    )
    assert not await _lists(mtls_server.port, ClientTls(ca=ca))
    assert not await _lists(
        mtls_server.port, ClientTls(ca=ca, cert=pki.stranger.cert, key=pki.stranger.key)
    )


def test_plaintext_off_loopback_needs_insecure(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        main, ["serve", "--address", "0.0.0.0:0", "--db", str(tmp_path / "t.db")]
    )
    assert done.exit_code == 2
    assert "--insecure" in done.output and "--tls-cert" in done.output
    assert not (tmp_path / "t.db").exists()


def test_tls_options_go_together(tmp_path: Path, pki: Authority) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_bytes(pki.server.cert)
    done = CliRunner().invoke(main, ["serve", "--tls-cert", str(cert)])
    assert done.exit_code == 2 and "go together" in done.output


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1:50051", True),
        ("localhost:1", True),
        ("[::1]:50051", True),
        ("0.0.0.0:50051", False),
        ("[::]:50051", False),
        ("192.168.1.5:50051", False),
        ("example.org:50051", False),
    ],
)
def test_which_addresses_are_loopback(address: str, loopback: bool) -> None:
    assert _loopback(address) is loopback


def _write_pki(directory: Path, pki: Authority) -> dict[str, str]:
    paths = {
        "ca": directory / "ca.pem",
        "cert": directory / "client.pem",
        "key": directory / "client.key",
    }
    paths["ca"].write_bytes(pki.ca.cert)
    paths["cert"].write_bytes(pki.client.cert)
    paths["key"].write_bytes(pki.client.key)
    return {name: str(path) for name, path in paths.items()}


async def test_the_command_line_tools_reach_a_mutual_tls_server(
    mtls_server: RunningServer, pki: Authority, tmp_path: Path
) -> None:
    """`totem server-key`, `totem bots` and `totem-replay fork` take --tls-ca, --tls-cert
    and --tls-key; without the client certificate the server turns them away."""
    files = _write_pki(tmp_path, pki)
    address = f"localhost:{mtls_server.port}"
    tls = ["--tls-ca", files["ca"], "--tls-cert", files["cert"], "--tls-key", files["key"]]

    def totem(*args: str) -> Result:
        return CliRunner().invoke(totem_main, list(args))

    key = await asyncio.to_thread(totem, "server-key", "--server", address, *tls)
    assert key.exit_code == 0, key.output
    assert len(key.stdout.strip()) == 64
    refused = await asyncio.to_thread(
        totem, "server-key", "--server", address, "--tls-ca", files["ca"], "--connect-timeout", "2"
    )
    assert refused.exit_code != 0

    played = await asyncio.to_thread(
        totem,
        *("bots", "jungle-speed", "--players", "2", "--address", address),
        *("--organiser-token", ORGANISER_TOKEN, "--turn-timeout-ms", "200", *tls),
    )
    assert played.exit_code == 0, played.output
    assert "match ended" in played.stdout

    client_tls = ClientTls(ca=pki.ca.cert, cert=pki.client.cert, key=pki.client.key)
    async with connect(address, tls=client_tls, organiser_token=ORGANISER_TOKEN) as client:
        created = await client.create_match(max_players=2, turn_timeout_ms=0)
        for name in ("ana", "bo"):
            await client.join(created.match_id, name)
        version = (await client.get(created.match_id)).summary.version
    argv = ["fork", created.match_id, str(version), "--server", address, "--json", *tls]
    forked = await asyncio.to_thread(
        CliRunner().invoke, replay_main, [*argv, "--token", ORGANISER_TOKEN]
    )
    assert forked.exit_code == 0, forked.output
