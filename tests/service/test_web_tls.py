"""TLS on the web port, from the gRPC port's options: with a certificate and key it serves
TLS only, HTTP/2 and HTTP/1.1 by ALPN, with a client CA only to clients that CA signed;
without them, ``totem serve`` serves it in plaintext on loopback addresses only."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from entrypoints.totem import main
from server import serve
from server.serve import RunningServer, ServerTls
from server.web import WebSettings
from tests.service.pki import Authority, make_pki
from tests.service.web_helpers import JSON, MATCHES, serving_web

LIST = f"{MATCHES}/ListMatches"


@pytest.fixture(scope="module")
def pki() -> Authority:
    return make_pki()


def trusting(pki: Authority, client: Any = None, tmp: Path | None = None) -> ssl.SSLContext:
    """A client context that trusts the test CA, with ``client``'s certificate if given."""
    context = ssl.create_default_context(cadata=pki.ca.cert.decode())
    if client is not None and tmp is not None:
        (tmp / "client.pem").write_bytes(client.cert)
        (tmp / "client.key").write_bytes(client.key)
        context.load_cert_chain(tmp / "client.pem", tmp / "client.key")
    return context


def url(server: RunningServer, scheme: str) -> str:
    assert server.web is not None
    return f"{scheme}://localhost:{server.web.port}"


@pytest.fixture
async def tls_server(store_env: dict[str, str], pki: Authority) -> AsyncIterator[RunningServer]:
    async with serving_web(
        store_env, tls=ServerTls(pki.server.cert, pki.server.key), web="127.0.0.1:0"
    ) as running:
        yield running


async def test_the_web_port_serves_tls_over_http2_and_http11_and_no_plaintext(
    tls_server: RunningServer, pki: Authority
) -> None:
    assert tls_server.web is not None and tls_server.web.tls
    answers = []
    for http2 in (True, False):
        async with httpx.AsyncClient(
            base_url=url(tls_server, "https"), verify=trusting(pki), http2=http2
        ) as http:
            answers.append(await http.post(LIST, json={}, headers=JSON))
    assert [a.http_version for a in answers] == ["HTTP/2", "HTTP/1.1"]
    assert all(a.status_code == 200 for a in answers)
    assert [a.json() for a in answers] == [{}, {}]
    async with httpx.AsyncClient(base_url=url(tls_server, "http")) as http:
        with pytest.raises(httpx.TransportError):
            await http.post(LIST, json={}, headers=JSON)
    stranger = ssl.create_default_context(cadata=pki.stranger.cert.decode())
    async with httpx.AsyncClient(base_url=url(tls_server, "https"), verify=stranger) as http:
        with pytest.raises(httpx.ConnectError):
            await http.post(LIST, json={}, headers=JSON)


async def test_with_a_client_ca_only_clients_it_signed_are_served(
    store_env: dict[str, str], pki: Authority, tmp_path: Path
) -> None:
    tls = ServerTls(pki.server.cert, pki.server.key, client_ca=pki.ca.cert)
    async with serving_web(store_env, tls=tls) as running:
        signed = trusting(pki, pki.client, tmp_path)
        async with httpx.AsyncClient(base_url=url(running, "https"), verify=signed) as http:
            assert (await http.post(LIST, json={}, headers=JSON)).status_code == 200
        for client in (None, pki.stranger):
            context = trusting(pki, client, tmp_path)
            async with httpx.AsyncClient(base_url=url(running, "https"), verify=context) as http:
                with pytest.raises(httpx.TransportError):
                    await http.post(LIST, json={}, headers=JSON)


def test_serve_refuses_plaintext_web_beyond_loopback_and_allows_it_with_tls(
    tmp_path: Path, pki: Authority, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    async def fake_serve_forever(*args: Any, **kwargs: Any) -> None:
        seen.update(kwargs, tls=args[3] if len(args) > 3 else None)

    monkeypatch.setattr(serve, "serve_forever", fake_serve_forever)
    db = ("--db", str(tmp_path / "t.db"))
    plain = CliRunner().invoke(main, ["serve", *db, "--web", "0.0.0.0:8443"])
    assert plain.exit_code == 2
    assert "--web 0.0.0.0:8443 is not a loopback address" in plain.output
    (tmp_path / "cert.pem").write_bytes(pki.server.cert)
    (tmp_path / "key.pem").write_bytes(pki.server.key)
    served = CliRunner().invoke(
        main,
        [
            *("serve", *db, "--address", "0.0.0.0:0", "--web", "0.0.0.0:8443"),
            *("--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")),
        ],
    )
    assert served.exit_code == 0, served.output
    assert seen["web"] == WebSettings("0.0.0.0:8443")
    assert seen["tls"] is not None
