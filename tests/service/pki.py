"""Certificates the TLS tests make: a CA, a server's, a client's and one another CA signed."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Pem:
    cert: bytes
    key: bytes


def _issue(
    name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None, server: bool
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    cert = builder.sign(issuer[1] if issuer else key, hashes.SHA256())
    return cert, key


def _pem(pair: tuple[x509.Certificate, ec.EllipticCurvePrivateKey]) -> Pem:
    cert, key = pair
    return Pem(
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


@dataclass(frozen=True)
class Authority:
    ca: Pem
    server: Pem
    client: Pem
    stranger: Pem  # signed by another CA


def make_pki() -> Authority:
    """A fresh authority: its CA, a server certificate for localhost and 127.0.0.1, a
    client's, and a stranger's signed by another CA."""
    ca = _issue("Totem test CA", None, server=False)
    other = _issue("Another CA", None, server=False)
    return Authority(
        ca=_pem(ca),
        server=_pem(_issue("localhost", ca, server=True)),
        client=_pem(_issue("a player", ca, server=False)),
        stranger=_pem(_issue("a stranger", other, server=False)),
    )
