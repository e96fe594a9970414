"""The server's TLS files, read and checked before the port is opened.

gRPC reads the certificate and key only when it binds the port, and a key that does not
belong to the certificate then fails as a bind error with a traceback that names neither
file. Checking the pair first lets ``totem serve`` say in one line what is wrong.
"""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes

from server.serve import ServerTls


class TlsFileError(ValueError):
    """A TLS file cannot serve: the server does not start."""


def server_tls(cert: Path, key: Path, client_ca: Path | None = None) -> ServerTls:
    """The server's TLS settings from its PEM files, once the key is known to be the
    private key of the chain's first certificate (the server's own)."""
    cert_pem, key_pem = cert.read_bytes(), key.read_bytes()
    check_pair(cert_pem, key_pem, cert, key)
    return ServerTls(cert_pem, key_pem, client_ca.read_bytes() if client_ca else None)


def check_pair(cert_pem: bytes, key_pem: bytes, cert: Path, key: Path) -> None:
    """Raise :class:`TlsFileError` unless ``key_pem`` is the private key whose public key
    ``cert_pem``'s first certificate carries."""
    try:
        leaf = x509.load_pem_x509_certificates(cert_pem)[0]
    except ValueError:
        raise TlsFileError(f"--tls-cert {cert} holds no PEM certificate") from None
    try:
        private = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError):
        raise TlsFileError(f"--tls-key {key} holds no unencrypted PEM private key") from None
    if _spki(private.public_key()) != _spki(leaf.public_key()):
        raise TlsFileError(
            f"the TLS key {key} does not match the certificate {cert}: give the private "
            "key of the chain's first certificate"
        )


def _spki(public: PublicKeyTypes) -> bytes:
    """A public key as DER SubjectPublicKeyInfo, comparable whatever its algorithm."""
    return public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
