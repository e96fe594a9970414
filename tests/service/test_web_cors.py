"""CORS on the web port: none by default (same-origin calls only); with origins given,
their preflights are answered with the headers Connect and gRPC-Web send, and their
answers expose gRPC-Web's status headers; any other origin gets no CORS headers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from server.serve import RunningServer
from server.web import WebSettings
from server.web_http import CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS
from tests.service.web_helpers import JSON, MATCHES, serving_web, web_url

ALLOWED = "https://arena.example"
OTHER = "https://elsewhere.example"
PREFLIGHT = {
    "access-control-request-method": "POST",
    "access-control-request-headers": ", ".join(CORS_ALLOW_HEADERS),
}


@pytest.fixture
async def web_server(store_env: dict[str, str]) -> AsyncIterator[RunningServer]:
    settings = WebSettings("127.0.0.1:0", cors_origins=(ALLOWED, "http://localhost:5173"))
    async with serving_web(store_env, web=settings) as running:
        yield running


def listed(value: str) -> set[str]:
    return {item.strip().lower() for item in value.split(",")}


async def test_a_preflight_from_an_allowed_origin_allows_connect_and_grpc_web(
    web_server: RunningServer,
) -> None:
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        answer = await http.options(f"{MATCHES}/GetMatch", headers={"origin": ALLOWED, **PREFLIGHT})
    assert answer.status_code == 200, answer.text
    assert answer.headers["access-control-allow-origin"] == ALLOWED
    assert "post" in listed(answer.headers["access-control-allow-methods"])
    assert set(CORS_ALLOW_HEADERS) <= listed(answer.headers["access-control-allow-headers"])
    assert {"content-type", "authorization", "connect-protocol-version"} <= set(CORS_ALLOW_HEADERS)
    assert {"connect-timeout-ms", "x-grpc-web", "x-user-agent"} <= set(CORS_ALLOW_HEADERS)


async def test_a_call_from_an_allowed_origin_is_marked_and_exposes_the_grpc_status(
    web_server: RunningServer,
) -> None:
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        answer = await http.post(
            f"{MATCHES}/ListMatches", json={}, headers={**JSON, "origin": ALLOWED}
        )
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == ALLOWED
    assert listed(answer.headers["access-control-expose-headers"]) == set(CORS_EXPOSE_HEADERS)
    assert set(CORS_EXPOSE_HEADERS) == {"grpc-status", "grpc-message", "grpc-status-details-bin"}


async def test_another_origin_is_refused_its_preflight_and_gets_no_cors_headers(
    web_server: RunningServer,
) -> None:
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        preflight = await http.options(
            f"{MATCHES}/GetMatch", headers={"origin": OTHER, **PREFLIGHT}
        )
        answer = await http.post(
            f"{MATCHES}/ListMatches", json={}, headers={**JSON, "origin": OTHER}
        )
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in answer.headers  # the browser hides it


async def test_without_origins_no_cross_origin_call_is_allowed(
    store_env: dict[str, str],
) -> None:
    async with (
        serving_web(store_env) as running,
        httpx.AsyncClient(base_url=web_url(running)) as http,
    ):
        preflight = await http.options(
            f"{MATCHES}/GetMatch", headers={"origin": ALLOWED, **PREFLIGHT}
        )
        answer = await http.post(
            f"{MATCHES}/ListMatches", json={}, headers={**JSON, "origin": ALLOWED}
        )
    assert "access-control-allow-origin" not in preflight.headers
    assert preflight.status_code >= 400
    assert answer.status_code == 200
    assert not any(name.startswith("access-control-") for name in answer.headers)
