"""The HTML replay checks its own chain and signature in the browser (WebCrypto's SHA-256
and Ed25519), in a real headless Chromium: an intact signed page says verified; a page
whose one embedded event was edited says tampered at that version; one whose signature
was altered, or whose edited event was re-chained to the end, says the signature fails.

The pages are edited as a forger would edit the file: the JSON it embeds is changed and
written back. Chromium is installed by ``.ci/run``; without it these tests fail.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from replay_support import Run, Store, change_byte, digit_offset, open_store, stored_state
from test_replay_html import dump_dom
from test_replay_signature import signed_match

from domain.kernel.chain import GENESIS_DIGEST
from domain.kernel.signing import signed_message
from replay.html import script_json
from storage.keys import ServerKey, fingerprint, load_or_create

DATA_OPEN = '<script type="application/json" id="match-data">'


@dataclass(frozen=True)
class SignedPage:
    text: str
    db: Path
    match_id: UUID
    key: ServerKey


@pytest.fixture
def signed_page(run: Run, tmp_path: Path) -> SignedPage:
    return signed_export(run, tmp_path)


def signed_export(run: Run, tmp_path: Path) -> SignedPage:
    """The HTML page of an ended Jungle Speed match signed by the server's key."""
    db = tmp_path / "signed.db"
    key = load_or_create(tmp_path / "server.key")
    arena = open_store(db)
    try:
        match = signed_match(arena, key.signer(), players=3, max_events=100_000)
    finally:
        arena.close()
    page = tmp_path / "signed.html"
    exported = run("export", match.id, "--html", "-o", page, db=db)
    assert exported.exit_code == 0, exported.output
    return SignedPage(page.read_text(encoding="utf-8"), db, match.id, key)


@dataclass(frozen=True)
class Verdict:
    """What the page's check says: ``#check``'s status and first bad version, its
    headline and detail, and the warning shown at the opened version (None: hidden)."""

    status: str
    first_bad: int | None
    headline: str
    detail: str
    warning: str | None


class _Reader(HTMLParser):
    WATCHED = ("check", "check-result", "check-detail", "frame-warning")

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, dict[str, str | None]] = {}
        self.text: dict[str, str] = {}
        self.inside: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs).get("id")
        if found in self.WATCHED:
            self.attrs[found] = dict(attrs)
            self.text.setdefault(found, "")
        self.inside.append(found if found in self.WATCHED else None)

    def handle_endtag(self, tag: str) -> None:
        if self.inside:
            self.inside.pop()

    def handle_data(self, data: str) -> None:
        for name in self.inside:
            if name is not None:
                self.text[name] += data


def checked(
    text: str, tmp_path: Path, name: str, at: int | None = None, key: str | None = None
) -> Verdict:
    """Open the page in Chromium (at version ``at``, expecting ``key``) and read its
    check's verdict."""
    page = tmp_path / f"{name}.html"
    page.write_text(text, encoding="utf-8")
    fragment = "&".join(([f"v={at}"] if at else []) + ([f"key={key}"] if key else []))
    dom = dump_dom(page.as_uri() + (f"#{fragment}" if fragment else ""), tmp_path)
    reader = _Reader()
    reader.feed(dom)
    check = reader.attrs["check"]
    assert check["data-status"] != "checking", "the check did not finish in the browser"
    bad = check.get("data-first-bad")
    warning = reader.attrs["frame-warning"]
    return Verdict(
        str(check["data-status"]),
        int(bad) if bad else None,
        reader.text["check-result"],
        reader.text["check-detail"],
        None if "hidden" in warning else reader.text["frame-warning"],
    )


def data_of(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text.split(DATA_OPEN, 1)[1].split("</script>", 1)[0])
    return data


def edited(text: str, change: Callable[[dict[str, Any]], None]) -> str:
    """The page with its embedded data changed by ``change`` and written back as the
    page writes it."""
    before = text.split(DATA_OPEN, 1)[1].split("</script>", 1)[0]
    data = data_of(text)
    change(data)
    return text.replace(DATA_OPEN + before, DATA_OPEN + script_json(data), 1)


def canonical(fields: dict[str, Any]) -> str:
    """docs/audit.md's canonical encoding: sorted keys, no spaces, UTF-8."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def revealed_version(data: dict[str, Any], nth: int = 3) -> int:
    return int([f["version"] for f in data["frames"] if f["name"] == "Revealed"][nth])


def change_stamp(data: dict[str, Any], version: int) -> None:
    """A forger moves one reveal's receive time by a millisecond."""
    frame = data["frames"][version - 1]
    fields = json.loads(frame["canonical"])
    fields["stamp"]["wall_ns"] += 1_000_000
    frame["canonical"] = canonical(fields)


def rechain(data: dict[str, Any], start: int) -> None:
    """Recompute every digest from version ``start`` on, and each next prev_digest, as a
    forger who knows the chain would."""
    previous = data["frames"][start - 2]["digest"] if start > 1 else GENESIS_DIGEST
    for frame in data["frames"][start - 1 :]:
        fields = json.loads(frame["canonical"])
        fields["prev_digest"] = previous
        frame["canonical"] = canonical(fields)
        frame["digest"] = previous = sha256(frame["canonical"])
    data["digest"] = previous


def test_the_page_embeds_each_event_exactly_as_hashed(run: Run, signed_page: SignedPage) -> None:
    """Each frame's canonical text is the very encoding hashed (docs/audit.md): its
    SHA-256 is the event's digest as `events --json` gives it, and it re-encodes to
    itself."""
    data = data_of(signed_page.text)
    digests = {
        e["version"]: e["digest"]
        for e in map(
            json.loads,
            run("events", signed_page.match_id, "--json", db=signed_page.db).stdout.splitlines(),
        )
    }
    assert {f["version"]: sha256(f["canonical"]) for f in data["frames"]} == digests
    for frame in data["frames"]:
        assert canonical(json.loads(frame["canonical"])) == frame["canonical"]
    assert data["digest"] == data["frames"][-1]["digest"]
    assert data["signature"]["public_key"] == signed_page.key.public_bytes.hex()


def test_an_intact_signed_page_says_verified(signed_page: SignedPage, tmp_path: Path) -> None:
    verdict = checked(signed_page.text, tmp_path, "intact")
    assert verdict.status == "verified", verdict
    assert verdict.first_bad is None and verdict.warning is None
    assert verdict.headline.startswith("VERIFIED")
    assert "chain: OK" in verdict.detail
    signed = "signature: OK: valid Ed25519 signature of the match digest by key "
    assert signed + signed_page.key.fingerprint in verdict.detail


def test_an_edited_event_is_tampered_at_its_version(
    signed_page: SignedPage, tmp_path: Path
) -> None:
    version = revealed_version(data_of(signed_page.text))
    text = edited(signed_page.text, lambda data: change_stamp(data, version))
    verdict = checked(text, tmp_path, "edited", at=version + 2)
    assert verdict.status == "tampered", verdict
    assert verdict.first_bad == version
    assert verdict.headline == f"TAMPERED: the first bad version is {version}"
    assert f"FAILED at version {version}: Revealed does not match its digest" in verdict.detail
    # A version from the first bad one on is shown with a warning; one before it is not.
    assert verdict.warning is not None and f"first bad version, {version}" in verdict.warning
    assert checked(text, tmp_path, "edited-before", at=version - 1).warning is None


def test_an_edited_event_with_its_digest_recomputed_breaks_the_next_link(
    signed_page: SignedPage, tmp_path: Path
) -> None:
    version = revealed_version(data_of(signed_page.text))

    def forge(data: dict[str, Any]) -> None:
        change_stamp(data, version)
        frame = data["frames"][version - 1]
        frame["digest"] = sha256(frame["canonical"])

    verdict = checked(edited(signed_page.text, forge), tmp_path, "redigested")
    assert verdict.status == "tampered", verdict
    assert verdict.first_bad == version + 1
    assert "prev_digest" in verdict.detail and f"the digest of version {version}" in verdict.detail


def test_a_removed_event_is_tampered_where_it_was(signed_page: SignedPage, tmp_path: Path) -> None:
    version = revealed_version(data_of(signed_page.text))
    text = edited(signed_page.text, lambda data: data["frames"].pop(version - 1))
    verdict = checked(text, tmp_path, "removed")
    assert verdict.status == "tampered" and verdict.first_bad == version, verdict


def test_an_edit_rechained_to_the_end_fails_the_signature(
    signed_page: SignedPage, tmp_path: Path
) -> None:
    """Only the signature catches a forger who rewrites the chain: the events link up,
    but the server never signed their digest."""
    version = revealed_version(data_of(signed_page.text))

    def forge(data: dict[str, Any]) -> None:
        change_stamp(data, version)
        rechain(data, version)

    verdict = checked(edited(signed_page.text, forge), tmp_path, "rechained")
    assert verdict.status == "signature-fails", verdict
    assert verdict.first_bad is None
    assert "chain: OK" in verdict.detail
    assert (
        "signature: FAILED: the server signature is not valid for the match digest"
        in verdict.detail
    )


def test_an_altered_signature_fails(signed_page: SignedPage, tmp_path: Path) -> None:
    def alter(data: dict[str, Any]) -> None:
        signature = data["signature"]["signature"]
        data["signature"]["signature"] = ("1" if signature[0] != "1" else "2") + signature[1:]

    verdict = checked(edited(signed_page.text, alter), tmp_path, "altered")
    assert verdict.status == "signature-fails", verdict
    assert verdict.headline.startswith("SIGNATURE FAILS")
    assert "signature: FAILED" in verdict.detail


def test_an_unsigned_match_is_only_chained(run: Run, store: Store, tmp_path: Path) -> None:
    page = tmp_path / "unsigned.html"
    assert run("export", store.ended.id, "--html", "-o", page).exit_code == 0
    verdict = checked(page.read_text(encoding="utf-8"), tmp_path, "unsigned")
    assert verdict.status == "unsigned", verdict
    assert "not signed: MatchEnded carries no server signature" in verdict.detail


def test_a_page_from_a_damaged_store_is_tampered_where_verify_says(
    run: Run, store: Store, tmp_path: Path
) -> None:
    match = store.ended
    page = tmp_path / "intact.html"
    assert run("export", match.id, "--html", "-o", page).exit_code == 0
    version = revealed_version(data_of(page.read_text(encoding="utf-8")), 6)
    state = stored_state(store.db, match.id, version)
    at = digit_offset(state, "wall_ns") + 7
    change_byte(store.db, match.id, version, at, ord("0") + (state[at] - ord("0") + 1) % 10)
    report = json.loads(run("verify", match.id, "--json").stdout)
    assert report["first_bad_version"] == version
    # The page is written; export warns and exits 1, as for any evidence that fails.
    assert run("export", match.id, "--html", "-o", page).exit_code == 1
    verdict = checked(page.read_text(encoding="utf-8"), tmp_path, "damaged")
    assert verdict.status == "tampered" and verdict.first_bad == version, verdict


def test_a_forgery_re_signed_by_another_key_names_that_key(
    signed_page: SignedPage, tmp_path: Path
) -> None:
    """A forger with a key of their own can re-chain and re-sign: the page then holds
    together, and only the key's fingerprint, compared with the one the operator
    publishes (`totem server-key`), shows it is not the server's."""
    forger = Ed25519PrivateKey.generate()
    raw = forger.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    version = revealed_version(data_of(signed_page.text))

    def forge(data: dict[str, Any]) -> None:
        change_stamp(data, version)
        rechain(data, version)
        last = data["frames"][-1]
        message = signed_message(signed_page.match_id, last["version"], last["digest"])
        data["signature"] = {"signature": forger.sign(message).hex(), "public_key": raw.hex()}

    forged = edited(signed_page.text, forge)
    verdict = checked(forged, tmp_path, "resigned")
    assert verdict.status == "verified", verdict
    assert fingerprint(raw) in verdict.detail
    assert signed_page.key.fingerprint not in verdict.detail
    # Opened with the server's key, as published, the forgery fails, as `verify --key`.
    server = signed_page.key.public_bytes.hex()
    against = checked(forged, tmp_path, "resigned-key", key=server)
    assert against.status == "signature-fails", against
    assert (
        f"MatchEnded is signed by key {fingerprint(raw)}, not by the expected key "
        f"{signed_page.key.fingerprint}" in against.detail
    )
    intact = checked(signed_page.text, tmp_path, "intact-key", at=5, key=server)
    assert intact.status == "verified", intact
    assert f"{signed_page.key.fingerprint} (the expected key)" in intact.detail
