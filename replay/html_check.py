"""The HTML replay checks itself: the hash chain and the server's signature, in the browser.

Each frame of the page carries its event's canonical encoding, the exact text whose
SHA-256 is the event's digest (docs/audit.md), and the digest the event was stored
with; the page holds the server's signature of the match digest and its public key. The
script below recomputes every digest with WebCrypto's SHA-256, follows ``prev_digest``
from the genesis digest, and checks the Ed25519 signature of the signed message
(:func:`domain.kernel.signing.signed_message`) with WebCrypto's Ed25519: the same checks
as ``verify``'s chain and signature, by code independent of the tool's. Opened as
``FILE.html#key=HEX``, the signature must be by that key, as with ``verify --key``. An edited event
shows as tampered at its version; an event edited and re-chained, as a signature that
fails. What the page draws at each version was computed from these events when the page
was made; the browser checks the events, not the drawing (``totem-replay verify`` on the
bundle re-derives everything).
"""

from __future__ import annotations

from typing import Any

from domain.kernel.chain import canonical_event


def chain_entry(event: Any) -> dict[str, Any]:
    """What the page checks of one event: its canonical encoding, as text (UTF-8 encodes
    it back to the very bytes hashed), and the digest it was stored with."""
    canonical = canonical_event(type(event).__name__, vars(event))
    return {"canonical": canonical.decode("utf-8"), "digest": getattr(event, "digest", "")}


#: Reads ``DATA`` (``match_id``, ``digest``, ``signature``, ``frames``), writes its
#: verdict into ``#check`` (``data-status``: checking, verified, tampered,
#: signature-fails, unsigned or unavailable) and calls ``onChecked(firstBadVersion)``.
SCRIPT = r"""
const GENESIS = "0".repeat(64);
const SIGNATURE_PREFIX = "totem-arena match signature v1\n";
function hexOf(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}
function bytesOf(hex) {
  if (typeof hex !== "string" || !/^([0-9a-fA-F]{2})*$/.test(hex)) throw new Error("not hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}
async function sha256(data) {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return hexOf(await crypto.subtle.digest("SHA-256", bytes));
}
async function checkChain(frames, matchId) {
  // Every digest at once; then the links, in order, as `verify` reads them.
  const digests = await Promise.all(frames.map((f) => sha256(String(f.canonical))));
  let previous = GENESIS, previousAt = 0;
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i], version = i + 1;
    const bad = (reason) => ({bad: version, reason: reason});
    let fields;
    try { fields = JSON.parse(f.canonical); } catch (err) {
      return bad("the event as hashed is not readable");
    }
    const name = fields.event;
    if (fields.originator_version !== version || f.version !== version) {
      return bad(name + " was recorded as version " + fields.originator_version + ", not " +
        version + ": events were removed or reordered");
    }
    if (fields.originator_id !== matchId) {
      return bad(name + " belongs to match " + fields.originator_id + ", not " + matchId);
    }
    if (digests[i] !== f.digest) {
      return bad(name + " does not match its digest: its content hashes to " + digests[i] +
        ", its digest says " + f.digest + " (the event was changed)");
    }
    if (fields.prev_digest !== previous) {
      return bad(name + "'s prev_digest " + fields.prev_digest + " is not " +
        (previousAt ? "the digest of version " + previousAt : "the genesis digest") +
        " (" + previous + "): an event before it was changed, removed or reordered");
    }
    previous = f.digest;
    previousAt = version;
  }
  return {bad: null, digest: previous};
}
function expectedKey() {
  // ``#key=HEX``: the server's public key as the operator publishes it, given by the reader.
  const found = /(?:^#|&)key=([0-9a-fA-F]{64})(?:&|$)/.exec(location.hash);
  return found ? found[1].toLowerCase() : null;
}
async function checkSignature(frames, signature) {
  const last = frames[frames.length - 1];
  const fields = JSON.parse(last.canonical);
  if (fields.event !== "MatchEnded") {
    return {status: "unsigned", text: "not signed: the match has not ended"};
  }
  if (!signature || !signature.signature) {
    return {status: "unsigned", text: "not signed: MatchEnded carries no server signature"};
  }
  let key, keyBytes, signatureBytes;
  try {
    keyBytes = bytesOf(signature.public_key);
    signatureBytes = bytesOf(signature.signature);
  } catch (err) {
    return {status: "failed", text: "the signature or the public key is not hex"};
  }
  const fingerprint = "SHA256:" + (await sha256(keyBytes)).slice(0, 16);
  const expected = expectedKey();
  if (expected !== null && expected !== signature.public_key.toLowerCase()) {
    const wanted = "SHA256:" + (await sha256(bytesOf(expected))).slice(0, 16);
    return {status: "failed", text: "MatchEnded is signed by key " + fingerprint +
      ", not by the expected key " + wanted};
  }
  try {
    key = await crypto.subtle.importKey("raw", keyBytes, {name: "Ed25519"}, false, ["verify"]);
  } catch (err) {
    if (err && err.name === "NotSupportedError") {
      return {status: "unavailable", text: "this browser cannot check Ed25519 signatures"};
    }
    return {status: "failed", text: "the public key " + fingerprint + " is not an Ed25519 key"};
  }
  const message = new TextEncoder().encode(SIGNATURE_PREFIX + fields.originator_id + "\n" +
    last.version + "\n" + String(last.digest).toLowerCase());
  const valid = await crypto.subtle.verify({name: "Ed25519"}, key, signatureBytes, message);
  if (!valid) {
    return {status: "failed", text: "the server signature is not valid for the match digest " +
      "by key " + fingerprint + ": the signature or the match was forged"};
  }
  return {status: "ok", text: "valid Ed25519 signature of the match digest by key " +
    fingerprint + (expected !== null ? " (the expected key)" : " (the key recorded in the " +
    "page: compare it with the key the operator publishes, totem server-key, or open the " +
    "page as FILE.html#key=HEX)")};
}
async function checkPage(data) {
  const frames = data.frames;
  if (!(window.crypto && crypto.subtle)) {
    return {status: "unavailable", bad: null, text: "this browser offers no WebCrypto here " +
      "(open the file itself, not through a web server): run totem-replay verify"};
  }
  const chain = await checkChain(frames, data.match_id);
  const signed = await checkSignature(frames, data.signature);
  const lines = [];
  if (chain.bad !== null) {
    lines.push("chain: FAILED at version " + chain.bad + ": " + chain.reason);
  } else if (chain.digest !== data.digest) {
    chain.bad = frames.length;
    lines.push("chain: FAILED: the page's match digest " + data.digest + " is not its last " +
      "event's digest " + chain.digest);
  } else {
    lines.push("chain: OK: versions 1 to " + frames.length + ", every SHA-256 digest " +
      "recomputed, each prev_digest the digest before it; match digest " + chain.digest);
  }
  lines.push("signature: " + (signed.status === "ok" ? "OK: " :
    signed.status === "failed" ? "FAILED: " : "") + signed.text);
  let status, headline;
  if (chain.bad !== null) {
    status = "tampered";
    headline = "TAMPERED: the first bad version is " + chain.bad;
  } else if (signed.status === "failed") {
    status = "signature-fails";
    headline = "SIGNATURE FAILS: the events chain up, but the server did not sign them";
  } else if (signed.status === "ok") {
    status = "verified";
    headline = "VERIFIED: every event is the one the server signed";
  } else if (signed.status === "unavailable") {
    status = "unavailable";
    headline = "CHAIN INTACT, SIGNATURE NOT CHECKED here: run totem-replay verify";
  } else {
    status = "unsigned";
    headline = "CHAIN INTACT, NOT SIGNED: nothing proves who wrote these events";
  }
  return {status: status, bad: chain.bad, headline: headline, lines: lines};
}
function showCheck(result) {
  const box = document.getElementById("check");
  box.setAttribute("data-status", result.status);
  if (result.bad !== null && result.bad !== undefined) {
    box.setAttribute("data-first-bad", String(result.bad));
  }
  document.getElementById("check-result").textContent = result.headline || result.text;
  document.getElementById("check-detail").textContent = (result.lines || []).join("\n");
}
function runCheck(data, onChecked) {
  checkPage(data).then((result) => { showCheck(result); onChecked(result.bad); },
    (err) => showCheck({status: "unavailable", bad: null,
      headline: "NOT CHECKED: " + err + ": run totem-replay verify"}));
}
"""
