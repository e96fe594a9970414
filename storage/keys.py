"""The server's Ed25519 key pair: it signs every match that ends.

The private key lives in a PEM file (PKCS8, unencrypted), created on first start with
mode 0600 when it does not exist; a file the operator gives is used as it is. By default
it lives in the operator's own configuration folder, away from the store
(:func:`default_key_file`): whoever holds a copy of the store and the key can rewrite a
match and sign it again so that it passes ``totem-replay verify --key``. Without
the key a server could not sign, so a file that cannot be read as an Ed25519 private
key stops the start with one clear error. The public key is published (``GetServerKey``,
``totem server-key``) and recorded in every signed ``MatchEnded``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from domain.kernel.signing import Signer

ALGORITHM = "Ed25519"
#: Where older servers kept the key of a PostgreSQL store when no --key-file was given:
#: the working directory of the server, like the default SQLite file.
POSTGRES_KEY_FILE = "totem-server.key"
#: The default key file, under the user's configuration folder (``$XDG_CONFIG_HOME``,
#: else ``~/.config``).
USER_KEY_FILE = Path("totem-arena") / "server.key"


class KeyFileError(ValueError):
    """The key file cannot be used: the server does not start."""


@dataclass(frozen=True)
class ServerKey:
    """The loaded key pair."""

    private: Ed25519PrivateKey
    #: None: made for this run only, never written.
    path: Path | None
    created: bool

    @property
    def public_bytes(self) -> bytes:
        return public_bytes(self.private.public_key())

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_bytes)

    def signer(self) -> Signer:
        return Signer(self.public_bytes, self.private.sign)


def public_bytes(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(raw_public_key: bytes) -> str:
    """A short name for a public key, for logs: SHA-256 of its raw bytes, first 16 hex."""
    return "SHA256:" + hashlib.sha256(raw_public_key).hexdigest()[:16]


def sqlite_key_file(env: Mapping[str, str]) -> str | None:
    """``<db>.key`` beside a SQLite file, where older servers kept the key; None for any
    other store."""
    db = env.get("SQLITE_DBNAME")
    if env.get("PERSISTENCE_MODULE") == "eventsourcing.sqlite" and db and ":memory:" not in db:
        return f"{db}.key"
    return None


def user_key_file(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/totem-arena/server.key``, else ``~/.config/totem-arena/server.key``
    (the XDG base directory rule: a relative ``XDG_CONFIG_HOME`` is ignored)."""
    environ = os.environ if environ is None else environ
    config = environ.get("XDG_CONFIG_HOME", "")
    if not config or not os.path.isabs(config):
        home = environ.get("HOME") or str(Path.home())
        config = os.path.join(home, ".config")
    return Path(config) / USER_KEY_FILE


@dataclass(frozen=True)
class DefaultKey:
    path: Path
    #: Why the operator should move the key, when it was found beside the store.
    warning: str | None = None


def default_key_file(
    env: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> DefaultKey:
    """The key file when none is given: :func:`user_key_file`, away from the store. A key
    an older server left beside the store (``<db>.key``, or :data:`POSTGRES_KEY_FILE` in
    the working directory with PostgreSQL) is still used, so that the matches it signed
    keep verifying against the same key, with a warning to move it."""
    user = user_key_file(environ)
    postgres = env.get("PERSISTENCE_MODULE") == "eventsourcing.postgres"
    beside = sqlite_key_file(env) or (POSTGRES_KEY_FILE if postgres else None)
    if beside is not None and Path(beside).is_file():
        return DefaultKey(
            Path(beside),
            f"the server key {beside} sits beside the store: a copy of the store that "
            "carries it can forge matches that pass `totem-replay verify --key`. Move it "
            f"away from the store (to {user}, the default, or give --key-file)",
        )
    return DefaultKey(user)


def ephemeral() -> ServerKey:
    """A key for this run only: matches it signs cannot be checked after it is gone."""
    return ServerKey(Ed25519PrivateKey.generate(), None, created=True)


def load_or_create(path: str | Path) -> ServerKey:
    """The key in ``path``, created (mode 0600) if there is no such file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _create(path)
    except OSError as exc:
        raise KeyFileError(f"cannot read the server key file {path}: {exc.strerror}") from exc
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(
            f"the server key file {path} is not an unencrypted PEM private key: {exc}"
        ) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(
            f"the server key file {path} holds a {type(key).__name__}, not an Ed25519 key"
        )
    return ServerKey(key, path, created=False)


def _create(path: Path) -> ServerKey:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        # O_EXCL: never overwrite a key another process has just written.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return load_or_create(path)
    except FileNotFoundError:
        # The folder is missing (the default's, on a first start): made private.
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise KeyFileError(
                f"cannot create the folder of the server key file {path}: {exc.strerror}"
            ) from exc
        return _create(path)
    except OSError as exc:
        raise KeyFileError(f"cannot create the server key file {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "wb") as file:
        file.write(pem)
    return ServerKey(key, path, created=True)


def verify(raw_public_key: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` is the Ed25519 signature of ``message`` by this key."""
    try:
        Ed25519PublicKey.from_public_bytes(raw_public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def public_key_from_text(text: str) -> bytes:
    """A raw public key from 64 hex digits or PEM (a public key, or a private key whose
    public half is meant)."""
    text = text.strip()
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) == 32:
        return raw
    data = text.encode()
    try:
        return public_bytes(_pem_public(data))
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"not an Ed25519 public key (64 hex digits or PEM): {exc}") from exc


def _pem_public(data: bytes) -> Ed25519PublicKey:
    if b"PRIVATE KEY" in data:
        private = serialization.load_pem_private_key(data, password=None)
        if not isinstance(private, Ed25519PrivateKey):
            raise ValueError(f"a {type(private).__name__}, not an Ed25519 key")
        return private.public_key()
    public = serialization.load_pem_public_key(data)
    if not isinstance(public, Ed25519PublicKey):
        raise ValueError(f"a {type(public).__name__}, not an Ed25519 key")
    return public
