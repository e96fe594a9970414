"""The built web client at ``/`` of the web port: its files with their content types and
caching, index.html for the client's own routes, nothing outside its directory, and a
page saying how to build it where it is not built."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import h11
import httpx
import pytest

from server.serve import RunningServer
from server.web import WebSettings
from server.web_http import IMMUTABLE, REVALIDATE
from tests.service.web_helpers import JSON, MATCHES, read_response, serving_web, web_url

INDEX = b"<!doctype html><title>Totem Arena</title><script src=/assets/app-1a2b.js></script>"
SECRET = b"the store's key: never served"


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A fake build: index.html, hashed assets, a file at the top; a secret beside it."""
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_bytes(INDEX)
    (root / "assets" / "app-1a2b.js").write_bytes(b"console.log('totem')")
    (root / "assets" / "app-1a2b.css").write_bytes(b"body{margin:0}")
    (root / "assets" / "totem-9f8e.svg").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    (root / "favicon.svg").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    (tmp_path / "secret.txt").write_bytes(SECRET)
    return root


@pytest.fixture
async def web_server(store_env: dict[str, str], built: Path) -> AsyncIterator[RunningServer]:
    async with serving_web(store_env, web=WebSettings("127.0.0.1:0", root=built)) as running:
        yield running


async def raw_get(port: int, target: str) -> tuple[int, bytes]:
    """A GET of ``target`` exactly as written: no client normalises it first."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = h11.Connection(h11.CLIENT)
    try:
        request = h11.Request(
            method="GET",
            target=target,
            headers=[("host", f"127.0.0.1:{port}"), ("connection", "close")],
        )
        writer.write(connection.send(request) or b"")
        writer.write(connection.send(h11.EndOfMessage()) or b"")
        await writer.drain()
        return await read_response(connection, reader)
    finally:
        writer.close()


async def test_files_are_served_with_their_types_and_caching(web_server: RunningServer) -> None:
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        index = await http.get("/")
        script = await http.get("/assets/app-1a2b.js")
        style = await http.get("/assets/app-1a2b.css")
        image = await http.get("/assets/totem-9f8e.svg")
        icon = await http.get("/favicon.svg")
        again = await http.get("/", headers={"if-none-match": index.headers["etag"]})
        head = await http.head("/assets/app-1a2b.js")
    assert (index.status_code, index.content) == (200, INDEX)
    assert index.headers["content-type"].startswith("text/html")
    assert index.headers["cache-control"] == REVALIDATE
    assert script.headers["content-type"].startswith("text/javascript")
    assert script.headers["cache-control"] == IMMUTABLE
    assert style.headers["content-type"].startswith("text/css")
    assert image.headers["content-type"] == "image/svg+xml"
    assert image.headers["cache-control"] == IMMUTABLE
    assert icon.headers["cache-control"] == REVALIDATE  # not a hashed asset
    assert (again.status_code, again.headers["cache-control"]) == (304, REVALIDATE)
    assert (head.status_code, head.content) == (200, b"")
    assert script.headers["x-content-type-options"] == "nosniff"


async def test_the_clients_routes_get_index_html_and_missing_files_do_not(
    web_server: RunningServer,
) -> None:
    async with httpx.AsyncClient(base_url=web_url(web_server)) as http:
        route = await http.get("/match/0b6f1c2e-8d8a-4f54-9d59-5d0e3a2f7c11")
        nested = await http.get("/tournaments/x/standings")
        missing_asset = await http.get("/assets/gone-0000.js")
        missing_file = await http.get("/robots.txt")
        posted = await http.post("/match/x", content=b"")
        rpc = await http.post(f"{MATCHES}/ListMatches", json={}, headers=JSON)
    assert (route.status_code, route.content) == (200, INDEX)
    assert route.headers["cache-control"] == REVALIDATE
    assert (nested.status_code, nested.content) == (200, INDEX)
    assert missing_asset.status_code == 404
    assert missing_file.status_code == 404
    assert posted.status_code == 405
    assert rpc.status_code == 200  # the API's paths are never the client's


@pytest.mark.parametrize(
    "target",
    [
        "/../secret.txt",
        "/assets/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt",
        "/assets/..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "/assets/%252e%252e/%252e%252e/secret.txt",
        "//secret.txt",
    ],
)
async def test_nothing_outside_the_client_directory_is_served(
    web_server: RunningServer, target: str
) -> None:
    assert web_server.web is not None
    status, body = await raw_get(web_server.web.port, target)
    assert SECRET not in body
    assert status in (200, 404)
    assert status == 404 or body == INDEX  # at most the client's own page


async def test_an_unbuilt_client_gets_a_page_saying_how_to_build_it(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    empty = tmp_path / "not-built"
    empty.mkdir()
    async with (
        serving_web(store_env, web=WebSettings("127.0.0.1:0", root=empty)) as running,
        httpx.AsyncClient(base_url=web_url(running)) as http,
    ):
        page = await http.get("/")
        route = await http.get("/match/x")
        rpc = await http.post(f"{MATCHES}/ListMatches", json={}, headers=JSON)
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/plain")
    assert "cd clients/web && npm ci && npm run build" in page.text
    assert route.text == page.text
    assert rpc.status_code == 200
